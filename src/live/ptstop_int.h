/* ptstop_int.h - what ptstop.c (stop), ptstop_wait.c (the threads' statuses
 * taken), ptstop_settle.c (the threads let out of malloc), ptstop_detach.c
 * (let go) and ptstop_call.c (a call made in a held thread) share.  Not a public interface: ptstop.h is. */
#ifndef MALLOCWATCH_PTSTOP_INT_H
#define MALLOCWATCH_PTSTOP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The options every thread is seized with: an exec stops in
 * PTRACE_EVENT_EXEC (the new image is let go from there, never touched),
 * a thread made by a thread we let run is held from its start
 * (PTRACE_EVENT_CLONE; a fork or vfork is another process, not traced). */
#define MW_PTSTOP_OPTIONS (PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE)

struct mw_ptstop_thread {
	pid_t tid;	/* 0: gone (exited, or lost in an exec) */
	int sig;	/* the signal it reported, given back at the detach */
	int stopped;	/* its stop has been waited for */
	int settled;	/* held where it is not busy (mw_ptstop_settle) */
	int in_call;	/* making a call: its statuses are the call's own */
	int has_status;	/* a waitpid status taken for it (ptstop.c, take_ends) */
	int status;
	uint64_t cpu_ns;	/* its CPU time when last let go */
};

struct mw_ptstop {
	pid_t pid;
	struct mw_ptstop_thread *t;	/* indices stay valid until the next
					 * public call: gone ones are dropped
					 * there (mw_ptstop_compact) */
	size_t n, cap;
	int job_stopped;
	int execd;	/* a thread exec'd: the process is another program,
			 * in its exec stop (t[] holds pid alone) */
	uint64_t t0;	/* CLOCK_MONOTONIC ns: a thread first held since, at most */
	uint64_t polled;	/* the last poll */
	int held_once;	/* t0 is set for good */
	uint64_t all_at;	/* when the held threads are polled next */
	int nice;	/* our thread's nice value before the hold */
	int rt;		/* our thread made SCHED_FIFO for the hold */
};

/* ptstop_wait.c: is tid one of st's threads; add it (not stopped yet). */
int mw_ptstop_known(const struct mw_ptstop *st, pid_t tid);
void mw_ptstop_add(struct mw_ptstop *st, pid_t tid);

/* Take one waitpid(2) status of st->t[i]: a stop (a signal kept for the
 * detach, a job-control stop noted, an exec's stop, a new thread added,
 * held), or its end (dropped).  1 when it is stopped now, 0 when gone. */
int mw_ptstop_event(struct mw_ptstop *st, size_t i, int status);

/* Take every status waiting (WNOHANG) for the threads not stopped, and
 * every few ms for the held ones too (an exit or an exec kills them, and
 * an exec cannot finish until their ends are taken); all: now.  The
 * number of statuses taken. */
int mw_ptstop_poll(struct mw_ptstop *st, int all);

/* Sleep a little between polls: a yield for the first spins, then 20 us
 * up to 200 us. */
void mw_ptstop_pause(unsigned spins);

/* Drop the threads that are gone. */
void mw_ptstop_compact(struct mw_ptstop *st);

/* The first thread not stopped, or NULL; whether a thread is held
 * (stopped, not let go yet). */
const struct mw_ptstop_thread *mw_ptstop_running(const struct mw_ptstop *st);
int mw_ptstop_held_now(const struct mw_ptstop *st);

/* Wait until every thread has stopped or is gone, until deadline
 * (CLOCK_MONOTONIC ns): 0, MW_PTSTOP_EXECD or MW_PTSTOP_TIMEOUT. */
int mw_ptstop_wait_stopped(struct mw_ptstop *st, uint64_t deadline);

/* ptstop_detach.c: let go of every thread seized in an earlier hold that
 * had not stopped when it was to be let go and has stopped since; forget
 * those gone.  Async-signal-safe (ptstop.c's SIGALRM handler runs it). */
void mw_ptstop_let_late_go(void);

#endif /* MALLOCWATCH_PTSTOP_INT_H */
