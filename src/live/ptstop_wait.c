/* ptstop_wait.c - the threads of a hold (ptstop_int.h) and the waitpid(2)
 * statuses they report, taken as ptstop.c describes: each thread's stop,
 * a new thread, an exec, an end; the wait until every thread has stopped.
 * ptstop.c (the stop) and ptstop_detach.c (the let-go) stand on it; it
 * calls neither.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ptstop.h"
#include "ptstop_int.h"
#include "xalloc.h"

#define POLL_ALL_NS 5000000ULL	/* the held threads are polled this often */

int mw_ptstop_known(const struct mw_ptstop *st, pid_t tid)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid == tid)
			return 1;
	return 0;
}

void mw_ptstop_add(struct mw_ptstop *st, pid_t tid)
{
	if (st->n == st->cap)
		xgrow((void **)&st->t, st->n, &st->cap, sizeof(*st->t));
	st->t[st->n++] = (struct mw_ptstop_thread){ .tid = tid };
}

/* Drop the threads that are gone. */
void mw_ptstop_compact(struct mw_ptstop *st)
{
	size_t k = 0;

	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid)
			st->t[k++] = st->t[i];
	st->n = k;
}

/* The exec's stop, reported for st->t[i] (the pid): the process is
 * another program now.  Every other thread is gone (their ends, if any
 * are left, are taken); the one left keeps no signal of the old image's
 * and is let go untouched at the detach. */
static void exec_stop(struct mw_ptstop *st, size_t i)
{
	for (size_t k = 0; k < st->n; k++) {
		int status;

		if (k == i || !st->t[k].tid)
			continue;
		while (waitpid(st->t[k].tid, &status, WNOHANG | __WALL) > 0 && WIFSTOPPED(status))
			;
		st->t[k].tid = 0;
	}
	st->t[i].sig = 0;
	st->execd = 1;
}

/* Is a thread held (stopped, not let go yet)? */
int mw_ptstop_held_now(const struct mw_ptstop *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid && st->t[i].stopped)
			return 1;
	return 0;
}

int mw_ptstop_event(struct mw_ptstop *st, size_t i, int status)
{
	unsigned long msg = 0;
	int sig;

	if (!WIFSTOPPED(status)) {
		st->t[i].tid = 0;	/* gone */
		st->t[i].stopped = 0;
		return 0;
	}
	sig = WSTOPSIG(status);
	st->t[i].stopped = 1;
	switch (status >> 16) {
	case PTRACE_EVENT_EXEC:
		exec_stop(st, i);
		break;
	case PTRACE_EVENT_CLONE:	/* a new thread: ours, held from its start */
		if (ptrace(PTRACE_GETEVENTMSG, st->t[i].tid, 0, &msg) == 0 && msg &&
		    !mw_ptstop_known(st, (pid_t)msg))
			mw_ptstop_add(st, (pid_t)msg);
		break;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			st->job_stopped = 1;
		break;
	case 0:	/* a signal-delivery-stop: the signal is given at the detach */
		st->t[i].sig = sig;
		break;
	}
	return 1;
}

int mw_ptstop_poll(struct mw_ptstop *st, int all)
{
	uint64_t now = mw_now_ns();
	int got = 0;

	if (!st->t0)	/* the first stop comes after the poll before */
		st->t0 = st->polled ? st->polled : now;
	st->polled = now;

	if (now >= st->all_at)
		all = 1;
	if (all)
		st->all_at = now + POLL_ALL_NS;
	for (size_t i = 0; i < st->n && !st->execd; i++) {
		pid_t tid = st->t[i].tid, w;
		int status;

		if (tid && st->t[i].has_status) {	/* taken by take_ends */
			st->t[i].has_status = 0;
			mw_ptstop_event(st, i, st->t[i].status);
			got++;
			continue;
		}
		if (!tid || st->t[i].in_call || (st->t[i].stopped && !all))
			continue;
		while ((w = waitpid(tid, &status, WNOHANG | __WALL)) < 0 && errno == EINTR)
			;
		if (w > 0) {
			mw_ptstop_event(st, i, status);
			got++;
		} else if (w < 0) {	/* its tid went to the pid in an exec */
			st->t[i].tid = 0;
			st->t[i].stopped = 0;
			got++;
			if (tid != st->pid && !mw_ptstop_known(st, st->pid))	/* the exec's stop */
				mw_ptstop_add(st, st->pid);
		}
	}
	if (!mw_ptstop_held_now(st) && !st->held_once)
		st->t0 = 0;	/* not held yet */
	else
		st->held_once = 1;
	return got;
}

void mw_ptstop_pause(unsigned spins)
{
	long ns = 20000;

	if (spins < 64) {
		sched_yield();
		return;
	}
	for (unsigned k = 64; k < spins && ns < 200000; k += 64)
		ns *= 2;
	nanosleep(&(struct timespec){ .tv_nsec = ns < 200000 ? ns : 200000 }, NULL);
}

/* The first thread not stopped, or NULL. */
const struct mw_ptstop_thread *mw_ptstop_running(const struct mw_ptstop *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid && !st->t[i].stopped)
			return &st->t[i];
	return NULL;
}

/* Wait until every thread has stopped or is gone, until deadline
 * (CLOCK_MONOTONIC ns): 0, MW_PTSTOP_EXECD or MW_PTSTOP_TIMEOUT. */
int mw_ptstop_wait_stopped(struct mw_ptstop *st, uint64_t deadline)
{
	for (unsigned spins = 0;; spins++) {
		mw_ptstop_poll(st, 0);
		if (st->execd)
			return MW_PTSTOP_EXECD;
		if (!mw_ptstop_running(st))
			return 0;
		if (mw_now_ns() >= deadline)
			return MW_PTSTOP_TIMEOUT;
		mw_ptstop_pause(spins);
	}
}
