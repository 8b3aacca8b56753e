/* trace_runs.h - the trace command's runs and --check's verdicts on
 * them (trace_runs.c), and which run its processes get (trace_procs.c),
 * for cmd_trace.c.
 */
#ifndef MALLOCWATCH_TRACE_RUNS_H
#define MALLOCWATCH_TRACE_RUNS_H

#include <stddef.h>

#include <jansson.h>

#include "glibcinfo.h"
#include "target.h"
#include "trace_run.h"

/* --check: judge the runs' own reports (one per -c run with --repeat);
 * the results on stderr, or in --format-output's file.  A failed rule
 * makes a successful run exit MW_EXIT_CHECK; the program's own failure
 * (or mallocwatch's) keeps its status.  n is how many runs gave a
 * report. */
int mw_trace_judge(const struct trace_opts *o, json_t *const *reports, size_t n, int status);

/* --check of runs of several processes (-p A,B, --cgroup, -f): each
 * process of the last run judged by the rules that select it, in one
 * document of --format's. */
int mw_trace_judge_each(const struct trace_opts *o, json_t *const *reports, size_t n,
			int status);

/* Work directory, sweep, trace, clean: one run of o (t: -c's program;
 * NULL for -p), its exit status; its report in *report when report is
 * not NULL; with runs not NULL, -c --repeat's runs under one session. */
int mw_trace_in_workdir(const struct trace_opts *o, const struct mw_target *t,
			const char *libc_path, struct mw_glibc *g, json_t **report, size_t *runs);

/* -c: run the program once, or --repeat times, and judge --check. */
int mw_trace_program(const struct trace_opts *o, const struct mw_target *t);

/* The trace command's run of o's processes (procset.h, trace_procs.c):
 * -c's program (its runs, as mw_trace_program makes them), -p's one
 * process, or several in one run; --check's verdicts judged.  The exit
 * status; a process that is not there, or processes on different libc
 * files, end mallocwatch with one line. */
int mw_trace_procs(struct trace_opts *o);

#endif /* MALLOCWATCH_TRACE_RUNS_H */
