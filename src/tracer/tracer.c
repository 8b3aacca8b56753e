/* tracer.c - hold, trace, release, stop; see tracer.h.  The run's loop
 * over the tracer's output, the program's ptrace stops, the flush at
 * its exit and the samples; the processes themselves are started in
 * tracer_proc.c and held, released or attached in tracer_target.c, the
 * script compiled and the tracer started in
 * tracer_start.c, the tracer's lines and the answers the loop asks for
 * are read in tracer_read.c, --repeat's next run is tracer_repeat.c's,
 * the program's end (its tree's events, the flush, stopping the tracer)
 * is in tracer_end.c, the run after the loop (the tracer reaped, what it
 * holds closed) in tracer_after.c, a tracer left detaching is watched
 * from tracer_detach.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "leftovers.h"
#include "linger.h"
#include "pidfd.h"
#include "msg.h"
#include "pidset.h"
#include "release.h"
#include "proclist.h"
#include "protocol.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "signals.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"
#include "uprobes.h"
#include "xalloc.h"

#define STOP_GRACE_MS MW_STOP_GRACE_MS

/* --duration has run out, or a signal of ours came: stop the tracer
 * (its end probe still prints the totals), or pass the signal on to a
 * -c program already released, which decides.  *kill_at: when to kill a
 * tracer that makes no progress stopping. */
static void stop_if_asked(struct run *rn, long long *kill_at, int stop_fd_ready)
{
	/* not while a process's old image is being emptied (its exec probe
	 * under way, at most FLUSH_WAIT_MS): the flush a stop asks for would
	 * print and the exec probe delete the same entries at once; the
	 * signal stays pending, the stop file readable */
	if (rn->exec_pid && !rn->stopping)
		return;
	if (stop_fd_ready && !rn->stopping) {	/* serve's end */
		rn->stopping = 1;
		rn->r->stopped = 1;
		mw_tr_stop_attach(rn);
		*kill_at = mw_now_ms() + STOP_GRACE_MS;
	}
	if (rn->stop_at && mw_now_ms() >= rn->stop_at && !rn->stopping) {
		rn->stop_at = 0;	/* --duration: the normal end */
		rn->stopping = 1;
		rn->r->stopped = 1;
		mw_tr_stop_attach(rn);
		*kill_at = mw_now_ms() + STOP_GRACE_MS;
	}
	if (mw_signal_pending()) {
		int sig = mw_signal_take();

		if (!rn->r->ready)
			rn->r->interrupted = sig;	/* before tracing started */
		/* -f: once the program has exited, a signal stops the
		 * following of what it left running */
		int gone = rn->pt && rn->r->have_status;

		if (mw_procset_starts(rn->o->procs) && rn->pidfd >= 0 && rn->r->ready && !gone) {
			mw_pidfd_signal(rn->pidfd, sig);	/* -c: the program decides */
		} else if (!rn->stopping) {
			/* -p (or -c still held): stop tracing; the end
			 * probe still prints the totals */
			rn->stopping = 1;
			rn->r->stopped = !mw_procset_starts(rn->o->procs) || gone;
			if (mw_procset_starts(rn->o->procs))
				mw_tr_stop_tracer(rn);
			else
				mw_tr_stop_attach(rn);
			*kill_at = mw_now_ms() + STOP_GRACE_MS;
		}
	}
}

/* kill_at (mw_now_ms(), 0 for none) has passed: a tracer still removing
 * uprobe definitions gets STOP_GRACE_MS more; one that made no progress
 * is killed.  Returns the new kill_at. */
static long long kill_if_stuck(struct run *rn, long long kill_at)
{
	int left;

	if (!kill_at || mw_now_ms() <= kill_at)
		return kill_at;
	left = mw_uprobes_of(rn->tracer);
	if (left > 0 && left < rn->uprobes_left) {	/* still detaching */
		rn->uprobes_left = left;
		return mw_now_ms() + STOP_GRACE_MS;
	}
	mw_warn("the tracer made no progress stopping for %d s; killing it",
		STOP_GRACE_MS / 1000);
	mw_tr_signal_tracer(rn, SIGKILL);
	return 0;
}

/* The poll loop: until the tracer's stdout and stderr are both at EOF. */
static void loop(struct run *rn)
{
	long long kill_at = 0;

	while (rn->out_fd >= 0 || rn->err_fd >= 0) {
		/* the program's ptrace stops wake poll through mw_tr_chld_pipe */
		int tmo = mw_tr_sample_due(rn, rn->flushing || rn->exec_pid ? 5 :
					   mw_procset_polled(rn->o->procs) ? MW_CGROUP_POLL_MS : 500);
		/* served while the tree is traced (mw_tr_release_serve) */
		struct mw_release_srv *rel = rn->pt && rn->pidfd >= 0 && !rn->tree_over ? rn->rel : NULL;
		struct pollfd p[9] = {
			{ .fd = rn->out_fd, .events = POLLIN },
			{ .fd = rn->err_fd, .events = POLLIN },
			/* -f: the program's end is not the run's */
			{ .fd = rn->pt && rn->r->have_status ? -1 : rn->pidfd, .events = POLLIN },
			{ .fd = rn->sample_fd, .events = POLLIN },
			{ .fd = rn->flush_fd, .events = POLLIN },
			{ .fd = rn->o->procs->kind == MW_PROCS_LISTED ? rn->o->stop_fd : -1,
			  .events = POLLIN },
			{ .fd = rn->pt ? mw_tr_chld_pipe[0] : -1, .events = POLLIN },
			{ .fd = rn->exec_fd, .events = POLLIN },
			{ .fd = mw_release_fd(rel), .events = POLLIN },	/* mallocwatch release */
		};
		int n = poll(p, 9, mw_release_waiting(rel) && tmo > MW_RELEASE_LOOK_MS ?
				  MW_RELEASE_LOOK_MS : tmo);

		stop_if_asked(rn, &kill_at, n > 0 && (p[5].revents & (POLLIN | POLLHUP)));
		mw_tr_read_ready(rn, p, n);
		if (n > 0 && (p[6].revents & POLLIN))
			mw_tr_chld_drain();	/* before the reap: a later stop writes again */
		if (rn->pt && rn->pidfd >= 0 && !rn->tree_over) {
			mw_tr_reap_program(rn, 0);	/* ptrace stops; the exits */
			mw_tr_release_serve(rn);
		}
		mw_tr_cgroup_look(rn);
		if (rn->exec_pid)
			mw_tr_exec_check(rn);
		if (rn->flushing)
			mw_tr_flush_check(rn);
		if (rn->detach_bg)	/* -p: flushed, the tracer left detaching */
			break;
		if (rn->pidfd >= 0 && rn->pt && mw_tr_more_runs(rn))
			continue;	/* --repeat: the next run, or the flush */
		if (rn->pidfd >= 0 && (rn->pt ? rn->tree_over :
				       (n > 0 && (p[2].revents & POLLIN)) || rn->r->have_status)) {
			mw_tr_program_exited(rn);
			if (rn->pidfd < 0)	/* else: another of -p's processes */
				kill_at = mw_now_ms() + STOP_GRACE_MS;
			if (rn->detach_bg)
				break;
		}
		kill_at = kill_if_stuck(rn, kill_at);
	}
}

/* The tracer started: its module's name, the lines a joined session's
 * tracer printed before this run, its record, the processes to watch. */
static void tracer_started(struct run *rn, const char *bo)
{
	const struct mw_tracer_opts *o = rn->o;

	if (o->env->rt != MW_RT_BPF)
		mw_kmod_loaded_name(bo, rn->tracer, rn->module, sizeof(rn->module));
	rn->tracer_fd = mw_pidfd_open(rn->tracer);	/* our child, not reaped: it */
	for (size_t i = 0; o->session && i < rn->lg->npre; i++)
		mw_tr_stdout_line(rn, rn->lg->pre[i]);	/* the program joins, is released */
	if (o->env->rt == MW_RT_BPF && !o->session)
		mw_tracer_record(rn->tracer);	/* its definitions are ours to sweep */
	for (size_t i = 1; i < o->procs->npid; i++)	/* -p's others */
		mw_tr_pid_push(&rn->watch, &rn->nwatch, &rn->capwatch, o->procs->pid[i]);
	if (o->procs->kind == MW_PROCS_CGROUP)
		for (size_t i = 0; i < o->procs->npid; i++)
			mw_tr_pid_push(&rn->known, &rn->nknown, &rn->capknown, o->procs->pid[i]);
}

int mw_trace_run(const struct mw_tracer_opts *o, const struct mw_consumer *c,
		 struct mw_trace_result *r, char *err, size_t errlen)
{
	struct run rn = { .o = o, .r = r, .c = c, .hold_w = -1, .out_fd = -1,
			  .err_fd = -1, .pidfd = -1, .uprobes_left = INT_MAX, .flush_fd = -1,
			  .sample_fd = -1, .tracer_fd = -1, .exec_fd = -1 };
	char bo[4200], pidbuf[32];
	const char *argv[16];
	int errpipe = -1, ret = -1;

	memset(r, 0, sizeof(*r));
	bo[0] = '\0';
	r->lingered = -1;
	rn.errpipe = &errpipe;
	r->runs = mw_procset_starts(o->procs);
	if (mw_tr_compile(&rn, bo, sizeof(bo), err, errlen) < 0)
		return -1;
	if (mw_tr_start_target(&rn, &errpipe, err, errlen) < 0)
		return -1;
	r->pid = rn.prog;
	if (mw_procset_starts(o->procs) && c->on_run)	/* --repeat: the first run */
		c->on_run(c->ctx, 0, rn.prog);
	rn.pidfd = (int)syscall(SYS_pidfd_open, rn.prog, 0);
	if (rn.pidfd < 0) {
		snprintf(err, errlen, "cannot watch process %d: %s", (int)rn.prog, strerror(errno));
		goto cleanup;
	}
	mw_tracer_argv(o->env, rn.prog, pidbuf, bo, argv);
	if (mw_tr_start_tracer(&rn, argv) < 0) {
		snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(errno));
		goto cleanup;
	}
	tracer_started(&rn, bo);
	if (c->arming)
		c->arming(c->ctx);
	loop(&rn);
	ret = mw_tr_after_loop(&rn, errpipe, argv[0], err, errlen);
cleanup:
	mw_tr_end_run(&rn, errpipe);
	return ret;
}
