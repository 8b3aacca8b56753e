/* metrics.c - metrics of a JSON report and the rules on them; see
 * metrics.h and metrics.def. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "jsonout.h"
#include "msg.h"
#include "output.h"
#include "xalloc.h"

static const struct mw_metric_info metrics[MW_M_COUNT] = {
#define MW_METRIC(n, u, d) [MW_M_##n] = { .name = #n, .unit = u, .doc = d },
#include "metrics.def"
#undef MW_METRIC
};

const struct mw_metric_info *mw_metric_info(enum mw_metric m)
{
	return m < MW_M_COUNT ? &metrics[m] : NULL;
}

int mw_metric_lookup(const char *name)
{
	for (int m = 0; m < MW_M_COUNT; m++)
		if (strcmp(metrics[m].name, name) == 0)
			return m;
	return -1;
}

/* Levenshtein distance of a and b (names of metrics: short). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (lb >= sizeof(row) / sizeof(row[0]))
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *mw_metric_closest(const char *name)
{
	size_t best = 3;	/* at most two edits away, or a prefix */
	const char *found = NULL;

	for (int m = 0; m < MW_M_COUNT; m++) {
		size_t d = strncmp(metrics[m].name, name, strlen(name)) == 0 && name[0] ?
			   1 : edit_distance(name, metrics[m].name);

		if (d < best) {
			best = d;
			found = metrics[m].name;
		}
	}
	return found;
}

int mw_is_report(const json_t *doc)
{
	return json_is_object(doc) && json_integer_value(json_object_get(doc, "version")) == 1 &&
	       json_is_object(json_object_get(doc, "events"));
}

int64_t mw_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t mw_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t mw_sat_percent(int64_t a, int64_t pct)
{
	__int128 p = (__int128)a * pct / 100;	/* |a * pct| < 2^126: exact */

	return p > INT64_MAX ? INT64_MAX : p < INT64_MIN ? INT64_MIN : (int64_t)p;
}

static int64_t count_where(const json_t *arr, const char *key, int want_null)
{
	size_t i;
	json_t *x;
	int64_t n = 0;

	json_array_foreach(arr, i, x)
		n += json_is_null(json_object_get(x, key)) == want_null;
	return n;
}

/* obj.key as an integer; -1 when it is not one. */
static int get_int(const json_t *obj, const char *key, int64_t *v)
{
	json_t *x = json_object_get(obj, key);

	if (!json_is_integer(x))
		return -1;
	*v = (int64_t)json_integer_value(x);
	return 0;
}

/* The snapshot read last: at exit (-c), else at the end (-p). */
static const json_t *last_snapshot(const json_t *r)
{
	const json_t *s = json_object_get(r, "snapshots");
	const json_t *x = json_object_get(s, "exit");

	if (!json_is_object(x))
		x = json_object_get(s, "end");
	return json_is_object(x) ? x : NULL;
}

int mw_metric_value(const json_t *r, enum mw_metric m, int64_t *v)
{
	const json_t *arenas = json_object_get(r, "arenas"), *heaps = json_object_get(r, "heaps");
	const json_t *events = json_object_get(r, "events"), *x;
	size_t i;

	*v = 0;
	switch (m) {
	case MW_M_arenas:
		return json_is_array(arenas) ? (*v = (int64_t)json_array_size(arenas), 0) : -1;
	case MW_M_arenas_created:
		*v = count_where(arenas, "created_by_tid", 0);
		return json_is_array(arenas) ? 0 : -1;
	case MW_M_threads:
		x = json_object_get(r, "threads");
		return json_is_array(x) ? (*v = (int64_t)json_array_size(x), 0) : -1;
	case MW_M_heaps:
		json_array_foreach(heaps, i, x)
			*v += !json_is_true(json_object_get(x, "freed"));
		return json_is_array(heaps) ? 0 : -1;
	case MW_M_heap_bytes:
		json_array_foreach(arenas, i, x) {
			int64_t b;

			if (!json_is_true(json_object_get(x, "main")) && get_int(x, "heap_bytes", &b) == 0)
				*v = mw_sat_add(*v, b);	/* a file's figures may be anything */
		}
		return json_is_array(arenas) ? 0 : -1;
	case MW_M_heap_bytes_peak:
		json_array_foreach(heaps, i, x) {
			int64_t b;

			if (get_int(x, "peak_size", &b) == 0)
				*v = mw_sat_add(*v, b);
		}
		return json_is_array(heaps) ? 0 : -1;
	case MW_M_sbrk_net:
		return get_int(json_object_get(r, "sbrk"), "net", v);
	case MW_M_sbrk_peak:
		return get_int(json_object_get(r, "sbrk"), "peak", v);
	case MW_M_reuse_waits:
		if (get_int(json_object_get(events, "by_probe"), "memory_arena_reuse_wait", v) < 0)
			*v = 0;	/* not hit, or not in this libc */
		return json_is_object(events) ? 0 : -1;
	case MW_M_retries:
		x = json_object_get(r, "retries");
		return json_is_array(x) ? (*v = (int64_t)json_array_size(x), 0) : -1;
	case MW_M_tcache_double_free:
		x = json_object_get(r, "tcache_double_free");
		return json_is_array(x) ? (*v = (int64_t)json_array_size(x), 0) : -1;
	case MW_M_mmap_threshold:
		return get_int(json_object_get(r, "thresholds"), "mmap", v);
	case MW_M_trim_threshold:
		return get_int(json_object_get(r, "thresholds"), "trim", v);
	case MW_M_events_lost:
		return get_int(events, "lost", v);
	case MW_M_system_bytes:
	case MW_M_free_bytes:
	case MW_M_in_use_bytes: {
		const json_t *s = last_snapshot(r);
		const char *key = m == MW_M_system_bytes ? "system_bytes" :
				  m == MW_M_free_bytes ? "free_bytes" : "in_use_bytes";

		return s ? get_int(json_object_get(s, "totals"), key, v) : -1;
	}
	case MW_M_COUNT:
		break;
	}
	return -1;
}

/* An integer with an optional K, M or G (x 1024^n) suffix, to the end;
 * -1 past the range of int64_t. */
static int parse_amount(const char *s, int64_t *v)
{
	char *end;
	long long x, unit = 1;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || errno)
		return -1;
	switch (*end) {
	case 'K': unit = 1024LL; end++; break;
	case 'M': unit = 1024LL * 1024; end++; break;
	case 'G': unit = 1024LL * 1024 * 1024; end++; break;
	}
	if (*end || __builtin_mul_overflow(x, unit, &x))
		return -1;
	*v = x;
	return 0;
}

int mw_rule_parse(const char *text, struct mw_rule *r, char *err, size_t errlen)
{
	static const struct { const char *s; enum mw_op op; } ops[] = {
		{ "<=", MW_OP_LE }, { ">=", MW_OP_GE }, { "==", MW_OP_EQ }, { "!=", MW_OP_NE },
		{ "<", MW_OP_LT }, { ">", MW_OP_GT },
	};
	char name[64], value[64];
	const char *start = text + strspn(text, " \t");
	size_t n = strcspn(start, "<>=!");
	const char *p = start + n, *val = NULL, *near;
	int m;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", text);
	while (n && (start[n - 1] == ' ' || start[n - 1] == '\t'))	/* "arenas <= 4" */
		n--;
	if (!n || n >= sizeof(name) || !*p) {
		snprintf(err, errlen, "bad rule '%s' (METRIC OP VALUE, e.g. 'arenas<=4')", text);
		return -1;
	}
	memcpy(name, start, n);
	name[n] = '\0';
	if ((m = mw_metric_lookup(name)) < 0) {
		near = mw_metric_closest(name);
		snprintf(err, errlen, "unknown metric '%s' in rule '%s'%s%s%s", name, text,
			 near ? "; did you mean '" : " (mallocwatch check --help lists them)",
			 near ? near : "", near ? "'?" : "");
		return -1;
	}
	r->metric = (enum mw_metric)m;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !val; i++)
		if (strncmp(p, ops[i].s, strlen(ops[i].s)) == 0) {
			r->op = ops[i].op;
			val = p + strlen(ops[i].s);
		}
	if (val) {	/* blanks around the value are the writer's, not its */
		size_t k;

		val += strspn(val, " \t");
		if ((size_t)snprintf(value, sizeof(value), "%s", val) >= sizeof(value))
			goto bad_value;
		for (k = strlen(value); k && (value[k - 1] == ' ' || value[k - 1] == '\t'); k--)
			value[k - 1] = '\0';
		val = value;
	}
	if (!val || !*val || strchr("<>=!", *val)) {
		snprintf(err, errlen, "bad operator in rule '%s' (<=, <, >=, >, ==, !=)", text);
		return -1;
	}
	if (*val == '+' || *val == '-') {	/* relative to the baseline */
		char amount[32];
		size_t len = strlen(val);

		r->relative = 1;
		r->percent = len > 1 && val[len - 1] == '%';
		snprintf(amount, sizeof(amount), "%.*s", (int)(len - (size_t)r->percent), val);
		if (len >= sizeof(amount) || parse_amount(amount, &r->value) < 0)
			goto bad_value;
		return 0;
	}
	if (parse_amount(val, &r->value) == 0)
		return 0;
bad_value:
	snprintf(err, errlen, "bad value in rule '%s' (an integer, K/M/G allowed; or +N, -N, "
		 "+N%% relative to --baseline)", text);
	return -1;
}

static int holds(enum mw_op op, int64_t v, int64_t lim)
{
	switch (op) {
	case MW_OP_LE: return v <= lim;
	case MW_OP_LT: return v < lim;
	case MW_OP_GE: return v >= lim;
	case MW_OP_GT: return v > lim;
	case MW_OP_EQ: return v == lim;
	case MW_OP_NE: return v != lim;
	}
	return 0;
}

struct mw_verdict mw_rule_check(const struct mw_rule *r, const json_t *report,
				const json_t *baseline)
{
	int64_t value;

	if (mw_metric_value(report, r->metric, &value) < 0)
		return (struct mw_verdict){ .missing = 1 };
	return mw_rule_judge(r, value, baseline);
}

struct mw_verdict mw_rule_judge(const struct mw_rule *r, int64_t value, const json_t *baseline)
{
	struct mw_verdict v = { .value = value };

	v.limit = r->value;
	if (r->relative) {
		if (!baseline || mw_metric_value(baseline, r->metric, &v.baseline) < 0) {
			v.missing = 1;
			return v;
		}
		v.has_baseline = 1;
		/* +10% of 0 is 0: a metric that was 0 must stay 0.  A limit
		 * past int64_t is its end (a baseline of 2^62 + 100% may
		 * grow to INT64_MAX), never a wrapped one */
		v.limit = mw_sat_add(v.baseline, r->percent ?
				     mw_sat_percent(v.baseline, r->value) : r->value);
	}
	v.ok = holds(r->op, v.value, v.limit);
	return v;
}

static const char *op_name(enum mw_op op)
{
	static const char *const names[] = { "<=", "<", ">=", ">", "==", "!=" };

	return names[op];
}

int mw_format_parse(const char *s, enum mw_format *f)
{
	static const char *const names[] = { "text", "json", "junit", "github", "markdown" };

	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0) {
			*f = (enum mw_format)i;
			return 0;
		}
	return -1;
}

/* One rule's result as one line of text, without PASS/FAIL. */
static void result_line(char *buf, size_t len, const struct mw_rule *r,
			const struct mw_verdict *v)
{
	const char *name = mw_metric_info(r->metric)->name;

	if (v->missing)
		snprintf(buf, len, "%s: not in the report%s (rule '%s')", name,
			 r->relative ? " or the baseline" : "", r->text);
	else if (v->has_baseline)
		snprintf(buf, len, "%s %" PRId64 ", limit %s %" PRId64 " (baseline %" PRId64
			 ", rule '%s')", name, v->value, op_name(r->op), v->limit, v->baseline,
			 r->text);
	else
		snprintf(buf, len, "%s %" PRId64 ", limit %s %" PRId64 " (rule '%s')", name,
			 v->value, op_name(r->op), v->limit, r->text);
}


/* A Markdown table of the results (also GitHub's step summary). */
static void markdown(FILE *out, const struct mw_rule *rules, const struct mw_verdict *v,
		     size_t n, size_t failed)
{
	fprintf(out, "### mallocwatch: %zu passed, %zu failed\n\n"
		"| result | rule | value | limit | baseline |\n|---|---|---|---|---|\n",
		n - failed, failed);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "| %s | `%s` | ", v[i].ok ? "pass" : "**FAIL**", rules[i].text);
		if (v[i].missing)
			fprintf(out, "missing | | |\n");
		else if (v[i].has_baseline)
			fprintf(out, "%" PRId64 " | %s %" PRId64 " | %" PRId64 " |\n", v[i].value,
				op_name(rules[i].op), v[i].limit, v[i].baseline);
		else
			fprintf(out, "%" PRId64 " | %s %" PRId64 " | |\n", v[i].value,
				op_name(rules[i].op), v[i].limit);
	}
}

static json_t *json_results(const struct mw_rule *rules, const struct mw_verdict *v, size_t n,
			    size_t failed)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:o, s:s, s:b, s:o, s:o, s:o}",
			"rule", mw_json_str(rules[i].text), "metric", mw_metric_info(rules[i].metric)->name,
			"ok", v[i].ok, "value", v[i].missing ? json_null() : json_integer(v[i].value),
			"limit", v[i].missing ? json_null() : json_integer(v[i].limit),
			"baseline", v[i].has_baseline ? json_integer(v[i].baseline) : json_null()));
	return json_pack("{s:o, s:I, s:I}", "rules", arr, "passed", (json_int_t)(n - failed),
			 "failed", (json_int_t)failed);
}

size_t mw_rules_report(FILE *out, enum mw_format f, const struct mw_rule *rules, size_t n,
		       const json_t *report, const json_t *baseline)
{
	struct mw_verdict *v = xcalloc(n, sizeof(*v));
	size_t failed;

	for (size_t i = 0; i < n; i++)
		v[i] = mw_rule_check(&rules[i], report, baseline);
	failed = mw_verdicts_write(out, f, rules, v, n);
	free(v);
	return failed;
}

size_t mw_verdicts_write(FILE *out, enum mw_format f, const struct mw_rule *rules,
			 const struct mw_verdict *v, size_t n)
{
	size_t failed = 0;
	char line[512];

	for (size_t i = 0; i < n; i++)
		failed += !v[i].ok;
	switch (f) {
	case MW_FMT_TEXT:
		for (size_t i = 0; i < n; i++) {
			result_line(line, sizeof(line), &rules[i], &v[i]);
			fprintf(out, "%s %s\n", v[i].ok ? "PASS" : "FAIL", line);
		}
		fprintf(out, "%zu passed, %zu failed\n", n - failed, failed);
		break;
	case MW_FMT_JSON: {
		json_t *j = json_results(rules, v, n, failed);

		/* out of memory exits, as xalloc.h does; a write error is
		 * the caller's to find on out */
		if (!j)
			mw_die(MW_EXIT_RUNTIME, "cannot write the results: %s", strerror(ENOMEM));
		mw_json_write(j, out, JSON_INDENT(2));
		json_decref(j);
		break;
	}
	case MW_FMT_JUNIT:
		fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"mallocwatch\""
			" tests=\"%zu\" failures=\"%zu\">\n", n, failed);
		for (size_t i = 0; i < n; i++) {
			result_line(line, sizeof(line), &rules[i], &v[i]);
			fputs("  <testcase classname=\"mallocwatch.check\" name=\"", out);
			mw_xml_escape(out, rules[i].text);
			if (v[i].ok) {
				fputs("\"/>\n", out);
				continue;
			}
			fputs("\">\n    <failure message=\"", out);
			mw_xml_escape(out, line);
			fputs("\"/>\n  </testcase>\n", out);
		}
		fputs("</testsuite>\n", out);
		break;
	case MW_FMT_GITHUB: {
		const char *summary = getenv("GITHUB_STEP_SUMMARY");

		for (size_t i = 0; i < n; i++) {
			result_line(line, sizeof(line), &rules[i], &v[i]);
			fprintf(out, "::%s title=mallocwatch::%s ", v[i].ok ? "notice" : "error",
				v[i].ok ? "PASS" : "FAIL");
			/* workflow commands: %, CR and LF are escaped in a message */
			for (const char *p = line; *p; p++)
				fputs(*p == '%' ? "%25" : *p == '\r' ? "%0D" : *p == '\n' ? "%0A" :
				      (char[2]){ *p, 0 }, out);
			fputc('\n', out);
		}
		if (summary && *summary) {
			FILE *s = mw_output_append(summary);

			if (s) {
				markdown(s, rules, v, n, failed);
				fclose(s);
			}
		}
		break;
	}
	case MW_FMT_MARKDOWN:
		markdown(out, rules, v, n, failed);
		break;
	}
	return failed;
}

int mw_aggregate_parse(const char *s, enum mw_aggregate *a)
{
	static const char *const names[] = { "worst", "max", "median", "min" };

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*a = (enum mw_aggregate)i;
			return 0;
		}
	return -1;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

struct mw_verdict mw_rule_judge_runs(const struct mw_rule *r, json_t *const *reports, size_t n,
				     enum mw_aggregate a, const json_t *baseline, FILE *log)
{
	int64_t *vals = xcalloc(n, sizeof(*vals)), pick;
	const char *name = mw_metric_info(r->metric)->name, *how;
	struct mw_verdict v;

	for (size_t i = 0; i < n; i++)
		if (mw_metric_value(reports[i], r->metric, &vals[i]) < 0) {
			free(vals);
			return (struct mw_verdict){ .missing = 1 };
		}
	if (a == MW_AGG_WORST && (r->op == MW_OP_LE || r->op == MW_OP_LT))
		a = MW_AGG_MAX;
	else if (a == MW_AGG_WORST && (r->op == MW_OP_GE || r->op == MW_OP_GT))
		a = MW_AGG_MIN;
	pick = vals[0];
	how = a == MW_AGG_WORST ? "worst" : a == MW_AGG_MAX ? "max" :
	      a == MW_AGG_MIN ? "min" : "median";
	if (a == MW_AGG_WORST) {	/* == and !=: the first run that breaks it */
		for (size_t i = 0; i < n; i++)
			if (!mw_rule_judge(r, vals[i], baseline).ok) {
				pick = vals[i];
				break;
			}
	}
	if (log) {
		fprintf(log, "mallocwatch: %s per run:", name);
		for (size_t i = 0; i < n; i++)
			fprintf(log, " %" PRId64, vals[i]);
	}
	if (a != MW_AGG_WORST) {
		qsort(vals, n, sizeof(*vals), cmp_i64);
		pick = a == MW_AGG_MAX ? vals[n - 1] : a == MW_AGG_MIN ? vals[0] : vals[(n - 1) / 2];
	}
	if (log)
		fprintf(log, " (%s %" PRId64 ")\n", how, pick);
	v = mw_rule_judge(r, pick, baseline);
	free(vals);
	return v;
}

/* doc (loaded from path, NULL: failed with e) if it is a report; see
 * mw_report_load(). */
static json_t *report_checked(json_t *doc, const json_error_t *e, const char *path, char *err,
			      size_t errlen, int *status)
{
	*status = MW_EXIT_USAGE;
	if (!doc && strstr(e->text, "unable to open")) {
		*status = MW_EXIT_RUNTIME;
		snprintf(err, errlen, "cannot read '%s': %s", path, e->text);
	} else if (!doc) {
		snprintf(err, errlen, "'%s' is not JSON: %s (line %d)", path, e->text, e->line);
	} else if (!mw_is_report(doc)) {
		snprintf(err, errlen, "'%s' is not a mallocwatch report (written with --json)", path);
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

json_t *mw_report_load(const char *path, char *err, size_t errlen, int *status)
{
	json_error_t e;

	return report_checked(json_load_file(path, 0, &e), &e, path, err, errlen, status);
}

json_t *mw_report_loadb(const char *buf, size_t len, const char *name, char *err, size_t errlen,
			int *status)
{
	json_error_t e;

	return report_checked(json_loadb(buf, len, 0, &e), &e, name, err, errlen, status);
}

int mw_env_differs(const json_t *baseline, const json_t *report, char *why, size_t len)
{
	static const char *const keys[] = { "glibc", "nproc", "glibc_tunables", "malloc_env" };
	const json_t *b = json_object_get(baseline, "environment");
	const json_t *r = json_object_get(report, "environment");
	size_t n = 0;

	why[0] = '\0';
	if (!json_is_object(b) || !json_is_object(r))
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(b, keys[i]), *y = json_object_get(r, keys[i]);
		char *xs, *ys;

		if (json_equal(x, y) || (!x && !y))
			continue;
		/* the files' strings as JSON, non-ASCII as \uXXXX: nothing
		 * of them reaches a terminal raw */
		xs = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
		ys = y ? json_dumps(y, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
		if (n < len)
			n += (size_t)snprintf(why + n, len - n, "%s%s %s -> %s", n ? "; " : "",
					      keys[i], x && !xs ? "?" : xs ? xs : "none",
					      y && !ys ? "?" : ys ? ys : "none");
		free(xs);
		free(ys);
	}
	return n > 0;
}

int mw_check_env(const json_t *baseline, const json_t *report, int strict)
{
	char why[1024];
	int d = mw_env_differs(baseline, report, why, sizeof(why));

	if (d == 0)
		return 0;
	if (d < 0)
		snprintf(why, sizeof(why), "one of them records no environment");
	if (strict) {
		mw_error("the baseline was made where arena counts are decided differently: %s "
			 "(--strict-env)", why);
		return -1;
	}
	mw_warn("the baseline was made where arena counts are decided differently: %s", why);
	return 0;
}

/* ---- diff ---- */

/* The arenas of report r as name -> {heaps, heap_bytes} (null when the
 * report lacks them).  Addresses differ from run to run (ASLR), so an
 * arena is named by its place: "main_arena", then "arena N" in the
 * report's order (the order they were made).  NULL: out of memory. */
static json_t *arenas_by_place(const json_t *r)
{
	json_t *out = json_object(), *a;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(r, "arenas"), i, a) {
		char name[32];

		if (json_is_true(json_object_get(a, "main")))
			snprintf(name, sizeof(name), "main_arena");
		else
			snprintf(name, sizeof(name), "arena %d", ++n);
		mw_json_set(&out, name, json_pack("{s:O?, s:O?}", "heaps",
			    json_object_get(a, "heaps"), "heap_bytes",
			    json_object_get(a, "heap_bytes")));
	}
	return out;
}

/* The arenas in both whose heaps or heap bytes differ:
 * [{arena, base_heaps, new_heaps, base_heap_bytes, new_heap_bytes}]. */
static json_t *changed(const json_t *x, const json_t *y)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach((json_t *)x, k, v) {
		json_t *w = json_object_get(y, k);

		if (w && !json_equal(v, w))
			mw_json_append(&out, json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}", "arena", k,
				"base_heaps", json_object_get(v, "heaps"),
				"new_heaps", json_object_get(w, "heaps"),
				"base_heap_bytes", json_object_get(v, "heap_bytes"),
				"new_heap_bytes", json_object_get(w, "heap_bytes")));
	}
	return out;
}

/* The arenas in x but not in y, as an array of names. */
static json_t *only_in(const json_t *x, const json_t *y)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach((json_t *)x, k, v)
		if (!json_object_get(y, k))
			mw_json_append(&out, json_string(k));
	return out;
}

/* One metric of both: {metric, base, new, change, percent}, or JSON null
 * when neither has it (NULL: out of memory). */
static json_t *diff_metric(const json_t *a, const json_t *b, enum mw_metric m)
{
	int64_t va, vb;
	int ha = mw_metric_value(a, m, &va) == 0, hb = mw_metric_value(b, m, &vb) == 0;

	if (!ha && !hb)
		return json_null();
	/* change saturates (a file's figures may be anything); percent
	 * is computed in double from the two */
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "metric", mw_metric_info(m)->name,
		"base", ha ? json_integer(va) : json_null(),
		"new", hb ? json_integer(vb) : json_null(),
		"change", ha && hb ? json_integer(mw_sat_sub(vb, va)) : json_null(),
		"percent", ha && hb && va ?
		json_real(100.0 * ((double)vb - (double)va) / (double)va) : json_null());
}

json_t *mw_diff_new(const json_t *a, const json_t *b, const char *a_name, const char *b_name)
{
	json_t *metrics = json_array(), *aa = arenas_by_place(a), *ba = arenas_by_place(b), *root;

	if (!aa || !ba) {	/* an empty list would say "no arena appeared" */
		json_decref(metrics);
		json_decref(aa);
		json_decref(ba);
		return NULL;
	}
	for (int m = 0; m < MW_M_COUNT; m++) {
		json_t *o = diff_metric(a, b, (enum mw_metric)m);

		if (!json_is_null(o))
			mw_json_append(&metrics, o);
	}
	root = json_pack("{s:o, s:o, s:o, s:{s:o, s:o, s:o}}", "base", mw_json_str(a_name),
			 "new", mw_json_str(b_name), "metrics", metrics, "arenas",
			 "appeared", only_in(ba, aa), "vanished", only_in(aa, ba),
			 "changed", changed(aa, ba));
	json_decref(aa);
	json_decref(ba);
	return root;
}

/* An integer member ("%+" with sign), a real one as a percentage, or
 * "-" when it is null. */
static const char *num(const json_t *o, const char *key, char *buf, size_t len, int sign)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		snprintf(buf, len, sign ? "%+" JSON_INTEGER_FORMAT : "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%+.1f%%", json_real_value(v));
	else
		snprintf(buf, len, "-");
	return buf;
}

static void diff_text(FILE *f, const json_t *metrics, const json_t *appeared,
		      const json_t *vanished, const json_t *chg)
{
	size_t i;
	json_t *x;
	char a[32], b[32], c[32], d[32];

	fprintf(f, "%-20s %14s %14s %14s %9s\n", "METRIC", "BASE", "NEW", "CHANGE", "PERCENT");
	json_array_foreach(metrics, i, x)
		fprintf(f, "%-20s %14s %14s %14s %9s\n",
			json_string_value(json_object_get(x, "metric")),
			num(x, "base", a, sizeof(a), 0), num(x, "new", b, sizeof(b), 0),
			num(x, "change", c, sizeof(c), 1), num(x, "percent", d, sizeof(d), 1));
	fprintf(f, "\nArenas (main_arena, then in the order they were made): %zu appeared, "
		"%zu vanished, %zu changed\n", json_array_size(appeared),
		json_array_size(vanished), json_array_size(chg));
	json_array_foreach(appeared, i, x)
		if (i < 32)
			fprintf(f, "  + %s\n", json_string_value(x));
	json_array_foreach(vanished, i, x)
		if (i < 32)
			fprintf(f, "  - %s\n", json_string_value(x));
	json_array_foreach(chg, i, x)
		if (i < 32)
			fprintf(f, "  ~ %s: heaps %s -> %s, heap bytes %s -> %s\n",
				json_string_value(json_object_get(x, "arena")),
				num(x, "base_heaps", a, sizeof(a), 0),
				num(x, "new_heaps", b, sizeof(b), 0),
				num(x, "base_heap_bytes", c, sizeof(c), 0),
				num(x, "new_heap_bytes", d, sizeof(d), 0));
}

void mw_diff_write(FILE *f, enum mw_format fmt, const json_t *diff)
{
	const json_t *metrics = json_object_get(diff, "metrics"), *ar = json_object_get(diff, "arenas");
	const json_t *appeared = json_object_get(ar, "appeared"), *x;
	const json_t *vanished = json_object_get(ar, "vanished"), *chg = json_object_get(ar, "changed");
	char a[32], b[32], c[32], d[32];
	size_t i;

	if (fmt == MW_FMT_JSON) {
		mw_json_write(diff, f, JSON_INDENT(2));
		return;
	}
	if (fmt != MW_FMT_MARKDOWN) {
		diff_text(f, metrics, appeared, vanished, chg);
		return;
	}
	fprintf(f, "| metric | base | new | change | percent |\n|---|---:|---:|---:|---:|\n");
	json_array_foreach(metrics, i, x)
		fprintf(f, "| `%s` | %s | %s | %s | %s |\n",
			json_string_value(json_object_get(x, "metric")),
			num(x, "base", a, sizeof(a), 0), num(x, "new", b, sizeof(b), 0),
			num(x, "change", c, sizeof(c), 1), num(x, "percent", d, sizeof(d), 1));
	fprintf(f, "\nArenas: %zu appeared, %zu vanished, %zu changed\n", json_array_size(appeared),
		json_array_size(vanished), json_array_size(chg));
}
