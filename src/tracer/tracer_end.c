/* tracer_end.c - the program's end, for tracer.c's run loop (see
 * tracer.h): its tree's ptrace events (ptrace_tree.h), the flush that has the
 * tracer print its aggregates while it still holds its uprobes
 * (protocol.h), the next of several watched processes, and stopping the
 * tracer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "linger.h"
#include "msg.h"
#include "pidfd.h"
#include "pidset.h"
#include "proclist.h"
#include "protocol.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "runtime.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"

/* The flush (flush_start): how long the other threads of an exiting
 * program may take to go, how long the tracer may take to answer, and how
 * long events it counted may trail its answer. */
#define FLUSH_THREADS_MS 500
#define FLUSH_WAIT_MS 3000
#define FLUSH_DRAIN_MS 500

/* Signal a child of ours through its pidfd; a kernel without pidfds
 * (before 5.3) gets kill(2) on the pid, still safe while it is our
 * child and not reaped (callers check that: the pid is 0 once reaped). */
void mw_tr_signal_child(int pidfd, pid_t pid, int sig)
{
	if (mw_pidfd_signal(pidfd, sig) < 0 && errno == EBADF && pid > 0)
		kill(pid, sig);
}

/* stapbpf prints the ready line (its begin probe) before its procfs
 * thread has made the FIFOs: the flush file of a --linger session's
 * tracer was not there yet at the ready line in 15 of 40 runs beside
 * other runs.  A program released then can end before it is (a run of
 * /bin/true beside another make check or under stress-ng: "cannot flush
 * the tracer", and a --linger run then stops the session's tracer).
 * Wait for it, while the tracer lives, FLUSH_WAIT_MS at most. */
void mw_tr_flush_wait(struct run *rn)
{
	char path[PATH_MAX];
	long long until = mw_now_ms() + FLUSH_WAIT_MS;

	if (rn->o->env->rt != MW_RT_BPF || !rn->o->flush ||
	    mw_runtime_procfs_path(MW_RT_BPF, rn->module, rn->lg ? MW_DRAIN_FILE : MW_FLUSH_FILE,
				   path, sizeof(path)) < 0)
		return;
	while (faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && mw_now_ms() < until &&
	       !(rn->tracer_fd >= 0 && mw_pidfd_exited(rn->tracer_fd)))
		usleep(1000);
}

/* Read the script's flush file (protocol.h): the tracer prints its
 * aggregates and MW_LINE_END now; mw_tr_flush_check() completes it.  1 when
 * asked, 0 when it cannot be (warned). */
int mw_tr_flush_ask(struct run *rn)
{
	char err[PATH_MAX + 128];

	if (mw_procfs_ask(rn->o->env->rt, rn->module, rn->o->verbose,
			  rn->lg ? MW_DRAIN_FILE : MW_FLUSH_FILE, &rn->flush_fd, err,
			  sizeof(err)) < 0) {
		mw_warn("cannot flush the tracer (%s); the report waits for its uprobes to be "
			"removed", err);
		return 0;
	}
	rn->flushing = 1;
	rn->flush_start = mw_now_ms();
	rn->flush_until = rn->flush_start + FLUSH_WAIT_MS;
	return 1;
}

/* The program's leader is at its exit stop.  When the whole process is
 * ending (every other thread gone: exit_group kills them, they may take
 * a moment), no probe can fire any more: read the script's flush file so
 * the tracer prints its aggregates now, before it detaches.  The leader
 * stays stopped (its pid cannot be reused) until mw_tr_flush_check() lets it
 * go.  1 when the flush started, 0 when it cannot be used (the reason
 * as a verbose note; the end probe prints the aggregates then). */
static int flush_start(struct run *rn, pid_t pid)
{
	long long until = mw_now_ms() + FLUSH_THREADS_MS;
	int n;

	/* only from the run loop, which completes it (flush_check), and only
	 * while the tracer is there to answer */
	if (!rn->o->flush || !rn->r->ready || rn->stopping || rn->out_fd < 0 || rn->tracer <= 0)
		return 0;
	if (rn->o->procs->runs > 1 && rn->run_i + 1 < rn->o->procs->runs)
		return 0;	/* --repeat: runs to come, under this session */
	while ((n = mw_threads_of(pid)) > 1 && mw_now_ms() < until)
		usleep(1000);
	if (n != 1) {	/* the main thread left early (pthread_exit) */
		if (rn->o->verbose)
			mw_note("no flush: %d threads still running", n);
		return 0;
	}
	/* --linger: out of the set first, so that the drain takes every
	 * hit of it and the maps are empty for the next run */
	if (rn->lg && (!rn->pids || mw_pidset_del(rn->pids, pid) < 0))
		return 0;
	return mw_tr_flush_ask(rn);
}

/* -p: the run ends (--duration, a signal of ours, the process exited).
 * Flush the tracer when it can answer, so the aggregates come while it
 * still holds its uprobes and their removal (slow under stapbpf) goes on
 * without us (flush_end); else stop it, and its end probe prints them. */
void mw_tr_stop_attach(struct run *rn)
{
	mw_procfs_settle(&rn->sample_fd, PROCFS_SETTLE_MS);
	if (!rn->o->flush || !rn->r->ready || rn->out_fd < 0 || rn->tracer <= 0 ||
	    !mw_tr_flush_ask(rn))
		mw_tr_stop_tracer(rn);
}

/* The flush is over, complete or not.  -c: the program's leader goes on
 * (and its exit ends the run).  -p: the tracer is stopped; when the flush
 * was complete and the tracer is still there, it is left to remove its
 * uprobes (the flush turned its handlers off) and the run loop ends. */
void mw_tr_flush_end(struct run *rn)
{
	rn->r->flushed = rn->end_seen;
	rn->r->flush_ms = mw_now_ms() - rn->flush_start;
	rn->flushing = 0;
	mw_procfs_settle(&rn->flush_fd, PROCFS_SETTLE_MS);
	if (rn->pt && rn->flush_pid) {	/* the last process, held at its exit stop */
		mw_ptree_release(rn->pt, rn->flush_pid);
		rn->flush_pid = 0;
		if (!mw_procset_starts(rn->o->procs))	/* -p -f: its end, which comes at once */
			mw_tr_reap_program(rn, 1);
	}
	if (mw_procset_starts(rn->o->procs))
		return;
	if (rn->tracer <= 0)
		return;
	mw_tr_stop_tracer(rn);
	if (rn->r->flushed && rn->out_fd >= 0) {
		rn->detach_bg = 1;
		rn->r->detaching = rn->tracer;
	}
}

/* Is the flush complete: its MW_LINE_END came and every streamed event it
 * counted has arrived (they travel through the tracer's per-CPU buffers
 * and may come after it), or waiting has run out?  Then the program's
 * leader goes on to exit. */
void mw_tr_flush_check(struct run *rn)
{
	long long now = mw_now_ms();
	int done = rn->end_seen && (!rn->c->missing || rn->c->missing(rn->c->ctx) == 0);

	if (rn->end_seen && !done && now >= rn->end_at + FLUSH_DRAIN_MS)
		done = 1;	/* lost for good: the report counts them */
	if (!done && now < rn->flush_until)
		return;
	if (!rn->end_seen)
		mw_warn("the tracer did not answer the flush in %d ms; the report waits for "
			"its uprobes to be removed", FLUSH_WAIT_MS);
	mw_tr_flush_end(rn);
}

/* Open the exec file for the answer (rn->exec_fd; no bytes of it yet):
 * 0, or -1 with err set.  stapbpf makes its FIFOs after its begin probe
 * printed the ready line that released the program, so an exec at once
 * comes before them: then 0 too, and asked again (rn->exec_reask,
 * mw_tr_exec_check) 2 ms later. */
static int exec_open(struct run *rn, char *err, size_t errlen)
{
	rn->exec_got = 0;
	rn->exec_reask = 0;
	if (mw_procfs_ask(rn->o->env->rt, rn->module, rn->o->verbose, MW_EXEC_FILE,
			  &rn->exec_fd, err, errlen) == 0)
		return 0;
	if (errno != ENOENT || rn->o->env->rt != MW_RT_BPF)
		return -1;
	rn->exec_reask = mw_now_ms() + 2;
	return 0;
}

/* pid's figures from the tracer mix its images (full: why, a sentence):
 * the consumer marks them refused (tracer.h on_mixed); warned once a
 * run.  exec_mixed: because the old image's totals were not emptied. */
static void exec_refuse(struct run *rn, pid_t pid, const char *full)
{
	if (!rn->exec_mixed++)
		mw_warn("process %d: %s: its figures from the tracer are refused in the report (so "
			"are those of any other process this happens to)", (int)pid, full);
	if (rn->c->on_mixed)
		rn->c->on_mixed(rn->c->ctx, pid, full);
}

static void exec_mixed(struct run *rn, pid_t pid, const char *why)
{
	char full[PATH_MAX + 320];

	snprintf(full, sizeof(full), "it replaced its image (exec) and the tracer's totals of "
		 "the old one were not emptied for the new one (%s)", why);
	exec_refuse(rn, pid, full);
}

/* Ask the exec probe for pid's old image, pid held at its exec stop:
 * 0, or -1 with why set. */
static int exec_ask(struct run *rn, pid_t pid, char *why, size_t whylen)
{
	char err[PATH_MAX + 128], line[sizeof(rn->exec_line)];

	if (rn->pids)
		snprintf(line, sizeof(line), "%c%d %s", MW_REC_PROCESS, (int)pid, MW_LINE_EXEC);
	else
		snprintf(line, sizeof(line), "%s", MW_LINE_EXEC);
	if (strcmp(line, rn->exec_late) == 0)	/* its answer would be taken for that one's */
		snprintf(err, sizeof(err), "the tracer had not answered its earlier exec");
	else if (rn->pids && mw_pidset_mark(rn->pids, pid) < 0)
		snprintf(err, sizeof(err), "marking it in the tracer's set: %s", strerror(errno));
	else if (rn->pids_failed)	/* a set the script needs (tracer_set.c) */
		snprintf(err, sizeof(err), "the tracer's set could not be opened");
	else if (exec_open(rn, err, sizeof(err)) == 0) {
		rn->exec_pid = pid;
		rn->exec_seen = 0;
		rn->exec_until = mw_now_ms() + FLUSH_WAIT_MS;
		memcpy(rn->exec_line, line, sizeof(line));
		return 0;
	}
	snprintf(why, whylen, "the tracer could not be asked: %s", err);
	return -1;
}

/* A process replaced its image: hold it at the exec stop, where no probe
 * of the old image can fire, and have the script print and empty the old
 * image's aggregates (protocol.h, MW_EXEC_FILE), now or once the one
 * under way is done; mw_tr_exec_check lets it go on.  1 when it will be,
 * 0 when it will not, why set: a tree of more than MW_EXEC_DRAIN_MAX
 * processes (the probe scans every entry of every process seen, a few ms
 * at that size; first: a forked process's first exec, whose old image is
 * the copy of its parent), too many waiting, the tracer not asked. */
/* The processes of the tree so far, whose entries the script's maps may
 * hold: every one put in the set (tracer_set.c), and the script's target
 * (-x: the program, or -p's process), in it from its begin probe, unless
 * the session has none (runtime.h untargeted: the program is put in the
 * set then). */
static unsigned long tree_had(const struct run *rn)
{
	return rn->set_added + !rn->o->env->untargeted;
}

static int exec_start(struct run *rn, pid_t pid, int first, char *why, size_t whylen)
{
	if (!mw_procset_ptraced(rn->o->procs) || !rn->r->ready || rn->stopping || rn->flushing ||
	    rn->out_fd < 0 || rn->tracer <= 0) {
		snprintf(why, whylen, "the tracer could not be asked: %s",
			 rn->out_fd < 0 || rn->tracer <= 0 ? "it had ended" : "tracing was ending");
		return 0;
	}
	if (rn->pids && tree_had(rn) > MW_EXEC_DRAIN_MAX) {
		snprintf(why, whylen, "%s %lu processes, more than %d, past which emptying them "
			 "would scan the totals of every process so far", first ?
			 "its first exec, after it ran a copy of its parent, came once its tree had" :
			 "its tree had", tree_had(rn), MW_EXEC_DRAIN_MAX);
		return 0;
	}
	if (rn->exec_pid && rn->nexec_wait == MW_EXEC_WAIT_MAX) {
		snprintf(why, whylen, "%zu other processes that exec'd waited for the tracer, "
			 "as many as can", rn->nexec_wait);
		return 0;
	}
	if (mw_ptree_hold(rn->pt, pid) < 0) {	/* cannot be: the event was pid's */
		snprintf(why, whylen, "it could not be held at its exec");
		return 0;
	}
	if (rn->exec_pid) {
		rn->exec_wait[rn->nexec_wait++] = pid;
	} else if (exec_ask(rn, pid, why, whylen) < 0) {
		mw_ptree_release(rn->pt, pid);
		return 0;
	}
	return 1;
}

/* The held one's answer did not come in time: its figures are refused,
 * and an answer that comes later is not taken (tracer.c). */
static void exec_late(struct run *rn)
{
	char why[64];

	snprintf(why, sizeof(why), "the tracer did not answer in %d ms", FLUSH_WAIT_MS);
	memcpy(rn->exec_late, rn->exec_line, sizeof(rn->exec_late));
	exec_mixed(rn, rn->exec_pid, why);
}

/* The exec line came: are events of the old image still on their way
 * (tracer.h exec_owed)?  1 while they are and FLUSH_DRAIN_MS has not
 * passed since; once it has, its figures are refused (0). */
static int exec_owed(struct run *rn)
{
	unsigned long long n;
	char why[192];

	if (!rn->c->exec_owed || !(n = rn->c->exec_owed(rn->c->ctx, rn->exec_pid))) {
		rn->exec_owed_until = 0;
		return 0;
	}
	if (!rn->exec_owed_until)
		rn->exec_owed_until = mw_now_ms() + FLUSH_DRAIN_MS;
	if (mw_now_ms() < rn->exec_owed_until && rn->out_fd >= 0)
		return 1;
	rn->exec_owed_until = 0;
	snprintf(why, sizeof(why), "it replaced its image (exec) and %llu streamed events of "
		 "the old one, counted in its emptied totals, had not come in %d ms", n,
		 FLUSH_DRAIN_MS);
	exec_refuse(rn, rn->exec_pid, why);
	return 0;
}

void mw_tr_exec_check(struct run *rn)
{
	char err[PATH_MAX + 128];
	int late;

	/* stapbpf answers a FIFO's reader, then opens the FIFO
	 * (O_NONBLOCK) again and again until that reader is gone; a reader
	 * that comes meanwhile (the next exec's ask, at once: a shim that
	 * execs its program) keeps that loop going, each of its opens
	 * hanging up on us with nothing written, and the probe never runs
	 * for it.  Seen as a hang-up without the answer's bytes
	 * (mw_tr_read_ready in tracer_read.c): asked again once the loop has
	 * seen no reader.  And
	 * before stapbpf has made the FIFO (exec_ask): asked until it is. */
	if (rn->exec_reask && mw_now_ms() >= rn->exec_reask && rn->exec_fd < 0 &&
	    !rn->exec_seen && rn->out_fd >= 0) {
		if (exec_open(rn, err, sizeof(err)) < 0) {
			if (rn->o->verbose)
				mw_note("process %d's exec: cannot ask the tracer again: %s",
					(int)rn->exec_pid, err);
		} else if (rn->o->verbose && rn->exec_fd >= 0) {
			mw_note("process %d's exec: asked the tracer again", (int)rn->exec_pid);
		}
	}
	if (!rn->exec_seen && mw_now_ms() < rn->exec_until && rn->out_fd >= 0)
		return;
	if (rn->exec_seen && exec_owed(rn))
		return;
	late = !rn->exec_seen;
	if (late)
		exec_late(rn);
	mw_procfs_settle(&rn->exec_fd, PROCFS_SETTLE_MS);
	mw_ptree_release(rn->pt, rn->exec_pid);
	rn->exec_pid = 0;
	/* the next, held meanwhile; none once the tracer left one unanswered
	 * (each would be held FLUSH_WAIT_MS more in turn: tracer.h) */
	while (rn->nexec_wait && !rn->exec_pid) {
		pid_t next = rn->exec_wait[0];

		memmove(rn->exec_wait, rn->exec_wait + 1, --rn->nexec_wait * sizeof(pid_t));
		if (rn->out_fd < 0 || rn->stopping)
			snprintf(err, sizeof(err), "the tracer could not be asked: tracing was ending");
		else if (late)
			snprintf(err, sizeof(err), "the tracer did not answer the exec it waited "
				 "behind in %d ms", FLUSH_WAIT_MS);
		if (rn->out_fd < 0 || rn->stopping || late ||
		    exec_ask(rn, next, err, sizeof(err)) < 0) {
			mw_ptree_release(rn->pt, next);
			exec_mixed(rn, next, err);
		}
	}
}

/* One event of the program's tree (ptrace_tree.h).  The exit stop runs
 * at_exit, and the flush when no other process is left; a new process
 * joins the tracer's set before it runs, and leaves it once reaped. */
static void tree_event(struct run *rn, const struct mw_ptree_event *ev)
{
	char why[PATH_MAX + 192];
	int drained, first;

	switch (ev->kind) {
	case MW_PT_NEW:
		if (rn->c->on_new)
			rn->c->on_new(rn->c->ctx, ev->parent, ev->pid);
		mw_tr_set_add(rn, ev->pid);
		break;
	case MW_PT_EXEC:
		/* a process that replaced the program it started (ptrace_tree.h) */
		why[0] = '\0';
		/* and a forked process's first exec (a copy of its parent
		 * ran before it: tracer.h) */
		first = ev->execs == 1 && ev->pid != rn->prog;
		drained = (ev->execs > 1 || first) &&
			exec_start(rn, ev->pid, first, why, sizeof(why));
		if (rn->c->on_exec)
			rn->c->on_exec(rn->c->ctx, ev->pid, ev->execs, drained);
		if (!drained && why[0])
			exec_mixed(rn, ev->pid, why);
		break;
	case MW_PT_EXIT_STOP:
		if (ev->pid == rn->prog && !rn->r->exit_stopped) {
			rn->r->exit_stopped = 1;
			rn->r->exit_ms = mw_now_ms();
		}
		if (rn->c->at_exit)
			rn->c->at_exit(rn->c->ctx, ev->pid);
		if (mw_ptree_live(rn->pt) == 1 && !rn->flushing && flush_start(rn, ev->pid)) {
			rn->flush_pid = ev->pid;	/* held until the flush is done */
			break;
		}
		mw_ptree_release(rn->pt, ev->pid);
		break;
	case MW_PT_EXITED:
		if (rn->pids)
			mw_pidset_del(rn->pids, ev->pid);
		if (rn->c->on_exited)
			rn->c->on_exited(rn->c->ctx, ev->pid, ev->status);
		if (ev->pid == rn->prog && ev->status != -1) {
			rn->r->status = ev->status;
			rn->r->have_status = 1;
		}
		if (ev->pid == rn->prog && mw_ptree_live(rn->pt))
			mw_note("the program exited; %zu process%s it created still run%s: followed "
				"until %s (^C stops)", mw_ptree_live(rn->pt),
				mw_ptree_live(rn->pt) == 1 ? "" : "es",
				mw_ptree_live(rn->pt) == 1 ? "s" : "", mw_ptree_live(rn->pt) == 1 ?
				"it exits" : "they exit");
		if (!mw_ptree_live(rn->pt)) {
			rn->tree_over = 1;
			if (rn->c->run_done)
				rn->c->run_done(rn->c->ctx, rn->run_i, rn->r->have_status ?
					    rn->r->status : -1, mw_ptree_untraced(rn->pt));
		}
		break;
	case MW_PT_STOPPED:
		if (ev->pid == rn->prog && mw_pty_suspend(rn->pty))	/* ptyrelay.h */
			mw_tr_signal_child(rn->pidfd, rn->prog, SIGCONT);
		break;
	}
}

/* Collect the program's state changes (under ptrace, its tree's events);
 * block until it (every process of its tree) has ended when wait is
 * set.  1 once it has (r->status set), else 0. */
int mw_tr_reap_program(struct run *rn, int wait)
{
	struct mw_ptree_event ev;
	int st;
	pid_t w;

	while (rn->pt && !rn->tree_over) {
		if (mw_ptree_next(rn->pt, &ev))
			tree_event(rn, &ev);
		else if (!wait)
			return 0;
		else
			usleep(1000);
	}
	if (rn->pt)
		return 1;
	while ((w = waitpid(rn->prog, &st, (wait ? 0 : WNOHANG) | __WALL)) != 0) {
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return 1;	/* ECHILD: already reaped */
		}
		if (WIFSTOPPED(st))
			continue;
		rn->r->status = st;
		rn->r->have_status = 1;
		return 1;
	}
	return 0;
}

void mw_tr_signal_tracer(struct run *rn, int sig)
{
	mw_tr_signal_child(rn->tracer_fd, rn->tracer, sig);
}

/* Tell the tracer to stop (its end probe prints the aggregates), once a
 * sample asked for is answered: a reader left on the FIFO keeps stapbpf's
 * procfs thread spinning, and when its teardown removes the FIFO that
 * thread's next open fails and ends stapbpf before its end probe. */
void mw_tr_stop_tracer(struct run *rn)
{
	mw_procfs_settle(&rn->sample_fd, PROCFS_SETTLE_MS);
	mw_tr_signal_tracer(rn, SIGINT);
}

/* -p PID,PID,...: watch the next of the processes still there instead;
 * 1 when there is one. */
static int next_process(struct run *rn)
{
	while (rn->next_more < rn->nwatch) {
		pid_t pid = rn->watch[rn->next_more++];
		int fd = mw_pidfd_open(pid);

		if (fd < 0)
			continue;	/* gone already */
		if (mw_pidfd_exited(fd)) {
			close(fd);
			continue;
		}
		close(rn->pidfd);
		rn->pidfd = fd;
		return 1;
	}
	return 0;
}

void mw_tr_program_exited(struct run *rn)
{
	if (mw_procset_starts(rn->o->procs) && !rn->r->have_status)
		mw_tr_reap_program(rn, 1);
	if (!mw_procset_starts(rn->o->procs) && next_process(rn))
		return;
	close(rn->pidfd);
	rn->pidfd = -1;
	if (rn->lg && mw_procset_starts(rn->o->procs) && rn->r->flushed && rn->tracer > 0 &&
	    rn->out_fd >= 0) {
		rn->handback = 1;	/* drained: the session serves the next run */
		rn->detach_bg = 1;
		return;
	}
	if (rn->tracer > 0 && !rn->flushing) {	/* 0 once reaped: the pid may be
						 * another's now */
		if (!mw_procset_starts(rn->o->procs) && !rn->stopping) {
			rn->stopping = 1;
			mw_tr_stop_attach(rn);
		} else {
			mw_tr_stop_tracer(rn);
		}
	}
	if (mw_procset_starts(rn->o->procs) && rn->r->flushed && rn->tracer > 0) {
		/* everything is in: the removal of the uprobes (slow, see
		 * platform.md) goes on without us; nothing is traced any more
		 * (the process is gone, the flush turned the handlers off) */
		rn->detach_bg = 1;
		rn->r->detaching = rn->tracer;
	}
}
