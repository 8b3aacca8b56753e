/* metrics_rules.c - rules on metrics: "METRIC OP VALUE" parsed, and
 * judged on one report or on the reports of repeated runs; see metrics.h.
 *
 *	arenas<=4		absolute: arenas at most 4
 *	heap_bytes_peak<=+10%	relative: at most the baseline's value + 10 %
 *	heap_bytes < 120M	blanks around OP and VALUE are allowed
 *
 * The metrics themselves are computed in metrics.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "xalloc.h"

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

/* The operator p starts with into *op; what follows it, or NULL (and
 * *op untouched) when p starts with none. */
static const char *parse_op(const char *p, enum mw_op *op)
{
	static const struct { const char *s; enum mw_op op; } ops[] = {
		{ "<=", MW_OP_LE }, { ">=", MW_OP_GE }, { "==", MW_OP_EQ }, { "!=", MW_OP_NE },
		{ "<", MW_OP_LT }, { ">", MW_OP_GT },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(p, ops[i].s, strlen(ops[i].s)) == 0) {
			*op = ops[i].op;
			return p + strlen(ops[i].s);
		}
	return NULL;
}

/* val without the blanks around it (the writer's, not the value's) into
 * value[len]; -1 when it does not fit. */
static int unblank(const char *val, char *value, size_t len)
{
	size_t k;

	val += strspn(val, " \t");
	if ((size_t)snprintf(value, len, "%s", val) >= len)
		return -1;
	for (k = strlen(value); k && (value[k - 1] == ' ' || value[k - 1] == '\t'); k--)
		value[k - 1] = '\0';
	return 0;
}

/* A rule's VALUE into r: +N, -N, +N% or -N% relative to the baseline
 * (r->relative, r->percent), else an absolute amount; 0, or -1 when it
 * is none of these. */
static int parse_limit(const char *val, struct mw_rule *r)
{
	if (*val == '+' || *val == '-') {	/* relative to the baseline */
		char amount[32];
		size_t len = strlen(val);

		r->relative = 1;
		r->percent = len > 1 && val[len - 1] == '%';
		snprintf(amount, sizeof(amount), "%.*s", (int)(len - (size_t)r->percent), val);
		if (len >= sizeof(amount) || parse_amount(amount, &r->value) < 0)
			return -1;
		return 0;
	}
	return parse_amount(val, &r->value);
}

int mw_rule_parse(const char *text, struct mw_rule *r, char *err, size_t errlen)
{
	char name[64], value[64];
	const char *start = text + strspn(text, " \t");
	size_t n = strcspn(start, "<>=!");
	const char *p = start + n, *val, *near;
	int m;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", text);
	if (strncmp(start, "comm=", 5) == 0) {	/* a selector of processes */
		size_t c = strcspn(start + 5, ":");

		if (!c || !start[5 + c] || c >= sizeof(r->comm)) {
			snprintf(err, errlen, "bad selector in rule '%s' (comm=NAME:METRIC OP VALUE, "
				 "e.g. 'comm=python3:arenas<=4')", text);
			return -1;
		}
		memcpy(r->comm, start + 5, c);
		r->comm[c] = '\0';
		start += 5 + c + 1;
		start += strspn(start, " \t");
		n = strcspn(start, "<>=!");
		p = start + n;
	}
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
	if ((val = parse_op(p, &r->op))) {
		if (unblank(val, value, sizeof(value)) < 0)
			goto bad_value;
		val = value;
	}
	if (!val || !*val || strchr("<>=!", *val)) {
		snprintf(err, errlen, "bad operator in rule '%s' (<=, <, >=, >, ==, !=)", text);
		return -1;
	}
	if (parse_limit(val, r) == 0)
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

int mw_rule_selects(const struct mw_rule *r, const json_t *report)
{
	const json_t *t = json_object_get(report, "target");
	const char *name = json_string_value(json_object_get(t, "comm")), *slash;

	if (!r->comm[0])
		return 1;
	if (!name) {
		name = json_string_value(json_array_get(json_object_get(t, "argv"), 0));
		if (name && (slash = strrchr(name, '/')))
			name = slash + 1;
	}
	return name && strcmp(name, r->comm) == 0;
}

/* v is missing: when report says why (it lists the figure as unknown),
 * that, after what (e.g. "the baseline: "), into v->why. */
static void unknown_why(struct mw_verdict *v, const json_t *report, enum mw_metric m,
			const char *what)
{
	const char *why = mw_metric_unknown(report, m);

	if (why)
		snprintf(v->why, sizeof(v->why), "%s%s", what, why);
}

static struct mw_verdict mw_rule_judge(const struct mw_rule *r, int64_t value,
				       const json_t *baseline);

struct mw_verdict mw_rule_check(const struct mw_rule *r, const json_t *report,
				const json_t *baseline)
{
	int64_t value;
	struct mw_verdict v = { .missing = 1 };

	if (mw_metric_value(report, r->metric, &value) < 0) {
		unknown_why(&v, report, r->metric, "");
		return v;
	}
	return mw_rule_judge(r, value, baseline);
}

/* Judge rule r on value, relative rules against baseline (as mw_rule_check). */
static struct mw_verdict mw_rule_judge(const struct mw_rule *r, int64_t value, const json_t *baseline)
{
	struct mw_verdict v = { .value = value };

	v.limit = r->value;
	if (r->relative) {
		if (!baseline || mw_metric_value(baseline, r->metric, &v.baseline) < 0) {
			v.missing = 1;
			if (baseline)
				unknown_why(&v, baseline, r->metric, "the baseline: ");
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

const char *mw_aggregate_name(const struct mw_rule *r, enum mw_aggregate a)
{
	if (a == MW_AGG_WORST && (r->op == MW_OP_LE || r->op == MW_OP_LT))
		a = MW_AGG_MAX;
	else if (a == MW_AGG_WORST && (r->op == MW_OP_GE || r->op == MW_OP_GT))
		a = MW_AGG_MIN;
	return a == MW_AGG_WORST ? "worst" : a == MW_AGG_MAX ? "max" : a == MW_AGG_MIN ? "min" :
	       "median";
}

/* The value of vals[0..n) that aggregate how (mw_aggregate_name) picks
 * for r; its index (the first run with it) in *at. */
static int64_t pick_of(const struct mw_rule *r, const int64_t *vals, size_t n, const char *how,
		       const json_t *baseline, size_t *at)
{
	int64_t *s, pick = vals[0];

	*at = 0;
	if (strcmp(how, "worst") == 0) {	/* == and !=: the first run that breaks it */
		for (size_t i = 0; i < n; i++)
			if (!mw_rule_judge(r, vals[i], baseline).ok) {
				*at = i;
				return vals[i];
			}
		return pick;
	}
	s = xcalloc(n, sizeof(*s));
	memcpy(s, vals, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_i64);
	pick = how[1] == 'a' ? s[n - 1] : how[1] == 'i' ? s[0] : s[(n - 1) / 2];
	free(s);
	while (*at < n && vals[*at] != pick)
		++*at;
	return pick;
}

struct mw_verdict mw_rule_judge_runs(const struct mw_rule *r, json_t *const *reports, size_t n,
				     enum mw_aggregate a, const json_t *baseline, FILE *log)
{
	int64_t *vals = xcalloc(n + 1, sizeof(*vals)), pick;
	const char *name = mw_metric_info(r->metric)->name, *how = mw_aggregate_name(r, a);
	struct mw_verdict v;
	size_t at;

	for (size_t i = 0; i < n; i++)
		if (mw_metric_value(reports[i], r->metric, &vals[i]) < 0) {
			char what[32];

			v = (struct mw_verdict){ .missing = 1 };
			snprintf(what, sizeof(what), "run %zu: ", i + 1);
			unknown_why(&v, reports[i], r->metric, n > 1 ? what : "");
			free(vals);
			return v;
		}
	if (!n) {
		free(vals);
		return (struct mw_verdict){ .missing = 1 };
	}
	pick = pick_of(r, vals, n, how, baseline, &at);
	if (log) {
		fprintf(log, "mallocwatch: %s per run:", name);
		for (size_t i = 0; i < n; i++)
			fprintf(log, " %" PRId64, vals[i]);
		fprintf(log, " (%s %" PRId64 ")\n", how, pick);
	}
	v = mw_rule_judge(r, pick, baseline);
	v.run = (int)at + 1;
	free(vals);
	return v;
}
