/* cmd_check.c - `mallocwatch check`: judge a saved JSON report by rules
 * (metrics.h), for CI.  Exit 0 when every rule holds, 3 when one fails
 * (MW_EXIT_CHECK), 2 for a bad rule or a file that is not a report.
 * And `mallocwatch diff`: two reports' metrics and arenas side by side. */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "metrics.h"
#include "msg.h"
#include "xalloc.h"

static const char check_usage[] =
"Usage: mallocwatch check [--baseline BASE.json [--strict-env]] [--format F]\n"
"                         --check RULE... REPORT.json\n"
"       mallocwatch check --metrics REPORT.json\n"
"\n"
"Judge a report written with --json by rules, for CI: one line per rule,\n"
"exit 3 when any fails.  A RULE is METRIC OP VALUE, OP one of <= < >= > ==\n"
"!=, VALUE an integer (K, M, G: x 1024) or, against --baseline, +N, -N,\n"
"+N% or -N% of the baseline's value.  --metrics lists every metric of the\n"
"report.  A baseline made where arena counts are decided differently\n"
"(glibc version, online CPUs, GLIBC_TUNABLES, MALLOC_*) is warned about;\n"
"with --strict-env it is an error (exit 2).\n"
"--format: text (default), json, junit (one testcase per rule),\n"
"github (::error annotations, and a Markdown table appended to\n"
"$GITHUB_STEP_SUMMARY when set) or markdown.\n"
"Metrics (docs/json.md, \"Metrics\"):\n";

static const char check_usage_tail[] =
"\n"
"Exit status: 0 every rule holds, 3 a rule failed, 2 a bad rule or a file\n"
"that is not a mallocwatch report, 1 a file that cannot be read.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch check --check 'arenas<=4' --check 'tcache_double_free==0' r.json\n"
"  mallocwatch check --baseline base.json --check 'heap_bytes_peak<=+10%' r.json\n";

static void usage_out(void)
{
	fputs(check_usage, stdout);
	for (int m = 0; m < MW_M_COUNT; m++) {
		const struct mw_metric_info *i = mw_metric_info((enum mw_metric)m);

		printf("  %-20s %s (%s)\n", i->name, i->doc, i->unit);
	}
	fputs(check_usage_tail, stdout);
}

/* Load a report; exits 1 when unreadable, 2 when not a report. */
static json_t *load_report(const char *path)
{
	char err[PATH_MAX + 256];
	int status;
	json_t *doc = mw_report_load(path, err, sizeof(err), &status);

	if (!doc)
		mw_die(status, "%s", err);
	return doc;
}

int cmd_check(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "check", required_argument, NULL, 'c' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "metrics", no_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'f' },
		{ "strict-env", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mw_rule *rules = NULL;
	size_t nrules = 0, cap = 0, failed = 0;
	const char *base_path = NULL;
	json_t *report, *base = NULL;
	int c, list = 0, relative = 0, strict = 0;
	enum mw_format fmt = MW_FMT_TEXT;
	char err[256];

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			xgrow((void **)&rules, nrules, &cap, sizeof(*rules));
			if (mw_rule_parse(optarg, &rules[nrules], err, sizeof(err)) < 0)
				mw_usage_error("%s", err);
			relative |= rules[nrules++].relative;
			break;
		case 'b': base_path = optarg; break;
		case 'm': list = 1; break;
		case 's': strict = 1; break;
		case 'f':
			if (mw_format_parse(optarg, &fmt) < 0)
				mw_usage_error("unknown format '%s' (text, json, junit, github, "
					       "markdown)", optarg);
			break;
		case 'h': usage_out(); return MW_EXIT_OK;
		default: mw_usage_error("bad option");
		}
	}
	if (optind + 1 != argc)
		mw_usage_error("check takes one report file");
	if (!nrules && !list)
		mw_usage_error("check needs --check RULE (or --metrics)");
	if (relative && !base_path)
		mw_usage_error("a relative rule (+N, +N%%) needs --baseline");
	report = load_report(argv[optind]);
	if (base_path)
		base = load_report(base_path);
	if (base && mw_check_env(base, report, strict) < 0)
		return MW_EXIT_USAGE;
	for (int m = 0; list && m < MW_M_COUNT; m++) {
		int64_t v;

		if (mw_metric_value(report, (enum mw_metric)m, &v) == 0)
			printf("%s %" PRId64 "\n", mw_metric_info((enum mw_metric)m)->name, v);
	}
	if (nrules)
		failed = mw_rules_report(stdout, fmt, rules, nrules, report, base);
	json_decref(report);
	json_decref(base);
	free(rules);
	return failed ? MW_EXIT_CHECK : MW_EXIT_OK;
}

static const char diff_usage[] =
"Usage: mallocwatch diff [--format text|json|markdown] BASE.json NEW.json\n"
"\n"
"Two reports side by side: every metric (see `mallocwatch check --help`,\n"
"thresholds included) with its change and percent, then the arenas that\n"
"appeared, vanished or changed their heaps or heap bytes (main_arena, then the\n"
"others in the order they were made: addresses differ from run to run).\n"
"Exit 0: diff reports, check judges.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch diff base.json new.json\n";

/* The arenas of report r as name -> {heaps, heap_bytes}.  Addresses
 * differ from run to run (ASLR), so an arena is named by its place:
 * "main_arena", then "arena N" in the report's order (the order they
 * were made). */
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
		json_object_set_new(out, name, json_pack("{s:O, s:O}", "heaps",
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
			json_array_append_new(out, json_pack("{s:s, s:O, s:O, s:O, s:O}", "arena", k,
				"base_heaps", json_object_get(v, "heaps"),
				"new_heaps", json_object_get(w, "heaps"),
				"base_heap_bytes", json_object_get(v, "heap_bytes"),
				"new_heap_bytes", json_object_get(w, "heap_bytes")));
	}
	return out;
}

/* The arenas in x but not in y, as an array of addresses. */
static json_t *only_in(const json_t *x, const json_t *y)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach((json_t *)x, k, v)
		if (!json_object_get(y, k))
			json_array_append_new(out, json_string(k));
	return out;
}

/* An integer member, or "-" when it is null. */
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

static void diff_markdown(const json_t *metrics, const json_t *appeared, const json_t *vanished,
			  const json_t *chg)
{
	size_t i;
	json_t *x;
	char a[32], b[32], c[32], d[32];

	printf("| metric | base | new | change | percent |\n|---|---:|---:|---:|---:|\n");
	json_array_foreach(metrics, i, x)
		printf("| `%s` | %s | %s | %s | %s |\n",
		       json_string_value(json_object_get(x, "metric")),
		       num(x, "base", a, sizeof(a), 0), num(x, "new", b, sizeof(b), 0),
		       num(x, "change", c, sizeof(c), 1), num(x, "percent", d, sizeof(d), 1));
	printf("\nArenas: %zu appeared, %zu vanished, %zu changed\n", json_array_size(appeared),
	       json_array_size(vanished), json_array_size(chg));
}

int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum mw_format fmt = MW_FMT_TEXT;
	json_t *a, *b, *metrics = json_array(), *aa, *ba, *appeared, *vanished, *chg, *root;
	int c;
	size_t i;
	json_t *x;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': fmt = MW_FMT_JSON; break;
		case 'f':
			if (mw_format_parse(optarg, &fmt) < 0 ||
			    (fmt != MW_FMT_TEXT && fmt != MW_FMT_JSON && fmt != MW_FMT_MARKDOWN))
				mw_usage_error("diff writes text, json or markdown, not '%s'", optarg);
			break;
		case 'h': fputs(diff_usage, stdout); return MW_EXIT_OK;
		default: mw_usage_error("bad option");
		}
	}
	if (optind + 2 != argc)
		mw_usage_error("diff takes two report files");
	a = load_report(argv[optind]);
	b = load_report(argv[optind + 1]);
	for (int m = 0; m < MW_M_COUNT; m++) {
		int64_t va, vb;
		int ha = mw_metric_value(a, (enum mw_metric)m, &va) == 0;
		int hb = mw_metric_value(b, (enum mw_metric)m, &vb) == 0;
		json_t *o = json_pack("{s:s}", "metric", mw_metric_info((enum mw_metric)m)->name);

		if (!ha && !hb) {
			json_decref(o);
			continue;
		}
		json_object_set_new(o, "base", ha ? json_integer(va) : json_null());
		json_object_set_new(o, "new", hb ? json_integer(vb) : json_null());
		json_object_set_new(o, "change", ha && hb ? json_integer(vb - va) : json_null());
		json_object_set_new(o, "percent", ha && hb && va ?
				    json_real(100.0 * (double)(vb - va) / (double)va) : json_null());
		json_array_append_new(metrics, o);
	}
	aa = arenas_by_place(a);
	ba = arenas_by_place(b);
	appeared = only_in(ba, aa);
	vanished = only_in(aa, ba);
	chg = changed(aa, ba);
	root = json_pack("{s:s, s:s, s:o, s:{s:o, s:o, s:o}}", "base", argv[optind],
			 "new", argv[optind + 1], "metrics", metrics, "arenas",
			 "appeared", appeared, "vanished", vanished, "changed", chg);
	if (fmt == MW_FMT_JSON) {
		json_dumpf(root, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (fmt == MW_FMT_MARKDOWN) {
		diff_markdown(metrics, appeared, vanished, chg);
	} else {
		printf("%-20s %14s %14s %14s %9s\n", "METRIC", "BASE", "NEW", "CHANGE", "PERCENT");
		json_array_foreach(metrics, i, x) {
			json_t *p = json_object_get(x, "percent"), *ch = json_object_get(x, "change");
			char base[24] = "-", new[24] = "-", chg[24] = "-", pct[16] = "-";

			if (json_is_integer(json_object_get(x, "base")))
				snprintf(base, sizeof(base), "%" JSON_INTEGER_FORMAT,
					 json_integer_value(json_object_get(x, "base")));
			if (json_is_integer(json_object_get(x, "new")))
				snprintf(new, sizeof(new), "%" JSON_INTEGER_FORMAT,
					 json_integer_value(json_object_get(x, "new")));
			if (json_is_integer(ch))
				snprintf(chg, sizeof(chg), "%+" JSON_INTEGER_FORMAT, json_integer_value(ch));
			if (json_is_real(p))
				snprintf(pct, sizeof(pct), "%+.1f%%", json_real_value(p));
			printf("%-20s %14s %14s %14s %9s\n",
			       json_string_value(json_object_get(x, "metric")), base, new, chg, pct);
		}
		printf("\nArenas (main_arena, then in the order they were made): %zu appeared, "
		       "%zu vanished, %zu changed\n", json_array_size(appeared),
		       json_array_size(vanished), json_array_size(chg));
		json_array_foreach(appeared, i, x)
			if (i < 32)
				printf("  + %s\n", json_string_value(x));
		json_array_foreach(vanished, i, x)
			if (i < 32)
				printf("  - %s\n", json_string_value(x));
		json_array_foreach(chg, i, x)
			if (i < 32)
				printf("  ~ %s: heaps %" JSON_INTEGER_FORMAT " -> %" JSON_INTEGER_FORMAT
				       ", heap bytes %" JSON_INTEGER_FORMAT " -> %" JSON_INTEGER_FORMAT "\n",
				       json_string_value(json_object_get(x, "arena")),
				       json_integer_value(json_object_get(x, "base_heaps")),
				       json_integer_value(json_object_get(x, "new_heaps")),
				       json_integer_value(json_object_get(x, "base_heap_bytes")),
				       json_integer_value(json_object_get(x, "new_heap_bytes")));
	}
	json_decref(root);
	json_decref(aa);
	json_decref(ba);
	json_decref(a);
	json_decref(b);
	return fflush(stdout) == 0 && !ferror(stdout) ? MW_EXIT_OK : MW_EXIT_RUNTIME;
}
