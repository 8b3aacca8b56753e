/* ptstop_detach.c - the held threads let go (ptstop.h, mw_ptstop_resume
 * and mw_ptstop_leave_stopped): as they were, each with the signal it
 * reported, or after an exec the new program untouched, or the whole
 * process into a job-control stop; the priority this thread took for the
 * hold given back; a thread that had not stopped yet let go later, from
 * the next hold or detach of any process.  A job-control stop is the
 * "T" in the state field of /proc/TID/stat (proc(5)):
 *
 *	$ cat /proc/14885/stat
 *	14885 (sleep) T 14883 14883 13593 ...
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "procmem.h"
#include "ptstop.h"
#include "ptstop_int.h"

/* Threads seized that had not stopped when they were to be let go (a
 * thread that takes long to reach its stop): each is let go as soon as
 * it stops, at the next hold or detach of any process.  Without this a
 * long-lived mallocwatch (serve) would hold such a thread in its stop
 * for good. */
#define MAX_LATE 1024
static pid_t late[MAX_LATE];
static size_t nlate;

/* Let go of every late thread that has stopped; forget those gone.
 * Async-signal-safe (take_ends runs it). */
void mw_ptstop_let_late_go(void)
{
	for (size_t i = 0; i < nlate; i++) {
		int status, sig = 0;
		pid_t w = waitpid(late[i], &status, WNOHANG | __WALL);

		if (w == 0)
			continue;	/* not stopped yet */
		if (w > 0 && WIFSTOPPED(status)) {
			if (!(status >> 16) && WSTOPSIG(status) != SIGTRAP)
				sig = WSTOPSIG(status);	/* a signal it is to take */
			ptrace(PTRACE_DETACH, late[i], 0, (void *)(long)sig);
		}
		late[i--] = late[--nlate];
	}
}

/* Is thread tid in a job-control stop ("T" in /proc/TID/stat)? */
static int job_stopped(pid_t tid)
{
	char stat[512];
	const char *f = mw_proc_stat_fields(tid, stat, sizeof(stat));

	return f && *f == 'T';
}

/* Put the process into a job-control stop before its threads are let
 * go: SIGSTOP is queued to the first thread (a signal given at the
 * detach would be taken only by a thread in a signal-delivery-stop:
 * ptrace(2), "Signal injection"), which is let go alone and takes it
 * before it runs an instruction of its own; once it has stopped, the
 * group stop is in effect, and each other thread let go enters it at
 * once (the kernel's __ptrace_unlink).  A signal a thread had reported
 * is queued to it again, to be taken after SIGCONT. */
static void group_stop(struct mw_ptstop *st)
{
	struct mw_ptstop_thread *t = &st->t[0];

	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].sig &&
		    syscall(SYS_tgkill, (int)st->pid, (int)st->t[i].tid, st->t[i].sig) == 0)
			st->t[i].sig = 0;
	if (syscall(SYS_tgkill, (int)st->pid, (int)t->tid, SIGSTOP) < 0)
		return;
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	for (int k = 0; k < 2000 && !job_stopped(t->tid); k++)
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
	t->tid = 0;	/* detached */
}

/* Let go of every stopped thread: as it was, or after an exec the new
 * program as it starts (no signal of the old image's); a thread let go
 * is forgotten.  One killed meanwhile (an exec, an exit) is no longer in
 * its stop: it is kept, mw_ptstop_running, until its end is taken (the tracer must
 * take it, or an exec would wait for ever). */
static void detach_stopped(struct mw_ptstop *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct mw_ptstop_thread *t = &st->t[i];

		if (!t->tid || !t->stopped)
			continue;
		if (ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)(st->execd ? 0 : t->sig)) < 0 &&
		    errno == ESRCH)
			t->stopped = 0;
		else
			t->tid = 0;
	}
}

/* Detach from every thread: as it was, or (stop) into a job-control
 * stop (group_stop).  The threads that have stopped are let go first, so
 * that the process runs on at once; one not stopped yet (after a
 * timeout) can be let go only once it has stopped: it is waited for up
 * to 1 s, then left to mw_ptstop_let_late_go.  How long the process was held: to
 * the first detach, and then while a late one was, at most. */
static uint64_t detach_all(struct mw_ptstop *st, int stop)
{
	uint64_t held, until, last;

	if (!st)
		return 0;
	mw_ptstop_let_late_go();
	mw_ptstop_poll(st, 1);	/* ends, an exec's stop, new threads */
	mw_ptstop_compact(st);
	if (stop && st->n && !st->execd && !mw_ptstop_running(st))
		group_stop(st);
	detach_stopped(st);
	/* none held now: the real-time priority and nice -20 go before the
	 * wait for threads that never stopped (a hostile target's, up to 1 s,
	 * with every thread polled: it kept us real-time that long) */
	if (st->rt)
		sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ .sched_priority = 0 });
	if (st->nice != 99)
		setpriority(PRIO_PROCESS, 0, st->nice);
	last = mw_now_ns();
	held = st->t0 ? last - st->t0 : 0;
	until = last + 1000000000;
	for (unsigned spins = 0; mw_ptstop_running(st) && last < until; spins++) {
		mw_ptstop_poll(st, 0);
		if (mw_ptstop_held_now(st)) {	/* held since the poll before, at most */
			detach_stopped(st);
			held += mw_now_ns() - last;
		}
		last = mw_now_ns();
		mw_ptstop_pause(spins);
	}
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid && nlate < MAX_LATE)
			late[nlate++] = st->t[i].tid;
	free(st->t);
	free(st);
	return held;
}

uint64_t mw_ptstop_resume(struct mw_ptstop *st)
{
	return detach_all(st, 0);
}

uint64_t mw_ptstop_leave_stopped(struct mw_ptstop *st)
{
	return detach_all(st, SIGSTOP);
}
