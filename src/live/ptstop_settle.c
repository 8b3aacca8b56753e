/* ptstop_settle.c - the held threads let out of malloc before a read
 * (ptstop.h, mw_ptstop_settle): each thread the caller's busy() finds
 * inside malloc runs on for a short slice and is stopped again, until
 * none is, or the deadline passes.  Whether a thread ran in its slice is
 * its CPU time, the first field of /proc/PID/task/TID/schedstat
 * (Documentation/scheduler/sched-stats.rst), in ns:
 *
 *	$ cat /proc/14885/task/14885/schedstat
 *	964733 2894088 2
 *
 * (on the CPU 964733 ns, waiting for one 2894088 ns, 2 time slices).
 */
#include <stdlib.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <time.h>

#include "clock.h"
#include "procmem.h"
#include "ptstop.h"
#include "ptstop_int.h"
#include "xalloc.h"

/* The CPU time thread t has had, in ns (/proc/PID/task/TID/schedstat's
 * first field, sched-stats.rst); 0 when it cannot be read. */
static uint64_t cpu_ns(const struct mw_ptstop *st, const struct mw_ptstop_thread *t)
{
	char path[64], buf[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)st->pid, (int)t->tid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* Let the threads st->t[run[0..n)] go on for about slice_ns (not past
 * deadline), each with the signal it reported (it takes it as it would
 * have), and stop them again by stop_by;
 * how many of them ran for half the slice or more, or -1 when one did not
 * stop in time (it is left mw_ptstop_running: mw_ptstop_all_held is 0) or the
 * process exec'd.  A signal reported meanwhile is kept for the next
 * go or the detach, a job-control stop ends the settling
 * (st->job_stopped), a thread that exits is dropped, one made is held. */
static long run_slice(struct mw_ptstop *st, const size_t *run, size_t n, uint64_t slice_ns,
		      uint64_t deadline, uint64_t stop_by)
{
	long ran = 0;
	uint64_t now = mw_now_ns();

	for (size_t k = 0; k < n; k++) {
		struct mw_ptstop_thread *t = &st->t[run[k]];

		t->cpu_ns = cpu_ns(st, t);
		/* with the signal it reported, if any: it takes it now */
		if (ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)t->sig) == 0) {
			t->stopped = 0;
			t->sig = 0;
		}
	}
	if (now + slice_ns > deadline)
		slice_ns = deadline > now ? deadline - now : 0;
	nanosleep(&(struct timespec){ .tv_nsec = (long)slice_ns }, NULL);
	/* the stops they made of themselves (a signal) first: an interrupt
	 * sent to a thread already stopped stays pending and stops it again
	 * as soon as it is let go, round after round, and it would never run */
	mw_ptstop_poll(st, 0);
	for (size_t k = 0; k < n; k++)
		if (st->t[run[k]].tid && !st->t[run[k]].stopped)
			ptrace(PTRACE_INTERRUPT, st->t[run[k]].tid, 0, 0);
	if (mw_ptstop_wait_stopped(st, stop_by) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		const struct mw_ptstop_thread *t = &st->t[run[k]];

		if (t->tid && cpu_ns(st, t) >= t->cpu_ns + slice_ns / 2)
			ran++;
	}
	return ran;
}

/* The threads busy() finds inside malloc, into run (their number), or
 * -1 when one cannot be let go (busy() cannot tell, or the process is in
 * a job-control stop). */
static long busy_ones(struct mw_ptstop *st, mw_ptstop_busy_fn busy, void *ctx, size_t *run)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct mw_ptstop_thread *t = &st->t[i];
		int b;

		if (!t->tid || t->settled)
			continue;	/* held out of it since, unchanged */
		if (!(b = busy(ctx, t->tid)))
			t->settled = 1;
		if (b < 0 || (b && st->job_stopped))
			return -1;	/* it may not be let go */
		if (b)
			run[n++] = i;
	}
	return (long)n;
}

int mw_ptstop_settle(struct mw_ptstop *st, mw_ptstop_busy_fn busy, void *ctx,
		     uint64_t deadline, uint64_t stop_by)
{
	/* ns: a thread's stop falls at random in what it does, so a longer
	 * slice does not make its being out of malloc likelier; but on a
	 * busy machine a thread let go may not get a CPU at once: while
	 * none of them ran, the slice doubles (up to 1 ms) */
	uint64_t slice = 10000;
	size_t *run = NULL, cap = 0;
	int rounds = 0, ret;

	for (;;) {
		long n, ran;

		mw_ptstop_compact(st);
		if (cap < st->n + 1) {
			free(run);
			run = xcalloc(cap = st->n + 1, sizeof(*run));
		}
		if ((n = busy_ones(st, busy, ctx, run)) < 0 || (n && mw_now_ns() >= deadline)) {
			ret = -1;
			break;
		}
		if (!n) {
			ret = rounds;
			break;
		}
		if ((ran = run_slice(st, run, (size_t)n, slice, deadline, stop_by)) < 0) {
			ret = -1;
			break;
		}
		if (ran)
			slice = 10000;
		else if (slice < 1000000)
			slice *= 2;
		rounds++;
	}
	free(run);
	return ret;
}
