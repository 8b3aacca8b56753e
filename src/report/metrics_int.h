/* metrics_int.h - what the files of metrics.h share among themselves:
 * `mallocwatch diff` of one process (metrics_diff.c) and of several
 * (metrics_diff_procs.c), and Markdown's escaping (metrics_verdicts.c). */
#ifndef MALLOCWATCH_METRICS_INT_H
#define MALLOCWATCH_METRICS_INT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "metrics.h"

/* Is r a report of several processes (it has "processes")?  1 or 0. */
int mw_diff_is_multi(const json_t *r);

/* Reports a and b of one process each side by side: {"metrics": [...],
 * "arenas": {...}} as mw_diff_new has them; NULL when out of memory. */
json_t *mw_diff_one(const json_t *a, const json_t *b);

/* Every process of b against a's of the same key (mw_report_process_key),
 * a report of one process counting as one: {"matched_by", "both":
 * [{argv, comm, order, new_pid, base_pid, changed, metrics, arenas}],
 * "appeared": [{argv, comm, order, pid}], "vanished": [...]}; "changed"
 * is how many metrics changed (1 when only arenas did, 0 none).  NULL
 * when out of memory. */
json_t *mw_diff_procs(const json_t *a, const json_t *b);

/* The diff's "processes" (mw_diff_new) as text, and as Markdown. */
void mw_diff_procs_text(FILE *f, const json_t *diff);
void mw_diff_procs_markdown(FILE *f, const json_t *diff);

/* d's "metrics" table (with changed_only, only the rows whose change is
 * not 0) and its "arenas" as diff's text shows them. */
void mw_diff_text_one(FILE *f, const json_t *d, int changed_only);

/* A diff row's cells after the first, as Markdown: " `metric` | base |
 * new | change | percent | unit |" and the newline. */
void mw_diff_md_cells(FILE *f, const json_t *row);

/* Whose result a verdict is, in a run of several processes
 * (metrics_procs.c builds them, metrics_verdicts.c writes them). */
struct mw_who {
	int pid;		/* the process judged: of the run whose value it was */
	char label[192];	/* "process 4242 (python3)"; --repeat: ", run 2 of 3" */
	char cls[96];		/* junit: "mallocwatch.process.python3.1a2b3c4d" */
	/* --repeat: the runs that had the process (nruns; 0 when there was
	 * one run), each one's number (1 the first), pid and value (has 0:
	 * it lacks the metric); run: the number of the one judged */
	size_t nruns;
	int run;
	int *run_no, *run_pid, *run_has;
	int64_t *run_val;
};

/* Write verdicts v[0..n-1] of rules in format f, the i-th of w[i]'s
 * process (w NULL: of the one report's); how many failed. */
size_t mw_verdicts_write_who(FILE *out, enum mw_format f, const struct mw_rule *rules,
			     const struct mw_verdict *v, size_t n, const struct mw_who *w);

/* w's values per run as "1: 5 (pid 100), 2: 6 (pid 200)" into buf ("" for
 * one run). */
const char *mw_who_runs(const struct mw_who *w, char *buf, size_t len);

/* s in a Markdown table's cell: |, <, > and ` escaped. */
void mw_md_cell(FILE *out, const char *s);

#endif /* MALLOCWATCH_METRICS_INT_H */
