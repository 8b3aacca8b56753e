/* quiet.h - did no thread of a process run between two instants?
 *
 * A snapshot of a running process keeps a walk when a later read finds
 * every word it read the same (snapshot_record.c).  When no thread of the
 * process ran while the walk read it, nothing of malloc's changed, and
 * that second read is not needed.  mw_quiet_begin, before the walk's
 * first read, and mw_quiet_end, after its last, prove it from /proc
 * alone (the argument and its limits: quiet.c):
 *
 *	/proc/PID/task/TID/status	voluntary_ctxt_switches:	2
 *					nonvoluntary_ctxt_switches:	0
 *	/proc/PID/task/TID/syscall	202 0x55d0a7a4e0a0 0x80 ... (asleep: off its CPU)
 *					running			 (not)
 *	/proc/PID/task/TID/children	4243 4250		 (none sharing its memory)
 *	/proc/N/task/T, all		 (kcmp KCMP_VM: no other task shares it)
 */
#ifndef MALLOCWATCH_QUIET_H
#define MALLOCWATCH_QUIET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MW_QUIET_MAX_THREADS 4096	/* more: not tried */
#define MW_QUIET_FEW 8			/* threads: tried whatever the heap */
#define MW_QUIET_RSS_PER (512 * 1024)	/* more threads: tried with at least
					 * this much resident a thread */
#define MW_QUIET_RSS_TASK (16 * 1024)	/* and at least this much resident
					 * for each task on the system (the scan
					 * for a task sharing its memory) */

/* One thread as a sample found it. */
struct mw_quiet_thread {
	pid_t tid;
	int off;		/* seen off its CPU, blocked (syscall not "running") */
	int shares;		/* a child of it shares the memory, or could not be told */
	uint64_t nvcsw, nivcsw;	/* its context switches, voluntary and not */
};

/* The decision: did no thread run between samples a and b (each sorted
 * by tid)?  1 when both hold the same threads, each off its CPU with no
 * child sharing the memory in both, and with the same counts; else 0. */
int mw_quiet_same(const struct mw_quiet_thread *a, size_t na, const struct mw_quiet_thread *b,
		  size_t nb);

/* The two counts from a status file's text: 0, or -1 when either is
 * missing. */
int mw_quiet_counts(const char *status, uint64_t *nvcsw, uint64_t *nivcsw);

/* mw_quiet_begin: pid's threads sampled (before a read): NULL when it
 * cannot be quiet already (a thread runs or is runnable, a file cannot
 * be read, a child shares its memory, more than MW_QUIET_MAX_THREADS),
 * or when the later read it would save is likely cheaper (more than
 * MW_QUIET_FEW threads with less than MW_QUIET_RSS_PER resident each,
 * or less than MW_QUIET_RSS_TASK resident for each task on the system),
 * or when a task that is not one of its threads shares its memory (or
 * kcmp cannot tell).
 * mw_quiet_end (after the read): 1 when no thread ran since, else 0;
 * q is freed (NULL: 0). */
struct mw_quiet;
struct mw_quiet *mw_quiet_begin(pid_t pid);
int mw_quiet_end(struct mw_quiet *q);

#endif /* MALLOCWATCH_QUIET_H */
