/* tracer.c - hold, trace, release, stop; see tracer.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "leftovers.h"
#include "pidfd.h"
#include "msg.h"
#include "procmem.h"
#include "protocol.h"
#include "ptyrelay.h"
#include "tracer.h"

/* After SIGINT the tracer detaches its uprobes, about 0.1 s each and
 * serialized with every other tracer on the machine; it is killed only
 * when STOP_GRACE_MS pass without one of its uprobe definitions going. */
#define STOP_GRACE_MS 20000

/* The flush (flush_start): how long the other threads of an exiting
 * program may take to go, how long the tracer may take to answer, and how
 * long events it counted may trail its answer. */
#define FLUSH_THREADS_MS 500
#define FLUSH_WAIT_MS 3000
#define FLUSH_DRAIN_MS 500

/* How long an asked procfs probe may take to answer before its FIFO is
 * closed anyway (procfs_settle). */
#define PROCFS_SETTLE_MS 100

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* SIGCHLD only interrupts poll(2), so that a ptrace stop of the program
 * is seen at once. */
static void on_chld(int sig)
{
	(void)sig;
}

void mw_signals_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int mw_signal_take(void)
{
	int sig = got_signal;

	got_signal = 0;
	return sig;
}

int mw_signal_pending(void)
{
	return got_signal;
}

/* In a child before exec: every descriptor past stderr close-on-exec, so
 * nothing of mallocwatch's (the saved stream, reports, libdw's files)
 * reaches the program or the tracer, whoever opened it and however. */
static void cloexec_from_3(void)
{
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	for (int fd = 3; fd < 1024; fd++)	/* kernels before 5.11 */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

struct linebuf {
	char buf[8192];
	size_t len;
};

struct run {
	const struct mw_tracer_opts *o;
	struct mw_trace_result *r;
	mw_line_fn fn;
	void *ctx;
	pid_t prog, tracer;
	int tracer_fd;		/* pidfd of the tracer; -1 once reaped */
	int hold_w;		/* write end of the hold pipe; -1 once released */
	struct mw_pty *pty;	/* -c under sudo on a terminal: the program's own */
	int out_fd, err_fd;	/* tracer stdout/stderr; -1 at EOF */
	int pidfd;		/* the traced process; -1 once it exited */
	int stopping;		/* SIGINT sent to the tracer on a signal of ours */
	int uprobes_left;	/* its uprobe definitions when last counted */
	int traced;		/* -c: the program is ptraced (PTRACE_SEIZE) */
	long long stop_at;	/* --duration: when to stop, once ready; 0 none */
	char module[64];	/* stap -m: mallocwatch_PID_XXXXXX */
	/* the flush at the program's exit (tracer.h) */
	int flush_fd;		/* the procfs file, open while it runs; -1 */
	int flushing;		/* the program is held at its exit stop */
	int end_seen;		/* MW_LINE_END arrived */
	long long flush_start, flush_until, end_at;
	int detach_bg;		/* tracer left to detach; loop ends */
	long long next_sample;	/* mw_now_ms() of the next sample; 0 none yet */
	int sample_fd;		/* the sample FIFO, asked and not yet answered; -1 */
	struct linebuf out, errb;
};

/* fork+exec argv with stdout/stderr on new pipes (out_fd NULL: stdout to
 * /dev/null); the child gets its own process group and, when preload is
 * set, LD_PRELOAD=preload. */
static pid_t spawn(char *const argv[], const char *cwd, const char *preload,
		   int *out_fd, int *err_fd)
{
	int po[2], pe[2];
	pid_t pid, parent;

	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		/* default actions first: a SIGTERM from here on must end
		 * this child, not reach mallocwatch's handler */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* a tracer left detaching after the flush writes to a pipe
		 * nobody reads: EPIPE, not death halfway through */
		signal(SIGPIPE, SIG_IGN);
		/* the tracer must not outlive mallocwatch, even a SIGKILLed one:
		 * SIGTERM makes stap and stapbpf detach and exit */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		if (out_fd) {
			dup2(po[1], 1);
		} else {
			int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

			dup2(null, 1);
		}
		dup2(pe[1], 2);
		cloexec_from_3();
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execvp(argv[0], argv);
		fprintf(stderr, "ERROR: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	if (out_fd)
		*out_fd = po[0];
	else
		close(po[0]);
	*err_fd = pe[0];
	return pid;
}

/* Run a command to completion, its stderr collected; for stap -p4.  A
 * signal caught meanwhile (mw_signals_catch) stops it: its process group
 * gets SIGTERM and -2 is returned, the signal left pending. */
static int run_capture(char *const argv[], const char *cwd, char *msg, size_t len)
{
	int errfd, st;
	char buf[4096];
	size_t got = 0;
	ssize_t n = 1;
	pid_t pid = spawn(argv, cwd, NULL, NULL, &errfd);

	if (pid < 0) {
		snprintf(msg, len, "cannot start '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	while (n != 0 && !got_signal) {
		struct pollfd p = { .fd = errfd, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(errfd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			break;
		if (n > 0 && (got += (size_t)n) == sizeof(buf) - 1)
			got = 0;	/* keep the tail */
	}
	buf[got] = '\0';
	close(errfd);
	if (got_signal)
		kill(-pid, SIGTERM);	/* stap and what it started: a group
					 * pidfds cannot name; its leader is
					 * our child, not reaped yet */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got_signal)
		return -2;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	/* the first line that says what went wrong */
	char *e = strstr(buf, "error");
	char *line = e ? e : buf;

	while (line > buf && line[-1] != '\n')
		line--;
	line[strcspn(line, "\n")] = '\0';
	snprintf(msg, len, "%.300s", *line ? line : "failed without a message");
	return -1;
}

/* The child: on its own terminal when it has one (ptyrelay.h), wait for
 * the release byte, drop to the invoking user under sudo, exec.  An
 * error goes back as an errno on errpipe. */
static void program_child(const struct mw_target *t, const struct mw_pty *pty, int hold_r,
			  int errpipe)
{
	char c;
	int e;
	const char *path = t->loader[0] ? t->loader : t->path;

	if (mw_pty_child(pty) < 0)
		goto fail;
	if (read(hold_r, &c, 1) != 1)
		_exit(127);	/* the tracer failed: never run untraced */
	close(hold_r);
	cloexec_from_3();
	if (t->uid != (uid_t)-1) {
		if ((t->user[0] ? initgroups(t->user, t->gid) : setgroups(0, NULL)) < 0 ||
		    setgid(t->gid) < 0 || setuid(t->uid) < 0)
			goto fail;
	}
	execv(path, t->argv);
fail:
	e = errno;
	if (write(errpipe, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static pid_t start_program(const struct mw_target *t, const struct mw_pty *pty, int *hold_w,
			   int *errpipe_r)
{
	int hold[2], ep[2];
	pid_t pid;

	if (pipe2(hold, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(hold[0]);
		close(hold[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(hold[1]);
		close(ep[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		program_child(t, pty, hold[0], ep[1]);
	}
	close(hold[0]);
	close(ep[1]);
	*hold_w = hold[1];
	*errpipe_r = ep[0];
	return pid;
}

static void tracer_stderr_line(struct run *rn, char *line)
{
	unsigned long long n;
	const char *p = strstr(line, "lost ");

	if (p && sscanf(p, "lost %llu", &n) == 1)
		rn->r->lost += n;
	if (rn->o->verbose)
		mw_note("tracer: %s", line);
	/* keep the first error line; until there is one, the last line */
	if (strcasestr(rn->r->tracer_msg, "error"))
		return;
	if (strcasestr(line, "error") || (*line && !strstr(line, "WARNING: Kernel")))
		snprintf(rn->r->tracer_msg, sizeof(rn->r->tracer_msg), "%s", line);
}

/* Signal a child of ours through its pidfd; a kernel without pidfds
 * (before 5.3) gets kill(2) on the pid, still safe while it is our
 * child and not reaped (callers check that: the pid is 0 once reaped). */
static void signal_child(int pidfd, pid_t pid, int sig)
{
	if (mw_pidfd_signal(pidfd, sig) < 0 && errno == EBADF && pid > 0)
		kill(pid, sig);
}

static void release(struct run *rn)
{
	if (rn->hold_w < 0)
		return;
	if (mw_pty_start(rn->pty) < 0) {	/* it would run deaf and blocked */
		mw_warn("cannot relay the program's terminal: %s; killing it", strerror(errno));
		signal_child(rn->pidfd, rn->prog, SIGKILL);
	}
	if (write(rn->hold_w, "g", 1) != 1)
		mw_warn("cannot release the program: %s", strerror(errno));
	close(rn->hold_w);
	rn->hold_w = -1;
}

static void stdout_line(struct run *rn, char *line)
{
	if (!rn->r->ready && strcmp(line, MW_LINE_READY) == 0) {
		rn->r->ready = 1;
		/* the line first: its reader takes the program's start time
		 * (MW_REC_ORIGIN), which must come before its first event */
		rn->fn(rn->ctx, line);
		release(rn);
		if (rn->o->duration_ms > 0)
			rn->stop_at = mw_now_ms() + rn->o->duration_ms;
		return;
	}
	if (!rn->end_seen && strcmp(line, MW_LINE_END) == 0) {
		rn->end_seen = 1;
		rn->end_at = mw_now_ms();
	}
	rn->fn(rn->ctx, line);
}

/* Read what is there on fd, call per complete line; -1 at EOF. */
static int pump(struct run *rn, int fd, struct linebuf *lb, int is_err)
{
	ssize_t n = read(fd, lb->buf + lb->len, sizeof(lb->buf) - 1 - lb->len);
	char *start, *nl;

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		if (lb->len) {	/* a last line without newline */
			lb->buf[lb->len] = '\0';
			is_err ? tracer_stderr_line(rn, lb->buf) : stdout_line(rn, lb->buf);
			lb->len = 0;
		}
		return -1;
	}
	lb->len += (size_t)n;
	lb->buf[lb->len] = '\0';
	start = lb->buf;
	while ((nl = memchr(start, '\n', lb->len - (size_t)(start - lb->buf)))) {
		*nl = '\0';
		is_err ? tracer_stderr_line(rn, start) : stdout_line(rn, start);
		start = nl + 1;
	}
	lb->len -= (size_t)(start - lb->buf);
	memmove(lb->buf, start, lb->len);
	if (lb->len == sizeof(lb->buf) - 1) {	/* an overlong line: pass it on cut */
		lb->buf[lb->len] = '\0';
		is_err ? tracer_stderr_line(rn, lb->buf) : stdout_line(rn, lb->buf);
		lb->len = 0;
	}
	return 0;
}

/* Threads of pid still there (its leader included), from
 * /proc/PID/status; -1 when unreadable. */
static int threads_of(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Ask one of the script's procfs probes (runtime.h): the kernel
 * runtime's probe runs in read() and the file is closed again at once;
 * stapbpf's runs when a reader opens its FIFO, and the FIFO stays open
 * (*fd) until the answer is in: procfs_answered().  0 when asked, -1
 * with err set when the file cannot be opened. */
static int procfs_ask(const struct run *rn, const char *name, int *fd, char *err, size_t errlen)
{
	char c[64];

	*fd = mw_runtime_procfs_open(rn->o->env->rt, rn->module, name, err, errlen);
	if (*fd < 0)
		return -1;
	if (rn->o->env->rt != MW_RT_BPF) {
		if (read(*fd, c, sizeof(c)) < 0 && rn->o->verbose)
			mw_note("%s read: %s", name, strerror(errno));
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/* poll() said revents about an asked FIFO: take what is in it; closed
 * (*fd = -1) once stapbpf has written its answer and closed its end
 * (POLLHUP: a writer came and went since the open).  stapbpf spins on
 * open(O_NONBLOCK) until the reader has gone, so the close must not
 * wait; it must not come early either: the answer would be written to a
 * FIFO without a reader (EPIPE: SIGPIPE is ignored in the tracer, see
 * spawn()) and stapbpf warns on stderr. */
static void procfs_answered(int *fd, short revents)
{
	char c[64];

	if (*fd < 0)
		return;
	if (revents & POLLIN)
		while (read(*fd, c, sizeof(c)) > 0)
			;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		close(*fd);
		*fd = -1;
	}
}

/* Close an asked FIFO before the tracer is stopped or left: wait for its
 * answer, at most ms (the probe is a few map reads; a tracer that has not
 * answered by then is stuck, and closing is all that is left). */
static void procfs_settle(int *fd, int ms)
{
	long long until = mw_now_ms() + ms;

	while (*fd >= 0) {
		struct pollfd p = { .fd = *fd, .events = POLLIN };
		long long left = until - mw_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			close(*fd);
			*fd = -1;
			break;
		}
		procfs_answered(fd, p.revents);
	}
}

/* The program's leader is at its exit stop.  When the whole process is
 * ending (every other thread gone: exit_group kills them, they may take
 * a moment), no probe can fire any more: read the script's flush file so
 * the tracer prints its aggregates now, before it detaches.  The leader
 * stays stopped (its pid cannot be reused) until flush_check() lets it
 * go.  1 when the flush started, 0 when it cannot be used (the reason
 * as a verbose note; the end probe prints the aggregates then). */
static int flush_start(struct run *rn)
{
	long long until = mw_now_ms() + FLUSH_THREADS_MS;
	char err[PATH_MAX + 128];
	int n;

	/* only from the run loop, which completes it (flush_check), and only
	 * while the tracer is there to answer */
	if (!rn->o->flush || !rn->r->ready || rn->stopping || rn->out_fd < 0 || rn->tracer <= 0)
		return 0;
	while ((n = threads_of(rn->prog)) > 1 && mw_now_ms() < until)
		usleep(1000);
	if (n != 1) {	/* the main thread left early (pthread_exit) */
		if (rn->o->verbose)
			mw_note("no flush: %d threads still running", n);
		return 0;
	}
	if (procfs_ask(rn, MW_FLUSH_FILE, &rn->flush_fd, err, sizeof(err)) < 0) {
		mw_warn("cannot flush the tracer (%s); the report waits for its uprobes to be "
			"removed", err);
		return 0;
	}
	rn->flushing = 1;
	rn->flush_start = mw_now_ms();
	rn->flush_until = rn->flush_start + FLUSH_WAIT_MS;
	return 1;
}

/* The flush is over, complete or not: the program's leader goes on. */
static void flush_end(struct run *rn)
{
	rn->r->flushed = rn->end_seen;
	rn->r->flush_ms = mw_now_ms() - rn->flush_start;
	rn->flushing = 0;
	procfs_settle(&rn->flush_fd, PROCFS_SETTLE_MS);
	ptrace(PTRACE_CONT, rn->prog, 0, 0);
}

/* Is the flush complete: its MW_LINE_END came and every streamed event it
 * counted has arrived (they travel through the tracer's per-CPU buffers
 * and may come after it), or waiting has run out?  Then the program's
 * leader goes on to exit. */
static void flush_check(struct run *rn)
{
	long long now = mw_now_ms();
	int done = rn->end_seen && (!rn->o->missing || rn->o->missing(rn->ctx) == 0);

	if (rn->end_seen && !done && now >= rn->end_at + FLUSH_DRAIN_MS)
		done = 1;	/* lost for good: the report counts them */
	if (!done && now < rn->flush_until)
		return;
	if (!rn->end_seen)
		mw_warn("the tracer did not answer the flush in %d ms; the report waits for "
			"its uprobes to be removed", FLUSH_WAIT_MS);
	flush_end(rn);
}

/* The program is ptraced: act on one waitpid() status of a stop.  The
 * exit stop runs at_exit; a signal-delivery-stop passes the signal on; a
 * group-stop stays stopped (PTRACE_LISTEN). */
static void ptrace_stop(struct run *rn, int st)
{
	int sig = WSTOPSIG(st), event = st >> 16;

	switch (event) {
	case PTRACE_EVENT_EXIT:
		if (!rn->r->exit_stopped) {
			rn->r->exit_stopped = 1;
			rn->r->exit_ms = mw_now_ms();
			rn->o->at_exit(rn->ctx, rn->prog);
			if (flush_start(rn))
				break;	/* held until the flush is done */
		}
		ptrace(PTRACE_CONT, rn->prog, 0, 0);
		break;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, rn->prog, 0, 0);
			if (mw_pty_suspend(rn->pty))	/* on a pty: ptyrelay.h */
				signal_child(rn->pidfd, rn->prog, SIGCONT);
		} else {
			ptrace(PTRACE_CONT, rn->prog, 0, 0);
		}
		break;
	default:	/* the signal, as it was */
		ptrace(PTRACE_CONT, rn->prog, 0, (void *)(long)sig);
	}
}

/* Collect the program's state changes; block until it exited when wait
 * is set.  1 once it has exited (r->status set), else 0. */
static int reap_program(struct run *rn, int wait)
{
	int st;
	pid_t w;

	while ((w = waitpid(rn->prog, &st, (wait ? 0 : WNOHANG) | __WALL)) != 0) {
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return 1;	/* ECHILD: already reaped */
		}
		if (WIFSTOPPED(st)) {
			if (rn->traced)
				ptrace_stop(rn, st);
			continue;
		}
		rn->r->status = st;
		rn->r->have_status = 1;
		return 1;
	}
	return 0;
}

static void signal_tracer(struct run *rn, int sig)
{
	signal_child(rn->tracer_fd, rn->tracer, sig);
}

/* Tell the tracer to stop (its end probe prints the aggregates), once a
 * sample asked for is answered: a reader left on the FIFO keeps stapbpf's
 * procfs thread spinning, and when its teardown removes the FIFO that
 * thread's next open fails and ends stapbpf before its end probe. */
static void stop_tracer(struct run *rn)
{
	procfs_settle(&rn->sample_fd, PROCFS_SETTLE_MS);
	signal_tracer(rn, SIGINT);
}

static void program_exited(struct run *rn)
{
	if (rn->o->target && !rn->r->have_status)
		reap_program(rn, 1);
	close(rn->pidfd);
	rn->pidfd = -1;
	if (rn->tracer > 0)	/* 0 once reaped: the pid may be another's now */
		stop_tracer(rn);
	if (rn->r->flushed && rn->tracer > 0) {
		/* everything is in: the removal of the uprobes (slow, see
		 * platform.md) goes on without us; nothing is traced any more
		 * (the process is gone, the flush turned the handlers off) */
		rn->detach_bg = 1;
		rn->r->detaching = rn->tracer;
	}
}

/* Take a sample when it is time (opts->sample); return the poll
 * timeout until the next, at most max_ms. */
static int sample_due(struct run *rn, int max_ms)
{
	const struct mw_tracer_opts *o = rn->o;
	long long now = mw_now_ms();
	char err[PATH_MAX + 128];

	if (!o->sample || o->sample_ms <= 0 || !rn->r->ready || rn->stopping || rn->flushing ||
	    rn->pidfd < 0 || rn->r->have_status || rn->r->exit_stopped)
		return max_ms;
	if (!rn->next_sample)
		rn->next_sample = now + o->sample_ms;
	if (now >= rn->next_sample) {
		/* the lock waits, for a sample taken: not asked again while
		 * the last question is open (that interval then has no wait
		 * count) */
		if (o->sample(rn->ctx, rn->prog) < 0) {
			;	/* skipped: no sample for a wait count */
		} else if (rn->sample_fd >= 0) {
			rn->r->samples_unanswered++;
		} else if (procfs_ask(rn, MW_SAMPLE_FILE, &rn->sample_fd, err, sizeof(err)) < 0) {
			rn->r->samples_unanswered++;
			if (o->verbose)
				mw_note("no lock-wait sample: %s", err);
		}
		while (rn->next_sample <= now)
			rn->next_sample += o->sample_ms;
	}
	return rn->next_sample - now < max_ms ? (int)(rn->next_sample - now) : max_ms;
}

/* The poll loop: until the tracer's stdout and stderr are both at EOF. */
static void loop(struct run *rn)
{
	long long kill_at = 0;

	while (rn->out_fd >= 0 || rn->err_fd >= 0) {
		int tmo = sample_due(rn, rn->flushing ? 5 : 500);
		struct pollfd p[5] = {
			{ .fd = rn->out_fd, .events = POLLIN },
			{ .fd = rn->err_fd, .events = POLLIN },
			{ .fd = rn->pidfd, .events = POLLIN },
			{ .fd = rn->sample_fd, .events = POLLIN },
			{ .fd = rn->flush_fd, .events = POLLIN },
		};
		int n = poll(p, 5, tmo);

		if (rn->stop_at && mw_now_ms() >= rn->stop_at && !rn->stopping) {
			rn->stop_at = 0;	/* --duration: the normal end */
			rn->stopping = 1;
			rn->r->stopped = 1;
			stop_tracer(rn);
			kill_at = mw_now_ms() + STOP_GRACE_MS;
		}
		if (got_signal) {
			int sig = mw_signal_take();

			if (!rn->r->ready)
				rn->r->interrupted = sig;	/* before tracing started */
			if (rn->o->target && rn->pidfd >= 0 && rn->r->ready) {
				mw_pidfd_signal(rn->pidfd, sig);	/* -c: the program decides */
			} else if (!rn->stopping) {
				/* -p (or -c still held): stop tracing; the end
				 * probe still prints the totals */
				rn->stopping = 1;
				rn->r->stopped = !rn->o->target;
				stop_tracer(rn);
				kill_at = mw_now_ms() + STOP_GRACE_MS;
			}
		}
		if (n > 0 && (p[0].revents & (POLLIN | POLLHUP)) &&
		    pump(rn, rn->out_fd, &rn->out, 0) < 0) {
			close(rn->out_fd);
			rn->out_fd = -1;
		}
		if (n > 0 && (p[1].revents & (POLLIN | POLLHUP)) &&
		    pump(rn, rn->err_fd, &rn->errb, 1) < 0) {
			close(rn->err_fd);
			rn->err_fd = -1;
		}
		if (n > 0) {	/* poll ignores the fds that are -1 */
			procfs_answered(&rn->sample_fd, p[3].revents);
			procfs_answered(&rn->flush_fd, p[4].revents);
		}
		if (rn->traced && rn->pidfd >= 0 && !rn->r->have_status)
			reap_program(rn, 0);	/* ptrace stops; the exit itself */
		if (rn->flushing)
			flush_check(rn);
		if (rn->pidfd >= 0 && ((n > 0 && (p[2].revents & POLLIN)) || rn->r->have_status)) {
			program_exited(rn);
			kill_at = mw_now_ms() + STOP_GRACE_MS;
			if (rn->detach_bg)
				break;
		}
		if (kill_at && mw_now_ms() > kill_at) {
			int left = mw_uprobes_of(rn->tracer);

			if (left > 0 && left < rn->uprobes_left) {	/* still detaching */
				rn->uprobes_left = left;
				kill_at = mw_now_ms() + STOP_GRACE_MS;
				continue;
			}
			mw_warn("the tracer made no progress stopping for %d s; killing it",
				STOP_GRACE_MS / 1000);
			signal_tracer(rn, SIGKILL);
			kill_at = 0;
		}
	}
}

/* argv for stapbpf/stap, into argv[] (at most 12 entries). */
static void tracer_argv(const struct mw_tracer_opts *o, pid_t pid, char *pidbuf,
			char *bo, const char *module, const char **argv)
{
	int k = 0;

	sprintf(pidbuf, "%d", (int)pid);
	if (o->env->rt == MW_RT_BPF) {
		argv[k++] = "stapbpf";
		argv[k++] = "-w";
		argv[k++] = "-x";
		argv[k++] = pidbuf;
		argv[k++] = bo;
	} else {
		argv[k++] = "stap";
		argv[k++] = "-w";
		if (o->env->kbuild[0]) {
			argv[k++] = "-r";
			argv[k++] = o->env->kbuild;
		}
		argv[k++] = "-m";
		argv[k++] = module;
		argv[k++] = "-x";
		argv[k++] = pidbuf;
		argv[k++] = o->script;
	}
	argv[k] = NULL;
}

static int compile_bpf(const struct mw_tracer_opts *o, const char *rn_module, char *bo, size_t bolen,
		       char *err, size_t errlen)
{
	const char *argv[16];
	int k = 0;
	char msg[400];

	argv[k++] = "stap";
	argv[k++] = "--runtime=bpf";
	argv[k++] = "-g";
	argv[k++] = "-w";
	if (o->env->kbuild[0]) {
		argv[k++] = "-r";
		argv[k++] = o->env->kbuild;
	}
	argv[k++] = "-p4";
	argv[k++] = "-m";
	argv[k++] = rn_module;
	argv[k++] = o->script;
	argv[k] = NULL;
	switch (run_capture((char *const *)argv, o->workdir, msg, sizeof(msg))) {
	case -2:
		snprintf(err, errlen, "interrupted by signal %d (%s) before tracing started",
			 mw_signal_pending(), strsignal(mw_signal_pending()));
		return -1;
	case -1:
		snprintf(err, errlen, "stap could not compile the script: %s", msg);
		return -1;
	}
	snprintf(bo, bolen, "%s/%s.bo", o->workdir, rn_module);
	return 0;
}

/* Why the tracer ended, when it said nothing itself. */
static void tracer_fate(const char *name, int st, char *msg, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(msg, len, "%s was killed by signal %d (%s)", name, WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st))
		snprintf(msg, len, "%s exited with status %d", name, WEXITSTATUS(st));
}

/* The program could not exec: its errno arrives on errpipe. */
static int exec_failed(struct run *rn, int errpipe, char *err, size_t errlen)
{
	int e;

	if (read(errpipe, &e, sizeof(e)) != sizeof(e))
		return 0;
	snprintf(err, errlen, "cannot run '%s': %s", rn->o->target->path, strerror(e));
	return -1;
}

/* -c: trace the held program for its exit stop only. */
static void seize(struct run *rn)
{
	struct sigaction sa;

	if (ptrace(PTRACE_SEIZE, rn->prog, 0, (void *)(long)PTRACE_O_TRACEEXIT) < 0) {
		snprintf(rn->r->ptrace_msg, sizeof(rn->r->ptrace_msg), "cannot ptrace the "
			 "program (%s): no snapshot at its exit", strerror(errno));
		return;
	}
	rn->traced = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;	/* no SA_RESTART: poll returns EINTR;
					 * no SA_NOCLDSTOP: ptrace stops must wake it */
	sigaction(SIGCHLD, &sa, NULL);
}

int mw_trace_run(const struct mw_tracer_opts *o, mw_line_fn fn, void *ctx,
		 struct mw_trace_result *r, char *err, size_t errlen)
{
	struct run rn = { .o = o, .r = r, .fn = fn, .ctx = ctx, .hold_w = -1, .out_fd = -1,
			  .err_fd = -1, .pidfd = -1, .uprobes_left = INT_MAX, .flush_fd = -1,
			  .sample_fd = -1, .tracer_fd = -1 };
	char bo[4200], pidbuf[32];
	const char *argv[16];
	int errpipe = -1, ret = -1;

	memset(r, 0, sizeof(*r));
	mw_runtime_module(o->workdir, rn.module, sizeof(rn.module));
	if (o->env->rt == MW_RT_BPF)	/* a FIFO directory a killed stapbpf left */
		mw_runtime_procfs_remove(rn.module);
	if (o->env->rt == MW_RT_BPF && compile_bpf(o, rn.module, bo, sizeof(bo), err, errlen) < 0) {
		r->interrupted = mw_signal_take();
		return -1;
	}
	if (o->target) {
		if (mw_pty_open(&rn.pty, o->target->uid, err, errlen) < 0)
			return -1;
		rn.prog = start_program(o->target, rn.pty, &rn.hold_w, &errpipe);
		if (rn.prog < 0) {
			snprintf(err, errlen, "cannot fork: %s", strerror(errno));
			mw_pty_close(rn.pty);
			return -1;
		}
		if (o->at_exit)
			seize(&rn);
	} else {
		rn.prog = o->attach_pid;
	}
	r->pid = rn.prog;
	rn.pidfd = (int)syscall(SYS_pidfd_open, rn.prog, 0);
	if (rn.pidfd < 0) {
		snprintf(err, errlen, "cannot watch process %d: %s", (int)rn.prog, strerror(errno));
		goto cleanup;
	}
	tracer_argv(o, rn.prog, pidbuf, bo, rn.module, argv);
	rn.tracer = spawn((char *const *)argv, o->workdir,
			  o->env->shim[0] ? o->env->shim : NULL, &rn.out_fd, &rn.err_fd);
	if (rn.tracer < 0) {
		snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(errno));
		goto cleanup;
	}
	rn.tracer_fd = mw_pidfd_open(rn.tracer);	/* our child, not reaped: it */
	if (o->env->rt == MW_RT_BPF)
		mw_tracer_record(rn.tracer);	/* its definitions are ours to sweep */
	loop(&rn);
	if (r->samples_unanswered && o->verbose)
		mw_note("%llu samples without a lock-wait count (the tracer had not answered "
			"the one before)", r->samples_unanswered);
	if (rn.flushing)	/* the tracer ended while it flushed */
		flush_end(&rn);
	if (rn.detach_bg) {	/* see program_exited() */
		close(rn.out_fd);
		close(rn.err_fd);
		rn.tracer = 0;
		ret = 0;
		goto cleanup;
	}
	while (waitpid(rn.tracer, &r->tracer_status, 0) < 0 && errno == EINTR)
		;
	if (!r->tracer_msg[0] || WIFSIGNALED(r->tracer_status))
		tracer_fate(argv[0], r->tracer_status, r->tracer_msg, sizeof(r->tracer_msg));
	if (o->env->rt == MW_RT_BPF && WIFSIGNALED(r->tracer_status)) {
		int n = mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* ours, the run is over */

		if (n)
			mw_note("removed %d uprobe definitions the dead tracer left", n);
		mw_runtime_procfs_remove(rn.module);
	}
	if (o->env->rt == MW_RT_BPF && mw_uprobes_of(rn.tracer) == 0)
		mw_tracer_unrecord(rn.tracer);
	rn.tracer = 0;	/* reaped */
	if (r->interrupted) {
		snprintf(err, errlen, "interrupted by signal %d (%s) before tracing started",
			 r->interrupted, strsignal(r->interrupted));
		goto cleanup;
	}
	if (!r->ready) {
		snprintf(err, errlen, "%s failed before tracing started: %s", argv[0],
			 r->tracer_msg[0] ? r->tracer_msg : "no message");
		goto cleanup;
	}
	if (rn.pidfd >= 0 && !r->stopped) {	/* the tracer ended first */
		r->tracer_died = 1;
		if (o->target)
			program_exited(&rn);
	}
	if (o->target && exec_failed(&rn, errpipe, err, errlen) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	/* an answer still awaited here has no writer left to give it: the
	 * tracer was reaped, or stop_tracer() and flush_end() settled it */
	if (rn.flush_fd >= 0)
		close(rn.flush_fd);
	if (rn.sample_fd >= 0)
		close(rn.sample_fd);
	if (rn.hold_w >= 0) {	/* never released: the program must not run */
		close(rn.hold_w);
		rn.hold_w = -1;
		if (o->target && !r->have_status) {
			signal_child(rn.pidfd, rn.prog, SIGKILL);	/* not reaped */
			reap_program(&rn, 1);
		}
	}
	if (rn.pidfd >= 0)
		close(rn.pidfd);
	if (rn.tracer_fd >= 0)
		close(rn.tracer_fd);
	mw_pty_close(rn.pty);	/* after its last output, before the report */
	if (errpipe >= 0)
		close(errpipe);
	return ret;
}

/* Tracers left detaching and their watchers: children of this process
 * until they end; reaped by mw_tracer_reap(). */
static pid_t left[64];
static size_t nleft;

void mw_tracer_reap(void)
{
	for (size_t i = 0; i < nleft;) {
		if (waitpid(left[i], NULL, WNOHANG) != 0) {	/* reaped, or not ours */
			left[i] = left[--nleft];
			continue;
		}
		i++;
	}
}

static void keep(pid_t pid)
{
	mw_tracer_reap();
	if (nleft < sizeof(left) / sizeof(left[0]))
		left[nleft++] = pid;
}

/* The watcher: own session, no descriptor of mallocwatch's but the
 * tracer's pidfd and the work directory's lock (a reader of its stdout must see EOF when mallocwatch
 * exits), the work directory renamed to its own pid so that sweeps see
 * a live run. */
static void watch(pid_t tracer, int tracer_fd, int ready, const char *workdir,
		  const char *module)
{
	char dir[PATH_MAX], marker[PATH_MAX + 16];
	const char *dot = strrchr(workdir, '.');
	int null = open("/dev/null", O_RDWR), fd;
	const char *slash = strrchr(workdir, '/');
	ssize_t w;

	setsid();
	prctl(PR_SET_NAME, "mw-detach");	/* in ps: not a run still going */
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	/* keep the tracer's pidfd, the work directory's lock (its holder
	 * is a live run for sweeps: leftovers.h) and the pipe that says the
	 * marker is there, nothing else */
	tracer_fd = fcntl(tracer_fd, F_DUPFD_CLOEXEC, 1000);
	fcntl(mw_workdir_lock_fd(), F_DUPFD_CLOEXEC, 1001);
	ready = fcntl(ready, F_DUPFD_CLOEXEC, 1002);
	syscall(SYS_close_range, 3U, 999U, 0U);
	syscall(SYS_close_range, 1003U, ~0U, 0U);
	snprintf(dir, sizeof(dir), "%.*s/mallocwatch.%d%s", (int)(slash - workdir), workdir,
		 (int)getpid(), dot ? dot : "");
	if (rename(workdir, dir) < 0)
		snprintf(dir, sizeof(dir), "%s", workdir);
	snprintf(marker, sizeof(marker), "%s/" MW_DETACHING_FILE, dir);
	if ((fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
		dprintf(fd, "%d\n", (int)tracer);
		close(fd);
	}
	/* from here --cleanup finds this directory and waits for us (a
	 * failed write: the parent's wait ends at its timeout) */
	w = write(ready, "r", 1);
	(void)w;
	close(ready);
	if (mw_wait_tracer(tracer, tracer_fd, STOP_GRACE_MS) < 0) {
		mw_pidfd_signal(tracer_fd, SIGKILL);	/* stuck: the sweep below */
		mw_pidfd_wait(tracer_fd, MW_SWEEP_WAIT_MS);
	}
	mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* nothing when it ended normally */
	mw_runtime_procfs_remove(module);
	mw_workdir_remove(dir);
	_exit(0);
}

int mw_tracer_hand_off(pid_t tracer, const char *workdir, const char *module)
{
	/* our child, not reaped yet (keep() reaps only earlier ones): the
	 * pidfd is of the tracer itself */
	int tfd = mw_pidfd_open(tracer), ready[2];
	struct pollfd p;
	pid_t pid;

	keep(tracer);
	if (tfd < 0)
		return -1;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(tfd);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_IGN);
		signal(SIGCHLD, SIG_DFL);
		close(ready[0]);
		watch(tracer, tfd, ready[1], workdir, module);
	}
	close(tfd);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -1;
	}
	keep(pid);
	mw_workdir_unlock();	/* the watcher holds the lock now */
	/* until the watcher has marked the directory, a --cleanup started
	 * right after we exit would not know to wait for it (bounded: the
	 * watcher only renames a directory and writes a line) */
	p = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	while (poll(&p, 1, 1000) < 0 && errno == EINTR)
		;
	close(ready[0]);
	return 0;
}
