/* ptstop_call.c - a call made in a held thread (ptstop.h,
 * mw_ptstop_call): the System V x86_64 calling convention set up from a
 * ptrace-stop, as gdb's "call" does, bounded in time, undone on every
 * path, and never carried into another program.
 *
 * The calling thread's statuses (waitpid, WNOHANG) are, in order of
 * likelihood: a SIGSEGV at rip 0 with rsp just above the frame (the
 * return: rax is the value); a PTRACE_EVENT_CLONE (a thread made, held);
 * a signal for it (queued again after the call); a job-control stop
 * (noted; the call goes on); a fault (the call failed); the
 * PTRACE_EVENT_STOP of our PTRACE_INTERRUPT (cut short); a
 * PTRACE_EVENT_EXEC, or, when the thread is not the leader, its tid gone
 * (ECHILD) and the exec's stop reported under the pid (ptstop.c polls
 * the other threads, whose ends must be taken for the exec to finish);
 * its end.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "clock.h"
#include "ptstop.h"
#include "ptstop_int.h"

#ifdef __x86_64__

#define RUNNING 1		/* call_status: the call goes on */
#define STOP_WAIT_NS (5000000000ULL)	/* for a thread cut short to stop */

struct call {
	struct mw_ptstop *st;
	struct mw_ptstop_call *c;
	size_t ti;		/* the calling thread, st->t[ti] */
	pid_t tid;
	uint64_t frame;		/* rsp at the call: the return address's slot */
	uint64_t deadline;	/* c->deadline, or the grace after a signal */
	int interrupted;	/* PTRACE_INTERRUPT sent: cut short */
	int q[16];		/* signals that came for it meanwhile */
	size_t nq;
	char *err;
	size_t errlen;
};

/* Let the thread go on with the call; RUNNING, or MW_PTSTOP_FAULT. */
static int go_on(struct call *x)
{
	if (ptrace(PTRACE_CONT, x->tid, 0, 0) == 0)
		return RUNNING;
	snprintf(x->err, x->errlen, "cannot let thread %d go on: %s", (int)x->tid, strerror(errno));
	return MW_PTSTOP_FAULT;
}

/* A signal-delivery-stop of the calling thread (sig): its return, a
 * fault, or a signal for later. */
static int call_signal(struct call *x, int sig)
{
	struct user_regs_struct r;
	int regs = ptrace(PTRACE_GETREGS, x->tid, 0, &r) == 0;

	if (sig == SIGSEGV && regs && !r.rip && r.rsp == x->frame + 8) {
		x->c->ret = r.rax;
		return 0;
	}
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
	    sig == SIGSYS) {
		x->c->at = regs ? r.rip : 0;
		snprintf(x->err, x->errlen, "the call faulted in thread %d (%s at 0x%llx)",
			 (int)x->tid, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
			 (unsigned long long)x->c->at);
		return MW_PTSTOP_FAULT;
	}
	if (x->nq < sizeof(x->q) / sizeof(x->q[0]))
		x->q[x->nq++] = sig;
	return go_on(x);
}

/* One waitpid status of the calling thread: RUNNING, 0 (it returned), or
 * a MW_PTSTOP_* end. */
static int call_status(struct call *x, int status)
{
	struct user_regs_struct r;
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (!WIFSTOPPED(status) || ev == PTRACE_EVENT_EXEC || ev == PTRACE_EVENT_CLONE) {
		mw_ptstop_event(x->st, x->ti, status);	/* an exec, an end, a thread */
		if (x->st->execd)
			return MW_PTSTOP_EXECD;
		if (!WIFSTOPPED(status)) {
			snprintf(x->err, x->errlen, "thread %d exited during the call", (int)x->tid);
			return MW_PTSTOP_GONE;
		}
		return go_on(x);
	}
	if (ev == PTRACE_EVENT_STOP) {
		if (sig != SIGTRAP)	/* a job-control stop: for after the call */
			x->st->job_stopped = 1;
		else if (x->interrupted) {	/* ours: cut short here */
			x->c->at = ptrace(PTRACE_GETREGS, x->tid, 0, &r) == 0 ? r.rip : 0;
			return MW_PTSTOP_ABANDONED;
		}
		return go_on(x);
	}
	if (ev)
		return go_on(x);
	return call_signal(x, sig);
}

/* A wind_down signal pending?  Then the call has the grace left. */
static void wind_down(struct call *x, uint64_t now)
{
	sigset_t p;

	if (!x->c->wind_down || x->c->signo || sigpending(&p) < 0)
		return;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(x->c->wind_down, s) == 1 && sigismember(&p, s) == 1) {
			x->c->signo = s;
			if (x->deadline > now + MW_PTSTOP_GRACE_MS * 1000000ULL)
				x->deadline = now + MW_PTSTOP_GRACE_MS * 1000000ULL;
			return;
		}
}

/* The calling thread's tid is gone: it exec'd (not being the leader);
 * the exec's stop comes under the pid once the other threads' ends are
 * taken.  MW_PTSTOP_EXECD, or MW_PTSTOP_GONE. */
static int lost_tid(struct call *x)
{
	uint64_t until = mw_now_ns() + STOP_WAIT_NS;

	x->st->t[x->ti].tid = 0;
	x->st->t[x->ti].in_call = 0;
	for (unsigned spins = 0; !x->st->execd && mw_now_ns() < until; spins++) {
		mw_ptstop_poll(x->st, 1);
		mw_ptstop_pause(spins);
	}
	if (x->st->execd)
		return MW_PTSTOP_EXECD;
	snprintf(x->err, x->errlen, "thread %d is gone during the call", (int)x->tid);
	return MW_PTSTOP_GONE;
}

/* Wait for the call's end: its return, or a MW_PTSTOP_* end.  Past the
 * deadline the thread is interrupted; one that does not stop within
 * STOP_WAIT_NS cannot be put back: the process is killed. */
static int call_wait(struct call *x)
{
	uint64_t cut = 0;

	for (unsigned spins = 0;; spins++) {
		uint64_t now;
		int status, r;
		pid_t w = waitpid(x->tid, &status, WNOHANG | __WALL);

		if (w > 0 && (r = call_status(x, status)) != RUNNING)
			return r;
		if (w < 0 && errno == ECHILD)
			return lost_tid(x);
		mw_ptstop_poll(x->st, 0);	/* the held ones, every few ms */
		if (x->st->execd)
			return MW_PTSTOP_EXECD;
		now = mw_now_ns();
		wind_down(x, now);
		if (!x->interrupted && now >= x->deadline) {
			ptrace(PTRACE_INTERRUPT, x->tid, 0, 0);
			x->interrupted = 1;
			cut = now + STOP_WAIT_NS;
		} else if (x->interrupted && now >= cut) {
			kill(x->st->pid, SIGKILL);
			snprintf(x->err, x->errlen, "thread %d, cut short, did not stop within %llu s: "
				 "it could not be put back, and the process was killed", (int)x->tid,
				 STOP_WAIT_NS / 1000000000ULL);
			return MW_PTSTOP_GONE;
		}
		mw_ptstop_pause(w > 0 ? 0 : spins);
	}
}

/* The locks a call cut short or faulted left taken: let go. */
static int free_locks(const struct call *x)
{
	int n = 0;

	for (size_t k = 0; k < x->c->nlocks; k++) {
		uint64_t a = x->c->locks[k], word = a & ~7ULL, mask = 0xffffffffULL << (a & 4) * 8;
		long v;

		if (a & 3)
			continue;
		errno = 0;
		v = ptrace(PTRACE_PEEKDATA, x->tid, (void *)word, 0);
		if (errno || !((uint64_t)v & mask))
			continue;
		if (ptrace(PTRACE_POKEDATA, x->tid, (void *)word, (void *)((uint64_t)v & ~mask)) == 0)
			n++;
	}
	return n;
}

/* The thread to call from: held, with no signal to take; or NULL. */
static long caller(const struct mw_ptstop *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid && st->t[i].stopped && !st->t[i].sig)
			return (long)i;
	return -1;
}

/* Start the call in x->tid: the frame, fn's registers, PTRACE_O_EXITKILL,
 * let go.  0, or -1 (err; nothing changed that is not put back). */
static int start(struct call *x, const struct user_regs_struct *saved)
{
	struct user_regs_struct r = *saved;

	/* a frame below the red zone, 16-byte aligned at the call, whose
	 * return address is 0: its return traps */
	r.rsp = ((saved->rsp - 256) & ~15ULL) - 8;
	r.rip = x->c->fn;
	r.rdi = x->c->arg;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;	/* no system call restarted */
	x->frame = r.rsp;
	if (ptrace(PTRACE_POKEDATA, x->tid, (void *)r.rsp, 0) < 0 ||
	    ptrace(PTRACE_SETOPTIONS, x->tid, 0, (void *)(long)(MW_PTSTOP_OPTIONS |
								  PTRACE_O_EXITKILL)) < 0 ||
	    ptrace(PTRACE_SETREGS, x->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, x->tid, 0, 0) < 0) {
		snprintf(x->err, x->errlen, "cannot start the call in thread %d: %s", (int)x->tid,
			 strerror(errno));
		ptrace(PTRACE_SETREGS, x->tid, 0, saved);
		ptrace(PTRACE_SETOPTIONS, x->tid, 0, (void *)(long)MW_PTSTOP_OPTIONS);
		return -1;
	}
	x->st->t[x->ti].stopped = 0;
	x->st->t[x->ti].in_call = 1;
	return 0;
}

int mw_ptstop_call(struct mw_ptstop *st, struct mw_ptstop_call *c, char *err, size_t errlen)
{
	static unsigned char xsave[16384];	/* the xsave area: a few KiB */
	struct iovec xs = { .iov_base = xsave, .iov_len = sizeof(xsave) };
	struct call x = { .st = st, .c = c, .deadline = c->deadline, .err = err, .errlen = errlen };
	struct user_regs_struct saved;
	long i = st->execd || st->job_stopped ? -1 : caller(st);
	int rc;

	c->ret = c->at = 0;
	c->started = c->signo = c->locks_freed = 0;
	if (i < 0) {
		snprintf(err, errlen, "no thread of process %d can make the call%s", (int)st->pid,
			 st->job_stopped ? " (it is in a job-control stop)" : "");
		return MW_PTSTOP_FAULT;
	}
	x.ti = (size_t)i;
	x.tid = st->t[i].tid;
	/* read, and written back once unchanged: a kernel that cannot take
	 * them back (gdb 13 met one) refuses here, before anything changed */
	if (ptrace(PTRACE_GETREGS, x.tid, 0, &saved) < 0 ||
	    ptrace(PTRACE_GETREGSET, x.tid, (void *)NT_X86_XSTATE, &xs) < 0 ||
	    ptrace(PTRACE_SETREGSET, x.tid, (void *)NT_X86_XSTATE, &xs) < 0) {
		snprintf(err, errlen, "cannot read and write back thread %d's registers: %s",
			 (int)x.tid, strerror(errno));
		return MW_PTSTOP_FAULT;
	}
	if (start(&x, &saved) < 0)
		return MW_PTSTOP_FAULT;
	c->started = 1;
	rc = call_wait(&x);
	st->t[x.ti].in_call = 0;
	if (rc == MW_PTSTOP_EXECD)	/* the new program: no PTRACE_O_EXITKILL either */
		ptrace(PTRACE_SETOPTIONS, st->pid, 0, (void *)(long)MW_PTSTOP_OPTIONS);
	if (rc == MW_PTSTOP_EXECD || rc == MW_PTSTOP_GONE || !st->t[x.ti].tid)
		return rc == 0 ? MW_PTSTOP_GONE : rc;	/* nothing to put back */
	/* stopped, ours, the same image: as it was, and held (the SIGSEGV
	 * of its return is not given to it) */
	st->t[x.ti].stopped = 1;
	if (rc != 0)
		c->locks_freed = free_locks(&x);
	if (ptrace(PTRACE_SETREGS, x.tid, 0, &saved) < 0 ||
	    ptrace(PTRACE_SETREGSET, x.tid, (void *)NT_X86_XSTATE, &xs) < 0) {
		/* it would go on from the call's state: it cannot be let go */
		snprintf(err, errlen, "cannot put thread %d's registers back (%s): the process was "
			 "killed", (int)x.tid, strerror(errno));
		kill(st->pid, SIGKILL);
		return MW_PTSTOP_GONE;
	}
	ptrace(PTRACE_SETOPTIONS, x.tid, 0, (void *)(long)MW_PTSTOP_OPTIONS);
	for (size_t k = 0; k < x.nq; k++)
		syscall(SYS_tgkill, (int)st->pid, (int)x.tid, x.q[k]);
	if (rc == MW_PTSTOP_ABANDONED)
		snprintf(err, errlen, "the call was cut short at 0x%llx in thread %d",
			 (unsigned long long)c->at, (int)x.tid);
	return rc;
}
#else
int mw_ptstop_call(struct mw_ptstop *st, struct mw_ptstop_call *c, char *err, size_t errlen)
{
	(void)c;
	snprintf(err, errlen, "calls into process %d are made on x86_64 only", (int)st->pid);
	return MW_PTSTOP_FAULT;
}
#endif
