/* procexec.h - has a running process replaced its program (exec) since
 * it was first looked at?  Told without stopping it, tracing it with
 * ptrace or signalling it (procexec.c): -p without -f, whose tracer
 * totals and snapshots are of the program the process ran when the run
 * started.
 *
 * Three witnesses:
 * - the kernel's sched:sched_process_exec tracepoint, counted by a perf
 *   event (perf_event_open(2), PERF_TYPE_TRACEPOINT) opened on each of
 *   its threads and inherited by the threads they make (not by the
 *   processes they fork): an exec in any of its threads is counted when
 *   it happens, whatever the process does next, exit included.  Such an
 *   event counts only while its own thread runs, so another process's
 *   exec is never counted, not even one given the process's pid after
 *   it exited: that process's figures are kept as of its exit, like any
 *   process's that exits during the run.  The threads are listed from
 *   /proc/PID/task until a listing finds none without a count (at most
 *   64 listings: a process that makes threads faster is said not to be
 *   counted, and is counted in part, on the threads that have a count),
 *   and again at every look (a thread being made at the moment its
 *   maker's count was opened inherits none, and is counted from the
 *   next look: an exec it makes before then is seen by the address
 *   space while the process lives, and goes unseen if the process also
 *   exits before it; no other process can bring that about).  Needs
 *   root (or perf_event_paranoid 1) and tracefs's events directory
 *   (/sys/kernel/tracing or /sys/kernel/debug/tracing, mounted for the
 *   tracer); one descriptor per thread, at most 512 (and a quarter of
 *   RLIMIT_NOFILE) for all processes watched, past which a process is
 *   not counted.
 * - its main thread, counted apart (inherited by none, never closed
 *   before the end; one descriptor a process, outside the 512): an exec from another thread kills the others and
 *   takes the main thread's id, so once the main thread's own task has
 *   gone (its event's poll says POLLHUP) while /proc/PID has an address
 *   space, an exec replaced it, whether or not the thread that made it
 *   had a count (past the descriptors allowed, or not caught by the
 *   listings) and whether or not a process sharing the old address space
 *   keeps it alive; a main thread that exited (pthread_exit) leaves none.
 *   Seen while the process lives: an uncounted thread's exec followed by
 *   the process's exit before the next look is not seen, and such an
 *   exit (the process not wholly counted at the last look) is said to
 *   be one that cannot be told from an exec (mw_procexec_check: 2).
 * - /proc/PID/mem opened at the start: the descriptor keeps the address
 *   space it was opened on; once an exec replaced it, a read of it finds
 *   nothing (0 bytes) while the process lives.  Alone it cannot tell an
 *   exec from an exit once the process has gone, nor see an exec whose
 *   old address space lives on in a process sharing it (clone CLONE_VM
 *   without CLONE_THREAD).  Read once more when the counts are in place:
 *   an exec before they were is seen by it (and a process that exited by
 *   then is taken as exec'd: which it did cannot be told).
 */
#ifndef MALLOCWATCH_PROCEXEC_H
#define MALLOCWATCH_PROCEXEC_H

#include <stddef.h>
#include <sys/types.h>

struct mw_procexec;

/* Start watching pid for an exec.  Never NULL (out of memory dies); a
 * witness that cannot be had is left out (mw_procexec_check says what
 * was watched). */
struct mw_procexec *mw_procexec_open(pid_t pid);

/* Has the process exec'd since mw_procexec_open?  1 with why ("process
 * 42 replaced its program (exec) during the run, now '/bin/sleep' (seen
 * by ...)", the new program's path as the process names it: quote it
 * where it is printed); 2 with why ("process 42 exited during the run,
 * and an exec before its exit cannot be ruled out: ...") when it exited
 * before any look found every thread of it counted (an uncounted
 * thread's exec, then the exit, leave nothing to see; once one did, the
 * threads made later inherit a count); 0 when
 * no witness saw one.  Once 1 or 2, always the same. */
int mw_procexec_check(struct mw_procexec *w, char *why, size_t whylen);

/* Is it counted by the kernel's tracepoint (the first witness), every
 * thread it had at the start? */
int mw_procexec_counted(const struct mw_procexec *w);

void mw_procexec_free(struct mw_procexec *w);

#endif /* MALLOCWATCH_PROCEXEC_H */
