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
 * a PTRACE_EVENT_CLONE stop of a thread we let run that made a thread
 * (the new one is ours, held from its start); a PTRACE_EVENT_EXEC stop,
 * reported under the process's pid, when any thread exec'd (ptrace(2),
 * "execve(2) under ptrace": every other thread is gone, and the one left
 * is the new program, let go from there untouched); or an exit (the
 * thread is gone).  The statuses are taken with WNOHANG, the held threads
 * polled too every few ms: an exec cannot finish until the tracer has
 * taken the ends of the threads it killed, so a blocking wait for one
 * thread could wait for ever.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "procmem.h"
#include "ptstop.h"
#include "ptstop_int.h"
#include "xalloc.h"

/* The tracer of thread tid of pid (TracerPid in its status), 0 when none
 * or unknown; its name into comm. */
static long tracer_of(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[64], status[4096], *p;
	long tracer;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (mw_read_small(path, 0, status, sizeof(status)) < 0 ||
	    !(p = strstr(status, "\nTracerPid:")) || (tracer = strtol(p + 11, NULL, 10)) <= 0)
		return 0;
	mw_process_comm((pid_t)tracer, comm, len);
	return tracer;
}

/* Is thread tid of pid gone, or going (a zombie: it cannot be seized)? */
static int thread_ending(pid_t pid, pid_t tid)
{
	char path[64], stat[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (mw_read_small(path, 0, stat, sizeof(stat)) <= 0 || !(p = strrchr(stat, ')')))
		return 1;
	return p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* PTRACE_SEIZE of tid failed: a thread that ends, one of ours already (a
 * thread made by one we let run, not reported yet: only when we hold
 * others), 0; or the reason into err (-1). */
static int seize_failed(struct mw_ptstop *st, pid_t tid, char *err, size_t errlen)
{
	int e = errno;
	char comm[64];
	long tracer = tracer_of(st->pid, tid, comm, sizeof(comm));

	if (e == ETIMEDOUT) {
		snprintf(err, errlen, "thread %d of process %d could not be attached in time (an exec "
			 "of the process waits: for another tracer?)", (int)tid, (int)st->pid);
		return -1;
	}
	if (e == ESRCH || thread_ending(st->pid, tid))
		return 0;
	if (tracer == (long)getpid() && st->n) {
		mw_ptstop_add(st, tid);	/* its PTRACE_EVENT_STOP comes */
		return 0;
	}
	if (tracer)
		snprintf(err, errlen, "process %d is traced by process %ld (%s)", (int)st->pid,
			 tracer, comm[0] ? comm : "?");
	else
		snprintf(err, errlen, "cannot ptrace process %d: %s", (int)st->pid, strerror(e));
	return -1;
}

/* A PTRACE_SEIZE waits while the process execs (the kernel's
 * cred_guard_mutex), and the exec waits for the tracer to take the ends
 * of the threads it killed: a tracer that holds some threads and seizes
 * another would wait for ever, and the process with it.  So while a
 * PTRACE_SEIZE runs, a timer sends this thread SIGALRM every 5 ms, whose
 * handler takes those ends (waitpid WNOHANG, kept for mw_ptstop_poll);
 * the PTRACE_SEIZE starts again after it (ERESTARTNOINTR), and gets
 * through once the exec is done.  The late threads of earlier holds are
 * seen to as well.  An exec that never ends (another tracer, stuck,
 * holds the threads it waits for) would keep the PTRACE_SEIZE waiting:
 * past the stop's deadline the handler leaves it (siglongjmp; the system
 * call is not restarted).  SIGALRM is blocked but during a PTRACE_SEIZE. */
struct seize_guard {
	timer_t timer;
	int armed;
	struct sigaction old_act;
	sigset_t old_mask, alrm;
};

static struct mw_ptstop *reaping;	/* the hold whose ends are taken */
static uint64_t seize_until;		/* CLOCK_MONOTONIC ns */
static sigjmp_buf seize_env;
static volatile sig_atomic_t seizing;	/* seize_env is set */

static void take_ends(int sig)
{
	int save = errno, status;

	(void)sig;
	for (size_t i = 0; reaping && i < reaping->n; i++) {
		struct mw_ptstop_thread *t = &reaping->t[i];

		if (t->tid && !t->has_status && waitpid(t->tid, &status, WNOHANG | __WALL) > 0) {
			t->status = status;
			t->has_status = 1;
		}
	}
	mw_ptstop_let_late_go();	/* an earlier hold's: they may be among the killed */
	errno = save;
	if (seizing && mw_now_ns() >= seize_until) {
		seizing = 0;
		siglongjmp(seize_env, 1);
	}
}

static void guard_on(struct seize_guard *g, struct mw_ptstop *st, uint64_t deadline)
{
	struct sigaction sa = { .sa_handler = take_ends, .sa_flags = SA_RESTART };
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
	struct itimerspec every = { { 0, 5000000 }, { 0, 5000000 } };

	sigemptyset(&g->alrm);
	sigaddset(&g->alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &g->alrm, &g->old_mask);
	sigaction(SIGALRM, &sa, &g->old_act);
	reaping = st;
	seize_until = deadline;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	g->armed = timer_create(CLOCK_MONOTONIC, &ev, &g->timer) == 0 &&
		   timer_settime(g->timer, 0, &every, NULL) == 0;
}

static void guard_off(struct seize_guard *g)
{
	if (g->armed)
		timer_delete(g->timer);
	while (sigtimedwait(&g->alrm, NULL, &(struct timespec){ 0 }) == SIGALRM)
		;	/* none left for the old action */
	reaping = NULL;
	sigaction(SIGALRM, &g->old_act, NULL);
	pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
}

/* PTRACE_SEIZE with SIGALRM let in (take_ends); -1 with ETIMEDOUT when
 * it was still waiting at the deadline. */
static long seize(const struct seize_guard *g, pid_t tid)
{
	long r;
	int e;

	if (sigsetjmp(seize_env, 1)) {	/* the mask as it was: SIGALRM blocked */
		errno = ETIMEDOUT;
		return -1;
	}
	seizing = 1;
	pthread_sigmask(SIG_UNBLOCK, &g->alrm, NULL);
	r = ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)MW_PTSTOP_OPTIONS);
	e = errno;
	pthread_sigmask(SIG_BLOCK, &g->alrm, NULL);
	seizing = 0;
	errno = e;
	return r;
}

/* Attach to and interrupt every thread of st->pid not held yet, each
 * attached by deadline: the number attached, or -1 (reason in err). */
static int seize_new(struct mw_ptstop *st, uint64_t deadline, char *err, size_t errlen)
{
	struct seize_guard g;
	char path[64];
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
	guard_on(&g, st, deadline);
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0 || mw_ptstop_known(st, tid))
			continue;
		if (seize(&g, tid) < 0) {
			if (seize_failed(st, tid, err, errlen) == 0)
				continue;
			ret = MW_PTSTOP_DENIED;
			break;
		}
		mw_ptstop_add(st, tid);
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		added++;
	}
	guard_off(&g);
	closedir(dir);
	return ret < 0 ? ret : added;
}

int mw_ptstop_stop(pid_t pid, long timeout_ms, struct mw_ptstop **out, uint64_t *held_ns,
		   char *err, size_t errlen)
{
	struct mw_ptstop *st = xcalloc(1, sizeof(*st));
	uint64_t deadline = mw_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000000;
	const struct mw_ptstop_thread *t;
	int r;

	mw_ptstop_let_late_go();
	*held_ns = 0;
	st->pid = pid;
	/* while it holds a process, this thread runs before the machine's
	 * other work (nice -20, when it may): the load around does not
	 * lengthen the stop.  Put back at the detach. */
	errno = 0;
	st->nice = getpriority(PRIO_PROCESS, 0);
	if (errno || setpriority(PRIO_PROCESS, 0, -20) < 0)
		st->nice = 99;	/* left as it is */
	/* and, when it may, as a real-time thread: a nice value counts only
	 * within its autogroup (sched(7); on by default), so under load from
	 * other sessions a thread at nice -20 waited up to 40 ms for a CPU
	 * with threads held, and the stop passed its bound (t-stop-bounds).
	 * It sleeps while it waits for the threads, which run meanwhile. */
	st->rt = sched_getscheduler(0) == SCHED_OTHER &&
		 sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
				    &(struct sched_param){ .sched_priority = 1 }) == 0;
	st->polled = mw_now_ns();	/* no thread is held before this */
	/* until a listing finds no thread that is not held */
	while ((r = seize_new(st, deadline, err, errlen)) > 0)
		if ((r = mw_ptstop_wait_stopped(st, deadline)) < 0)
			break;
	if (r == MW_PTSTOP_TIMEOUT && (t = mw_ptstop_running(st)))
		snprintf(err, errlen, "thread %d of process %d did not stop within %ld ms",
			 (int)t->tid, (int)pid, timeout_ms);
	else if (r == MW_PTSTOP_EXECD)
		snprintf(err, errlen, "process %d exec'd while it was being stopped", (int)pid);
	if (r == 0 && !mw_ptstop_known(st, pid)) {
		snprintf(err, errlen, "process %d exited", (int)pid);
		r = MW_PTSTOP_GONE;
	}
	if (r < 0) {
		*held_ns = mw_ptstop_resume(st);
		return r;
	}
	mw_ptstop_compact(st);
	*out = st;
	return MW_PTSTOP_OK;
}

size_t mw_ptstop_threads(const struct mw_ptstop *st)
{
	return st->n;
}

int mw_ptstop_job_stopped(const struct mw_ptstop *st)
{
	return st->job_stopped;
}

int mw_ptstop_all_held(const struct mw_ptstop *st)
{
	return !mw_ptstop_running(st);
}

int mw_ptstop_execd(const struct mw_ptstop *st)
{
	return st->execd;
}

uint64_t mw_ptstop_image(pid_t pid)
{
	char path[64], buf[1024];
	uint64_t h = 0xcbf29ce484222325ULL;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((n = mw_read_small(path, 0, buf, sizeof(buf))) <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)	/* FNV-1a */
		h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t mw_ptstop_held_ns(const struct mw_ptstop *st)
{
	return st->t0 ? mw_now_ns() - st->t0 : 0;
}
