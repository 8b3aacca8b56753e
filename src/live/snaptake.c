/* snaptake.c - a snapshot taken (snapshot.h): read while the process
 * runs, up to MW_SNAP_TRIES times, then, when none was consistent, with
 * every thread held (ptstop.h) and those inside malloc let finish first
 * (snapstop.c); the walk itself is snapshot.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ptstop.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

/* How long the threads may be let go, all stops together, to leave
 * libc's code (ptstop.h), at most. */
#define SETTLE_NS (100ULL * 1000000)

/* One stop: held, settled, walked, let go.  0, or -1 when no more stops
 * are to be tried (the reason into note, or w->fatal). */
static int one_stop(struct walk *w, struct mw_snap_unwinder **u, uint64_t budget_end,
		    char *note, size_t len)
{
	struct mw_snapshot *s = w->s;
	struct mw_ptstop *st;
	char why[256], unsettled[300] = "";
	uint64_t now = mw_now_ns();
	int r, settled, job;

	r = mw_ptstop_stop(w->p->pid, (long)((w->deadline - now) / 1000000) + 1, &st, why,
			   sizeof(why));
	if (r == MW_PTSTOP_GONE) {
		w->fatal = ESRCH;
		return -1;
	}
	if (r < 0) {
		snprintf(note, len, "; not stopped: %s", why);
		return -1;
	}
	mw_proc_refresh(w->p, why, sizeof(why));	/* new heaps */
	job = mw_ptstop_job_stopped(st);
	settled = mw_snap_settle(w, st, u, budget_end, unsettled, sizeof(unsettled));
	w->settled = settled && !job;	/* the locks' reasons (snapstop.c) */
	w->unsettled = w->settled ? NULL : unsettled;
	mw_snap_walk(w);
	w->unsettled = NULL;	/* (unsettled is this stop's) */
	/* one thread may not lock: then only a thread out of libc is safe;
	 * a call into the process needs every thread out of it */
	if (!settled && !job && s->consistent && (mw_ptstop_threads(st) <= 1 || w->hold)) {
		s->consistent = 0;
		snprintf(s->why, sizeof(s->why), "not every thread is known to be out of "
			 "malloc's code: %s", unsettled);
	}
	if (w->hold && job && s->consistent) {	/* not to be let run for a call */
		s->consistent = 0;
		snprintf(s->why, sizeof(s->why), "it is in a job-control stop (SIGSTOP), where "
			 "nothing can be called in it (kill -CONT %d first)", (int)w->p->pid);
	}
	if (s->consistent && w->hold) {
		w->held = st;	/* the caller lets it go */
		s->stops++;
		s->tries++;
		return -1;
	}
	s->stopped_ns += s->consistent && w->leave_stopped ? mw_ptstop_leave_stopped(st) :
			 mw_ptstop_resume(st);
	s->stops++;
	s->tries++;
	if (s->consistent || w->fatal || w->stop)
		return -1;
	if (job) {	/* SIGSTOPped: letting it go does not make it run */
		if (!strstr(s->why, "job-control"))	/* else the reason says it */
			snprintf(note, len, "; the process is in a job-control stop (SIGSTOP)");
		return -1;
	}
	return 0;
}

/* The walks gave no consistent snapshot: stop the process and walk it
 * still.  Why it was not stopped, if it was not, into note. */
static void stopped_walks(struct walk *w, char *note, size_t len)
{
	uint64_t budget_end = mw_now_ns() + SETTLE_NS;
	struct mw_snap_unwinder *u = NULL;

	for (int k = 0; k < MW_SNAP_STOPS; k++) {
		if (k)	/* let it run 1, 2, 4 ... ms */
			nanosleep(&(struct timespec){ .tv_nsec = (1L << (k - 1)) * 1000000 }, NULL);
		if (mw_now_ns() >= w->deadline) {
			mw_snap_halt(w, MW_SNAP_TIMEOUT, "out of time");
			break;
		}
		if (one_stop(w, &u, budget_end, note, len) < 0)
			break;
	}
	mw_snap_unwinder_free(u);
}

/* Did the process replace its program (exec) since its mappings were
 * read?  main_arena, in the libc's data, is then no longer mapped (a
 * live program does not unmap its libc). */
static int execed(struct walk *w)
{
	char err[256];

	return mw_process_alive(w->p->pid) && mw_proc_refresh(w->p, err, sizeof(err)) == 0 &&
	       !mw_proc_mapped(w->p, w->g->main_arena, 8);
}

/* The reason of a snapshot given up (w->fatal, w->stop, or no
 * consistent walk) into err, with note after the counts; the status. */
static int failed(struct walk *w, long timeout_ms, const char *note, char *err, size_t errlen)
{
	struct mw_snapshot *s = w->s;
	pid_t pid = w->p->pid;

	if (w->fatal == ESRCH || (w->fatal && !mw_process_alive(pid))) {
		snprintf(err, errlen, "process %d exited while it was read", (int)pid);
	} else if (!w->stop && execed(w)) {	/* its reads failed (EFAULT) for that */
		snprintf(err, errlen, "process %d replaced its program (exec) while it was read; "
			 "no snapshot", (int)pid);
	} else if (w->fatal) {
		snprintf(err, errlen, "cannot read process %d's memory: %s", (int)pid,
			 strerror(w->fatal));
	} else if (w->stop == MW_SNAP_TIMEOUT) {
		snprintf(err, errlen, "process %d's allocator was not read within %g s "
			 "(--read-timeout); no snapshot", (int)pid, timeout_ms / 1000.0);
		return MW_SNAP_TIMEOUT;
	} else if (w->stop) {
		snprintf(err, errlen, "process %d: %s: the allocator is corrupt or hostile; no "
			 "snapshot", (int)pid, w->stop_why);
		return MW_SNAP_CORRUPT;
	} else if (!s->why[0]) {	/* no walk: it had to be stopped first (hold,
					 * --leave-stopped) and was not; note says why */
		snprintf(err, errlen, "process %d: no snapshot: it must be read stopped%s",
			 (int)pid, note[0] ? note : " and was not");
		return MW_SNAP_INCONSISTENT;
	} else {
		snprintf(err, errlen, "process %d: no consistent snapshot (%d read%s, %d stop%s in "
			 "%.1f ms)%s: %s", (int)pid, s->tries, s->tries == 1 ? "" : "s", s->stops,
			 s->stops == 1 ? "" : "s",
			 (double)s->stopped_ns / 1e6, note, s->why);
		return MW_SNAP_INCONSISTENT;
	}
	return MW_SNAP_ERROR;
}

/* The step budget for p: its readable bytes / 16 (see snapshot.h). */
static uint64_t budget(struct walk *w)
{
	w->readable = 0;
	for (size_t i = 0; i < w->p->nmaps; i++)
		if (w->p->maps[i].readable)
			w->readable += w->p->maps[i].end - w->p->maps[i].start;
	return w->readable / 16 > MW_SNAP_MIN_STEPS ? w->readable / 16 : MW_SNAP_MIN_STEPS;
}

/* mw_snapshot_no_stop's and mw_snapshot_leave_stopped's settings */
static int no_stop, leave_stopped;

void mw_snapshot_no_stop(int on)
{
	no_stop = on;
}

void mw_snapshot_leave_stopped(int on)
{
	leave_stopped = on;
}

/* how: 0 a full walk, 1 headers only, 2 a full walk keeping chunks */
static int take(struct mw_proc *p, const struct mw_glibc *g, int how, long timeout_ms,
		struct mw_snapshot **out, struct mw_ptstop **held, char *err, size_t errlen)
{
	struct mw_snapshot *s = xcalloc(1, sizeof(*s));
	struct walk w = { .p = p, .g = g, .s = s, .page = (uint64_t)sysconf(_SC_PAGESIZE),
			  .headers_only = how == 1, .keep = how == 2, .hold = !!held };
	uint64_t t0 = mw_now_ns();
	char note[300] = "";
	int ret;

	if (timeout_ms <= 0)
		timeout_ms = MW_SNAP_TIMEOUT_MS;
	w.deadline = t0 + (uint64_t)timeout_ms * 1000000;
	w.max_steps = budget(&w);
	s->pid = p->pid;
	snprintf(s->libc, sizeof(s->libc), "%s", g->module);
	snprintf(s->dwarf_file, sizeof(s->dwarf_file), "%s", g->dwarf_file);
	s->libc_elsewhere = g->elsewhere;
	s->glibc_minor = g->version_minor;
	s->mstate_size = (uint64_t)g->mstate_size;
	s->chunk_hdr = (uint64_t)g->chunk_struct_size;
	s->minsize = (uint64_t)g->ch_fd_nextsize.off;	/* MINSIZE, as totals() */
	s->taken_ns = mw_realtime_ns();
	w.leave_stopped = leave_stopped && !no_stop;
	for (s->tries = 1; !w.leave_stopped && !w.hold; s->tries++) {
		mw_snap_walk(&w);
		if (s->consistent && !w.headers_only)
			mw_snap_confirm(&w);	/* the same figures twice? */
		if (s->consistent || w.fatal || w.stop || s->tries >= MW_SNAP_TRIES)
			break;
		if (mw_now_ns() >= w.deadline) {
			mw_snap_halt(&w, MW_SNAP_TIMEOUT, "out of time");
			break;
		}
		mw_proc_refresh(p, err, errlen);	/* it may have mapped new heaps */
	}
	if (w.leave_stopped || w.hold) {	/* read stopped only */
		s->tries = 0;
		s->consistent = 0;
	}
	if (!s->consistent && !w.fatal && !w.stop && !no_stop)
		stopped_walks(&w, note, sizeof(note));
	s->duration_ns = mw_now_ns() - t0;
	mw_proc_copy_free(p);	/* the walks' copies (procmem.h): not kept between snapshots */
	if (w.fatal || w.stop || !s->consistent) {
		ret = failed(&w, timeout_ms, note, err, errlen);
		mw_snapshot_free(s);
		return ret;
	}
	*out = s;
	if (held)
		*held = w.held;
	return MW_SNAP_OK;
}

int mw_snapshot_take(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 0, timeout_ms, out, NULL, err, errlen);
}

int mw_snapshot_take_chunks(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
			    struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 2, timeout_ms, out, NULL, err, errlen);
}

int mw_snapshot_sample(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		       struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 1, timeout_ms, out, NULL, err, errlen);
}

int mw_snapshot_hold(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     struct mw_snapshot **out, struct mw_ptstop **held, char *err, size_t errlen)
{
	*held = NULL;
	return take(p, g, 2, timeout_ms, out, held, err, errlen);
}

int mw_snapshot_read(pid_t pid, struct mw_glibc *g, long timeout_ms, struct mw_snapshot **out,
		     char *err, size_t errlen)
{
	struct mw_proc p;
	int ret;

	if (mw_proc_open(&p, pid, err, errlen) < 0)
		return MW_SNAP_ERROR;
	ret = mw_snapshot_take(&p, g, timeout_ms, out, err, errlen);
	mw_proc_close(&p);
	return ret;
}

