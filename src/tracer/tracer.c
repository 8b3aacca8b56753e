/* tracer.c - hold, trace, release, stop; see tracer.h.  The run's loop
 * over the tracer's output, the program's ptrace stops, the flush at
 * its exit and the samples; the processes themselves are started in
 * tracer_proc.c, the script compiled and the tracer started in
 * tracer_start.c, the program's end (its tree's events, the flush,
 * stopping the tracer) is in tracer_end.c, a tracer left detaching is
 * watched from tracer_detach.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "leftovers.h"
#include "linger.h"
#include "pidfd.h"
#include "msg.h"
#include "pidset.h"
#include "release.h"
#include "proclist.h"
#include "protocol.h"
#include "ptrace_tree.h"
#include "ptyrelay.h"
#include "signals.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"
#include "uprobes.h"
#include "xalloc.h"

#define STOP_GRACE_MS MW_STOP_GRACE_MS

/* A ptrace stop of the program (its exec, its exit, a child's) is seen
 * at once: SIGCHLD writes a byte to this pipe, which the run loop polls.
 * A signal that only interrupted poll(2) was lost when it came before
 * the call (while a line was handled, a sample taken, the libc's layouts
 * read), and the program then waited in its stop for poll's timeout:
 * 100 ms a run when it joined a lingering session, whose program runs at
 * once while the layouts are read.  Both ends non-blocking and
 * close-on-exec; made once. */
static int chld_pipe[2] = { -1, -1 };
/* Only the process that made the pipe writes to it: a child of ours that
 * forked without exec keeps the handler, and may have closed the
 * descriptor and reused its number. */
static pid_t chld_owner;

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	if (chld_pipe[1] >= 0 && getpid() == chld_owner && write(chld_pipe[1], "c", 1) < 0) {
		/* full: a byte is waiting already */
	}
	errno = e;
}

/* Empty the SIGCHLD pipe: the stops it announced are read next. */
static void chld_drain(void)
{
	char buf[64];

	while (chld_pipe[0] >= 0 && read(chld_pipe[0], buf, sizeof(buf)) > 0)
		;
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

static void release(struct run *rn)
{
	if (rn->hold_w < 0)
		return;
	if (mw_pty_start(rn->pty) < 0) {	/* it would run deaf and blocked */
		mw_warn("cannot relay the program's terminal: %s; killing it", strerror(errno));
		mw_tr_signal_child(rn->pidfd, rn->prog, SIGKILL);
	}
	if (write(rn->hold_w, "g", 1) != 1)
		mw_warn("cannot release the program: %s", strerror(errno));
	close(rn->hold_w);
	rn->hold_w = -1;
}

static void catch_chld(void)
{
	struct sigaction sa;

	/* a child of ours that forked without exec makes its own (the
	 * inherited ends are left as they are: it may have reused their
	 * numbers) */
	if (chld_pipe[0] < 0 || chld_owner != getpid()) {
		if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
			chld_pipe[0] = chld_pipe[1] = -1;	/* poll's timeout, as before */
		chld_owner = getpid();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;	/* no SA_RESTART: poll returns EINTR;
					 * no SA_NOCLDSTOP: ptrace stops must wake it */
	sigaction(SIGCHLD, &sa, NULL);
}

/* -p -f: the process and its threads under ptrace from now (ptrace_tree.h),
 * its new processes followed. */
static void attach_tree(struct run *rn)
{
	if (!(rn->pt = mw_ptree_attach(rn->prog))) {
		snprintf(rn->r->ptrace_msg, sizeof(rn->r->ptrace_msg), "cannot ptrace process %d "
			 "(%s): the processes it creates are not followed", (int)rn->prog,
			 strerror(errno));
		return;
	}
	catch_chld();
}

static void stdout_line(struct run *rn, char *line)
{
	if (!rn->r->ready && rn->lg && rn->lg->armed &&
	    (line[0] == MW_REC_DECLARE || strcmp(line, MW_LINE_READY) == 0))
		mw_linger_pre(rn->lg, line);	/* for the runs that join */
	if (!rn->r->ready && strcmp(line, MW_LINE_READY) == 0) {
		rn->r->ready = 1;
		mw_tr_open_set(rn);
		if (rn->lg && !rn->lg->armed)	/* joined: not the tracer's target */
			mw_tr_set_add(rn, rn->prog);
		if (rn->o->env->untargeted)	/* no target: the set is empty */
			mw_tr_set_start(rn);
		if (rn->o->procs->follow && !mw_procset_starts(rn->o->procs))
			attach_tree(rn);
		/* the line first: its reader takes the program's start time
		 * (MW_REC_ORIGIN), which must come before its first event */
		rn->c->line(rn->c->ctx, line);
		mw_tr_flush_wait(rn);	/* before the program can end */
		release(rn);
		if (rn->o->duration_ms > 0)
			rn->stop_at = mw_now_ms() + rn->o->duration_ms;
		return;
	}
	if (strncmp(line, MW_LINE_SKIPPED " ", sizeof(MW_LINE_SKIPPED)) == 0) {
		unsigned long long n;

		if (sscanf(line + sizeof(MW_LINE_SKIPPED), "%llu", &n) == 1)
			rn->r->lost += n;	/* counted as lost, as stapbpf's */
		else
			rn->c->line(rn->c->ctx, line);	/* garbled: the model counts it */
		return;
	}
	if (rn->exec_pid && strcmp(line, rn->exec_line) == 0)
		rn->exec_seen = 1;
	else if (rn->exec_late[0] && strcmp(line, rn->exec_late) == 0) {
		rn->exec_late[0] = '\0';	/* too late: that image stays refused */
		return;
	}
	if (!rn->end_seen && strcmp(line, MW_LINE_END) == 0) {
		rn->end_seen = 1;
		rn->end_at = mw_now_ms();
	}
	rn->c->line(rn->c->ctx, line);
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

/* serve: read the script's live file when it is time (opts->live_ms)
 * and the last reading was answered; the poll timeout until the next,
 * at most max_ms. */
static int live_due(struct run *rn, int max_ms)
{
	long long now = mw_now_ms();
	char err[PATH_MAX + 128];

	if (!rn->r->ready || rn->stopping || rn->flushing)
		return max_ms;
	if (now >= rn->next_sample) {
		if (rn->sample_fd < 0 &&
		    mw_procfs_ask(rn->o->env->rt, rn->module, rn->o->verbose, MW_LIVE_FILE,
				  &rn->sample_fd, err, sizeof(err)) < 0 && rn->o->verbose)
			mw_note("no live reading: %s", err);
		rn->next_sample = now + rn->o->live_ms;
	}
	return rn->next_sample - now < max_ms ? (int)(rn->next_sample - now) : max_ms;
}

/* This thread's CPU time, ns: what a sample costs (its reads of the
 * process wait for the process too, at no CPU cost). */
static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Take a sample when it is time (the consumer's sample); return the poll
 * timeout until the next, at most max_ms. */
static int sample_due(struct run *rn, int max_ms)
{
	const struct mw_tracer_opts *o = rn->o;
	long long now = mw_now_ms();
	char err[PATH_MAX + 128];

	if (o->live_ms > 0)
		return live_due(rn, max_ms);
	if (!rn->c->sample || o->sample_ms <= 0 || !rn->r->ready || rn->stopping || rn->flushing ||
	    rn->exec_pid || rn->pidfd < 0 || rn->r->have_status || rn->r->exit_stopped)
		return max_ms;
	if (!rn->next_sample)
		rn->next_sample = now + o->sample_ms;
	if (now >= rn->next_sample) {
		unsigned long long t0 = thread_cpu_ns(), gap;

		/* the lock waits, for a sample taken: not asked again while
		 * the last question is open (that interval then has no wait
		 * count) */
		if (rn->c->sample(rn->c->ctx, rn->prog) < 0) {
			;	/* skipped: no sample for a wait count */
		} else if (rn->sample_fd >= 0) {
			rn->r->samples_unanswered++;
		} else if (mw_procfs_ask(o->env->rt, rn->module, o->verbose, MW_SAMPLE_FILE,
					 &rn->sample_fd, err, sizeof(err)) < 0) {
			rn->r->samples_unanswered++;
			if (o->verbose)
				mw_note("no lock-wait sample: %s", err);
		}
		while (rn->next_sample <= now)
			rn->next_sample += o->sample_ms;
		/* not the first: it also loads the libc's layouts from
		 * DWARF, once (hundreds of ms) */
		gap = o->sample_pct_max > 0 && rn->samples_taken++ > 0 ?
			(thread_cpu_ns() - t0) * 100 / (unsigned long long)o->sample_pct_max / 1000000 : 0;
		/* at most 10 intervals */
		if (gap > 10ULL * (unsigned long long)o->sample_ms)
			gap = 10ULL * (unsigned long long)o->sample_ms;
		if (now + (long long)gap > rn->next_sample)
			rn->next_sample = now + (long long)gap;
	}
	return rn->next_sample - now < max_ms ? (int)(rn->next_sample - now) : max_ms;
}

/* --duration has run out, or a signal of ours came: stop the tracer
 * (its end probe still prints the totals), or pass the signal on to a
 * -c program already released, which decides.  *kill_at: when to kill a
 * tracer that makes no progress stopping. */
static void stop_if_asked(struct run *rn, long long *kill_at, int stop_fd_ready)
{
	/* not while a process's old image is being emptied (its exec probe
	 * under way, at most FLUSH_WAIT_MS): the flush a stop asks for would
	 * print and the exec probe delete the same entries at once; the
	 * signal stays pending, the stop file readable */
	if (rn->exec_pid && !rn->stopping)
		return;
	if (stop_fd_ready && !rn->stopping) {	/* serve's end */
		rn->stopping = 1;
		rn->r->stopped = 1;
		mw_tr_stop_attach(rn);
		*kill_at = mw_now_ms() + STOP_GRACE_MS;
	}
	if (rn->stop_at && mw_now_ms() >= rn->stop_at && !rn->stopping) {
		rn->stop_at = 0;	/* --duration: the normal end */
		rn->stopping = 1;
		rn->r->stopped = 1;
		mw_tr_stop_attach(rn);
		*kill_at = mw_now_ms() + STOP_GRACE_MS;
	}
	if (mw_signal_pending()) {
		int sig = mw_signal_take();

		if (!rn->r->ready)
			rn->r->interrupted = sig;	/* before tracing started */
		/* -f: once the program has exited, a signal stops the
		 * following of what it left running */
		int gone = rn->pt && rn->r->have_status;

		if (mw_procset_starts(rn->o->procs) && rn->pidfd >= 0 && rn->r->ready && !gone) {
			mw_pidfd_signal(rn->pidfd, sig);	/* -c: the program decides */
		} else if (!rn->stopping) {
			/* -p (or -c still held): stop tracing; the end
			 * probe still prints the totals */
			rn->stopping = 1;
			rn->r->stopped = !mw_procset_starts(rn->o->procs) || gone;
			if (mw_procset_starts(rn->o->procs))
				mw_tr_stop_tracer(rn);
			else
				mw_tr_stop_attach(rn);
			*kill_at = mw_now_ms() + STOP_GRACE_MS;
		}
	}
}

/* What poll() found (n, p as in loop()): the tracer's stdout and stderr
 * lines, each closed at EOF, and the answers of asked procfs files. */
static void read_ready(struct run *rn, const struct pollfd *p, int n)
{
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
		mw_procfs_answered(&rn->sample_fd, p[3].revents);
		mw_procfs_answered(&rn->flush_fd, p[4].revents);
	}
	if (n > 0 && rn->exec_fd >= 0) {
		rn->exec_got += mw_procfs_answered(&rn->exec_fd, p[7].revents);
		/* hung up on without an answer: mw_tr_exec_check() */
		if (rn->exec_fd < 0 && !rn->exec_got && rn->exec_pid && !rn->exec_seen)
			rn->exec_reask = mw_now_ms() + 2;
	}
}

/* kill_at (mw_now_ms(), 0 for none) has passed: a tracer still removing
 * uprobe definitions gets STOP_GRACE_MS more; one that made no progress
 * is killed.  Returns the new kill_at. */
static long long kill_if_stuck(struct run *rn, long long kill_at)
{
	int left;

	if (!kill_at || mw_now_ms() <= kill_at)
		return kill_at;
	left = mw_uprobes_of(rn->tracer);
	if (left > 0 && left < rn->uprobes_left) {	/* still detaching */
		rn->uprobes_left = left;
		return mw_now_ms() + STOP_GRACE_MS;
	}
	mw_warn("the tracer made no progress stopping for %d s; killing it",
		STOP_GRACE_MS / 1000);
	mw_tr_signal_tracer(rn, SIGKILL);
	return 0;
}

static int start_target(struct run *rn, int *errpipe, char *err, size_t errlen);

/* --repeat: may run run_i + 1 start?  Run run_i ended well (exit 0), runs
 * remain, the session is still there and nothing asked us to stop. */
static int next_run_due(const struct run *rn)
{
	const struct mw_trace_result *r = rn->r;

	return rn->o->procs->runs > 1 && rn->run_i + 1 < rn->o->procs->runs && r->have_status &&
	       WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 && !mw_signal_pending() &&
	       !rn->stopping && !rn->flushing && !r->flushed && rn->tracer > 0 &&
	       rn->out_fd >= 0 && rn->pids;
}

/* --repeat: start the next run's program, held, under this session: its
 * pid joins the set before it is released (procs->runs).  1 when it runs;
 * 0 when it could not be started (warned; the run before stays the
 * last). */
static int next_run(struct run *rn)
{
	struct run was = *rn;
	char err[PATH_MAX + 128];
	int ep = -1, fd;

	err[0] = '\0';
	rn->pt = NULL;
	rn->pty = NULL;
	if (start_target(rn, &ep, err, sizeof(err)) < 0 || !rn->pt ||
	    (fd = mw_pidfd_open(rn->prog)) < 0) {
		if (!rn->pt && rn->prog > 0 && !err[0])
			snprintf(err, sizeof(err), "%s", rn->r->ptrace_msg);
		mw_warn("cannot start run %d: %s; the series ends", rn->run_i + 2,
			err[0] ? err : strerror(errno));
		if (rn->hold_w >= 0) {	/* never released: killed before it runs */
			close(rn->hold_w);
			kill(rn->prog, SIGKILL);
			waitpid(rn->prog, NULL, __WALL);
		}
		mw_ptree_free(rn->pt);
		mw_pty_close(rn->pty);
		if (ep >= 0)
			close(ep);
		*rn = was;
		return 0;
	}
	mw_ptree_free(was.pt);
	mw_pty_close(was.pty);
	close(was.pidfd);
	if (*rn->errpipe >= 0)
		close(*rn->errpipe);
	*rn->errpipe = ep;
	rn->pidfd = fd;
	rn->tree_over = 0;
	rn->next_sample = 0;
	rn->samples_taken = 0;
	rn->r->pid = rn->prog;
	rn->r->have_status = rn->r->exit_stopped = 0;
	rn->run_i++;
	rn->r->runs++;
	mw_tr_set_add(rn, rn->prog);
	if (rn->c->on_run)
		rn->c->on_run(rn->c->ctx, rn->run_i, rn->prog);
	release(rn);
	return 1;
}

/* --repeat, the run's program has ended: start the next run, or, when
 * the series ended before its last run, ask the flush once (its exit
 * stop did not).  1 while the session goes on (a run started, the flush
 * under way); 0 when the run is over (mw_tr_program_exited()). */
static int more_runs(struct run *rn)
{
	if (rn->o->procs->runs < 2 || !rn->tree_over)
		return 0;
	if (next_run_due(rn) && next_run(rn))
		return 1;
	if (!rn->r->flushed && !rn->flushing && !rn->late_flush && rn->o->flush &&
	    rn->r->ready && !rn->stopping && rn->out_fd >= 0 && rn->tracer > 0) {
		rn->late_flush = 1;
		mw_tr_flush_ask(rn);
	}
	return rn->flushing;
}

/* The poll loop: until the tracer's stdout and stderr are both at EOF. */
static void loop(struct run *rn)
{
	long long kill_at = 0;

	while (rn->out_fd >= 0 || rn->err_fd >= 0) {
		/* the program's ptrace stops wake poll through chld_pipe */
		int tmo = sample_due(rn, rn->flushing || rn->exec_pid ? 5 :
				     mw_procset_polled(rn->o->procs) ? MW_CGROUP_POLL_MS : 500);
		/* served while the tree is traced (mw_tr_release_serve) */
		struct mw_release_srv *rel = rn->pt && rn->pidfd >= 0 && !rn->tree_over ? rn->rel : NULL;
		struct pollfd p[9] = {
			{ .fd = rn->out_fd, .events = POLLIN },
			{ .fd = rn->err_fd, .events = POLLIN },
			/* -f: the program's end is not the run's */
			{ .fd = rn->pt && rn->r->have_status ? -1 : rn->pidfd, .events = POLLIN },
			{ .fd = rn->sample_fd, .events = POLLIN },
			{ .fd = rn->flush_fd, .events = POLLIN },
			{ .fd = rn->o->procs->kind == MW_PROCS_LISTED ? rn->o->stop_fd : -1,
			  .events = POLLIN },
			{ .fd = rn->pt ? chld_pipe[0] : -1, .events = POLLIN },
			{ .fd = rn->exec_fd, .events = POLLIN },
			{ .fd = mw_release_fd(rel), .events = POLLIN },	/* mallocwatch release */
		};
		int n = poll(p, 9, mw_release_waiting(rel) && tmo > MW_RELEASE_LOOK_MS ?
				  MW_RELEASE_LOOK_MS : tmo);

		stop_if_asked(rn, &kill_at, n > 0 && (p[5].revents & (POLLIN | POLLHUP)));
		read_ready(rn, p, n);
		if (n > 0 && (p[6].revents & POLLIN))
			chld_drain();	/* before the reap: a later stop writes again */
		if (rn->pt && rn->pidfd >= 0 && !rn->tree_over) {
			mw_tr_reap_program(rn, 0);	/* ptrace stops; the exits */
			mw_tr_release_serve(rn);
		}
		mw_tr_cgroup_look(rn);
		if (rn->exec_pid)
			mw_tr_exec_check(rn);
		if (rn->flushing)
			mw_tr_flush_check(rn);
		if (rn->detach_bg)	/* -p: flushed, the tracer left detaching */
			break;
		if (rn->pidfd >= 0 && rn->pt && more_runs(rn))
			continue;	/* --repeat: the next run, or the flush */
		if (rn->pidfd >= 0 && (rn->pt ? rn->tree_over :
				       (n > 0 && (p[2].revents & POLLIN)) || rn->r->have_status)) {
			mw_tr_program_exited(rn);
			if (rn->pidfd < 0)	/* else: another of -p's processes */
				kill_at = mw_now_ms() + STOP_GRACE_MS;
			if (rn->detach_bg)
				break;
		}
		kill_at = kill_if_stuck(rn, kill_at);
	}
}

/* The program could not exec: its errno arrives on errpipe. */
static int exec_failed(struct run *rn, int errpipe, char *err, size_t errlen)
{
	int e;

	if (read(errpipe, &e, sizeof(e)) != sizeof(e))
		return 0;
	snprintf(err, errlen, "cannot run '%s': %s", rn->o->procs->cmd->path, strerror(e));
	return -1;
}

/* -c: trace the held program (ptrace_tree.h): its exit stop, the processes it
 * creates (counted, or with -f followed). */
static void seize(struct run *rn)
{
	if (!(rn->pt = mw_ptree_seize(rn->prog, rn->o->procs->follow))) {
		snprintf(rn->r->ptrace_msg, sizeof(rn->r->ptrace_msg), "cannot ptrace the "
			 "program (%s): no snapshot at its exit%s", strerror(errno),
			 rn->o->procs->follow ? ", its processes not followed" : "");
		return;
	}
	if (rn->c->on_new)
		rn->c->on_new(rn->c->ctx, 0, rn->prog);
	catch_chld();
}

/* -c: the program forked and held, ptraced for its exit stop when
 * at_exit is set, on a terminal of its own when ptyrelay.h says so
 * (rn->pty); its exec error comes on *errpipe.  -p: the process.  0, or
 * -1 with err set when it could not be started. */
static int start_target(struct run *rn, int *errpipe, char *err, size_t errlen)
{
	const struct mw_tracer_opts *o = rn->o;

	if (mw_procset_starts(o->procs)) {
		if (mw_pty_open(&rn->pty, o->procs->cmd->uid, err, errlen) < 0)
			return -1;
		rn->prog = mw_program_start(o->procs->cmd, rn->pty, &rn->hold_w, errpipe);
		if (rn->prog < 0) {
			snprintf(err, errlen, "cannot fork: %s", strerror(errno));
			mw_pty_close(rn->pty);
			return -1;
		}
		if (rn->c->at_exit)
			seize(rn);
	} else {
		rn->prog = mw_procset_first(o->procs);
	}
	return 0;
}

/* Reap the tracer (name: argv[0]), say how it ended when it said nothing
 * itself, and after a stapbpf killed by a signal remove what it left. */
static void reap_tracer(struct run *rn, const char *name)
{
	const struct mw_tracer_opts *o = rn->o;
	struct mw_trace_result *r = rn->r;

	while (waitpid(rn->tracer, &r->tracer_status, 0) < 0 && errno == EINTR)
		;
	if (!r->tracer_msg[0] || WIFSIGNALED(r->tracer_status))
		mw_tracer_fate(name, r->tracer_status, r->tracer_msg, sizeof(r->tracer_msg));
	if (o->env->rt == MW_RT_BPF && WIFSIGNALED(r->tracer_status)) {
		int n = mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* ours, the run is over */

		if (n)
			mw_note("removed %d uprobe definitions the dead tracer left", n);
		mw_runtime_procfs_remove(rn->module);
	} else if (o->env->rt == MW_RT_BPF && !rn->lg) {
		mw_runtime_procfs_remove(rn->module);	/* its lock's file (runtime.h) */
	}
	if (o->env->rt == MW_RT_KERNEL && WIFSIGNALED(r->tracer_status) &&
	    mw_sweep_kmods(MW_SWEEP_WAIT_MS) > 0)	/* it could not unload it */
		mw_note("removed the kernel module %s the dead tracer left", rn->module);
	if (o->env->rt == MW_RT_BPF && mw_uprobes_of(rn->tracer) == 0)
		mw_tracer_unrecord(rn->tracer);
	rn->tracer = 0;	/* reaped */
}

/* Close what the run still holds; a program never released is killed
 * before its first instruction. */
static void end_run(struct run *rn, int errpipe)
{
	/* an answer still awaited here has no writer left to give it: the
	 * tracer was reaped, or mw_tr_stop_tracer() and mw_tr_flush_end() settled it */
	if (rn->flush_fd >= 0)
		close(rn->flush_fd);
	if (rn->sample_fd >= 0)
		close(rn->sample_fd);
	if (rn->hold_w >= 0) {	/* never released: the program must not run */
		close(rn->hold_w);
		rn->hold_w = -1;
		if (mw_procset_starts(rn->o->procs) && !rn->r->have_status) {
			mw_tr_signal_child(rn->pidfd, rn->prog, SIGKILL);	/* not reaped */
			mw_tr_reap_program(rn, 1);
		}
	}
	if (rn->pidfd >= 0)
		close(rn->pidfd);
	mw_release_close(rn->rel);	/* no release asked of a run that ended */
	rn->rel = NULL;
	if (rn->tracer_fd >= 0)
		close(rn->tracer_fd);
	mw_pty_close(rn->pty);	/* after its last output, before the report */
	rn->r->untraced = mw_ptree_untraced(rn->pt);
	mw_ptree_free(rn->pt);	/* every tracee has ended, or is killed with us */
	mw_pidset_close(rn->pids);
	mw_linger_leave(rn->lg, 0);	/* not drained: the session ends */
	free(rn->watch);
	free(rn->known);
	if (errpipe >= 0)
		close(errpipe);
}

/* The tracer started: its module's name, the lines a joined session's
 * tracer printed before this run, its record, the processes to watch. */
static void tracer_started(struct run *rn, const char *bo)
{
	const struct mw_tracer_opts *o = rn->o;

	if (o->env->rt != MW_RT_BPF)
		mw_kmod_loaded_name(bo, rn->tracer, rn->module, sizeof(rn->module));
	rn->tracer_fd = mw_pidfd_open(rn->tracer);	/* our child, not reaped: it */
	for (size_t i = 0; o->session && i < rn->lg->npre; i++)
		stdout_line(rn, rn->lg->pre[i]);	/* the program joins, is released */
	if (o->env->rt == MW_RT_BPF && !o->session)
		mw_tracer_record(rn->tracer);	/* its definitions are ours to sweep */
	for (size_t i = 1; i < o->procs->npid; i++)	/* -p's others */
		mw_tr_pid_push(&rn->watch, &rn->nwatch, &rn->capwatch, o->procs->pid[i]);
	if (o->procs->kind == MW_PROCS_CGROUP)
		for (size_t i = 0; i < o->procs->npid; i++)
			mw_tr_pid_push(&rn->known, &rn->nknown, &rn->capknown, o->procs->pid[i]);
}

/* After the loop: the tracer left detaching, or reaped (name: its
 * argv[0]) and how the run ended told.  0, or -1 with err. */
static int after_loop(struct run *rn, int errpipe, const char *name, char *err,
		      size_t errlen)
{
	const struct mw_tracer_opts *o = rn->o;
	struct mw_trace_result *r = rn->r;

	if (r->samples_unanswered && o->verbose)
		mw_note("%llu samples without a lock-wait count (the tracer had not answered "
			"the one before)", r->samples_unanswered);
	if (rn->flushing)	/* the tracer ended while it flushed */
		mw_tr_flush_end(rn);
	if (rn->detach_bg) {	/* see mw_tr_program_exited() */
		close(rn->out_fd);
		close(rn->err_fd);
		rn->tracer = 0;
		if (rn->handback) {
			r->lingered = !rn->lg->armed;
			mw_linger_leave(rn->lg, 1);
			rn->lg = NULL;
		}
		/* an exec that failed after the checks before it (a file
		 * changed meanwhile, ENOEXEC, E2BIG): said, not reported on */
		return mw_procset_starts(o->procs) && exec_failed(rn, errpipe, err, errlen) < 0 ? -1 : 0;
	}
	reap_tracer(rn, name);
	if (r->interrupted) {
		snprintf(err, errlen, "interrupted by signal %d (%s) before tracing started",
			 r->interrupted, strsignal(r->interrupted));
		return -1;
	}
	if (!r->ready) {
		snprintf(err, errlen, "%s failed before tracing started: %s", name,
			 r->tracer_msg[0] ? r->tracer_msg : "no message");
		return -1;
	}
	if (rn->pidfd >= 0 && !r->stopped) {	/* the tracer ended first */
		r->tracer_died = 1;
		if (mw_procset_starts(o->procs))
			mw_tr_program_exited(rn);
	}
	if (mw_procset_starts(o->procs) && exec_failed(rn, errpipe, err, errlen) < 0)
		return -1;
	return 0;
}

int mw_trace_run(const struct mw_tracer_opts *o, const struct mw_consumer *c,
		 struct mw_trace_result *r, char *err, size_t errlen)
{
	struct run rn = { .o = o, .r = r, .c = c, .hold_w = -1, .out_fd = -1,
			  .err_fd = -1, .pidfd = -1, .uprobes_left = INT_MAX, .flush_fd = -1,
			  .sample_fd = -1, .tracer_fd = -1, .exec_fd = -1 };
	char bo[4200], pidbuf[32];
	const char *argv[16];
	int errpipe = -1, ret = -1;

	memset(r, 0, sizeof(*r));
	bo[0] = '\0';
	r->lingered = -1;
	rn.errpipe = &errpipe;
	r->runs = mw_procset_starts(o->procs);
	if (mw_tr_compile(&rn, bo, sizeof(bo), err, errlen) < 0)
		return -1;
	if (start_target(&rn, &errpipe, err, errlen) < 0)
		return -1;
	r->pid = rn.prog;
	if (mw_procset_starts(o->procs) && c->on_run)	/* --repeat: the first run */
		c->on_run(c->ctx, 0, rn.prog);
	rn.pidfd = (int)syscall(SYS_pidfd_open, rn.prog, 0);
	if (rn.pidfd < 0) {
		snprintf(err, errlen, "cannot watch process %d: %s", (int)rn.prog, strerror(errno));
		goto cleanup;
	}
	mw_tracer_argv(o->env, rn.prog, pidbuf, bo, argv);
	if (mw_tr_start_tracer(&rn, argv) < 0) {
		snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(errno));
		goto cleanup;
	}
	tracer_started(&rn, bo);
	if (c->arming)
		c->arming(c->ctx);
	loop(&rn);
	ret = after_loop(&rn, errpipe, argv[0], err, errlen);
cleanup:
	end_run(&rn, errpipe);
	return ret;
}
