/* ptstop.c - stop every thread of a process with ptrace, and let it go;
 * see ptstop.h.
 *
 * The threads are the entries of /proc/PID/task (proc(5)):
 *
 *	$ ls /proc/4242/task
 *	4242  4243  4244
 *
 * and each stop is a waitpid(2) status for one of them: a
 * PTRACE_EVENT_STOP (status >> 16) with SIGTRAP for our PTRACE_INTERRUPT,
 * with SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU for a job-control stop; a
 * plain stop with the signal it is about to take (kept for the detach);
 * or an exit (the thread is gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "procmem.h"
#include "ptstop.h"
#include "xalloc.h"

struct thread {
	pid_t tid;
	int sig;	/* the signal it reported, given back at the detach */
	int stopped;	/* its stop has been waited for */
	int settled;	/* held where it is not busy (mw_ptstop_settle) */
	uint64_t cpu_ns;	/* its CPU time when last let go */
};

struct mw_ptstop {
	pid_t pid;
	struct thread *t;
	size_t n, cap;
	int job_stopped;
	uint64_t t0;	/* CLOCK_MONOTONIC ns of the first attach */
};

static int known(const struct mw_ptstop *st, pid_t tid)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].tid == tid)
			return 1;
	return 0;
}

/* Who traces thread tid of pid, for the message: "process 7 (gdb)", or
 * "" when no one (or it cannot be told). */
static void tracer_of(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64], status[4096], comm[64], *p;
	long tracer;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (mw_read_small(path, 0, status, sizeof(status)) < 0 ||
	    !(p = strstr(status, "\nTracerPid:")) || (tracer = strtol(p + 11, NULL, 10)) <= 0)
		return;
	mw_process_comm((pid_t)tracer, comm, sizeof(comm));
	snprintf(buf, len, "process %ld (%s)", tracer, comm[0] ? comm : "?");
}

/* Attach to and interrupt every thread of st->pid not held yet: the
 * number attached, or -1 (reason in err). */
static int seize_new(struct mw_ptstop *st, char *err, size_t errlen)
{
	char path[64], who[128];
	struct dirent *d;
	DIR *dir;
	int fd, added = 0, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)st->pid);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "process %d exited", (int)st->pid);
		return MW_PTSTOP_GONE;
	}
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0 || known(st, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
			if (errno == ESRCH)	/* exited meanwhile */
				continue;
			tracer_of(st->pid, tid, who, sizeof(who));
			if (who[0])
				snprintf(err, errlen, "process %d is traced by %s", (int)st->pid, who);
			else
				snprintf(err, errlen, "cannot ptrace process %d: %s", (int)st->pid,
					 strerror(errno));
			ret = MW_PTSTOP_DENIED;
			break;
		}
		if (!st->n)
			st->t0 = mw_now_ns();
		if (st->n == st->cap)
			xgrow((void **)&st->t, st->n, &st->cap, sizeof(*st->t));
		st->t[st->n++] = (struct thread){ .tid = tid };
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		added++;
	}
	closedir(dir);
	return ret < 0 ? ret : added;
}

/* One waitpid status of thread t: 1 when it is stopped now, 0 when it
 * exited (to be dropped). */
static int took_stop(struct mw_ptstop *st, struct thread *t, int status)
{
	int sig;

	if (!WIFSTOPPED(status))
		return 0;
	sig = WSTOPSIG(status);
	if (status >> 16 == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			st->job_stopped = 1;
	} else if (!(status >> 16)) {
		t->sig = sig;	/* a signal-delivery-stop: deliver it at the detach */
	}
	t->stopped = 1;
	return 1;
}

/* Wait until every attached thread has stopped or exited, until
 * deadline (CLOCK_MONOTONIC ns).  0, or MW_PTSTOP_TIMEOUT. */
static int wait_stops(struct mw_ptstop *st, uint64_t deadline, char *err, size_t errlen)
{
	for (unsigned spins = 0;; spins++) {
		size_t left = 0;

		for (size_t i = 0; i < st->n; i++) {
			struct thread *t = &st->t[i];
			int status;
			pid_t w;

			if (t->stopped)
				continue;
			w = waitpid(t->tid, &status, WNOHANG | __WALL);
			if (w == 0 || (w < 0 && errno == EINTR)) {
				left++;
			} else if (w < 0 || !took_stop(st, t, status)) {
				st->t[i--] = st->t[--st->n];	/* gone */
			}
		}
		if (!left)
			return 0;
		for (size_t i = 0; mw_now_ns() >= deadline && i < st->n; i++)
			if (!st->t[i].stopped) {
				snprintf(err, errlen, "thread %d of process %d did not stop in time",
					 (int)st->t[i].tid, (int)st->pid);
				return MW_PTSTOP_TIMEOUT;
			}
		if (spins < 64)
			sched_yield();
		else
			nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
}

int mw_ptstop_stop(pid_t pid, long timeout_ms, struct mw_ptstop **out, char *err,
		   size_t errlen)
{
	struct mw_ptstop *st = xcalloc(1, sizeof(*st));
	uint64_t deadline = mw_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000000;
	int r;

	st->pid = pid;
	/* until a listing finds no thread that is not held */
	while ((r = seize_new(st, err, errlen)) > 0)
		if ((r = wait_stops(st, deadline, err, errlen)) < 0)
			break;
	if (r == 0 && !known(st, pid)) {
		snprintf(err, errlen, "process %d exited", (int)pid);
		r = MW_PTSTOP_GONE;
	}
	if (r < 0) {
		mw_ptstop_resume(st);
		return r;
	}
	*out = st;
	return MW_PTSTOP_OK;
}

/* The CPU time thread t has had, in ns (/proc/PID/task/TID/schedstat's
 * first field, sched-stats.rst); 0 when it cannot be read. */
static uint64_t cpu_ns(const struct mw_ptstop *st, const struct thread *t)
{
	char path[64], buf[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)st->pid, (int)t->tid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* Let the threads st->t[run[0..n)] go on for about slice_ns, each with
 * the signal it reported (it takes it as it would have), and stop them
 * again; how many of them ran for half the slice or more.  A signal
 * reported meanwhile is kept for the next go or the
 * detach (took_stop), a job-control stop ends the settling
 * (st->job_stopped); a thread that exits is dropped. */
static size_t run_slice(struct mw_ptstop *st, const size_t *run, size_t n, uint64_t slice_ns)
{
	size_t ran = 0;

	for (size_t k = 0; k < n; k++) {
		struct thread *t = &st->t[run[k]];

		t->cpu_ns = cpu_ns(st, t);
		/* with the signal it reported, if any: it takes it now */
		t->stopped = ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)t->sig) < 0;
		if (!t->stopped)
			t->sig = 0;
	}
	nanosleep(&(struct timespec){ .tv_nsec = (long)slice_ns }, NULL);
	for (size_t k = 0; k < n; k++)
		if (!st->t[run[k]].stopped)
			ptrace(PTRACE_INTERRUPT, st->t[run[k]].tid, 0, 0);
	for (size_t k = 0; k < n; k++) {
		struct thread *t = &st->t[run[k]];
		int status;
		pid_t w;

		if (t->stopped)
			continue;
		while ((w = waitpid(t->tid, &status, __WALL)) < 0 && errno == EINTR)
			;
		if (w < 0 || !took_stop(st, t, status))
			t->tid = 0;	/* gone: dropped below */
		else if (cpu_ns(st, t) >= t->cpu_ns + slice_ns / 2)
			ran++;
	}
	for (size_t i = 0; i < st->n; i++)
		if (!st->t[i].tid)
			st->t[i--] = st->t[--st->n];
	return ran;
}

int mw_ptstop_settle(struct mw_ptstop *st, mw_ptstop_busy_fn busy, void *ctx,
		     uint64_t deadline)
{
	/* ns: a thread's stop falls at random in what it does, so a longer
	 * slice does not make its being out of malloc likelier; but on a
	 * busy machine a thread let go may not get a CPU at once: while
	 * none of them ran, the slice doubles (up to 1 ms) */
	uint64_t slice = 10000;
	size_t *run = xcalloc(st->n ? st->n : 1, sizeof(*run));
	int rounds = 0, ret;

	for (;;) {
		size_t n = 0;
		int stuck = 0;

		for (size_t i = 0; i < st->n && !stuck; i++) {
			struct thread *t = &st->t[i];
			int b;

			if (t->settled)
				continue;	/* held out of it since, unchanged */
			if (!(b = busy(ctx, t->tid)))
				t->settled = 1;

			if (b < 0 || (b && st->job_stopped))
				stuck = 1;	/* it may not be let go */
			else if (b)
				run[n++] = i;
		}
		if (stuck || (n && mw_now_ns() >= deadline)) {
			ret = -1;
			break;
		}
		if (!n) {
			ret = rounds;
			break;
		}
		if (run_slice(st, run, n, slice))
			slice = 10000;
		else if (slice < 1000000)
			slice *= 2;
		rounds++;
	}
	free(run);
	return ret;
}

size_t mw_ptstop_threads(const struct mw_ptstop *st)
{
	return st->n;
}

int mw_ptstop_job_stopped(const struct mw_ptstop *st)
{
	return st->job_stopped;
}

/* Is thread tid in a job-control stop ("T" in /proc/TID/stat)? */
static int job_stopped(pid_t tid)
{
	char stat[512];
	const char *f = mw_proc_stat_fields(tid, stat, sizeof(stat));

	return f && *f == 'T';
}

/* Put the process into a job-control stop before its threads are let
 * go: SIGSTOP is queued to the first thread (a signal given at the
 * detach would be taken only by a thread in a signal-delivery-stop:
 * ptrace(2), "Signal injection"), which is let go alone and takes it
 * before it runs an instruction of its own; once it has stopped, the
 * group stop is in effect, and each other thread let go enters it at
 * once (the kernel's __ptrace_unlink).  A signal a thread had reported
 * is queued to it again, to be taken after SIGCONT. */
static void group_stop(struct mw_ptstop *st)
{
	struct thread *t = &st->t[0];

	for (size_t i = 0; i < st->n; i++)
		if (st->t[i].sig &&
		    syscall(SYS_tgkill, (int)st->pid, (int)st->t[i].tid, st->t[i].sig) == 0)
			st->t[i].sig = 0;
	if (syscall(SYS_tgkill, (int)st->pid, (int)t->tid, SIGSTOP) < 0)
		return;
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	for (int k = 0; k < 2000 && !job_stopped(t->tid); k++)
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
	t->tid = 0;	/* detached */
}

/* Detach from every thread: as it was, or (stop) into a job-control
 * stop (group_stop). */
static uint64_t detach_all(struct mw_ptstop *st, int stop)
{
	uint64_t held;

	if (stop && st->n)
		group_stop(st);

	if (!st)
		return 0;
	/* a thread not stopped yet (after a timeout) can be detached only
	 * once stopped: wait for it a little; failing that, the kernel
	 * detaches it when we exit */
	for (size_t i = 0; i < st->n; i++) {
		struct thread *t = &st->t[i];
		int status;
		pid_t w = 0;

		if (!t->tid)
			continue;
		for (int k = 0; !t->stopped && !w && k < 1000; k++)
			if ((w = waitpid(t->tid, &status, WNOHANG | __WALL)) > 0)
				took_stop(st, t, status);
			else if (!w)
				nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig);
	}
	held = st->n ? mw_now_ns() - st->t0 : 0;
	free(st->t);
	free(st);
	return held;
}

uint64_t mw_ptstop_resume(struct mw_ptstop *st)
{
	return detach_all(st, 0);
}

uint64_t mw_ptstop_leave_stopped(struct mw_ptstop *st)
{
	return detach_all(st, SIGSTOP);
}

#ifdef __x86_64__
/* Wait for thread t to end the call: its return to address 0 (a SIGSEGV
 * there).  Other signals are queued again for later (*nq of them in q);
 * a job-control stop is noted.  0 with the return value in *ret, or -1
 * (err): the thread exited, or faulted elsewhere. */
static int call_wait(struct mw_ptstop *st, struct thread *t, uint64_t *ret, int *q, size_t *nq,
		     char *err, size_t errlen)
{
	for (;;) {
		struct user_regs_struct r;
		int status, sig;
		pid_t w;

		while ((w = waitpid(t->tid, &status, __WALL)) < 0 && errno == EINTR)
			;
		if (w < 0 || !WIFSTOPPED(status)) {
			snprintf(err, errlen, "thread %d exited during the call", (int)t->tid);
			return -1;
		}
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (sig != SIGTRAP)
				st->job_stopped = 1;
		} else if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, t->tid, 0, &r) == 0 && !r.rip) {
			*ret = r.rax;
			return 0;
		} else if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL) {
			snprintf(err, errlen, "the call faulted in thread %d (signal %d)", (int)t->tid,
				 sig);
			return -1;
		} else if (*nq < 16) {
			q[(*nq)++] = sig;
		}
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0) {
			snprintf(err, errlen, "cannot let thread %d go on: %s", (int)t->tid,
				 strerror(errno));
			return -1;
		}
	}
}

int mw_ptstop_call(struct mw_ptstop *st, uint64_t fn, uint64_t arg, uint64_t *ret, char *err,
		   size_t errlen)
{
	struct user_regs_struct saved, r;
	static unsigned char xsave[16384];	/* the xsave area: a few KiB */
	struct iovec xs = { .iov_base = xsave, .iov_len = sizeof(xsave) };
	struct thread *t = NULL;
	int q[16], rc;
	size_t nq = 0;

	for (size_t i = 0; i < st->n && !t; i++)	/* one with no signal to take */
		if (st->t[i].stopped && !st->t[i].sig)
			t = &st->t[i];
	if (!t || st->job_stopped) {
		snprintf(err, errlen, "no thread of process %d can make the call%s", (int)st->pid,
			 st->job_stopped ? " (it is in a job-control stop)" : "");
		return -1;
	}
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &saved) < 0 ||
	    ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &xs) < 0) {
		snprintf(err, errlen, "cannot read thread %d's registers: %s", (int)t->tid,
			 strerror(errno));
		return -1;
	}
	/* a frame below the red zone, 16-byte aligned at the call, whose
	 * return address is 0: its return traps */
	r = saved;
	r.rsp = ((saved.rsp - 256) & ~15ULL) - 8;
	r.rip = fn;
	r.rdi = arg;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;	/* no system call restarted */
	if (ptrace(PTRACE_POKEDATA, t->tid, (void *)r.rsp, 0) < 0 ||
	    ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) < 0) {
		snprintf(err, errlen, "cannot start the call in thread %d: %s", (int)t->tid,
			 strerror(errno));
		ptrace(PTRACE_SETREGS, t->tid, 0, &saved);
		return -1;
	}
	rc = call_wait(st, t, ret, q, &nq, err, errlen);
	/* as it was, and held (the SIGSEGV stop is not given to it) */
	ptrace(PTRACE_SETREGS, t->tid, 0, &saved);
	ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &xs);
	for (size_t k = 0; k < nq; k++)
		syscall(SYS_tgkill, (int)st->pid, (int)t->tid, q[k]);
	return rc;
}
#else
int mw_ptstop_call(struct mw_ptstop *st, uint64_t fn, uint64_t arg, uint64_t *ret, char *err,
		   size_t errlen)
{
	(void)fn; (void)arg; (void)ret;
	snprintf(err, errlen, "calls into process %d are made on x86_64 only", (int)st->pid);
	return -1;
}
#endif
