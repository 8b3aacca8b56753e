/* ptstop.h - hold every thread of a process still for a moment, with
 * ptrace(2), and let it go again as it was.
 *
 * A snapshot (snapshot.h) of a process whose threads allocate all the
 * time cannot be read consistently while they run.  mw_ptstop_stop()
 * lists /proc/PID/task, attaches to each thread with PTRACE_SEIZE (no
 * SIGSTOP is sent: the process does not see it) and stops it with
 * PTRACE_INTERRUPT, waits for each stop (waitpid with __WALL and
 * WNOHANG, see ptstop.c), and lists the threads again until no new one
 * has appeared (a thread stopped inside clone() has its child listed by
 * then).  A thread may report a
 * signal instead (a signal-delivery-stop): that signal is kept and given
 * back to it at the detach, so no signal is lost; a process in a
 * job-control stop (SIGSTOP) stays stopped after it.  mw_ptstop_resume()
 * detaches from every thread (PTRACE_DETACH), on every path.
 *
 * Every thread is seized with PTRACE_O_TRACEEXEC and PTRACE_O_TRACECLONE
 * (not PTRACE_O_EXITKILL: if mallocwatch dies while it holds a process,
 * the kernel lets every thread go as it was, which is right for a stop).
 * A thread made by one that was let run is held from its start.  An exec
 * by any thread ends what was being done (MW_PTSTOP_EXECD,
 * mw_ptstop_execd): the new program is let go from its exec stop at the
 * detach, and nothing of the old image's (registers, a signal) is ever
 * written into it.
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
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct mw_ptstop;

enum {
	MW_PTSTOP_OK = 0,
	MW_PTSTOP_GONE = -1,	/* the process exited (or never was) */
	MW_PTSTOP_DENIED = -2,	/* not allowed, or traced by another */
	MW_PTSTOP_TIMEOUT = -3,	/* a thread did not stop in time */
	MW_PTSTOP_EXECD = -4,	/* a thread exec'd: another program now */
	MW_PTSTOP_ABANDONED = -5,	/* the call was cut short (mw_ptstop_call) */
	MW_PTSTOP_FAULT = -6,	/* the call failed in the process */
};

/* Stop every thread of pid within timeout_ms milliseconds (> 0) into a
 * new *out.  MW_PTSTOP_OK; else nothing is left held (a thread that has
 * not stopped yet is let go as soon as it stops, at the latest at the
 * next mw_ptstop_stop or detach), *held_ns says how long the threads
 * that had stopped were held, and err has a one-line reason:
 * MW_PTSTOP_GONE ("process 42 exited"), MW_PTSTOP_DENIED ("process 42 is traced by process 7 (gdb)", "cannot
 * ptrace process 42: Operation not permitted"), MW_PTSTOP_TIMEOUT
 * ("thread 43 of process 42 did not stop within 200 ms"), MW_PTSTOP_EXECD
 * ("process 42 exec'd while it was being stopped"). */
int mw_ptstop_stop(pid_t pid, long timeout_ms, struct mw_ptstop **out, uint64_t *held_ns,
		   char *err, size_t errlen);

/* The threads held. */
size_t mw_ptstop_threads(const struct mw_ptstop *st);

/* Is every thread held (none let go by mw_ptstop_settle that has not
 * stopped again)?  1 or 0. */
int mw_ptstop_all_held(const struct mw_ptstop *st);

/* Did a thread exec (the process is another program now, held in its
 * exec stop, and let go from there untouched)?  1 or 0. */
int mw_ptstop_execd(const struct mw_ptstop *st);

/* The image pid runs now, as a number that an exec changes: a hash of
 * its auxiliary vector (/proc/PID/auxv: the interpreter's base, the
 * entry, AT_RANDOM's address on the new stack; random for every exec of
 * a program that gains privileges, whose address space is randomized
 * whatever the caller asked).  0 when it cannot be read.  Taken before a
 * process is looked at and again once it is held, it tells whether an
 * exec came between, where no exec stop could be seen. */
uint64_t mw_ptstop_image(pid_t pid);

/* How long the process has been held so far, in ns: from the first
 * thread's attach to now. */
uint64_t mw_ptstop_held_ns(const struct mw_ptstop *st);

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
 * when it cannot be done: a busy one left at deadline (CLOCK_MONOTONIC
 * ns; none is let go past it), a process in a job-control stop (not to
 * be let run), or a thread busy() cannot tell.  A signal a thread
 * reported is given to it when it is let go (or at the detach): none is
 * lost or delayed beyond the hold.  No single-stepping: the threads run
 * as they would.  Also -1 when a thread let go has not stopped again by
 * stop_by (>= deadline; on a loaded machine it may not get a CPU at once:
 * it is then left running, mw_ptstop_all_held 0, and let go once it
 * stops), or the process exec'd (mw_ptstop_execd). */
int mw_ptstop_settle(struct mw_ptstop *st, mw_ptstop_busy_fn busy, void *ctx,
		     uint64_t deadline, uint64_t stop_by);

/* Detach from every thread, giving each the signal it reported, and free
 * st (and put back this thread's nice value: mw_ptstop_stop sets -20,
 * when it may, so that the machine's load does not lengthen a hold).  Returns how long the process was held, in nanoseconds: from the
 * first thread's attach to the detach of the last one that had stopped
 * (one that had not is let go once it stops: waited for up to 1 s, then
 * at the next mw_ptstop_stop or detach). */
uint64_t mw_ptstop_resume(struct mw_ptstop *st);

/* mw_ptstop_resume, but into a job-control stop: SIGSTOP is queued to
 * each thread, which takes it before it runs an instruction of its own,
 * so the process stays exactly where it was held (for a debugger, a core
 * dump) until SIGCONT.  A signal a thread had reported is queued to it
 * again (tgkill), to be taken after SIGCONT.  Returns as
 * mw_ptstop_resume. */
uint64_t mw_ptstop_leave_stopped(struct mw_ptstop *st);

/* A call into the process: fn(arg), made by mw_ptstop_call. */
struct mw_ptstop_call {
	uint64_t fn, arg;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns: cut short there */
	/* signals the caller has blocked, whose coming winds the call down:
	 * it gets MW_PTSTOP_GRACE_MS more, then is cut short; NULL: none */
	const sigset_t *wind_down;
	/* 4-byte lock words (4-aligned), every one free when the call
	 * begins (the caller made sure, and every other thread is held): any
	 * a call cut short or faulted left taken is let go (set to 0) */
	const uint64_t *locks;
	size_t nlocks;
	/* out */
	int started;		/* the thread began the call */
	uint64_t ret;		/* fn's return value (rax), when it returned */
	int signo;		/* the wind_down signal that came (left pending), or 0 */
	uint64_t at;		/* cut short or faulted: where the thread was */
	int locks_freed;	/* locks let go */
};

#define MW_PTSTOP_GRACE_MS 500

/* Make a held thread call c->fn(c->arg) in the process, x86_64 only, as
 * gdb's "call" does: a thread with no signal to take; its registers and
 * extended state (PTRACE_GETREGSET NT_X86_XSTATE) saved; a frame below
 * its stack's red zone whose return address is 0, so that the call's
 * return traps there with SIGSEGV (not given to it); then it is put back
 * as it was, held.  The other threads stay held; a thread the call makes
 * is held from its start; signals that came for the thread meanwhile
 * are queued to it again (tgkill).  The caller makes sure fn takes no
 * lock another held thread holds (mw_ptstop_settle, snapshot.h's
 * mw_snapshot_hold).  During the call only, the thread carries
 * PTRACE_O_EXITKILL: a mallocwatch killed then (SIGKILL: every other
 * signal the caller defers) kills the process with it, where it would
 * otherwise return to address 0 with no one to catch it.
 *
 * Returns:
 *  - 0: fn returned; c->ret.
 *  - MW_PTSTOP_ABANDONED: past c->deadline (or the grace after a
 *    wind_down signal) the thread is interrupted where it is
 *    (PTRACE_INTERRUPT; c->at), put back as it was (registers and
 *    extended state), the locks it left taken let go (c->locks_freed),
 *    and held: the process goes on from where it was held when let go,
 *    but what fn had half done stays half done.
 *  - MW_PTSTOP_FAULT: it faulted (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 *    SIGTRAP, SIGSYS at c->at; not given to it), or it could not be
 *    started, or it exited alone: put back and let go of locks as above
 *    when it is still there.
 *  - MW_PTSTOP_EXECD: the process exec'd during the call: nothing is
 *    written into the new program (mw_ptstop_resume lets it go from its
 *    exec stop).
 *  - MW_PTSTOP_GONE: the process exited during the call, or a thread
 *    cut short did not stop within 5 s (stuck in the kernel), or its
 *    registers could not be written back: it cannot be put back, so the
 *    process is killed (SIGKILL).  The registers are written back once,
 *    unchanged, before the call: a kernel that refuses that refuses the
 *    call (MW_PTSTOP_FAULT) before anything changed.
 * Each failure with a one-line reason in err. */
int mw_ptstop_call(struct mw_ptstop *st, struct mw_ptstop_call *c, char *err, size_t errlen);

#endif /* MALLOCWATCH_PTSTOP_H */
