/* tracer_target.c - the program or process traced: -c's program forked,
 * held and released, ptraced for its exit stop; -p -f's process attached
 * with its tree; their ptrace stops announced to the run loop through a
 * pipe written by SIGCHLD (mw_tr_chld_pipe, emptied by mw_tr_chld_drain).
 * tracer.c's loop, tracer_read.c and tracer_repeat.c call it; it calls
 * none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "proclist.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"

/* A ptrace stop of the program (its exec, its exit, a child's) is seen
 * at once: SIGCHLD writes a byte to this pipe, which the run loop polls.
 * A signal that only interrupted poll(2) was lost when it came before
 * the call (while a line was handled, a sample taken, the libc's layouts
 * read), and the program then waited in its stop for poll's timeout:
 * 100 ms a run when it joined a lingering session, whose program runs at
 * once while the layouts are read.  Both ends non-blocking and
 * close-on-exec; made once. */
int mw_tr_chld_pipe[2] = { -1, -1 };
/* Only the process that made the pipe writes to it: a child of ours that
 * forked without exec keeps the handler, and may have closed the
 * descriptor and reused its number. */
static pid_t chld_owner;

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	if (mw_tr_chld_pipe[1] >= 0 && getpid() == chld_owner && write(mw_tr_chld_pipe[1], "c", 1) < 0) {
		/* full: a byte is waiting already */
	}
	errno = e;
}

/* Empty the SIGCHLD pipe: the stops it announced are read next. */
void mw_tr_chld_drain(void)
{
	char buf[64];

	while (mw_tr_chld_pipe[0] >= 0 && read(mw_tr_chld_pipe[0], buf, sizeof(buf)) > 0)
		;
}

void mw_tr_release(struct run *rn)
{
	if (rn->hold_w < 0)
		return;
	if (mw_pty_start(rn->pty) < 0) {	/* it would run deaf and blocked */
		mw_warn("cannot relay the program's terminal: %s; killing it", strerror(errno));
		mw_tr_signal_child(rn->pidfd, rn->prog, SIGKILL);
	}
	if (write(rn->hold_w, "g", 1) != 1)
		mw_warn("cannot release the program: %s", strerror(errno));
	close(rn->hold_w);
	rn->hold_w = -1;
}

static void catch_chld(void)
{
	struct sigaction sa;

	/* a child of ours that forked without exec makes its own (the
	 * inherited ends are left as they are: it may have reused their
	 * numbers) */
	if (mw_tr_chld_pipe[0] < 0 || chld_owner != getpid()) {
		if (pipe2(mw_tr_chld_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
			mw_tr_chld_pipe[0] = mw_tr_chld_pipe[1] = -1;	/* poll's timeout, as before */
		chld_owner = getpid();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;	/* no SA_RESTART: poll returns EINTR;
					 * no SA_NOCLDSTOP: ptrace stops must wake it */
	sigaction(SIGCHLD, &sa, NULL);
}

/* -p -f: the process and its threads under ptrace from now (ptrace_tree.h),
 * its new processes followed. */
void mw_tr_attach_tree(struct run *rn)
{
	if (!(rn->pt = mw_ptree_attach(rn->prog))) {
		snprintf(rn->r->ptrace_msg, sizeof(rn->r->ptrace_msg), "cannot ptrace process %d "
			 "(%s): the processes it creates are not followed", (int)rn->prog,
			 strerror(errno));
		return;
	}
	catch_chld();
}

/* -c: trace the held program (ptrace_tree.h): its exit stop, the processes it
 * creates (counted, or with -f followed). */
static void seize(struct run *rn)
{
	if (!(rn->pt = mw_ptree_seize(rn->prog, rn->o->procs->follow))) {
		snprintf(rn->r->ptrace_msg, sizeof(rn->r->ptrace_msg), "cannot ptrace the "
			 "program (%s): no snapshot at its exit%s", strerror(errno),
			 rn->o->procs->follow ? ", its processes not followed" : "");
		return;
	}
	if (rn->c->on_new)
		rn->c->on_new(rn->c->ctx, 0, rn->prog);
	catch_chld();
}

/* -c: the program forked and held, ptraced for its exit stop when
 * at_exit is set, on a terminal of its own when ptyrelay.h says so
 * (rn->pty); its exec error comes on *errpipe.  -p: the process.  0, or
 * -1 with err set when it could not be started. */
int mw_tr_start_target(struct run *rn, int *errpipe, char *err, size_t errlen)
{
	const struct mw_tracer_opts *o = rn->o;

	if (mw_procset_starts(o->procs)) {
		if (mw_pty_open(&rn->pty, o->procs->cmd->uid, err, errlen) < 0)
			return -1;
		rn->prog = mw_program_start(o->procs->cmd, rn->pty, &rn->hold_w, errpipe);
		if (rn->prog < 0) {
			snprintf(err, errlen, "cannot fork: %s", strerror(errno));
			mw_pty_close(rn->pty);
			return -1;
		}
		if (rn->c->at_exit)
			seize(rn);
	} else {
		rn->prog = mw_procset_first(o->procs);
	}
	return 0;
}
