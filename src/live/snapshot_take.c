/* snapshot_take.c - a snapshot taken (snapshot.h): read while the process
 * runs, up to MW_SNAP_TRIES times, then, when none was consistent, with
 * every thread held (ptstop.h) and those inside malloc let finish first
 * (snapshot_stop.c), each stop within the stop bounds; the walk itself is
 * snapshot.c's.  A walk while it runs is kept when no thread of the
 * process ran while it was read (quiet.h: read once), else when a later
 * walk finds the same (mw_snap_confirm, reading again the words it read).
 *
 * A stop may last what the least of three bounds leaves: --max-stop
 * (one stop), --max-stopped less what this snapshot's stops have had,
 * and --max-stopped plus --max-stopped-share of the time since this
 * run's first stop of the process, less what its stops in this run have
 * had.  Within it: stopping every thread (bounded), letting those inside
 * malloc finish until the time a read takes (the longest running walk)
 * is left, and the walk, cut at the stop's end.  A stop that would be
 * shorter than that read (and 2 ms) is not made, and the snapshot is
 * refused with the bound that stopped it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ptstop.h"
#include "quiet.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

/* The stop bounds (mw_snapshot_stop_bounds), in ns, and the share of a
 * run's time its stops of one process may take beyond max_stopped. */
static uint64_t max_stop = MW_SNAP_MAX_STOP_MS * 1000000ULL;
static uint64_t max_stopped = MW_SNAP_MAX_STOPPED_MS * 1000000ULL;
static double stop_share = MW_SNAP_STOP_SHARE / 100.0;

#define MIN_STOP_NS 2000000ULL	/* a stop shorter than this is not tried */
#define SETTLE_GRACE_NS 5000000ULL	/* for threads let go to stop again, at least */
#define RELEASE_NS 1000000ULL	/* for letting every thread go, within the stop */

void mw_snapshot_stop_bounds(long max_stop_ms, long max_stopped_ms, double share_pct)
{
	if (max_stop_ms > 0)
		max_stop = (uint64_t)max_stop_ms * 1000000;
	if (max_stopped_ms > 0)
		max_stopped = (uint64_t)max_stopped_ms * 1000000;
	if (share_pct >= 0)
		stop_share = share_pct / 100.0;
}

uint64_t mw_snapshot_max_stop_ns(void)
{
	return max_stop;
}

/* This run's stops of one process (a pid and its start time, so that a
 * pid used again is another). */
struct run_stops {
	pid_t pid;
	unsigned long long start;	/* /proc/PID/stat field 22 */
	uint64_t first, used;		/* its first stop (CLOCK_MONOTONIC), all held */
};

#define MAX_RUNS 4096
static struct run_stops runs[MAX_RUNS];
static size_t nruns;

static unsigned long long start_time(pid_t pid)
{
	char stat[1024];
	const char *f = mw_proc_stat_fields(pid, stat, sizeof(stat));

	for (int k = 3; f && k < 22; k++)	/* f is at field 3 */
		if ((f = strchr(f, ' ')))
			f++;
	return f ? strtoull(f, NULL, 10) : 0;
}

/* The process's record, made when it is first stopped; the oldest is
 * given up when there are MAX_RUNS. */
static struct run_stops *run_of(pid_t pid)
{
	unsigned long long start = start_time(pid);
	size_t old = 0;

	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].pid == pid && runs[i].start == start)
			return &runs[i];
		if (runs[i].first < runs[old].first)
			old = i;
	}
	if (nruns < MAX_RUNS)
		old = nruns++;
	runs[old] = (struct run_stops){ .pid = pid, .start = start, .first = mw_now_ns() };
	return &runs[old];
}

/* How long the next stop may hold the process: the least of max_stop and
 * what is left of the snapshot's and of the run's; what bounds it into
 * why (for a refusal). */
static uint64_t allowance(const struct walk *w, const struct run_stops *r, uint64_t now,
			  char *why, size_t len)
{
	uint64_t run_cap = max_stopped + (uint64_t)(stop_share * (double)(now - r->first));
	uint64_t snap_left = max_stopped > w->s->stopped_ns ? max_stopped - w->s->stopped_ns : 0;
	uint64_t run_left = run_cap > r->used ? run_cap - r->used : 0;
	uint64_t a = max_stop;

	snprintf(why, len, "a read takes %.1f ms of CPU here, and one stop may last %.1f ms "
		 "(--max-stop)", (double)w->walk_ns / 1e6, (double)max_stop / 1e6);
	if (snap_left < a) {
		a = snap_left;
		snprintf(why, len, "this snapshot's stops have had %.1f ms of the %.1f ms they may "
			 "have (--max-stopped)", (double)w->s->stopped_ns / 1e6,
			 (double)max_stopped / 1e6);
	}
	if (run_left < a) {
		a = run_left;
		snprintf(why, len, "its stops in this run have had %.1f ms of the %.1f ms they may "
			 "have by now (--max-stopped, plus %g%% of the %.1f s since its first, "
			 "--max-stopped-share)", (double)r->used / 1e6, (double)run_cap / 1e6,
			 stop_share * 100, (double)(now - r->first) / 1e9);
	}
	return a;
}

/* The stopped walk, ended by end (CLOCK_MONOTONIC ns) as well as the
 * read's deadline: a walk cut by end is marked inconsistent (with the
 * bound, allow ns) and 1 is returned, else 0. */
static int walk_by(struct walk *w, uint64_t end, uint64_t allow)
{
	uint64_t deadline = w->deadline;

	if (end < deadline)
		w->deadline = end;
	mw_snap_walk(w);
	w->deadline = deadline;
	if (w->stop != MW_SNAP_TIMEOUT || mw_now_ns() >= deadline)
		return 0;
	w->stop = 0;
	w->stop_why[0] = '\0';
	w->s->consistent = 0;
	snprintf(w->s->why, sizeof(w->s->why), "the stopped read did not end within the %.1f ms "
		 "the stop may last (--max-stop, --max-stopped)", (double)allow / 1e6);
	return 1;
}

/* Held: let the threads inside malloc finish until what the rest takes
 * is left (the walk, and for the last ones let go to stop again, for
 * letting go of the threads and for the delays of a loaded machine, 5 ms
 * and a fifth of the stop), then walk, all by end (allow ns after the
 * stop began).  Whether the stop ran out of its time (the walk was cut
 * or not made). */
static int settle_and_walk(struct walk *w, struct mw_ptstop *st, struct mw_snap_unwinder **u,
			   uint64_t end, uint64_t allow)
{
	struct mw_snapshot *s = w->s;
	char unsettled[300] = "";
	uint64_t reserve = w->walk_ns + SETTLE_GRACE_NS + allow / 5;
	uint64_t until = end > reserve ? end - reserve : 0;
	uint64_t stop_by = end > w->walk_ns ? end - w->walk_ns : 0;
	int settled = mw_snap_settle(w, st, u, until, stop_by, unsettled, sizeof(unsettled)), cut;
	int job = mw_ptstop_job_stopped(st);

	if (mw_ptstop_execd(st)) {
		w->execd = 1;
		return 0;
	}
	if (!mw_ptstop_all_held(st)) {	/* one runs: no walk can be trusted */
		s->consistent = 0;
		snprintf(s->why, sizeof(s->why), "a thread let go to leave malloc did not stop again "
			 "in the time the stop may last (%.1f ms: --max-stop, --max-stopped)",
			 (double)allow / 1e6);
		return 1;
	}
	w->settled = settled && !job;	/* the locks' reasons (snapshot_stop.c) */
	w->unsettled = w->settled ? NULL : unsettled;
	cut = walk_by(w, end, allow);
	w->unsettled = NULL;	/* (unsettled is this stop's) */
	/* one thread may not lock: then only a thread out of libc is safe;
	 * a call into the process needs every thread out of it */
	if (!settled && !job && s->consistent &&
	    (mw_ptstop_threads(st) <= 1 || w->hold == MW_HOLD_CALL)) {
		s->consistent = 0;
		snprintf(s->why, sizeof(s->why), "not every thread is known to be out of "
			 "malloc's code: %s", unsettled);
	}
	if (w->hold == MW_HOLD_CALL && job && s->consistent) {	/* not to be let run for a call */
		s->consistent = 0;
		snprintf(s->why, sizeof(s->why), "it is in a job-control stop (SIGSTOP), where "
			 "nothing can be called in it (kill -CONT %d first)", (int)w->p->pid);
	}
	return cut;
}

/* One stop of at most allow ns: held, settled, walked, let go.  0, or
 * -1 when no more stops are to be tried (the reason into note, or
 * w->fatal, w->execd). */
static int one_stop(struct walk *w, struct mw_snap_unwinder **u, struct run_stops *r,
		    uint64_t allow, char *note, size_t len)
{
	struct mw_snapshot *s = w->s;
	struct mw_ptstop *st;
	char why[256];
	uint64_t now = mw_now_ns(), end = now + allow - w->reserve - RELEASE_NS, held = 0;
	uint64_t by = (end < w->deadline ? end : w->deadline) - w->walk_ns;
	int ret, cut, job;

	ret = mw_ptstop_stop(w->p->pid, by > now + 1000000 ? (long)((by - now) / 1000000) : 1, &st,
			     &held, why, sizeof(why));
	if (held) {	/* some were held before it failed */
		s->stops++;
		s->stopped_ns += held;
		r->used += held;
	}
	if (ret == MW_PTSTOP_GONE || ret == MW_PTSTOP_EXECD) {
		if (ret == MW_PTSTOP_GONE)
			w->fatal = ESRCH;
		else
			w->execd = 1;
		return -1;
	}
	if (ret < 0) {
		snprintf(note, len, "; not stopped: %s", why);
		return -1;
	}
	if (w->image && mw_ptstop_image(w->p->pid) != w->image)
		w->execd = 1;	/* before it was held: no exec stop for that */
	mw_proc_refresh(w->p, why, sizeof(why));	/* new heaps */
	job = mw_ptstop_job_stopped(st);
	cut = w->execd ? 0 : settle_and_walk(w, st, u, end, allow);
	s->stops++;
	s->tries++;
	if (s->consistent && w->hold && !w->execd) {
		w->held = st;	/* the caller lets it go */
		return -1;
	}
	held = s->consistent && w->leave_stopped && !w->execd ? mw_ptstop_leave_stopped(st) :
	       mw_ptstop_resume(st);
	s->stopped_ns += held;
	r->used += held;
	if (s->consistent || w->fatal || w->stop || w->execd || cut)
		return -1;
	if (job) {	/* SIGSTOPped: letting it go does not make it run */
		if (!strstr(s->why, "job-control"))	/* else the reason says it */
			snprintf(note, len, "; the process is in a job-control stop (SIGSTOP)");
		return -1;
	}
	return 0;
}

/* The walks gave no consistent snapshot: stop the process and walk it
 * still, each stop within the bounds.  Why it was not stopped (again),
 * if it was not, into note. */
static void stopped_walks(struct walk *w, char *note, size_t len)
{
	struct mw_snap_unwinder *u = mw_snap_unwinder_new(w);	/* made before any stop */
	struct run_stops *r = run_of(w->p->pid);
	char why[400];

	for (int k = 0; k < MW_SNAP_STOPS; k++) {
		uint64_t allow;

		if (k)	/* let it run 1, 2, 4 ... ms */
			nanosleep(&(struct timespec){ .tv_nsec = (1L << (k - 1)) * 1000000 }, NULL);
		if (mw_now_ns() >= w->deadline) {
			mw_snap_halt(w, MW_SNAP_TIMEOUT, "out of time");
			break;
		}
		allow = allowance(w, r, mw_now_ns(), why, sizeof(why));
		if (allow < w->walk_ns + MIN_STOP_NS + SETTLE_GRACE_NS + w->reserve) {
			snprintf(note, len, "; not stopped%s: %s%s", k ? " again" : "", why,
				 w->reserve && allow >= w->walk_ns + MIN_STOP_NS + SETTLE_GRACE_NS ?
				 ", and the RSS ledger's read in the same stop takes more" : "");
			break;
		}
		if (one_stop(w, &u, r, allow, note, len) < 0)
			break;
	}
	mw_snap_unwinder_free(u);
}

/* Did the process replace its program (exec) since its mappings were
 * read?  Its image (auxv) is then another than the one its libc's
 * layouts were read from; or main_arena, in the libc's data, is no
 * longer mapped (a live program does not unmap its libc).  Not when it
 * was not mapped then either: a process that maps a libc.so.6's code
 * without its data (a static one of nobody's, mmap) has exec'd nothing. */
static int execed(struct walk *w)
{
	char err[256];

	if (w->image && mw_process_alive(w->p->pid) && mw_ptstop_image(w->p->pid) != w->image)
		return 1;
	return mw_proc_mapped(w->p, w->g->main_arena, 8) && mw_process_alive(w->p->pid) &&
	       mw_proc_refresh(w->p, err, sizeof(err)) == 0 &&
	       !mw_proc_mapped(w->p, w->g->main_arena, 8);
}

/* The reason of a snapshot given up (w->fatal, w->stop, or no
 * consistent walk) into err, with note after the counts; the status. */
static int failed(struct walk *w, long timeout_ms, const char *note, char *err, size_t errlen)
{
	struct mw_snapshot *s = w->s;
	pid_t pid = w->p->pid;

	if (w->execd) {
		snprintf(err, errlen, "process %d exec'd while it was read; no snapshot (it is "
			 "another program now, let go as it starts)", (int)pid);
	} else if (w->fatal == ESRCH || (w->fatal && !mw_process_alive(pid))) {
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
			 "%.1f ms)%s%s%s", (int)pid, s->tries, s->tries == 1 ? "" : "s", s->stops,
			 s->stops == 1 ? "" : "s", (double)s->stopped_ns / 1e6, note,
			 s->why[0] ? ": " : "", s->why);
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

/* This thread's CPU time, ns. */
static uint64_t cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
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

/* A snapshot read stopped only (hold, --leave-stopped) is walked once
 * first while the process runs, within half the time left: not for its
 * figures, but for its lists' records (snapshot_record.c), so that the stopped
 * walk, when the lists are as they were, only reads their words again
 * and holds the process that much less.  What that walk found wrong is
 * the stopped walk's to find again. */
static void prewalk(struct walk *w)
{
	uint64_t deadline = w->deadline, now = mw_now_ns();

	if (now >= deadline || w->headers_only)
		return;
	w->deadline = now + (deadline - now) / 2;
	mw_snap_walk(w);
	w->deadline = deadline;
	w->stop = 0;
	w->stop_why[0] = '\0';
}

/* The walks while the process runs, up to MW_SNAP_TRIES: one is kept
 * when no thread ran while it was read (quiet.h), else when the one after
 * it finds the same (mw_snap_confirm). */
static void running_walks(struct walk *w, char *err, size_t errlen)
{
	struct mw_snapshot *s = w->s;

	for (s->tries = 1;; s->tries++) {
		struct mw_quiet *q = w->headers_only ? NULL : mw_quiet_begin(w->p->pid);
		uint64_t cpu = cpu_now(), changed = w->p->changed;
		int quiet;

		mw_snap_walk(w);
		cpu = cpu_now() - cpu;	/* what a stopped walk takes: not the
					 * waits for a CPU, which a held
					 * process leaves us; a walk that
					 * took lists from records
					 * (snapshot_record.c) tells less */
		/* no thread ran while it was read, and no word it read twice
		 * changed (a mapping another process writes: quiet.h) */
		quiet = mw_quiet_end(q) && w->p->changed == changed;
		if (!w->verified && (!w->walk_ns || cpu < w->walk_ns))
			w->walk_ns = cpu ? cpu : 1;
		s->check = w->headers_only ? MW_SNAP_CHECK_HEADERS :
			   quiet ? MW_SNAP_CHECK_IDLE : MW_SNAP_CHECK_REREAD;
		if (s->consistent && !w->headers_only && !quiet)
			mw_snap_confirm(w);	/* the same figures twice? */
		if (s->consistent || w->fatal || w->stop || s->tries >= MW_SNAP_TRIES)
			break;
		if (mw_now_ns() >= w->deadline) {
			mw_snap_halt(w, MW_SNAP_TIMEOUT, "out of time");
			break;
		}
		mw_proc_refresh(w->p, err, errlen);	/* it may have mapped new heaps */
	}
}

/* how: 0 a full walk, 1 headers only, 2 a full walk keeping chunks */
static int take(struct mw_proc *p, const struct mw_glibc *g, int how, long timeout_ms,
		struct mw_snapshot **out, struct mw_ptstop **held, const struct walk *opt,
		char *err, size_t errlen)
{
	struct mw_snapshot *s = xcalloc(1, sizeof(*s));
	struct walk w = { .p = p, .g = g, .s = s, .page = (uint64_t)sysconf(_SC_PAGESIZE),
			  .headers_only = how == 1, .keep = how == 2,
			  .hold = !held ? 0 : opt ? opt->hold : MW_HOLD_CALL,
			  .reserve = opt ? opt->reserve : 0 };
	uint64_t t0 = mw_now_ns();
	char note[512] = "";
	int ret;

	if (timeout_ms <= 0)
		timeout_ms = MW_SNAP_TIMEOUT_MS;
	w.deadline = t0 + (uint64_t)timeout_ms * 1000000;
	/* the image g was read from: an exec since is one while it is read */
	w.image = g->image ? g->image : mw_ptstop_image(p->pid);
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
	if (w.leave_stopped && w.hold == MW_HOLD_READ)
		w.hold = 0, w.reserve = 0;	/* left in its job-control stop: still
						 * for any read */
	if (!w.leave_stopped && !w.hold)
		running_walks(&w, err, errlen);
	if (w.leave_stopped || w.hold) {	/* read stopped only */
		if (!no_stop)
			prewalk(&w);
		s->tries = 0;
		s->consistent = 0;
	}
	if (!s->consistent && !w.fatal && !w.stop && !w.execd && !no_stop) {
		stopped_walks(&w, note, sizeof(note));
		s->check = MW_SNAP_CHECK_STOPPED;
	}
	s->duration_ns = mw_now_ns() - t0;
	mw_proc_copy_free(p);	/* the walks' copies (procmem.h): not kept between snapshots */
	mw_snap_recs_free(&w);
	if (w.fatal || w.stop || w.execd || !s->consistent) {
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
	return take(p, g, 0, timeout_ms, out, NULL, NULL, err, errlen);
}

int mw_snapshot_take_chunks(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
			    struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 2, timeout_ms, out, NULL, NULL, err, errlen);
}

int mw_snapshot_sample(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		       struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 1, timeout_ms, out, NULL, NULL, err, errlen);
}

int mw_snapshot_hold(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     struct mw_snapshot **out, struct mw_ptstop **held, char *err, size_t errlen)
{
	*held = NULL;
	return take(p, g, 2, timeout_ms, out, held, NULL, err, errlen);
}

int mw_snapshot_keep(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     uint64_t reserve_ns, struct mw_snapshot **out, struct mw_ptstop **held,
		     char *err, size_t errlen)
{
	struct walk opt = { .hold = MW_HOLD_READ, .reserve = reserve_ns };

	*held = NULL;
	return take(p, g, 2, timeout_ms, out, held, &opt, err, errlen);
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

