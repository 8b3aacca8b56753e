/* tracer_repeat.c - --repeat's runs under tracer.c's one session
 * (tracer.h, procs->runs): once a run's program and every process it
 * made have ended, the next run's program started held, put in the set
 * and released; or, when the series ends early, the flush asked once.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msg.h"
#include "pidfd.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "signals.h"
#include "tracer.h"
#include "tracer_int.h"

/* --repeat: may run run_i + 1 start?  Run run_i ended well (exit 0), runs
 * remain, the session is still there and nothing asked us to stop. */
static int next_run_due(const struct run *rn)
{
	const struct mw_trace_result *r = rn->r;

	return rn->o->procs->runs > 1 && rn->run_i + 1 < rn->o->procs->runs && r->have_status &&
	       WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 && !mw_signal_pending() &&
	       !rn->stopping && !rn->flushing && !r->flushed && rn->tracer > 0 &&
	       rn->out_fd >= 0 && rn->pids;
}

/* --repeat: start the next run's program, held, under this session: its
 * pid joins the set before it is released (procs->runs).  1 when it runs;
 * 0 when it could not be started (warned; the run before stays the
 * last). */
static int next_run(struct run *rn)
{
	struct run was = *rn;
	char err[PATH_MAX + 128];
	int ep = -1, fd;

	err[0] = '\0';
	rn->pt = NULL;
	rn->pty = NULL;
	if (mw_tr_start_target(rn, &ep, err, sizeof(err)) < 0 || !rn->pt ||
	    (fd = mw_pidfd_open(rn->prog)) < 0) {
		if (!rn->pt && rn->prog > 0 && !err[0])
			snprintf(err, sizeof(err), "%s", rn->r->ptrace_msg);
		mw_warn("cannot start run %d: %s; the series ends", rn->run_i + 2,
			err[0] ? err : strerror(errno));
		if (rn->hold_w >= 0) {	/* never released: killed before it runs */
			close(rn->hold_w);
			kill(rn->prog, SIGKILL);
			waitpid(rn->prog, NULL, __WALL);
		}
		mw_ptree_free(rn->pt);
		mw_pty_close(rn->pty);
		if (ep >= 0)
			close(ep);
		*rn = was;
		return 0;
	}
	mw_ptree_free(was.pt);
	mw_pty_close(was.pty);
	close(was.pidfd);
	if (*rn->errpipe >= 0)
		close(*rn->errpipe);
	*rn->errpipe = ep;
	rn->pidfd = fd;
	rn->tree_over = 0;
	rn->next_sample = 0;
	rn->samples_taken = 0;
	rn->r->pid = rn->prog;
	rn->r->have_status = rn->r->exit_stopped = 0;
	rn->run_i++;
	rn->r->runs++;
	mw_tr_set_add(rn, rn->prog);
	if (rn->c->on_run)
		rn->c->on_run(rn->c->ctx, rn->run_i, rn->prog);
	mw_tr_release(rn);
	return 1;
}

/* --repeat, the run's program has ended: start the next run, or, when
 * the series ended before its last run, ask the flush once (its exit
 * stop did not).  1 while the session goes on (a run started, the flush
 * under way); 0 when the run is over (mw_tr_program_exited()). */
int mw_tr_more_runs(struct run *rn)
{
	if (rn->o->procs->runs < 2 || !rn->tree_over)
		return 0;
	if (next_run_due(rn) && next_run(rn))
		return 1;
	if (!rn->r->flushed && !rn->flushing && !rn->late_flush && rn->o->flush &&
	    rn->r->ready && !rn->stopping && rn->out_fd >= 0 && rn->tracer > 0) {
		rn->late_flush = 1;
		mw_tr_flush_ask(rn);
	}
	return rn->flushing;
}
