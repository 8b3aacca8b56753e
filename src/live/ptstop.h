/* ptstop.h - hold every thread of a process still for a moment, with
 * ptrace(2), and let it go again as it was.
 *
 * A snapshot (snapshot.h) of a process whose threads allocate all the
 * time cannot be read consistently while they run.  mw_ptstop_stop()
 * lists /proc/PID/task, attaches to each thread with PTRACE_SEIZE (no
 * SIGSTOP is sent: the process does not see it) and stops it with
 * PTRACE_INTERRUPT, waits for each stop (waitpid with __WALL), and lists
 * the threads again until no new one has appeared (a thread stopped
 * inside clone() has its child listed by then).  A thread may report a
 * signal instead (a signal-delivery-stop): that signal is kept and given
 * back to it at the detach, so no signal is lost; a process in a
 * job-control stop (SIGSTOP) stays stopped after it.  mw_ptstop_resume()
 * detaches from every thread (PTRACE_DETACH), on every path.
 *
 * Needs the right to ptrace the process (root, CAP_SYS_PTRACE, or the
 * same user under kernel.yama.ptrace_scope 0), and fails when another
 * tracer (gdb, strace) is attached to any of its threads: a process has
 * one tracer.  The caller must not be tracing it already, and must call
 * both functions from the same thread (ptrace ties a tracee to the
 * tracing thread).
 */
#ifndef MALLOCWATCH_PTSTOP_H
#define MALLOCWATCH_PTSTOP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mw_ptstop;

enum {
	MW_PTSTOP_OK = 0,
	MW_PTSTOP_GONE = -1,	/* the process exited (or never was) */
	MW_PTSTOP_DENIED = -2,	/* not allowed, or traced by another */
	MW_PTSTOP_TIMEOUT = -3,	/* a thread did not stop in time */
};

/* Stop every thread of pid within timeout_ms milliseconds (> 0) into a
 * new *out.  MW_PTSTOP_OK; else nothing is left attached and err has a
 * one-line reason: MW_PTSTOP_GONE ("process 42 exited"),
 * MW_PTSTOP_DENIED ("process 42 is traced by process 7 (gdb)", "cannot
 * ptrace process 42: Operation not permitted"), MW_PTSTOP_TIMEOUT
 * ("thread 43 of process 42 did not stop within 200 ms"). */
int mw_ptstop_stop(pid_t pid, long timeout_ms, struct mw_ptstop **out, char *err,
		   size_t errlen);

/* The threads held. */
size_t mw_ptstop_threads(const struct mw_ptstop *st);

/* Was the process in a job-control stop (SIGSTOP, SIGTSTP, ...) when it
 * was stopped?  Then it stays stopped after mw_ptstop_resume: letting
 * it go does not let it run.  1 or 0. */
int mw_ptstop_job_stopped(const struct mw_ptstop *st);

/* Is thread tid, held, perhaps half-way through changing the
 * allocator?  1 yes, 0 no, -1 cannot be told. */
typedef int (*mw_ptstop_busy_fn)(void *ctx, pid_t tid);

/* Bring the held threads to a point where none is busy (busy(ctx, tid)
 * is 0 for each): the busy ones are let go alone for a moment (20 us,
 * doubled each round up to 1 ms; PTRACE_CONT, then PTRACE_INTERRUPT)
 * while the others stay held, until none is busy.  A thread held outside
 * the allocator cannot enter it meanwhile, so the busy ones only finish
 * what they do.  Returns the rounds it took (0: none was busy), or -1
 * when it cannot be done: past deadline (CLOCK_MONOTONIC ns), a process
 * in a job-control stop (not to be let run), or a thread busy() cannot
 * tell.  A signal a thread reported is given to it when it is let go
 * (or at the detach): none is lost or delayed beyond the hold.  No single-stepping: the
 * threads run as they would. */
int mw_ptstop_settle(struct mw_ptstop *st, mw_ptstop_busy_fn busy, void *ctx,
		     uint64_t deadline);

/* Detach from every thread, giving each the signal it reported, and free
 * st.  Returns how long the process was held, in nanoseconds: from the
 * first thread's attach to the last one's detach. */
uint64_t mw_ptstop_resume(struct mw_ptstop *st);

/* mw_ptstop_resume, but into a job-control stop: SIGSTOP is queued to
 * each thread, which takes it before it runs an instruction of its own,
 * so the process stays exactly where it was held (for a debugger, a core
 * dump) until SIGCONT.  A signal a thread had reported is queued to it
 * again (tgkill), to be taken after SIGCONT.  Returns as
 * mw_ptstop_resume. */
uint64_t mw_ptstop_leave_stopped(struct mw_ptstop *st);

/* Make a held thread call fn(arg) in the process (x86_64: a thread with
 * no signal to take, its registers and extended state (PTRACE_GETREGSET
 * NT_X86_XSTATE) saved; a frame below its stack's red zone whose return
 * address is 0; the call's return traps there with SIGSEGV, which is
 * not given to it), then put it back as it was, held; the other threads
 * stay held meanwhile.  The caller makes sure fn takes no lock another
 * held thread holds (mw_ptstop_settle, snapshot.h's mw_snapshot_hold).
 * Signals that came for it meanwhile are queued to it again (tgkill).
 * 0 with fn's return value (rax) in *ret; -1 with a one-line reason in
 * err (no thread can call: the process is in a job-control stop; its
 * registers cannot be read; the thread exited or faulted).  If
 * mallocwatch dies during the call, the thread returns to address 0 and
 * the process gets SIGSEGV, as with gdb's "call". */
int mw_ptstop_call(struct mw_ptstop *st, uint64_t fn, uint64_t arg, uint64_t *ret, char *err,
		   size_t errlen);

#endif /* MALLOCWATCH_PTSTOP_H */
