/* trace_multi_report.c - the reports of several processes traced under
 * one session (trace_multi_int.h): each process's summary and JSON as one
 * run of it writes them (with its ppid, and why when it was released),
 * the tree's table (-f), the totals, one page of them all (--html), one
 * JSON of them all; and a process's snapshot, which the tracer's
 * callbacks in trace_multi.c take too.
 *
 * Split out of trace_multi.c, which traces them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "gen.h"
#include "jsonout.h"
#include "msg.h"
#include "procmem.h"
#include "procs.h"
#include "report.h"
#include "runtime.h"
#include "sdtnote.h"
#include "trace_images.h"
#include "trace_multi.h"
#include "trace_multi_int.h"
#include "trace_tree.h"
#include "tracer.h"
#include "view.h"
#include "xalloc.h"

/* pid's allocator now into *out (its layouts loaded, or from the cache
 * per libc file: glibcinfo.h), and with ledger not NULL its RSS ledger
 * into *ledger (NULL when it could not be made); 0, or -1 with err. */
int mw_msink_snapshot(const struct msink *k, pid_t pid, struct mw_snapshot **out,
		      struct mw_ledger **ledger, char *err, size_t errlen)
{
	struct mw_explained e;
	struct mw_glibc g;

	if (mw_glibc_load(pid, &g, err, errlen) < 0)
		return -1;
	if (!ledger)
		return mw_snapshot_read(pid, &g, k->read_timeout_ms, out, err, errlen);
	if (mw_explain_read(pid, &g, k->read_timeout_ms, &e, err, errlen) < 0)
		return -1;
	free(e.f);	/* made again by the reports, with the lock waits */
	*out = e.s;
	*ledger = e.l;
	return 0;
}

/* -f: why process pr has no exit status nor exit snapshot when it was
 * released (into buf: "released 2.5 s into the run by request ...", and
 * when, in seconds since tracing started, into *after_s); else NULL. */
static const char *released_why(const struct msink *k, const struct mw_process *pr, char *buf,
				size_t len, double *after_s)
{
	uint64_t origin = mw_state_origin(mw_procs_state(k->procs, 0));

	if (!pr->released_ns)
		return NULL;
	*after_s = origin && pr->released_ns > origin ? (double)(pr->released_ns - origin) / 1e9 : 0;
	snprintf(buf, len, "released %.1f s into the run by request (mallocwatch release): "
		 "its later forks and execs not followed, no exit snapshot nor ledger at exit",
		 *after_s);
	return buf;
}

/* Process pr's JSON report (v its view): its view's, with its ppid
 * (-f: its parent in the tree) and, when it was released (rel, rel_s as
 * released_why gives them), when and why; NULL out of memory. */
static json_t *process_json(const struct msink *k, const struct mw_process *pr,
			    const struct mw_view *v, const char *rel, double rel_s)
{
	json_t *rep = mw_report_json_value(v);

	if (rep && rel)	/* docs/json.md: why it has no exit figures */
		mw_json_set(&rep, "released", json_pack("{s:f, s:s}", "after_s",
							(double)(long long)(rel_s * 1000) / 1000,
							"why", rel));
	if (rep && json_object_set_new(rep, "ppid", json_integer(k->tree ? pr->parent :
								  pr->ppid)) < 0) {
		json_decref(rep);
		return NULL;
	}
	return rep;
}

/* the room for why a process was released (released_why) */
#define MW_REL_WHY 200

/* Process i's report: its summary as one run of it prints it into *text,
 * its JSON into *rep, of its view, made once, into *vo (it points into
 * *rio, its run info, *envo, its environment, and relbuf, why it was
 * released: the caller's to keep as long as it).  The exit status of
 * that report. */
static int report_one(const struct trace_opts *o, struct outputs *out, struct msink *k,
		      size_t i, const struct mw_trace_result *r, const struct mw_elf *libc,
		      const char *libc_path, enum mw_runtime rt, char **text, json_t **rep,
		      struct mw_run_info *rio, struct mw_environment *envo, struct mw_view **vo,
		      char relbuf[MW_REL_WHY])
{
	struct trace_opts oi = *o;
	pid_t one;
	struct mw_trace_result ri_r = *r;
	struct mw_process *pr = mw_procs_process(k->procs, i);
	size_t len;
	int st;
	double rel_s = 0;
	/* relbuf: the caller's, kept as long as *rio and *vo, which point to it */
	const char *rel = released_why(k, pr, relbuf, MW_REL_WHY, &rel_s);
	const char *xwhy = mw_images_watch_end_why(k->xw, pr);	/* it exec'd */

	if (!pr->at_exit && !rel && !xwhy && mw_process_alive(pr->pid)) {	/* -p: at the end */
		char err[PATH_MAX + 512];

		mw_process_read_title(pr, 1);
		if (k->set && i < k->set->n)
			pr->at_end = mw_run_end_snapshot(pr->pid, k->set->have_g[i] ?
							 &k->set->g[i] : NULL, o->read_timeout_ms,
							 &pr->ledger_end);
		else if (mw_msink_snapshot(k, pr->pid, &pr->at_end, &pr->ledger_end, err,
					   sizeof(err)) < 0)
			mw_warn("process %d: no snapshot at the end: %s", pr->pid, err);
	}
	one = pr->pid;	/* -c -f: the environment is ours */
	oi.procs = k->set ? (struct mw_procset){ .kind = MW_PROCS_PIDS, .pid = &one, .npid = 1 } :
		   (struct mw_procset){ .kind = MW_PROCS_COMMAND };
	ri_r.pid = pr->pid;
	/* -f: each process's end, as waitpid(2) gave it to the tracer (-p -f:
	 * said, not passed on); -p: not ptraced, so not known */
	ri_r.have_status = k->tree && pr->have_status;
	ri_r.status = pr->status;
	if (i)	/* said once, for the run */
		ri_r.tracer_died = 0;
	mw_run_environment(&oi, libc, mw_runtime_name(rt), envo);
	*rio = (struct mw_run_info){
		.argv = k->tree ? (pr->argv ? (const char *const *)pr->argv :
				   (const char *const *)o->cmd) : NULL,
		.comm = !k->tree && pr->comm[0] ? pr->comm : NULL,
		.where = pr->have_where ? &pr->where : NULL,
		.libc = libc_path, .runtime = mw_runtime_name(rt),
		.stopped = r->stopped, .snap_attach = pr->at_attach, .snap_end = pr->at_end,
		.snap_exit = pr->at_exit, .ledger_exit = pr->ledger_exit,
		.ledger_end = pr->ledger_end, .env = envo, .in_tree = k->tree && i > 0,
		.title = pr->title, .title_at_end = pr->title_at_end,
		.stacks = k->stacks, .stacks_pid = pr->pid, .status_not_ours = k->set != NULL,
		.status_why = ri_r.have_status ? NULL : rel ? rel : mw_run_status_why(k->set != NULL,
				k->tree && !r->ptrace_msg[0],
				r->stopped && mw_process_alive(pr->pid)),
		.end_why = pr->at_end || pr->at_exit ? NULL : rel ? rel : xwhy ? xwhy :
			   mw_process_alive(pr->pid) ?
			   "none at the end, see the warnings" : k->tree ?
			   "none at its exit: it could not be read" :
			   "none at the end: the process had exited" };
	/* -f: the program's (a process of its tree was traced for part of
	 * it only); -p: each process armed at the start, traced to the stop */
	if (k->tree ? i == 0 : k->set && i < k->set->n)
		rio->traced_ns = k->traced_ns;
	if (!(out->summary = open_memstream(text, &len)))
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	st = mw_run_conclude(out, pr->st, &ri_r, rio, vo);
	if (fclose(out->summary) != 0)
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	out->summary = NULL;
	*rep = process_json(k, pr, *vo, rel, rel_s);
	return st;
}

/* --html of several processes: one page, the tree's table (-f) first. */
static void html_all(FILE *html, struct outputs *out, struct msink *k, json_t *const *reps,
		     const struct mw_trace_result *r, struct mw_view *const *v, size_t n)
{
	char title[64], *intro = NULL;
	size_t len = 0;
	FILE *t = k->tree ? open_memstream(&intro, &len) : NULL;

	if (t) {
		mw_tree_text(t, k->procs, reps, n, r->set_failed, 0);
		fclose(t);
	}
	snprintf(title, sizeof(title), "%zu processes%s", n, k->tree ? " (-f)" : "");
	if (mw_report_html_procs(html, (const struct mw_view *const *)v, n, title, intro) < 0)
		out->html_errno = errno ? errno : EIO;
	free(intro);
}

/* The totals of the n processes, from their views (view.h): their line
 * (n > 1: and what tracing cost, which one process's summary said) to
 * f; the "totals" object returned (NULL out of memory). */
static json_t *totals(struct mw_view *const *v, size_t n, FILE *f)
{
	struct mw_view_totals t;

	mw_view_totals(v, n, &t);
	mw_view_totals_text(f, &t, n > 1);
	return mw_view_totals_json(&t);
}

/* Each process's summary (as one -p run prints it; -f: the tree first,
 * then the summaries of the processes summarized()) to out->summary, its
 * report into reps[i]; the JSON of them all to out->json.  The exit
 * status: -p the worst; -f the program's. */
int mw_msink_report(const struct trace_opts *o, struct outputs *out, struct msink *k,
		    const struct mw_trace_result *r, const struct mw_elf *libc,
		    const char *libc_path, enum mw_runtime rt, json_t **report)
{
	size_t n = mw_procs_count(k->procs), shown = 0;
	json_t **reps = xcalloc(n, sizeof(*reps)), *arr = json_array(), *top = NULL, *t;
	char **texts = xcalloc(n, sizeof(*texts));
	FILE *json = out->json, *html = out->html, *summary = out->summary;
	struct mw_run_info *ris = xcalloc(n + 1, sizeof(*ris));
	struct mw_environment *envs = xcalloc(n + 1, sizeof(*envs));
	struct mw_view **views = xcalloc(n + 1, sizeof(*views));	/* one a process */
	char (*rels)[MW_REL_WHY] = xcalloc(n + 1, sizeof(*rels));	/* their why released */
	int status = MW_EXIT_OK;

	k->traced_ns = mw_run_traced_ns(n ? mw_state_origin(mw_procs_state(k->procs, 0)) : 0, r);
	out->json = out->html = NULL;	/* one JSON of them all, below */
	for (size_t i = 0; i < n; i++) {
		int st = report_one(o, out, k, i, r, libc, libc_path, rt, &texts[i], &reps[i],
				    &ris[i], &envs[i], &views[i], rels[i]);

		/* -f: the program's status (a child's is its own, in the tree) */
		if (k->tree ? i == 0 : st != MW_EXIT_OK)
			status = st;
		if (!reps[i] || json_array_append(arr, reps[i]) < 0) {
			mw_error("cannot make the report: %s", strerror(ENOMEM));
			status = MW_EXIT_RUNTIME;
			goto out;
		}
	}
	out->summary = summary;
	if (k->tree)
		mw_tree_text(summary, k->procs, reps, n, r->set_failed, 1);
	if (k->before)	/* -p -f: what it does not cover */
		fprintf(summary, "  %s\n", k->before);
	for (size_t i = 0; i < n; i++) {
		if (k->tree && !mw_tree_summarized(k->procs, i, n))
			continue;
		fprintf(summary, "%s%s", shown++ || k->tree ? "\n" : "", texts[i]);
	}
	t = totals(views, n, summary);
	if (html)
		html_all(html, out, k, reps, r, views, n);
	/* the first process's report at the top, as a single run writes it */
	top = json_deep_copy(reps[0]);
	if (!t || !top || json_object_set_new(top, "schema_version", json_integer(2)) < 0 ||
	    json_object_set(top, "processes", arr) < 0 || json_object_set_new(top, "totals", t) < 0) {
		mw_error("cannot make the report: %s", strerror(ENOMEM));
		status = MW_EXIT_RUNTIME;
		goto out;
	}
	if (json && mw_json_write(top, json, JSON_INDENT(2)) < 0)
		out->json_errno = errno ? errno : EIO;
	if (report)
		*report = json_incref(top);
out:
	out->summary = summary;
	out->json = json;
	out->html = html;
	json_decref(top);
	json_decref(arr);
	for (size_t i = 0; i < n; i++) {
		json_decref(reps[i]);
		free(texts[i]);
		mw_view_free(views[i]);
	}
	free(views);
	free(texts);
	free(reps);
	free(ris);
	free(envs);
	free(rels);
	return status;
}

