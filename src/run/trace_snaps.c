/* trace_snaps.c - `mallocwatch -p PID` on a libc without SDT probes
 * (trace_snaps.h): the allocator read from the process (snapshot.h) at
 * attach, every --interval and at the end, reported as the last
 * snapshot, its change since the first, and a "Samples:" table (seconds,
 * arenas, system, in-use and free bytes; the last SAMPLE_ROWS shown), or
 * with --json {"version": 1, "mode": "snapshots", ...} (docs/json.md).
 * Moved out of cmd_trace.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "jsonout.h"
#include "msg.h"
#include "procexec.h"
#include "procmem.h"
#include "report_snap.h"
#include "snapattach.h"
#include "snapshot.h"
#include "trace_run.h"
#include "trace_snaps.h"
#include "tracer.h"
#include "units.h"
#include "xalloc.h"

/* One periodic snapshot's figures (snapshots-only mode). */
struct sample {
	double t;		/* seconds since the first snapshot */
	size_t arenas;
	uint64_t system, in_use, free;
	uint64_t mmapped;	/* mmapped chunks' bytes: in use, in no arena */
};

#define MAX_SAMPLES 100000
#define SAMPLE_ROWS 32

static void samples_text(FILE *f, const struct sample *s, size_t n)
{
	char a[16], b[16], c[16], d[16];

	fprintf(f, "\nSamples: %zu%s\n  %9s %6s %10s %10s %10s %10s\n", n,
		n > SAMPLE_ROWS ? " (the last shown)" : "", "SECONDS", "ARENAS", "SYSTEM",
		"IN USE", "FREE", "MMAPPED");
	for (size_t i = n > SAMPLE_ROWS ? n - SAMPLE_ROWS : 0; i < n; i++)
		fprintf(f, "  %9.1f %6zu %10s %10s %10s %10s\n", s[i].t, s[i].arenas,
			mw_human_bytes(s[i].system, a, sizeof(a)),
			mw_human_bytes(s[i].in_use, b, sizeof(b)),
			mw_human_bytes(s[i].free, c, sizeof(c)),
			mw_human_bytes(s[i].mmapped, d, sizeof(d)));
}

/* The snapshots-only report as a new JSON value (execd: why there is no
 * snapshot at the end, the process exec'd; else NULL). */
static json_t *samples_json(pid_t pid, const char *libc, const struct mw_snapshot *a,
			    const struct mw_snapshot *b, const struct sample *s, size_t n,
			    const char *execd)
{
	json_t *arr = json_array(), *r;

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:f, s:I, s:I, s:I, s:I, s:I}", "t", s[i].t,
			"arenas", (json_int_t)s[i].arenas, "system_bytes", (json_int_t)s[i].system,
			"in_use_bytes", (json_int_t)s[i].in_use, "free_bytes", (json_int_t)s[i].free,
			"mmapped_bytes", (json_int_t)s[i].mmapped));
	r = json_pack("{s:i, s:s, s:{s:i, s:o}, s:{s:o, s:o}, s:o}", "version", 1,
		"mode", "snapshots", "target", "pid", (int)pid, "libc", mw_json_str(libc),
		"snapshots", "attach", mw_snapshot_json_value(a, "?"),
		"end", b ? mw_snapshot_json_value(b, "?") : json_null(), "samples", arr);
	if (r && execd)	/* as a traced report's (docs/json.md): its rules fail */
		mw_json_set(&r, "unknown", json_pack("{s:o, s:[s,s,s,s,s,s,s,s]}", "reason",
			    mw_json_str(execd), "figures", "arenas", "heaps", "heap_bytes",
			    "mmap_threshold", "trim_threshold", "system_bytes", "in_use_bytes",
			    "free_bytes"));
	return r;
}

static void add_sample(struct sample **s, size_t *n, size_t *cap, const struct mw_snapshot *x,
		       uint64_t t0)
{
	if (*n == MAX_SAMPLES)
		return;
	if (*n == *cap)
		xgrow((void **)s, *n, cap, sizeof(**s));
	(*s)[(*n)++] = (struct sample){ .t = (double)(x->taken_ns - t0) / 1e9,
		.arenas = x->narenas, .system = x->system_bytes, .in_use = x->in_use_bytes,
		.free = x->free_bytes, .mmapped = x->mmapped_mem };
}

/* The snapshots-only report: the last snapshot, how it changed since
 * the first, the samples; JSON when asked, and into *report (not NULL)
 * for --check. */
static void snapshots_report(const struct trace_opts *o, struct outputs *out, const char *libc,
			     const struct mw_snapshot *first, const struct mw_snapshot *last,
			     const struct sample *samples, size_t n, const char *execd,
			     char *comm, json_t **report)
{
	pid_t pid = mw_procset_first(&o->procs);	/* -p's process */
	char q[4 * PATH_MAX + 8];
	json_t *root = NULL;

	if (!execd)	/* else its name at attach, the old program's */
		mw_process_comm(pid, comm, 64);
	mw_snapshot_text(out->summary, last ? last : first, comm[0] ? comm : "?");
	fprintf(out->summary, "  (snapshots only: %s has no SDT probes)\n",
		mw_quote(libc, q, sizeof(q)));
	if (execd) {	/* the process's text: quoted */
		fputs("  no snapshot at the end, nor after its exec: ", out->summary);
		mw_fputs_quoted(execd, out->summary);
		fputs("; the figures above are at attach, its rules on them fail\n", out->summary);
	}
	mw_snapshot_diff_text(out->summary, first, last);
	samples_text(out->summary, samples, n);
	if (out->json || report)
		root = samples_json(pid, libc, first, last, samples, n, execd);
	if (out->json && mw_json_write(root, out->json, JSON_INDENT(2)) < 0)
		out->json_errno = errno;
	if (report)
		*report = root;
	else
		json_decref(root);
}

/* --progress (the default with -p): the snapshot just taken as one line
 * on stderr, like a traced run's, with what a snapshot has instead of
 * lock waits and retries: the arenas' system, in-use and free bytes. */
static void progress_line(const struct mw_snapshot *x, uint64_t t0)
{
	uint64_t heap = 0;
	char hb[16], sb[16], sy[16], iu[16], fr[16];

	for (size_t i = 0; i < x->narenas; i++)
		heap += x->arenas[i].heap_bytes;
	mw_note("%7.1fs  arenas %3zu  heaps %9s  main heap %9s  system %9s  in use %9s  free %9s",
		x->taken_ns > t0 ? (double)(x->taken_ns - t0) / 1e9 : 0.0, x->narenas,
		mw_human_bytes(heap, hb, sizeof(hb)),
		mw_human_bytes(x->main_end > x->sbrk_base ? x->main_end - x->sbrk_base : 0, sb,
			       sizeof(sb)), mw_human_bytes(x->system_bytes, sy, sizeof(sy)),
		mw_human_bytes(x->in_use_bytes, iu, sizeof(iu)),
		mw_human_bytes(x->free_bytes, fr, sizeof(fr)));
}

/* Snapshots of -p's process (layouts g) every interval ms into samples (*n of
 * *cap, seconds from t0), the newest kept in *last (the one before it
 * freed), each a --progress line when asked, until the process exits, a signal comes or --duration has
 * passed, or it is found to have exec'd (xw; why into execd).  The process is never stopped or signalled.  Snapshots not read
 * are counted, and the first one's reason warned about at the end. */
static void sample_until_end(const struct trace_opts *o, struct mw_glibc *g, long interval,
			     uint64_t t0, struct sample **samples, size_t *n, size_t *cap,
			     struct mw_snapshot **last, struct mw_procexec *xw, char *execd,
			     size_t execdlen)
{
	pid_t pid = mw_procset_first(&o->procs);	/* -p's process */
	struct mw_snapshot *x;
	char err[512];
	unsigned long skipped = 0;
	char why[512];
	long long stop_at;
	int pidfd;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	stop_at = o->duration_ms ? mw_now_ms() + o->duration_ms : 0;
	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		long wait = interval;
		int r;

		if (stop_at && stop_at - mw_now_ms() < wait)	/* --duration ends on time */
			wait = stop_at > mw_now_ms() ? (long)(stop_at - mw_now_ms()) : 0;
		r = poll(&p, pidfd >= 0 ? 1 : 0, (int)wait);
		if (mw_signal_take() || (r > 0 && (p.revents & POLLIN)) || !mw_process_alive(pid))
			break;
		if (stop_at && mw_now_ms() >= stop_at)
			break;	/* the end snapshot follows */
		if (mw_procexec_check(xw, execd, execdlen))
			break;	/* the layouts g are the old program's */
		if (mw_snapshot_read(pid, g, o->read_timeout_ms, &x, err, sizeof(err)) == 0) {
			if (mw_procexec_check(xw, execd, execdlen)) {	/* during the read */
				mw_snapshot_free(x);
				break;
			}
			add_sample(samples, n, cap, x, t0);
			if (o->progress > 0)
				progress_line(x, t0);
			mw_snapshot_free(*last);
			*last = x;
		} else if (!skipped++) {
			snprintf(why, sizeof(why), "%s", err);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (skipped)
		mw_warn("%lu snapshots skipped; the first: %s", skipped, why);
}

/* -p on a libc without SDT probes: snapshots at attach, every interval
 * (default 1 s) and at the end, until the process exits, a signal, or
 * --duration (trace_snaps.h). */
int mw_snapshots_only(const struct trace_opts *o, const char *libc, struct mw_glibc *g,
		      json_t **report)
{
	pid_t pid = mw_procset_first(&o->procs);	/* -p's process */
	struct mw_snapshot *first = NULL, *last = NULL, *x;
	struct mw_procexec *xw = mw_procexec_open(pid);	/* before the first read */
	struct sample *samples = NULL;
	size_t n = 0, cap = 0;
	struct outputs out;
	char err[512], execd[PATH_MAX + 400] = "", comm[64];
	long interval = o->interval_ms ? o->interval_ms : 1000;
	int status = MW_EXIT_OK, r, xr = 0;
	uint64_t t0;

	if (mw_outputs_open(o, &out, 0) < 0) {
		mw_outputs_close(o, &out);
		mw_procexec_free(xw);
		return MW_EXIT_RUNTIME;
	}
	/* everything is measured from the first: a busy process may need a
	 * few tries (snapshot.h) */
	if ((r = mw_attach_snapshot(pid, g, o->read_timeout_ms, &first, err, sizeof(err))) < 0) {
		mw_error("no snapshot at attach: %s", err);
		mw_outputs_close(o, &out);
		mw_procexec_free(xw);
		return MW_EXIT_RUNTIME;
	}
	mw_note("'%s' has no SDT probes: reporting process %d from snapshots alone (at attach, "
		"every %.1f s, at the end); events (who created which arena, lock waits, retries) "
		"need a libc built with --enable-systemtap", libc, (int)pid, interval / 1000.0);
	mw_process_comm(pid, comm, sizeof(comm));
	t0 = first->taken_ns;
	add_sample(&samples, &n, &cap, first, t0);
	if (o->progress > 0)
		progress_line(first, t0);
	sample_until_end(o, g, interval, t0, &samples, &n, &cap, &last, xw, execd, sizeof(execd));
	if (execd[0] || (xr = mw_procexec_check(xw, execd, sizeof(execd)))) {
		if (xr == 2)	/* exited, not wholly counted */
			mw_warn("process %d exited, and an exec before its exit cannot be ruled "
				"out: its figures are refused", (int)pid);
		else
			mw_warn("process %d replaced its program (exec) during the run: no "
				"snapshot after it", (int)pid);
		mw_snapshot_free(last);	/* of the old program: not its end */
		last = NULL;
	} else if ((x = mw_run_end_snapshot(pid, g, o->read_timeout_ms, NULL))) {
		add_sample(&samples, &n, &cap, x, t0);
		mw_snapshot_free(last);
		last = x;
	}
	snapshots_report(o, &out, libc, first, last, samples, n, execd[0] ? execd : NULL, comm,
			 report);
	if (mw_outputs_close(o, &out) < 0)
		status = MW_EXIT_RUNTIME;
	free(samples);
	mw_snapshot_free(first);
	mw_snapshot_free(last);
	mw_procexec_free(xw);
	return status;
}
