/* procexec.h - has a running process replaced its program (exec) since
 * it was first looked at?  Told without stopping it, tracing it with
 * ptrace or signalling it (procexec.c): -p without -f, whose tracer
 * totals and snapshots are of the program the process ran when the run
 * started.
 *
 * Two witnesses:
 * - the kernel's sched:sched_process_exec tracepoint, counted on every
 *   CPU by a perf event (perf_event_open(2), PERF_TYPE_TRACEPOINT) whose
 *   filter is "pid == PID": an exec in any of its threads is counted
 *   when it happens (the exec'ing thread has taken the process's pid
 *   then), whatever the process does next, exit included.  Needs root
 *   (or perf_event_paranoid -1) and tracefs's events directory
 *   (/sys/kernel/tracing or /sys/kernel/debug/tracing, mounted for the
 *   tracer); one descriptor per CPU, at most 512 (and a quarter of
 *   RLIMIT_NOFILE) for all processes watched, past which a process is
 *   not counted.  The pid is the kernel's: run from a pid namespace of
 *   its own, mallocwatch's pids are not, and it counts nothing then.  A pid reused after the process exited, by one that execs
 *   before the run ends, is counted too (refused, never shown wrong).
 * - /proc/PID/mem opened at the start: the descriptor keeps the address
 *   space it was opened on; once an exec replaced it, a read of it finds
 *   nothing (0 bytes) while the process lives.  Alone it cannot tell an
 *   exec from an exit once the process has gone, nor see an exec whose
 *   old address space lives on in a process sharing it (clone CLONE_VM
 *   without CLONE_THREAD).
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
 * where it is printed); 0 when no witness saw one.  Once 1, always 1. */
int mw_procexec_check(struct mw_procexec *w, char *why, size_t whylen);

/* Is it counted by the kernel's tracepoint (the first witness)? */
int mw_procexec_counted(const struct mw_procexec *w);

void mw_procexec_free(struct mw_procexec *w);

#endif /* MALLOCWATCH_PROCEXEC_H */
