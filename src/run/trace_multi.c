/* trace_multi.c - several running processes under one tracer session
 * (see trace_multi.h): their models, the sink's tracer callbacks (lines,
 * processes joining, created, exec'ing, exiting, released), the run's
 * start and end; its reports, and the processes' snapshots, in
 * trace_multi_report.c. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gen.h"
#include "msg.h"
#include "procs.h"
#include "protocol.h"
#include "report.h"
#include "runtime.h"
#include "sdtnote.h"
#include "snapattach.h"
#include "snapshot.h"
#include "stacks.h"
#include "trace_images.h"
#include "trace_multi.h"
#include "trace_multi_int.h"
#include "tracer.h"
#include "units.h"
#include "view.h"
#include "xalloc.h"


/* A model made for this run's libc and libm. */
static void prep_state(const struct msink *k, struct mw_state *st)
{
	if (k->libm_path)
		mw_state_set_libm(st, k->libm_path, k->math_sites);
	if (k->have_sym)
		mw_state_set_main_arena_sym(st, k->main_sym);
}

/* No snapshot of pr when tracing started (err why): the figures that
 * need one are unknown in its report (state.h); warned when warn. */
static void attach_refused(struct mw_process *pr, const char *err, int warn)
{
	char why[PATH_MAX + 600];

	snprintf(why, sizeof(why), "no snapshot at attach: %s", err);
	if (warn)
		mw_warn("process %d: %s; its arenas, heaps and thresholds are reported as unknown",
			(int)pr->pid, why);
	mw_state_attach_unknown(pr->st, why);
}

/* --cgroup: pid joined it.  Traced from now when it maps the libc file
 * traced (one script probes one file), from its allocator as it is. */
static int join(void *ctx, pid_t pid)
{
	struct msink *k = ctx;
	struct mw_process *pr;
	struct mw_mapped m;
	char err[PATH_MAX + 512];

	if (mw_mapped_find(pid, MW_LIB_LIBC, &m, err, sizeof(err)) != 1 ||
	    m.ino != k->libc.ino || m.dev_major != k->libc.dev_major ||
	    m.dev_minor != k->libc.dev_minor)
		return -1;
	if (!(pr = mw_procs_add(k->procs, pid)))
		return -1;
	prep_state(k, pr->st);
	mw_process_observe(pr);
	mw_images_watch_add(k->xw, pr, pid, k->libc_path);
	if (k->stacks)
		mw_stacks_watch(k->stacks, pid);
	mw_note("process %d (%s) joined the cgroup; traced from now", (int)pid, pr->comm);
	if (mw_msink_snapshot(k, pid, &pr->at_attach, NULL, err, sizeof(err)) < 0)
		attach_refused(pr, err, 1);
	else
		mw_state_seed(pr->st, pr->at_attach);
	return 0;
}

/* -f: a process just created (held before its first instruction) has a
 * copy of its parent's allocator (fork) or shares it (vfork): its model
 * starts from it, as one attached to would.  No snapshot without the
 * libc's debug symbols: said once. */
static void seed_from_copy(struct msink *k, struct mw_process *pr)
{
	static int warned;
	char err[PATH_MAX + 512];

	if (mw_msink_snapshot(k, pr->pid, &pr->at_attach, NULL, err, sizeof(err)) < 0) {
		if (!warned++)
			mw_note("process %d: no snapshot of the allocator it inherits: %s",
				pr->pid, err);
		attach_refused(pr, err, 0);	/* what it inherits is unknown */
		return;
	}
	mw_state_seed(pr->st, pr->at_attach);
}

/* -f: the pid of old, which exited, is pr's now.  The tracer keeps its
 * totals per pid, and old's stay there (it left the tracer's set, its
 * entries did not): the two processes' are one, and both are refused. */
static void pid_reused(struct mw_process *old, struct mw_process *pr)
{
	static int warned;
	char why[256];

	snprintf(why, sizeof(why), "its pid %d was reused by a later process of the tree while "
		 "traced, and the tracer keeps its totals per pid: those of the two processes "
		 "are one", old->pid);
	if (!warned++)
		mw_warn("process %d: %s: both processes' figures from the tracer are refused in "
			"the report", old->pid, why);
	mw_images_refuse(old->st, NULL, why);
	snprintf(why, sizeof(why), "its pid %d was an earlier process's of the tree, and the "
		 "tracer keeps its totals per pid: those of the two processes are one", pr->pid);
	mw_images_refuse(pr->st, NULL, why);
}

/* -f: the program (parent 0) was started, or a process of its tree was
 * created: a model of its own, what it is. */
static void tree_new(void *ctx, pid_t parent, pid_t pid)
{
	struct msink *k = ctx;
	struct mw_process *pr, *old;

	if (!parent) {	/* the program: the run's first process */
		pr = mw_procs_process(k->procs, 0);
		pr->pid = pid;
		mw_state_set_pid(pr->st, pid);
		return;
	}
	old = mw_procs_by_pid(k->procs, pid);	/* exited: its pid is reused */
	if (!(pr = old ? mw_procs_add_reused(k->procs, pid) : mw_procs_add(k->procs, pid))) {
		mw_warn("process %d: no model (%s); its records are counted as garbled", (int)pid,
			strerror(ENOMEM));
		return;
	}
	if (old)
		pid_reused(old, pr);
	prep_state(k, pr->st);
	mw_process_observe(pr);	/* the parent's program, until it execs */
	pr->parent = parent;
	seed_from_copy(k, pr);
}

/* -f: pid runs a new program: a new allocator (the model starts
 * anew: a process's report is of its last program), its command line,
 * libc, where it lives.  Where the tracer empties the old program's
 * totals (drained), the model starts again at their end, the exec line
 * (procs.c); else now (a created process's first program: what the
 * tracer counted of its parent's copy stays in its totals, tracer.h
 * mw_procset_ptraced), but not at the program's own start. */
static void tree_exec(void *ctx, pid_t pid, unsigned execs, int drained)
{
	struct msink *k = ctx;
	struct mw_process *pr = mw_procs_by_pid(k->procs, pid);

	if (!pr)
		return;
	pr->execs = execs;
	if (!drained && (pr->parent || execs > 1) && mw_procs_renew(k->procs, pr) == 0)
		prep_state(k, pr->st);
	mw_process_observe(pr);
}

/* -f: pid exec'd and the tracer's totals of its old image stay in its
 * new one's (tracer.h on_mixed, after tree_exec renewed its model). */
static void tree_mixed(void *ctx, pid_t pid, const char *why)
{
	struct msink *k = ctx;
	struct mw_process *pr = mw_procs_by_pid(k->procs, pid);

	if (pr)
		mw_images_refuse(pr->st, NULL, why);
}

/* -f: pr, at its exit stop, exec'd a program that was not traced. */
static void untraced_image(const struct msink *k, struct mw_process *pr)
{
	static int warned;
	char why[PATH_MAX + 192];

	if ((pr->parent ? pr->execs < 1 : pr->execs < 2) ||
	    mw_images_untraced(pr->pid, k->libc_path, why, sizeof(why)) != 1)
		return;
	if (!warned++)
		mw_warn("process %d: %s; its figures from the tracer are refused in the report",
			pr->pid, why);
	mw_images_refuse(pr->st, NULL, why);
}

/* -f: pid is at its exit stop: its allocator, while it is there. */
static void tree_exit_stop(void *ctx, pid_t pid)
{
	struct msink *k = ctx;
	struct mw_process *pr = mw_procs_by_pid(k->procs, pid);
	char err[PATH_MAX + 512];

	mw_stacks_sync(k->stacks);	/* its last stacks, while its maps are there */
	if (!pr || pr->at_exit)
		return;
	untraced_image(k, pr);
	mw_process_read_title(pr, 0);	/* a title it gave itself */
	if (mw_msink_snapshot(k, pid, &pr->at_exit, &pr->ledger_exit, err, sizeof(err)) < 0) {
		if (mw_procs_count(k->procs) < 32)
			mw_note("process %d: no snapshot at exit: %s", (int)pid, err);
		return;
	}
	/* the libc's load bias, as the script's B gives it once an event
	 * saw the libc: main_arena is named by its address even when no
	 * probe did */
	for (size_t i = 0; i < pr->at_exit->narenas; i++) {
		const struct mw_snap_arena *a = &pr->at_exit->arenas[i];
		char line[96];

		if (!a->is_main || !k->have_sym || a->addr <= k->main_sym)
			continue;
		snprintf(line, sizeof(line), "%c%d %c %" PRIu64, MW_REC_PROCESS, (int)pid,
			 MW_REC_BIAS, a->addr - k->main_sym);
		mw_procs_line(k->procs, line);
	}
}

static void tree_exited(void *ctx, pid_t pid, int status)
{
	struct mw_process *pr = mw_procs_by_pid(((struct msink *)ctx)->procs, pid);

	if (pr && status != -1) {
		pr->have_status = 1;
		pr->status = status;
	}
}

/* -f: pid was let go on request (tracer.h on_released). */
static void tree_released(void *ctx, pid_t pid)
{
	struct mw_process *pr = mw_procs_by_pid(((struct msink *)ctx)->procs, pid);

	if (pr)
		pr->released_ns = mw_now_ns();
}

/* When the probes are armed: each process's allocator as it is, the
 * start of its model. */
static void attach_snapshots(struct msink *k)
{
	char err[PATH_MAX + 512];

	for (size_t i = 0; k->set && i < k->set->n; i++) {
		struct mw_process *pr = mw_procs_process(k->procs, i);

		mw_process_observe(pr);
		if (!k->set->have_g[i]) {	/* warned about when they were loaded */
			struct mw_glibc g;

			if (mw_glibc_load(pr->pid, &g, err, sizeof(err)) == 0)	/* its reason */
				snprintf(err, sizeof(err), "the libc's layouts were not loaded");
			attach_refused(pr, err, 0);
			continue;
		}
		if (mw_attach_snapshot(pr->pid, &k->set->g[i], k->read_timeout_ms, &pr->at_attach,
				       err, sizeof(err)) < 0) {
			attach_refused(pr, err, 1);
			continue;
		}
		mw_state_seed(pr->st, pr->at_attach);
	}
}

static void on_line(void *ctx, const char *line)
{
	struct msink *k = ctx;

	if (strcmp(line, MW_LINE_READY) == 0) {
		attach_snapshots(k);
		if (k->set && k->tree) {
			size_t nb;

			mw_note("tracing process %d and the processes it creates (-f); ^C or "
				"SIGTERM stops and reports", (int)k->set->pid[0]);
			if ((k->before = mw_tree_before(k->set->pid[0], k->procs, &nb)))
				mw_note("%s", k->before);
		}
		else if (k->set)
			mw_note("tracing %zu process%s; ^C or SIGTERM stops and reports",
				k->set->n, k->set->n == 1 ? "" : "es");
	}
	if (mw_procs_line(k->procs, line) < 0 && !k->garbled_warned++) {
		char q[200];

		mw_warn("garbled tracer line ignored and counted: '%s'", mw_quote(line, q, sizeof(q)));
	}
	if (strcmp(line, MW_LINE_READY) == 0) {
		char o[64];	/* every process is traced from now */

		snprintf(o, sizeof(o), "%c %" PRIu64, MW_REC_ORIGIN, mw_now_ns());
		mw_procs_line(k->procs, o);
	}
}

/* -p, --cgroup, every second: the processes that exec'd (no sample) */
static int watch_execs(void *ctx, pid_t pid)
{
	(void)pid;
	mw_images_watch_check(((struct msink *)ctx)->xw);
	return -1;
}

static unsigned long long exec_owed(void *ctx, pid_t pid)	/* tracer.h */
{
	struct mw_process *pr = mw_procs_by_pid(((struct msink *)ctx)->procs, pid);
	return pr ? mw_state_owed(pr->st) : 0;
}

static unsigned long long missing(void *ctx)
{
	struct msink *k = ctx;
	unsigned long long n = 0;

	for (size_t i = 0; i < mw_procs_count(k->procs); i++)
		n = mw_count_add(n, mw_state_missing(mw_procs_state(k->procs, i)));
	return n;
}

/* The models, their libm and main_arena's link-time address (kept for
 * the processes added later). */
static void start_states(struct msink *k, const struct mw_elf *libc, const char *libm_path,
			 int libm, const struct mw_gen_stats *gst)
{
	k->have_sym = mw_elf_symbol(libc, "main_arena", &k->main_sym) == 0;
	k->libm_path = libm ? libm_path : NULL;
	k->math_sites = gst->math_sites;
	for (size_t i = 0; i < mw_procs_count(k->procs); i++)
		prep_state(k, mw_procs_state(k->procs, i));
}

/* --stacks (bpf runtime): the perf events on, the processes given (-p)
 * watched (-f: mallocwatch's descendants, or theirs, are).  0, or -1
 * said. */
static int stacks_begin(struct msink *k, const char *libc_path, enum mw_runtime rt)
{
	char err[PATH_MAX + 512];

	if (rt == MW_RT_KERNEL) {
		/* (its Q records carry no @PID here: not yet) */
		mw_error("--stacks with -f or several processes: the bpf runtime only "
			 "(--runtime=bpf)");
		return -1;
	}
	if (!(k->stacks = mw_stacks_start(libc_path, err, sizeof(err)))) {
		mw_error("--stacks: %s", err);
		return -1;
	}
	for (size_t i = 0; k->set && i < k->set->n; i++)
		mw_stacks_watch(k->stacks, k->set->pid[i]);
	return 0;
}

/* After the trace: the events off, and only the traced processes' kept
 * (mallocwatch's other children are descendants too). */
static void stacks_end(struct msink *k)
{
	size_t n = mw_procs_count(k->procs);
	pid_t *pids;

	if (!k->stacks)
		return;
	mw_stacks_stop(k->stacks);
	pids = xcalloc(n ? n : 1, sizeof(*pids));
	for (size_t i = 0; i < n; i++)
		pids[i] = mw_procs_process(k->procs, i)->pid;
	mw_stacks_only_set(k->stacks, pids, n);
	free(pids);
}

/* Trace with topts (its env and script filled in here from p) and the
 * consumer c (its ctx and k's callbacks filled in here), then say how
 * the processes were followed and write the reports.  The exit status; *detaching as mw_run_trace_multi says. */
static int trace_and_report(const struct trace_opts *o, struct outputs *out, struct msink *k,
			    const struct mw_run_prep *p, struct mw_tracer_opts *topts,
			    struct mw_consumer *c, const char *libc_path, json_t **report,
			    pid_t *detaching)
{
	char err[PATH_MAX + 512];
	struct mw_trace_result r;
	int status;

	if (o->stacks && stacks_begin(k, libc_path, p->env.rt) < 0)
		return MW_EXIT_RUNTIME;
	if (mw_signal_pending()) {
		int sig = mw_signal_take();

		mw_error("interrupted by signal %d (%s) before tracing started", sig, strsignal(sig));
		return 128 + sig;
	}
	topts->env = &p->env;
	topts->script = p->script;
	topts->verbose = o->verbose;
	topts->flush = 1;	/* the totals while the uprobes are still there,
				 * the tracer then left to remove them */
	c->ctx = k;
	c->line = on_line;
	c->missing = missing;
	c->on_new = tree_new;
	c->on_exec = tree_exec;
	c->on_mixed = tree_mixed;
	c->exec_owed = exec_owed;
	c->on_exited = tree_exited;
	c->on_released = tree_released;
	if (mw_trace_run(topts, c, &r, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return r.interrupted ? 128 + r.interrupted : MW_EXIT_RUNTIME;
	}
	stacks_end(k);
	mw_images_watch_check(k->xw);	/* an exec, now at the latest */
	if (r.ptrace_msg[0])
		mw_note("%s", r.ptrace_msg);
	if (r.set_failed)
		mw_warn("%lu processes could not be added to the tracer's set: their probes were "
			"not traced", r.set_failed);
	if (r.detaching)
		*detaching = r.detaching;
	status = mw_msink_report(o, out, k, &r, p->libc, libc_path, p->env.rt, report);
	mw_run_write_folded(out, k->stacks);
	return status;
}

int mw_run_trace_multi(const struct trace_opts *o, struct outputs *out,
		       const struct mw_attach_set *set, const char *libc_path, const char *dir,
		       json_t **report, pid_t *detaching)
{
	char err[PATH_MAX + 512];
	struct mw_run_prep p = { 0 };
	struct msink k = { .set = set, .read_timeout_ms = o->read_timeout_ms };
	struct mw_procset ps;
	int *pids = xcalloc(set->n, sizeof(*pids));
	int status = MW_EXIT_RUNTIME;

	for (size_t i = 0; i < set->n; i++)
		pids[i] = (int)set->pid[i];
	if (!(k.procs = mw_procs_new(pids, set->n))) {
		mw_error("cannot trace %zu processes: %s", set->n, strerror(ENOMEM));
		goto cleanup;
	}
	if (mw_run_prepare(o, libc_path, dir, pids, set->n, out->script, &p) < 0)
		goto cleanup;
	start_states(&k, p.libc, p.libm_path, p.libm != NULL, &p.gst);
	k.tree = o->procs.follow;	/* -p PID -f */
	if (o->procs.follow)
		mw_procs_set_multi(k.procs);
	if (o->procs.cgroup) {
		if (mw_mapped_find(set->pid[0], MW_LIB_LIBC, &k.libc, err, sizeof(err)) != 1) {
			mw_error("process %d: %s", (int)set->pid[0], err[0] ? err : "maps no libc");
			goto cleanup;
		}
		mw_procs_set_multi(k.procs);	/* even of one process, for now */
	}
	ps = o->procs;	/* -p's, --cgroup's, with -f's follow */
	ps.pid = set->pid;
	ps.npid = set->n;
	if (!k.tree)	/* not ptraced: their execs watched, from before arming */
		k.xw = mw_images_watch_new(NULL);
	for (size_t i = 0; k.xw && i < set->n; i++)
		mw_images_watch_add(k.xw, mw_procs_process(k.procs, i), set->pid[i], libc_path);
	status = trace_and_report(o, out, &k, &p, &(struct mw_tracer_opts){ .workdir = dir,
				  .procs = &ps, .duration_ms = o->duration_ms, .sample_ms = 1000 },
				  &(struct mw_consumer){ .join = join, .sample = k.xw ? watch_execs : NULL,
				  .at_exit = o->procs.follow ? tree_exit_stop : NULL },
				  libc_path, report, detaching);
cleanup:
	mw_images_watch_free(k.xw);
	mw_stacks_free(k.stacks);
	mw_procs_free(k.procs);
	mw_run_prep_free(&p);
	free(pids);
	free(k.before);
	return status;
}

/* -c -f, while the tracer loads: the traced libc's layouts, for the
 * processes' exit snapshots (trace_run_int.h mw_sink_arming). */
static void tree_arming(void *ctx)
{
	struct msink *k = ctx;
	char err[PATH_MAX + 512];

	(void)mw_glibc_preload(k->libc_path, err, sizeof(err));
}

int mw_run_trace_tree(const struct trace_opts *o, struct outputs *out, const struct mw_target *t,
		      const char *libc_path, const char *dir, json_t **report, pid_t *detaching)
{
	struct mw_run_prep p = { 0 };
	struct msink k = { .read_timeout_ms = o->read_timeout_ms, .tree = 1,
			   .libc_path = libc_path };
	int unknown = 0, status = MW_EXIT_RUNTIME;	/* the pid comes at the start */

	if (!(k.procs = mw_procs_new(&unknown, 1)))
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	mw_procs_set_multi(k.procs);
	if (mw_run_prepare(o, libc_path, dir, NULL, 0, out->script, &p) < 0)
		goto cleanup;
	start_states(&k, p.libc, p.libm_path, p.libm != NULL, &p.gst);
	status = trace_and_report(o, out, &k, &p, &(struct mw_tracer_opts){ .workdir = dir,
				  .procs = &(struct mw_procset){ .kind = MW_PROCS_COMMAND, .cmd = t,
				  .follow = 1 } },
				  &(struct mw_consumer){ .at_exit = tree_exit_stop,
				  .arming = tree_arming },
				  libc_path, report, detaching);
cleanup:
	mw_stacks_free(k.stacks);
	mw_procs_free(k.procs);
	mw_run_prep_free(&p);
	return status;
}
