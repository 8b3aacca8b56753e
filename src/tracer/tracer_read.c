/* tracer_read.c - what tracer.c's run loop reads: the tracer's stdout,
 * line by line, to the consumer (its ready line: the set opened, the
 * program released; its count of skipped events; the exec and end lines
 * watched for), its stderr (the events it lost, its first error line),
 * and the answers of the procfs files the loop asks: a sample's lock
 * waits, every sample_ms, or serve's live reading, every live_ms.
 *
 * A line of the tracer's stdout, as the line protocol has it
 * (docs/protocol.md): "MW 1 ready" releases a held program; the rest go
 * to the consumer's line as they come.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "linger.h"
#include "msg.h"
#include "protocol.h"
#include "tracer.h"
#include "tracer_int.h"
#include "tracer_proc.h"

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

void mw_tr_stdout_line(struct run *rn, char *line)
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
			mw_tr_attach_tree(rn);
		/* the line first: its reader takes the program's start time
		 * (MW_REC_ORIGIN), which must come before its first event */
		rn->c->line(rn->c->ctx, line);
		mw_tr_flush_wait(rn);	/* before the program can end */
		mw_tr_release(rn);
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
			is_err ? tracer_stderr_line(rn, lb->buf) : mw_tr_stdout_line(rn, lb->buf);
			lb->len = 0;
		}
		return -1;
	}
	lb->len += (size_t)n;
	lb->buf[lb->len] = '\0';
	start = lb->buf;
	while ((nl = memchr(start, '\n', lb->len - (size_t)(start - lb->buf)))) {
		*nl = '\0';
		is_err ? tracer_stderr_line(rn, start) : mw_tr_stdout_line(rn, start);
		start = nl + 1;
	}
	lb->len -= (size_t)(start - lb->buf);
	memmove(lb->buf, start, lb->len);
	if (lb->len == sizeof(lb->buf) - 1) {	/* an overlong line: pass it on cut */
		lb->buf[lb->len] = '\0';
		is_err ? tracer_stderr_line(rn, lb->buf) : mw_tr_stdout_line(rn, lb->buf);
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
int mw_tr_sample_due(struct run *rn, int max_ms)
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

/* What poll() found (n, p as in loop()): the tracer's stdout and stderr
 * lines, each closed at EOF, and the answers of asked procfs files. */
void mw_tr_read_ready(struct run *rn, const struct pollfd *p, int n)
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
