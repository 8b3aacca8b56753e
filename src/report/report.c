/* report.c - the text summary (mw_report_text), its head in
 * report_head.c and its sections of what the program did (settings,
 * retries, slow math, events, setjmp keys) in report_events.c
 * (report_int.h), of a run's view (view.h): its figures, tables and
 * findings, and its run info; never the model (state.h). */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "report_stacks.h"
#include "report_int.h"
#include "report_ledger.h"
#include "units.h"
#include "view.h"
#include "xalloc.h"

/* Shared with report_events.c (report_int.h), by its short name here. */
#define more_line mw_report_more_line

/* Nothing to say of the heaps: none seen, all known (quiet_text()). */
static int heaps_quiet(const struct mw_view *v)
{
	return !mw_view_get(v, MW_VF_heaps)->v && !mw_view_get(v, MW_VF_attach_unknown)->v;
}

/* Nothing to say of sbrk: no call seen (quiet_text()). */
static int sbrk_quiet(const struct mw_view *v)
{
	static const enum mw_view_fig f[] = {
		MW_VF_sbrk_grown, MW_VF_sbrk_trimmed, MW_VF_sbrk_grow_calls, MW_VF_sbrk_trim_calls,
		MW_VF_sbrk_failed, MW_VF_sbrk_failed_less, MW_VF_sbrk_first_brk,
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (mw_view_get(v, f[i])->v)
			return 0;
	return 1;
}

/* ---- the text summary ---- */

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The TOP_ROWS-th largest of v[0..n-1] (0 when n <= TOP_ROWS): rows at
 * or above it are shown. */
static uint64_t top_cutoff(const uint64_t *v, size_t n)
{
	uint64_t *c, cut;

	if (n <= TOP_ROWS)
		return 0;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), u64_desc);
	cut = c[TOP_ROWS - 1];
	free(c);
	return cut;
}

/* -f: was the process created traced, its model starting from the
 * allocator it inherited at fork (its "attach" snapshot is that copy)? */
static int forked(const struct mw_run_info *ri)
{
	return ri->in_tree && ri->snap_attach;
}

static void arenas_text(FILE *f, const struct mw_view *v, int fork)
{
	int64_t n = mw_view_get(v, MW_VF_arenas)->v;

	/* the arenas there before tracing are not all known */
	if (mw_view_get(v, MW_VF_attach_unknown)->v)
		fprintf(f, "\nArenas: ? (%" PRId64 " seen while traced)\n", n);
	else
		fprintf(f, "\nArenas: %" PRId64 "\n", n);
	mw_view_table_text(f, v, MW_VT_arenas, NULL, SIZE_MAX, fork, TOP_ATTACH);
}

static void heaps_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_heaps)->v;

	if (heaps_quiet(v))	/* quiet_text() */
		return;
	if (mw_view_get(v, MW_VF_attach_unknown)->v)	/* those made before tracing are unknown */
		fprintf(f, "\nHeaps (heap_info): ? (%zu seen while traced)\n", n);
	else
		fprintf(f, "\nHeaps (heap_info): %zu\n", n);
	if (!n)
		return;
	mw_view_table_text(f, v, MW_VT_heaps, NULL, TOP_ROWS, 0, 0);
	more_line(f, TOP_ROWS, n, "heaps");
}

/* "Main arena sbrk:": its figures (view.def) as a sentence. */
static void sbrk_text(FILE *f, const struct mw_view *v)
{
	char g[32], t[32], n[32], p[32];
	int64_t net = mw_view_get(v, MW_VF_sbrk_net)->v, peak = mw_view_get(v, MW_VF_sbrk_peak)->v;
	uint64_t grown = (uint64_t)mw_view_get(v, MW_VF_sbrk_grown)->v;
	uint64_t trimmed = (uint64_t)mw_view_get(v, MW_VF_sbrk_trimmed)->v;
	uint64_t nmore = (uint64_t)mw_view_get(v, MW_VF_sbrk_grow_calls)->v;
	uint64_t nless = (uint64_t)mw_view_get(v, MW_VF_sbrk_trim_calls)->v;
	uint64_t failed = (uint64_t)mw_view_get(v, MW_VF_sbrk_failed)->v;
	/* -p: what was there before may be trimmed while traced: a net below 0 */
	int neg = net < 0;
	uint64_t mag = neg ? (uint64_t)-net : (uint64_t)net;

	if (sbrk_quiet(v))	/* quiet_text() */
		return;
	fprintf(f, "\nMain arena sbrk:\n  grown %s in %" PRIu64 " call%s, trimmed %s in %"
		PRIu64 " call%s, net %s%s (%s%" PRIu64 " bytes), peak %s\n",
		mw_human_bytes(grown, g, sizeof(g)), nmore, nmore == 1 ? "" : "s",
		mw_human_bytes(trimmed, t, sizeof(t)), nless, nless == 1 ? "" : "s",
		neg ? "-" : "", mw_human_bytes(mag, n, sizeof(n)), neg ? "-" : "", mag,
		mw_human_bytes((uint64_t)(peak > 0 ? peak : 0), p, sizeof(p)));
	if (mw_view_get(v, MW_VF_sbrk_first_brk)->v)
		fprintf(f, "  break 0x%" PRIx64 " -> 0x%" PRIx64 "\n",
			(uint64_t)mw_view_get(v, MW_VF_sbrk_first_brk)->v,
			(uint64_t)mw_view_get(v, MW_VF_sbrk_last_brk)->v);
	if (failed)
		fprintf(f, "  sbrk failed %" PRIu64 " times (glibc fell back to mmap)\n", failed);
}

static void thresholds_text(FILE *f, const struct mw_view *v, int fork)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_threshold_changes)->v;
	uint64_t mm = (uint64_t)mw_view_get(v, MW_VF_mmap_threshold)->v;
	uint64_t tr = (uint64_t)mw_view_get(v, MW_VF_trim_threshold)->v;
	char a[32], b[32], q[MW_NAME_Q];
	const char *how = n ? "" : !mw_view_get(v, MW_VF_thresholds_seeded)->v ? " default" :
			  fork ? " as inherited at fork" : " as at attach";

	if (!n && !mw_view_get(v, MW_VF_attach_unknown)->v)
		return;		/* nothing changed them: quiet_text() */
	if (mw_view_get(v, MW_VF_attach_unknown)->v)	/* mallopt or a tunable may have set them */
		fprintf(f, "\nThresholds:\n  mmap threshold ?, trim threshold ? (not read at "
			"attach)\n");
	else
		fprintf(f, "\nThresholds:\n  mmap threshold %s (%" PRIu64 " bytes)%s, trim "
			"threshold %s (%" PRIu64 " bytes)%s\n", mw_human_bytes(mm, a, sizeof(a)),
			mm, how, mw_human_bytes(tr, b, sizeof(b)), tr, how);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  change %zu: thread %" PRId64 ", %s: mmap %s, trim %s\n", i + 1,
			mw_view_cell(v, i, MW_VC_changes_tid)->v,
			mw_quote(mw_view_cell(v, i, MW_VC_changes_source)->s, q, sizeof(q)),
			mw_human_bytes((uint64_t)mw_view_cell(v, i, MW_VC_changes_mmap)->v, a,
				       sizeof(a)),
			mw_human_bytes((uint64_t)mw_view_cell(v, i, MW_VC_changes_trim)->v, b,
				       sizeof(b)));
}

/* "; the other 40522 are memory_heap_more's 40495, memory_heap_less's 26
 * and memory_sbrk_more's 1, counted per heap and for main_arena, not per
 * thread": the probes whose hits no thread's count holds. */
static void unthreaded_text(FILE *f, const struct mw_view *v, uint64_t heaps)
{
	size_t left = (size_t)mw_view_get(v, MW_VF_unthreaded_probes)->v;
	char q[MW_NAME_Q];

	fprintf(f, "; the other %" PRIu64 " %s", heaps, heaps == 1 ? "is" : "are");
	for (size_t k = 0; k < left; k++)
		fprintf(f, "%s%s%s's %" PRId64, !k ? "" : k + 1 == left ? " and" : ",",
			k == 1 ? "\n   " : " ",
			mw_quote(mw_view_cell(v, k, MW_VC_unthreaded_probe)->s, q, sizeof(q)),
			mw_view_cell(v, k, MW_VC_unthreaded_hits)->v);
	fprintf(f, ",%scounted per heap and for main_arena, not per thread",
		left == 1 ? "\n   " : " ");
}

/* When the threads' PROBE HITS do not add up to the header's count, why:
 *
 *	  (their PROBE HITS add up to 57 of the 40579; the other 40522 are memory_heap_more's 40495,
 *	   memory_heap_less's 26 and memory_sbrk_more's 1, counted per heap and for main_arena, not per thread) */
static void hits_sum_text(FILE *f, const struct mw_view *v, size_t n)
{
	uint64_t total = (uint64_t)mw_view_get(v, MW_VF_events)->v, sum = 0;
	uint64_t heaps = (uint64_t)mw_view_get(v, MW_VF_unthreaded)->v;

	for (size_t i = 0; i < n; i++)	/* held: undeclared probes' hits are in no total */
		sum = mw_count_add(sum, (uint64_t)mw_view_cell(v, i, MW_VC_threads_hits)->v);
	if (sum == total)
		return;
	if (!mw_count_known(sum) || !mw_count_known(sum + heaps)) {
		fprintf(f, "  (%s PROBE HITS add up to more than can be counted: hits of probes "
			"the stream never declared, not in the %" PRIu64 ")\n",
			n > TOP_ROWS ? "all the threads'" : "their", total);
		return;
	}
	fprintf(f, "  (%s PROBE HITS add up to %" PRIu64 " of the %" PRIu64,
		n > TOP_ROWS ? "all the threads'" : "their", sum, total);
	if (heaps)
		unthreaded_text(f, v, heaps);
	if (sum + heaps > total)	/* N records of a probe never declared */
		fprintf(f, ";\n   %" PRIu64 " of the threads' hits are of probes the stream never "
			"declared, not in the %" PRIu64, sum + heaps - total, total);
	else if (sum + heaps < total)
		fprintf(f, ";\n   %" PRIu64 " the report cannot place", total - sum - heaps);
	fprintf(f, ")\n");
}

static void threads_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_threads)->v;
	uint64_t *hits = xmalloc((n + 1) * sizeof(*hits)), cut;
	unsigned char *show = xmalloc(n + 1);
	size_t shown;

	for (size_t i = 0; i < n; i++)
		hits[i] = (uint64_t)mw_view_cell(v, i, MW_VC_threads_hits)->v;
	cut = top_cutoff(hits, n);
	for (size_t i = 0; i < n; i++)	/* the busiest TOP_ROWS */
		show[i] = hits[i] >= cut;
	free(hits);
	if (!n) {
		fprintf(f, "\nThreads: 0 (no thread hit a probe while traced)\n");
		free(show);
		return;
	}
	fprintf(f, "\nThreads: %zu%s\n", n, n > TOP_ROWS ? " (the busiest shown)" : "");
	shown = mw_view_table_text(f, v, MW_VT_threads, show, TOP_ROWS, 0, 0);
	free(show);
	more_line(f, shown, n, "threads");
	hits_sum_text(f, v, n);
}

/* text (lines ending in '\n', from a saved stream) to f, each line
 * quoted (msg.h): its bytes are the stream's, which anyone may write. */
static void quoted_lines(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		char *line = strndup(text, n);

		if (line) {
			mw_fputs_quoted(line, f);
			fputc('\n', f);
			free(line);
		}
		text += n + (text[n] == '\n');
	}
}

/* The answer, first: a tcache double free, the allocator's totals and
 * the RSS at the last reading (the exit's with -c, the end's with -p),
 * and the findings:
 *
 *	Total: system 2.4 GiB = arenas 2.4 GiB + mmapped chunks 0 B (0 chunks)
 *	       in use 2.4 GiB = arenas 2.4 GiB + mmapped chunks 0 B; free ...
 *	RSS at exit 276.2 MiB, peak 276.2 MiB (the RSS ledger below adds up)
 *
 *	Findings (largest first):
 *	 1. ... */
static void answer_text(FILE *f, const struct mw_run_info *ri, const struct mw_view *view)
{
	const struct mw_snapshot *s = ri->snap_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;
	const struct mw_finding *v;
	char a[32], b[32];
	size_t n;

	if (!mw_view_get(view, MW_VF_images_refused)->v)	/* else they mix its images */
		mw_report_double_free_text(f, view);
	if (s)
		mw_snapshot_totals_text(f, s);
	if (l) {
		fprintf(f, "%sRSS %s %s", s ? "" : "\n", ri->ledger_exit ? "at exit" : "at the end",
			mw_human_bytes(l->total.rss, a, sizeof(a)));
		if (l->peak_rss)
			fprintf(f, ", peak %s", mw_human_bytes(l->peak_rss, b, sizeof(b)));
		fprintf(f, " (the RSS ledger below %s)\n", l->ok ? "adds up" : "DOES NOT ADD UP");
	}
	if (!l && ri->findings_text) {	/* a replay: the ledger was read from the
					 * process's pages, its findings are saved */
		quoted_lines(f, ri->findings_text);
		return;
	}
	if (!l || !(ri->ledger_exit ? ri->snap_exit : ri->snap_end))
		return;
	v = mw_view_findings(view, &n);	/* of its run info's last reading */
	mw_findings_text(f, v, n);
}

/* The last reading's ledger (its findings are in answer_text). */
static void exit_ledger_text(FILE *f, const struct mw_run_info *ri)
{
	const struct mw_snapshot *s = ri->ledger_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;

	if (s && l)
		mw_ledger_text(f, s, l);
}

/* The sections with nothing to say, folded into one line:
 *
 *	Nothing else to report: no heaps of other arenas (heap_info); no
 *	sbrk call; no threshold change (mmap 128.0 KiB, trim 128.0 KiB,
 *	default); no setjmp/longjmp; no slow-math probes in
 *	'/lib/x86_64-linux-gnu/libm.so.6' (glibc 2.19 to 2.33 have them)
 *
 * (one line in the output). */
static void quiet_text(FILE *f, const struct mw_view *v, int fork)
{
	uint64_t mm = (uint64_t)mw_view_get(v, MW_VF_mmap_threshold)->v;
	uint64_t tr = (uint64_t)mw_view_get(v, MW_VF_trim_threshold)->v;
	const char *libm = mw_view_get(v, MW_VF_math_libm)->s;
	char a[32], b[32];
	int k = 0;

	if (heaps_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			mw_view_get(v, MW_VF_heap_traced)->v ? "no heaps of other arenas (heap_info)" :
			"no heap probes traced");
	if (sbrk_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			mw_view_get(v, MW_VF_sbrk_traced)->v ? "no sbrk call" : "no sbrk probes traced");
	if (!mw_view_get(v, MW_VF_threshold_changes)->v && !mw_view_get(v, MW_VF_attach_unknown)->v)
		fprintf(f, "%sno threshold change (mmap %s, trim %s, %s)", k++ ? "; " :
			"\nNothing else to report: ", mw_human_bytes(mm, a, sizeof(a)),
			mw_human_bytes(tr, b, sizeof(b)),
			!mw_view_get(v, MW_VF_thresholds_seeded)->v ? "default" :
			fork ? "as inherited at fork" : "as at attach");
	if (mw_view_get(v, MW_VF_setjmp_traced)->v && !mw_view_get(v, MW_VF_setjmp_hits)->v)
		fprintf(f, "%sno setjmp/longjmp", k++ ? "; " : "\nNothing else to report: ");
	if (libm && !mw_view_get(v, MW_VF_math_sites)->v) {
		fprintf(f, "%sno slow-math probes in '", k++ ? "; " : "\nNothing else to report: ");
		mw_fputs_quoted(libm, f);
		fprintf(f, "' (glibc 2.19 to 2.33 have them)");
	}
	if (k)
		fputc('\n', f);
}

/* The figures counted from the tracer. */
static void traced_text(FILE *f, const struct mw_view *v, int fork)
{
	arenas_text(f, v, fork);
	heaps_text(f, v);
	sbrk_text(f, v);
	thresholds_text(f, v, fork);	/* when they changed */
	threads_text(f, v);
	mw_report_setjmp_text(f, v);
	mw_report_settings_text(f, v);
	mw_report_retries_text(f, v);
	mw_report_math_text(f, v);
	mw_report_events_text(f, v);
	quiet_text(f, v, fork);
}

int mw_report_text_as(FILE *f, const struct mw_view *v, const struct mw_run_info *ri,
		      const struct mw_report_cost *cost)
{
	mw_report_head_text(f, ri, v, cost);
	answer_text(f, ri, v);
	if (!mw_view_get(v, MW_VF_images_refused)->v)	/* else they mix its images */
		traced_text(f, v, forked(ri));
	if (ri->snap_attach)	/* against the end's (-p), else the exit's (-f) */
		mw_snapshot_diff_text_named(f, ri->snap_attach, ri->snap_end ? ri->snap_end :
					    ri->snap_exit, forked(ri) ? "AT FORK" : "AT ATTACH",
					    ri->snap_end ? "AT THE END" : "AT EXIT",
					    forked(ri) ? "at fork: the copy of its parent's "
					    "allocator it started with" : NULL, ri->end_why);
	else if (ri->snap_end)	/* -p, no attach snapshot: the end's own figures */
		mw_snapshot_arenas_only_text(f, ri->snap_end, "Allocator at the end, read from "
					     "the process");
	if (ri->snap_exit)	/* its Total is in answer_text */
		mw_snapshot_arenas_only_text(f, ri->snap_exit, "Allocator at exit, read from the "
					     "process");
	exit_ledger_text(f, ri);
	if (ri->stacks)
		mw_report_stacks_text(f, ri->stacks, ri->stacks_pid);
	if (ri->stopped)
		fprintf(f, "\nTracing was stopped (^C, SIGTERM or --duration); the process runs on.\n");
	if (ri->tracer_died)
		fprintf(f, "\nThe tracer ended before the program did: events after that "
			"point are missing.\n");
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int mw_report_text(FILE *f, const struct mw_view *v)
{
	return mw_report_text_as(f, v, mw_view_run_info(v), mw_view_cost(v));
}
