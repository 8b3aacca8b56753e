/* cmd_check.c - `mallocwatch check`: judge a saved JSON report by rules
 * (metrics.h), for CI.  Exit 0 when every rule holds, 3 when one fails
 * (MW_EXIT_CHECK), 2 for a bad rule or a file that is not a report. */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "metrics.h"
#include "msg.h"
#include "xalloc.h"

static const char check_usage[] =
"Usage: mallocwatch check [--baseline BASE.json] --check RULE... REPORT.json\n"
"       mallocwatch check --metrics REPORT.json\n"
"\n"
"Judge a report written with --json by rules, for CI: one line per rule,\n"
"exit 3 when any fails.  A RULE is METRIC OP VALUE, OP one of <= < >= > ==\n"
"!=, VALUE an integer (K, M, G: x 1024) or, against --baseline, +N, -N,\n"
"+N% or -N% of the baseline's value.  --metrics lists every metric of the\n"
"report.  Metrics (docs/json.md, \"Metrics\"):\n";

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
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);

	if (!doc && strstr(e.text, "unable to open"))
		mw_die(MW_EXIT_RUNTIME, "cannot read '%s': %s", path, e.text);
	if (!doc)
		mw_die(MW_EXIT_USAGE, "'%s' is not JSON: %s (line %d)", path, e.text, e.line);
	if (!mw_is_report(doc))
		mw_die(MW_EXIT_USAGE, "'%s' is not a mallocwatch report (written with --json)",
		       path);
	return doc;
}

static const char *op_name(enum mw_op op)
{
	static const char *const names[] = { "<=", "<", ">=", ">", "==", "!=" };

	return names[op];
}

int cmd_check(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "check", required_argument, NULL, 'c' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "metrics", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mw_rule *rules = NULL;
	size_t nrules = 0, cap = 0, failed = 0;
	const char *base_path = NULL;
	json_t *report, *base = NULL;
	int c, list = 0, relative = 0;
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
	for (int m = 0; list && m < MW_M_COUNT; m++) {
		int64_t v;

		if (mw_metric_value(report, (enum mw_metric)m, &v) == 0)
			printf("%s %" PRId64 "\n", mw_metric_info((enum mw_metric)m)->name, v);
	}
	for (size_t i = 0; i < nrules; i++) {
		const struct mw_rule *r = &rules[i];
		struct mw_verdict v = mw_rule_check(r, report, base);
		const char *name = mw_metric_info(r->metric)->name;

		failed += !v.ok;
		if (v.missing)
			printf("FAIL %s: not in the %s (rule '%s')\n", name,
			       v.value || !r->relative ? "report" : "report or the baseline", r->text);
		else if (v.has_baseline)
			printf("%s %s %" PRId64 ", limit %s %" PRId64 " (baseline %" PRId64 ", rule '%s')\n",
			       v.ok ? "PASS" : "FAIL", name, v.value, op_name(r->op), v.limit,
			       v.baseline, r->text);
		else
			printf("%s %s %" PRId64 ", limit %s %" PRId64 " (rule '%s')\n",
			       v.ok ? "PASS" : "FAIL", name, v.value, op_name(r->op), v.limit, r->text);
	}
	if (nrules)
		printf("%zu passed, %zu failed\n", nrules - failed, failed);
	json_decref(report);
	json_decref(base);
	free(rules);
	return failed ? MW_EXIT_CHECK : MW_EXIT_OK;
}
