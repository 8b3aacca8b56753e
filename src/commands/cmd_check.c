/* cmd_check.c - `mallocwatch check`: judge a saved JSON report by rules
 * (metrics.h), for CI.  Exit 0 when every rule holds, 3 when one fails
 * (MW_EXIT_CHECK), 2 for a bad rule or a file that is not a report.
 * And `mallocwatch diff`: two reports' metrics and arenas side by side. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "metrics.h"
#include "jsonout.h"
#include "msg.h"
#include "output.h"
#include "xalloc.h"

static const char check_usage[] =
"Usage: mallocwatch check [--baseline BASE.json [--strict-env]] [--format F]\n"
"                         --check RULE... REPORT.json\n"
"       mallocwatch check --metrics REPORT.json\n"
"\n"
"Judge a report written with --json by rules, for CI: one line per rule,\n"
"exit 3 when any fails.  A RULE is METRIC OP VALUE, OP one of <= < >= > ==\n"
"!=, VALUE an integer (K, M, G: x 1024) or, against --baseline, +N, -N,\n"
"+N% or -N% of the baseline's value.  A report of several processes\n"
"(-p PID,PID,..., --cgroup, -f) is judged per process, each result named;\n"
"comm=NAME:RULE judges only the processes of that command name (or\n"
"argv[0]'s last part), e.g. 'comm=python3:arenas<=4'.  A rule on a figure\n"
"the report does not have fails: one it lists as unknown (\"unknown\": -p\n"
"whose snapshot at attach was refused leaves the metrics marked * below\n"
"unknown) fails with the report's reason, 'FAIL arenas: unknown: no\n"
"snapshot at attach: ...'; --metrics lists it as 'NAME unknown'.\n"
"\n"
"  --check RULE         a rule; repeatable\n"
"  --baseline FILE      the report (--json) relative rules are measured\n"
"                       against; one made where arena counts are decided\n"
"                       differently (glibc version, online CPUs,\n"
"                       GLIBC_TUNABLES, MALLOC_*) is warned about\n"
"  --strict-env         such a baseline is an error (exit 2)\n"
"  --format F           text (default), json, junit (one testcase per rule,\n"
"                       and process, named without pids: valid against\n"
"                       Jenkins' junit-10.xsd), github (::error annotations\n"
"                       for failed rules alone, at most 10; every result in a\n"
"                       Markdown table appended to $GITHUB_STEP_SUMMARY when\n"
"                       set) or markdown\n"
"  --metrics            list the report's metrics and their values\n"
"\n"
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

		printf("  %-20s %s (%s)%s\n", i->name, i->doc, i->unit, i->attach ? " *" : "");
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

/* What `check` was asked: its options and its report. */
struct check_args {
	struct mw_rule *rules;	/* --check, nrules of them (malloc'ed) */
	size_t nrules;
	const char *report_path, *base_path;	/* base_path: --baseline, or NULL */
	int list, strict;	/* --metrics, --strict-env */
	enum mw_format fmt;	/* --format */
};

/* check's arguments into *a; 0, or 1 when --help was given (the usage is
 * written).  Bad arguments are a usage error (exit 2). */
static int check_args_parse(int argc, char **argv, struct check_args *a)
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
	size_t cap = 0;
	int c, relative = 0;
	char err[256];

	*a = (struct check_args){ .fmt = MW_FMT_TEXT };
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			xgrow((void **)&a->rules, a->nrules, &cap, sizeof(*a->rules));
			if (mw_rule_parse(optarg, &a->rules[a->nrules], err, sizeof(err)) < 0)
				mw_usage_error("%s", err);
			relative |= a->rules[a->nrules++].relative;
			break;
		case 'b': a->base_path = optarg; break;
		case 'm': a->list = 1; break;
		case 's': a->strict = 1; break;
		case 'f':
			if (mw_format_parse(optarg, &a->fmt) < 0)
				mw_usage_error("unknown format '%s' (text, json, junit, github, "
					       "markdown)", optarg);
			break;
		case 'h': usage_out(); return 1;
		default: mw_bad_option(c, argv);
		}
	}
	if (optind + 1 != argc)
		mw_usage_error("check takes one report file");
	if (!a->nrules && !a->list)
		mw_usage_error("check needs --check RULE (or --metrics)");
	if (relative && !a->base_path)
		mw_usage_error("a relative rule (+N, +N%%) needs --baseline");
	a->report_path = argv[optind];
	return 0;
}

/* --metrics: "NAME VALUE" for every metric report has, "NAME unknown"
 * for each it says it does not know (its "unknown" lists it), each line
 * after indent. */
static void list_metrics_of(const json_t *report, const char *indent)
{
	for (int m = 0; m < MW_M_COUNT; m++) {
		int64_t v;

		if (mw_metric_value(report, (enum mw_metric)m, &v) == 0)
			printf("%s%s %" PRId64 "\n", indent,
			       mw_metric_info((enum mw_metric)m)->name, v);
		else if (mw_metric_unknown(report, (enum mw_metric)m))
			printf("%s%s unknown\n", indent, mw_metric_info((enum mw_metric)m)->name);
	}
}

/* --metrics: a report of one process as "NAME VALUE" lines; one of several
 * (-f, -p PID,PID, --cgroup) as "process PID (NAME):" and its metrics
 * indented, for each process (the top level is only the first's). */
static void list_metrics(const json_t *report)
{
	const json_t *procs = json_object_get(report, "processes");
	size_t i;
	json_t *p;

	if (!json_is_array(procs)) {
		list_metrics_of(report, "");
		return;
	}
	json_array_foreach(procs, i, p) {
		const json_t *t = json_object_get(p, "target");
		const char *name = mw_report_process_name(p);
		char q[80];

		printf("process %d (%s):\n", (int)json_integer_value(json_object_get(t, "pid")),
		       name ? mw_quote(name, q, sizeof(q)) : "?");
		list_metrics_of(p, "  ");
	}
}

int cmd_check(int argc, char **argv)
{
	struct check_args a;
	json_t *report, *base = NULL;
	size_t failed = 0;
	int status;

	if (check_args_parse(argc, argv, &a) > 0) {
		free(a.rules);
		return MW_EXIT_OK;
	}
	report = load_report(a.report_path);
	if (a.base_path)
		base = load_report(a.base_path);
	if (base && mw_check_env(base, report, a.strict) < 0) {
		status = MW_EXIT_USAGE;
		goto cleanup;
	}
	if (a.list)
		list_metrics(report);
	if (a.nrules && json_is_array(json_object_get(report, "processes"))) {
		/* a run of several processes: each judged, named */
		failed = mw_rules_report_procs(stdout, a.fmt, a.rules, a.nrules, &report, 1,
					       MW_AGG_WORST, base, NULL, NULL);
	} else if (a.nrules) {
		failed = mw_rules_report(stdout, a.fmt, a.rules, a.nrules, report, base);
	}
	status = failed ? MW_EXIT_CHECK : MW_EXIT_OK;
	if (mw_output_close(stdout, "stdout", 0) < 0)
		status = MW_EXIT_RUNTIME;
cleanup:
	json_decref(report);
	json_decref(base);
	free(a.rules);
	return status;
}

static const char diff_usage[] =
"Usage: mallocwatch diff [--format text|json|markdown] BASE.json NEW.json\n"
"\n"
"Two reports side by side: every metric (see `mallocwatch check --help`,\n"
"thresholds included) with its change and percent, then the arenas that\n"
"appeared, vanished or changed their heaps or heap bytes (main_arena, then the\n"
"others in the order they were made: addresses differ from run to run).\n"
"Reports of several processes (-f, -p PID,PID,..., --cgroup): every process,\n"
"matched as check --baseline matches them (command line, and how many before\n"
"it had the same), the changed ones with the metrics that changed, then the\n"
"processes that appeared or vanished.\n"
"Exit 0: diff reports, check judges.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch diff base.json new.json\n";

int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum mw_format fmt = MW_FMT_TEXT;
	json_t *a, *b, *root;
	int c;

	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': fmt = MW_FMT_JSON; break;
		case 'f':
			if (mw_format_parse(optarg, &fmt) < 0 ||
			    (fmt != MW_FMT_TEXT && fmt != MW_FMT_JSON && fmt != MW_FMT_MARKDOWN))
				mw_usage_error("diff writes text, json or markdown, not '%s'", optarg);
			break;
		case 'h': fputs(diff_usage, stdout); return MW_EXIT_OK;
		default: mw_bad_option(c, argv);
		}
	}
	if (optind + 2 != argc)
		mw_usage_error("diff takes two report files");
	a = load_report(argv[optind]);
	b = load_report(argv[optind + 1]);
	root = mw_diff_new(a, b, argv[optind], argv[optind + 1]);
	json_decref(a);
	json_decref(b);
	if (!root)
		mw_die(MW_EXIT_RUNTIME, "cannot compare the reports: %s", strerror(ENOMEM));
	mw_diff_write(stdout, fmt, root);
	json_decref(root);
	return mw_output_close(stdout, "stdout", 0) < 0 ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
