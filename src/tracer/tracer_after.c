/* tracer_after.c - a run after tracer.c's loop: the tracer left
 * detaching, or reaped (what a killed one left removed: its uprobe
 * definitions, its module, its procfs directory) and how the run ended
 * told (interrupted, the tracer failed before tracing, the program could
 * not exec); then what the run still holds closed, a program never
 * released killed before its first instruction.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leftovers.h"
#include "linger.h"
#include "msg.h"
#include "pidset.h"
#include "release.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"
#include "uprobes.h"

/* The program could not exec: its errno arrives on errpipe. */
static int exec_failed(struct run *rn, int errpipe, char *err, size_t errlen)
{
	int e;

	if (read(errpipe, &e, sizeof(e)) != sizeof(e))
		return 0;
	snprintf(err, errlen, "cannot run '%s': %s", rn->o->procs->cmd->path, strerror(e));
	return -1;
}

/* Reap the tracer (name: argv[0]), say how it ended when it said nothing
 * itself, and after a stapbpf killed by a signal remove what it left. */
static void reap_tracer(struct run *rn, const char *name)
{
	const struct mw_tracer_opts *o = rn->o;
	struct mw_trace_result *r = rn->r;

	while (waitpid(rn->tracer, &r->tracer_status, 0) < 0 && errno == EINTR)
		;
	if (!r->tracer_msg[0] || WIFSIGNALED(r->tracer_status))
		mw_tracer_fate(name, r->tracer_status, r->tracer_msg, sizeof(r->tracer_msg));
	if (o->env->rt == MW_RT_BPF && WIFSIGNALED(r->tracer_status)) {
		int n = mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* ours, the run is over */

		if (n)
			mw_note("removed %d uprobe definitions the dead tracer left", n);
		mw_runtime_procfs_remove(rn->module);
	} else if (o->env->rt == MW_RT_BPF && !rn->lg) {
		mw_runtime_procfs_remove(rn->module);	/* its lock's file (runtime.h) */
	}
	if (o->env->rt == MW_RT_KERNEL && WIFSIGNALED(r->tracer_status) &&
	    mw_sweep_kmods(MW_SWEEP_WAIT_MS) > 0)	/* it could not unload it */
		mw_note("removed the kernel module %s the dead tracer left", rn->module);
	if (o->env->rt == MW_RT_BPF && mw_uprobes_of(rn->tracer) == 0)
		mw_tracer_unrecord(rn->tracer);
	rn->tracer = 0;	/* reaped */
}

/* Close what the run still holds; a program never released is killed
 * before its first instruction. */
void mw_tr_end_run(struct run *rn, int errpipe)
{
	/* an answer still awaited here has no writer left to give it: the
	 * tracer was reaped, or mw_tr_stop_tracer() and mw_tr_flush_end() settled it */
	if (rn->flush_fd >= 0)
		close(rn->flush_fd);
	if (rn->sample_fd >= 0)
		close(rn->sample_fd);
	if (rn->hold_w >= 0) {	/* never released: the program must not run */
		close(rn->hold_w);
		rn->hold_w = -1;
		if (mw_procset_starts(rn->o->procs) && !rn->r->have_status) {
			mw_tr_signal_child(rn->pidfd, rn->prog, SIGKILL);	/* not reaped */
			mw_tr_reap_program(rn, 1);
		}
	}
	if (rn->pidfd >= 0)
		close(rn->pidfd);
	mw_release_close(rn->rel);	/* no release asked of a run that ended */
	rn->rel = NULL;
	if (rn->tracer_fd >= 0)
		close(rn->tracer_fd);
	mw_pty_close(rn->pty);	/* after its last output, before the report */
	rn->r->untraced = mw_ptree_untraced(rn->pt);
	mw_ptree_free(rn->pt);	/* every tracee has ended, or is killed with us */
	mw_pidset_close(rn->pids);
	mw_linger_leave(rn->lg, 0);	/* not drained: the session ends */
	free(rn->watch);
	free(rn->known);
	if (errpipe >= 0)
		close(errpipe);
}

/* After the loop: the tracer left detaching, or reaped (name: its
 * argv[0]) and how the run ended told.  0, or -1 with err. */
int mw_tr_after_loop(struct run *rn, int errpipe, const char *name, char *err,
		     size_t errlen)
{
	const struct mw_tracer_opts *o = rn->o;
	struct mw_trace_result *r = rn->r;

	if (r->samples_unanswered && o->verbose)
		mw_note("%llu samples without a lock-wait count (the tracer had not answered "
			"the one before)", r->samples_unanswered);
	if (rn->flushing)	/* the tracer ended while it flushed */
		mw_tr_flush_end(rn);
	if (rn->detach_bg) {	/* see mw_tr_program_exited() */
		close(rn->out_fd);
		close(rn->err_fd);
		rn->tracer = 0;
		if (rn->handback) {
			r->lingered = !rn->lg->armed;
			mw_linger_leave(rn->lg, 1);
			rn->lg = NULL;
		}
		/* an exec that failed after the checks before it (a file
		 * changed meanwhile, ENOEXEC, E2BIG): said, not reported on */
		return mw_procset_starts(o->procs) && exec_failed(rn, errpipe, err, errlen) < 0 ? -1 : 0;
	}
	reap_tracer(rn, name);
	if (r->interrupted) {
		snprintf(err, errlen, "interrupted by signal %d (%s) before tracing started",
			 r->interrupted, strsignal(r->interrupted));
		return -1;
	}
	if (!r->ready) {
		snprintf(err, errlen, "%s failed before tracing started: %s", name,
			 r->tracer_msg[0] ? r->tracer_msg : "no message");
		return -1;
	}
	if (rn->pidfd >= 0 && !r->stopped) {	/* the tracer ended first */
		r->tracer_died = 1;
		if (mw_procset_starts(o->procs))
			mw_tr_program_exited(rn);
	}
	if (mw_procset_starts(o->procs) && exec_failed(rn, errpipe, err, errlen) < 0)
		return -1;
	return 0;
}
