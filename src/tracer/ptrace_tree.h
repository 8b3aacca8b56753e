/* ptrace_tree.h - the processes of a -c run under ptrace: its program, and with
 * -f every process created in its tree.
 *
 * The program is traced with PTRACE_SEIZE (no stop, no signal of ours;
 * ptrace(2)) and these options: PTRACE_O_TRACEEXIT (its exit stop, where
 * its memory is still there to be read), PTRACE_O_TRACEFORK and
 * PTRACE_O_TRACEVFORK (the processes it creates), PTRACE_O_TRACEEXEC.
 * Following (-f) adds PTRACE_O_TRACECLONE: every thread is traced too,
 * so that a fork from any thread is seen, and every new process is
 * traced the same way.  Without -f a new process is counted and let go
 * (PTRACE_DETACH at its first stop, before it ran an instruction).
 *
 * Signals are passed on unchanged; group-stops stay stopped
 * (PTRACE_LISTEN) as without a tracer.  A tracee's stops are found by
 * waitpid(TID, WNOHANG | __WALL) on the tids known, so no other child of
 * mallocwatch's (the tracer) is ever reaped here.
 */
#ifndef MALLOCWATCH_PTREE_H
#define MALLOCWATCH_PTREE_H

#include <stddef.h>
#include <sys/types.h>

enum mw_ptree_kind {
	/* a new process (pid) created by parent; held stopped before its
	 * first instruction until the next mw_ptree_next() (-f only) */
	MW_PT_NEW,
	/* pid replaced its program (execve); held until the next call */
	MW_PT_EXEC,
	/* pid's leader is at its exit stop (its memory still there); held
	 * until mw_ptree_release(pid) */
	MW_PT_EXIT_STOP,
	/* pid (a process, its last thread) is gone; status as waitpid(2)
	 * gives it */
	MW_PT_EXITED,
	/* pid's leader entered a group-stop (SIGSTOP, SIGTSTP, ...) and
	 * stays stopped there, as it would untraced */
	MW_PT_STOPPED,
};

struct mw_ptree_event {
	enum mw_ptree_kind kind;
	pid_t pid;
	pid_t parent;	/* MW_PT_NEW */
	int status;	/* MW_PT_EXITED */
	/* MW_PT_EXEC: the programs the process has run, this one included
	 * (at most 65535; 0 unknown): 1 is the one it started (the program's
	 * from mallocwatch, a forked process's first); a process seized
	 * while running (-p) counts that program as its first */
	unsigned execs;
};

struct mw_ptree;

/* Trace root (not yet running: held by the caller, our child), following
 * its new processes when follow is set.  NULL with errno set (and the
 * root untraced) when PTRACE_SEIZE fails or memory runs out. */
struct mw_ptree *mw_ptree_seize(pid_t root, int follow);

/* -p -f: trace the running process pid and every thread of it (those
 * created while they are seized included: /proc/PID/task is read again
 * until no new one appears), following its new processes.  Nothing is
 * stopped.  NULL with errno set (and nothing traced) when the process
 * cannot be seized (EPERM: another tracer, or YAMA's ptrace_scope). */
struct mw_ptree *mw_ptree_attach(pid_t pid);

/* The next event that needs the caller, in *ev: 1, or 0 when none is
 * pending now.  Stops that need nobody (signals, new threads, the first
 * stop of a process, exit stops of threads) are dealt with on the way.
 * Never blocks. */
int mw_ptree_next(struct mw_ptree *t, struct mw_ptree_event *ev);

/* Let pid go on from its exit stop (MW_PT_EXIT_STOP), or from the exec
 * stop mw_ptree_hold kept it in. */
void mw_ptree_release(struct mw_ptree *t, pid_t pid);

/* Keep pid in the exec stop (MW_PT_EXEC) the last mw_ptree_next gave,
 * which the next call would have ended, until mw_ptree_release.  0, or
 * -1 when that was not pid's. */
int mw_ptree_hold(struct mw_ptree *t, pid_t pid);

/* Let go of process pid (mallocwatch release, -f): every thread of it
 * stopped (PTRACE_INTERRUPT) and detached, a signal pending in its stop
 * passed on with PTRACE_DETACH (a group-stop stays stopped, as it would
 * untraced); a thread or process it creates in the meantime is let go
 * too, so nothing it does from now on is followed.  The processes it
 * created before stay traced.  It no longer counts in mw_ptree_live and
 * gets no MW_PT_EXITED.  0, or -1 with why set: pid is not a process
 * traced here (a thread, another's, ended), or it is held at its exit or
 * exec stop for the caller (*busy set: it may be asked again). */
int mw_ptree_let_go(struct mw_ptree *t, pid_t pid, int *busy, char *why, size_t len);

/* Processes traced that have not ended (MW_PT_EXITED not yet given). */
size_t mw_ptree_live(const struct mw_ptree *t);

/* Processes created that were not followed (without -f). */
unsigned long mw_ptree_untraced(const struct mw_ptree *t);

/* Forget the tracees (they are detached by their exit, or by
 * mallocwatch's); frees t.  NULL is fine. */
void mw_ptree_free(struct mw_ptree *t);

#endif /* MALLOCWATCH_PTREE_H */
