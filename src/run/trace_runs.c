/* trace_runs.c - the trace command's runs (trace_runs.h): each in a work
 * directory of its own (one -c run, -c --repeat's session, -c -f's tree,
 * -p's processes), -c's runs one after another, --check's verdicts on
 * their reports, and the files a run writes (struct outputs).  Split out of cmd_trace.c, which parses the options and
 * chooses among them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "leftovers.h"
#include "linger.h"
#include "metrics.h"
#include "msg.h"
#include "output.h"
#include "runtime.h"
#include "signals.h"
#include "trace_multi.h"
#include "trace_run.h"
#include "trace_runs.h"
#include "tracer.h"
#include "xalloc.h"

/* --check: judge the runs' own reports (one per -c run with --repeat);
 * the results on stderr, or in --format-output's file.  A failed rule makes a successful run exit
 * MW_EXIT_CHECK; the program's own failure (or mallocwatch's) keeps its
 * status.  n is how many runs gave a report. */
int mw_trace_judge(const struct trace_opts *o, json_t *const *reports, size_t n, int status)
{
	FILE *res = o->format_file ? o->format_file : stderr;
	struct mw_rule *rules;
	struct mw_verdict *v;
	size_t failed, nr = 0;

	if (!o->nrules || !n)
		return status;
	if (o->baseline && mw_check_env(o->baseline, reports[n - 1], o->strict_env) < 0)
		return MW_EXIT_USAGE;
	rules = xcalloc(o->nrules, sizeof(*rules));	/* those for this process */
	for (size_t i = 0; i < o->nrules; i++)
		if (mw_rule_selects(&o->rules[i], reports[n - 1]))
			rules[nr++] = o->rules[i];
	if (nr < o->nrules)
		mw_note("%zu of %zu rules select another process (comm=NAME:)", o->nrules - nr,
			o->nrules);
	if (n == 1)
		failed = mw_rules_report(res, o->format, rules, nr, reports[0], o->baseline);
	else {
		v = xcalloc(nr + 1, sizeof(*v));
		for (size_t i = 0; i < nr; i++)
			v[i] = mw_rule_judge_runs(&rules[i], reports, n, o->aggregate,
						  o->baseline, stderr);
		failed = mw_verdicts_write(res, o->format, rules, v, nr);
		free(v);
	}
	free(rules);
	return failed && status == MW_EXIT_OK ? MW_EXIT_CHECK : status;
}

/* Work directory, sweep, trace, clean.  Returns the exit status; the
 * report as a jansson value in *report when report is not NULL (NULL
 * when the run gave none).  With runs not NULL (-c --repeat without -f):
 * the *runs runs under one session, report an array of *runs reports,
 * *runs set to the runs made. */
int mw_trace_in_workdir(const struct trace_opts *o, const struct mw_target *t,
			const char *libc_path, struct mw_glibc *g, json_t **report, size_t *runs)
{
	char dir[PATH_MAX], err[PATH_MAX + 256], module[64];
	struct outputs out;
	int status = MW_EXIT_RUNTIME;
	pid_t detaching = 0;

	mw_tracer_reap();
	if (mw_outputs_open(o, &out, 1) < 0) {
		mw_outputs_close(o, &out);
		return MW_EXIT_RUNTIME;
	}
	if (!o->linger_ms)	/* --linger: only a run that arms (trace_repeat.c) */
		mw_run_sweep();
	if (mw_workdir_make(dir, sizeof(dir), err, sizeof(err)) < 0)
		mw_error("%s", err);
	else if (o->set)	/* -p PID,PID,... */
		status = mw_run_trace_multi(o, &out, o->set, libc_path, dir, report, &detaching);
	else if (runs)	/* -c --repeat: one session */
		status = mw_run_trace_repeat(o, &out, t, libc_path, dir, report, runs, &detaching);
	else if (o->procs.follow)	/* -c's tree */
		status = mw_run_trace_tree(o, &out, t, libc_path, dir, report, &detaching);
	else
		status = mw_run_trace(o, &out, t, libc_path, dir, g, report, &detaching);
	if (mw_linger_armed())	/* the session's now; it removes it */
		mw_workdir_unlock();
	else if (!detaching || mw_tracer_hand_off(detaching, dir,
						  mw_runtime_module(dir, module, sizeof(module))) < 0)
		mw_workdir_remove(dir);
	if (mw_outputs_close(o, &out) < 0 && (status == MW_EXIT_OK || !t))
		status = MW_EXIT_RUNTIME;
	return status;
}

/* --check of runs of several processes (-p A,B, --cgroup, -f; with -f
 * --repeat too): each process of the last run judged by the rules that
 * select it (comm=NAME:) on its values in every run that had it
 * (matched by command line and order: process_key), against the same
 * process of a baseline of several, and each result named by its
 * process, in one document of --format's. */
int mw_trace_judge_each(const struct trace_opts *o, json_t *const *reports, size_t n, int status)
{
	size_t judged;

	if (!o->nrules || !n)
		return status;
	if (o->baseline && mw_check_env(o->baseline, reports[n - 1], o->strict_env) < 0)
		return MW_EXIT_USAGE;
	if (mw_rules_report_procs(o->format_file ? o->format_file : stderr, o->format, o->rules,
				  o->nrules, reports, n, o->aggregate, o->baseline, &judged, stderr) &&
	    status == MW_EXIT_OK)
		status = MW_EXIT_CHECK;
	if (!judged)
		mw_warn("no rule selected any of the %zu processes",
			json_array_size(json_object_get(reports[n - 1], "processes")));
	return status;
}

/* -c: run the program once, or --repeat times, and judge --check. */
int mw_trace_program(const struct trace_opts *o, const struct mw_target *t)
{
	size_t n = o->repeat ? (size_t)o->repeat : 1, done = 0;
	json_t **reports = xcalloc(n, sizeof(*reports));
	int status = MW_EXIT_OK;

	if ((n > 1 || o->linger_ms) && !o->procs.follow) {	/* one tracer session for the runs */
		done = n;
		status = mw_trace_in_workdir(o, t, t->libc, NULL, o->nrules ? reports : NULL, &done);
		for (size_t i = n = 0; i < done; i++)	/* the runs that gave one */
			if (reports[i])
				reports[n++] = reports[i];
		done = n;
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (n > 1)
			mw_note("run %zu of %zu", i + 1, n);
		status = mw_trace_in_workdir(o, t, t->libc, NULL, o->nrules ? &reports[done] : NULL, NULL);
		done += reports[done] != NULL;
		if (status != MW_EXIT_OK || mw_signal_pending())
			break;	/* the program's failure ends the series */
	}
	/* -f: each process of the tree on its own, named */
	status = o->procs.follow ? mw_trace_judge_each(o, reports, done, status) :
			     mw_trace_judge(o, reports, done, status);
	for (size_t i = 0; i < done; i++)
		json_decref(reports[i]);
	free(reports);
	return status;
}

/* Every output file, before anything runs (trace_run.h). */
int mw_outputs_open(const struct trace_opts *o, struct outputs *out, int with_script)
{
	*out = (struct outputs){ .summary = stderr };
	if (o->out && !(out->summary = mw_output_create(o->out, 0)))
		return -1;
	if (o->json && !(out->json = mw_output_create(o->json, 1)))
		return -1;
	if (o->save_stream && !(out->stream = mw_output_create(o->save_stream, 0)))
		return -1;
	if (o->html && !(out->html = mw_output_create(o->html, 0)))
		return -1;
	if (with_script && o->save_script && !(out->script = mw_output_create(o->save_script, 0)))
		return -1;
	if (o->folded && !(out->folded = mw_output_create(o->folded, 0)))
		return -1;
	return 0;
}

int mw_outputs_close(const struct trace_opts *o, struct outputs *out)
{
	int ret = 0;

	if (out->summary && out->summary != stderr)
		ret |= mw_output_close(out->summary, o->out, out->summary_errno);
	if (out->json)
		ret |= mw_output_close(out->json, o->json, out->json_errno);
	if (out->stream)
		ret |= mw_output_close(out->stream, o->save_stream, 0);
	if (out->html)
		ret |= mw_output_close(out->html, o->html, out->html_errno);
	if (out->script)
		ret |= mw_output_close(out->script, o->save_script, 0);
	if (out->folded)
		ret |= mw_output_close(out->folded, o->folded, out->folded_errno);
	*out = (struct outputs){ 0 };
	return ret;
}
