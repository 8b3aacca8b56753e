/* metrics.h - named figures of a JSON report, and rules that judge them.
 *
 * A metric (metrics.def) is computed from a report as written by
 * mw_report_json (docs/json.md), so a saved report and a run just made
 * are judged alike.  A rule is "METRIC OP VALUE":
 *
 *	arenas<=4		absolute
 *	tcache_double_free==0
 *	heap_bytes_peak<=+10%	relative to a baseline report: its value + 10 %
 *	reuse_waits<=+0		the baseline's value + 0
 *
 * OP is one of <= < >= > == !=; VALUE an integer (optionally with a K, M
 * or G suffix: powers of 1024), or, relative to the baseline, +N, -N,
 * +N% or -N%.

 *
 * The metrics, the loading of reports and their environments are in
 * metrics.c; rules are parsed and judged in metrics_rules.c, their
 * verdicts written in metrics_verdicts.c; `mallocwatch diff` is
 * metrics_diff.c.
 */
#ifndef MALLOCWATCH_METRICS_H
#define MALLOCWATCH_METRICS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

enum mw_metric {
#define MW_METRIC(name, unit, attach, doc) MW_M_##name,
#include "metrics.def"
#undef MW_METRIC
	MW_M_COUNT,
};

struct mw_metric_info {
	const char *name, *unit, *doc;
	int attach;		/* needs the allocator at attach (metrics.def) */
};

/* The table entry of m (0 <= m < MW_M_COUNT). */
const struct mw_metric_info *mw_metric_info(enum mw_metric m);

/* Is m counted from the tracer (arenas to trim_threshold in
 * metrics.def): unknown when the process's figures mix its images
 * (state.h mw_state_images_mixed)?  The end and exit snapshots' figures
 * and events_lost are not. */
int mw_metric_traced(enum mw_metric m);

/* The view figure (view.h's enum mw_view_fig) metric m is, read where
 * the JSON report has it (view.def's section and key; a ROWS figure the
 * length of its array), or -1 when m is computed from the report here
 * (arenas_created, heaps, heap bytes, waits, the snapshot's and the
 * ledger's figures). */
int mw_metric_view_fig(enum mw_metric m);

/* The metric called name, or -1. */
int mw_metric_lookup(const char *name);

/* The metric name closest to an unknown name (one it begins, or at most
 * two edits away: "arena" -> "arenas"), for a "did you mean"; NULL when
 * none is that close. */
const char *mw_metric_closest(const char *name);

/* Metric m of report (the root object).  0 and *v, or -1 when the report
 * does not have it (system_bytes of a run without snapshots), or lists it
 * as unknown (mw_metric_unknown). */
int mw_metric_value(const json_t *report, enum mw_metric m, int64_t *v);

/* Why report does not know metric m, when it says so: its "unknown"
 * object ({"reason": "no snapshot at attach: ...", "figures": ["arenas",
 * ...]}, docs/json.md) lists m; or a count it has as null, past 2^63 - 1
 * ("more than can be counted ...": events.lost).  NULL otherwise.  Owned
 * by report, or static. */
const char *mw_metric_unknown(const json_t *report, enum mw_metric m);

enum mw_op { MW_OP_LE, MW_OP_LT, MW_OP_GE, MW_OP_GT, MW_OP_EQ, MW_OP_NE };

struct mw_rule {
	char text[128];		/* as given */
	char comm[64];		/* "comm=NAME:RULE": the processes named NAME
				 * (their command name, else their argv[0]'s
				 * last part) only; "" every process */
	enum mw_metric metric;
	enum mw_op op;
	int relative;		/* the limit comes from a baseline */
	int percent;		/* relative: value is a percentage */
	int64_t value;		/* absolute limit, or the relative amount */
};

/* Parse a rule, METRIC OP VALUE, optionally "comm=NAME:" first; 0, or -1
 * with a one-line reason in err ("unknown metric 'arenaz'", "bad operator
 * in 'arenas<<4'"). */
int mw_rule_parse(const char *text, struct mw_rule *r, char *err, size_t errlen);

/* The outcome of one rule on one report. */
struct mw_verdict {
	int ok;			/* the rule holds */
	int missing;		/* the report (or the baseline) lacks the metric */
	char why[256];		/* missing because the report (or the baseline)
				 * says the figure is unknown: why; "" else */
	int64_t value;		/* the report's */
	int64_t limit;		/* what it was held to */
	int has_baseline;
	int64_t baseline;	/* the baseline's, when relative */
	int run;		/* mw_rule_judge_runs: the report whose value was
				 * judged, 1 the first (0: one report) */
};

/* Judge rule r on report, relative rules against baseline (NULL: a
 * relative rule is missing its baseline, which rule parsing lets the
 * caller reject earlier).  A missing metric fails the rule. */
struct mw_verdict mw_rule_check(const struct mw_rule *r, const json_t *report,
				const json_t *baseline);

/* How check results are written (--format). */
enum mw_format {
	MW_FMT_TEXT,		/* "PASS arenas 5, limit <= 16 (rule 'arenas<=16')" per
				 * rule, then "N passed, N failed" */
	MW_FMT_JSON,		/* {"rules": [...], "passed": N, "failed": N} */
	MW_FMT_JUNIT,		/* JUnit XML (junit-10.xsd's shape), one testcase
				 * per rule */
	MW_FMT_GITHUB,		/* "::error title=...::..." per failed rule (at most
				 * 10), none for the others; a Markdown table of
				 * them all appended to $GITHUB_STEP_SUMMARY when
				 * set */
	MW_FMT_MARKDOWN,	/* a Markdown table */
};

/* "text", "json", "junit", "github", "markdown" -> *f; 0 or -1. */
int mw_format_parse(const char *s, enum mw_format *f);

/* Judge rules[0..n-1] on report (relative ones against baseline) and
 * write the results to out in format f.  Returns how many failed. */
size_t mw_rules_report(FILE *out, enum mw_format f, const struct mw_rule *rules, size_t n,
		       const json_t *report, const json_t *baseline);

/* Write verdicts v[0..n-1] of rules in format f; how many failed.  A
 * write error is left on out (ferror); out of memory exits 1. */
size_t mw_verdicts_write(FILE *out, enum mw_format f, const struct mw_rule *rules,
			 const struct mw_verdict *v, size_t n);

/* Does rule r apply to the process of report (a process's JSON report,
 * docs/json.md: its target's comm, else the last part of its argv[0],
 * against r->comm)?  1 or 0; every rule without a selector applies. */
int mw_rule_selects(const struct mw_rule *r, const json_t *report);

/* The name of the process of a process report (its target's comm, else
 * its argv[0]); NULL unknown.  Owned by report. */
const char *mw_report_process_name(const json_t *report);


/* The key process i of procs (a report's "processes") is known by across
 * runs (--repeat) and in a baseline of several, into buf: its command
 * line (else its command name) and how many before it in procs had the
 * same. */
void mw_report_process_key(const json_t *procs, size_t i, char *buf, size_t len);

/* How repeated runs' values of a metric become one (--aggregate). */
enum mw_aggregate { MW_AGG_WORST, MW_AGG_MAX, MW_AGG_MEDIAN, MW_AGG_MIN };

/* "worst", "max", "median", "min" -> *a; 0 or -1. */
int mw_aggregate_parse(const char *s, enum mw_aggregate *a);

/* How a aggregates rule r's values, by name: "worst" is "max" for <=
 * and <, "min" for >= and >, "worst" for == and !=. */
const char *mw_aggregate_name(const struct mw_rule *r, enum mw_aggregate a);

/* Judge rule r on the values of metric r->metric in reports[0..n-1]
 * (missing in one: missing), aggregated by a; "worst" is the largest
 * for <= and <, the smallest for >= and >, and for == and != the first
 * value that breaks the rule.  Each run's value is printed to log as
 * "mallocwatch: arenas per run: 5 6 5 (max 6)"; the verdict's run is
 * the first report with the value judged. */
struct mw_verdict mw_rule_judge_runs(const struct mw_rule *r, json_t *const *reports, size_t n,
				     enum mw_aggregate a, const json_t *baseline, FILE *log);

/* Judge rules[0..n-1] on runs[0..nruns-1] (reports of several processes,
 * docs/json.md "processes": -p PID,PID,..., --cgroup, -f; several with
 * --repeat): each process of the last run, by the rules that select it,
 * on its value in every run that had it (matched by mw_report_process_key;
 * aggregated by a as mw_rule_judge_runs does when more than one), and
 * write the results to out in format f as one document: a result per
 * process and rule, named by the process ("process 4242 (python3)", the
 * pid of the run whose value was judged, ", run 2 of 3" with several):
 * text a line each, json "rules" entries with "process" (and "run",
 * "runs": each run's pid and value), junit a testcase each (classname
 * mallocwatch.process.NAME.HASH: NAME the command name's letters, digits,
 * '-' and '_', HASH 8 hex digits of the key, so that a CI's test history
 * follows a process from one run to the next), github and markdown
 * likewise.  With several runs each process's values are printed to log
 * (NULL: not) as "mallocwatch: process 'CMD': arenas per run: 1: 5 (pid
 * 100), 2: 6 (pid 200); max 6, run 2".  A baseline of several processes
 * gives each process the baseline of the same key (none: a relative
 * rule's result is missing).  Returns how many failed; *judged (when not
 * NULL) how many results there were. */
size_t mw_rules_report_procs(FILE *out, enum mw_format f, const struct mw_rule *rules, size_t n,
			     json_t *const *runs, size_t nruns, enum mw_aggregate a,
			     const json_t *baseline, size_t *judged, FILE *log);

/* Load a report written with --json.  NULL with a one-line reason in
 * err and *status MW_EXIT_RUNTIME (unreadable) or MW_EXIT_USAGE (not JSON,
 * or not a mallocwatch report). */
json_t *mw_report_load(const char *path, char *err, size_t errlen, int *status);

/* The same from buf[0..len) (named name in err), for the fuzz harness. */
json_t *mw_report_loadb(const char *buf, size_t len, const char *name, char *err, size_t errlen,
			int *status);

/* Do report and baseline differ in what decides arena counts: the glibc
 * version, online CPUs (glibc's default arena limit is 8 x cores),
 * GLIBC_TUNABLES, MALLOC_* variables ("environment", docs/json.md)?  1
 * with the differences in why ("nproc 2 -> 4; ..."), 0 when they agree;
 * -1 when either has no environment (a replay, an older mallocwatch). */
int mw_env_differs(const json_t *baseline, const json_t *report, char *why, size_t len);

/* Warn when baseline and report environments differ (mw_env_differs),
 * or when the baseline has none; with strict, say so as an error and
 * return -1 (the caller exits 2).  0 otherwise. */
int mw_check_env(const json_t *baseline, const json_t *report, int strict);

/* a + b and a - b, clamped to [INT64_MIN, INT64_MAX] instead of
 * overflowing (rule limits, diff changes: a file's figures may be
 * anything). */
int64_t mw_sat_add(int64_t a, int64_t b);
int64_t mw_sat_sub(int64_t a, int64_t b);

/* a * pct / 100, rounded toward zero, exact while it fits in int64_t,
 * clamped past it: the amount of a relative rule's "+pct%". */
int64_t mw_sat_percent(int64_t a, int64_t pct);

/* `mallocwatch diff`: reports a (the base) and b side by side as a new
 * object: {"base": a_name, "new": b_name,
 * "metrics": [{metric, base, new, change, percent}], "arenas":
 * {"appeared", "vanished", "changed"}}; names may be any bytes (escaped,
 * jsonout.h).  When either is a report of several processes, the top is
 * the first processes' and "processes" has every process of b against
 * a's of the same key (mw_report_process_key), and those of one alone
 * (metrics_diff_procs.c).  NULL when out of memory. */
json_t *mw_diff_new(const json_t *a, const json_t *b, const char *a_name, const char *b_name);

/* Write diff (from mw_diff_new) to f as text, JSON or a Markdown table
 * (fmt MW_FMT_TEXT, MW_FMT_JSON, MW_FMT_MARKDOWN).  Errors are left on
 * f (ferror). */
void mw_diff_write(FILE *f, enum mw_format fmt, const json_t *diff);

#endif /* MALLOCWATCH_METRICS_H */
