/* report_head.c - the summary's head: the run (its command, libc and
 * runtime, its end, its probe hits and what went wrong), and what tracing
 * cost the program when it matters (report_cost.h) (report_int.h). */
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "jsonout.h"
#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "report_cost.h"
#include "report_int.h"

/* The images the program replaced (exec), when it did. */
static void execs_line(FILE *f, const struct mw_view *v, const struct mw_run_info *ri)
{
	int64_t n = mw_view_get(v, MW_VF_execs)->v, before = mw_view_get(v, MW_VF_hits_before)->v;

	if (!n)
		return;
	fprintf(f, "  the program replaced its image (exec) %" PRId64 " time%s: this report is of "
		"the last", n, n == 1 ? "" : "s");
	for (const char *const *a = ri->last_argv; a && *a; a++) {
		fputs(a == ri->last_argv ? ", " : " ", f);
		mw_fputs_quoted(*a, f);	/* the process's: quoted */
	}
	if (!mw_view_get(v, MW_VF_hits_before)->known)	/* past INT64_MAX: no tracer's */
		fputs(" (its probe hits before it, more than can be counted, are not above)\n", f);
	else
		fprintf(f, " (the %" PRId64 " probe hit%s before it %s not above)\n", before,
			before == 1 ? "" : "s", before == 1 ? "is" : "are");
}

/* The figures from the tracer refused: they mix the process's images. */
static void mixed_line(FILE *f, const struct mw_view *v)
{
	const struct mw_view_val *at = mw_view_get(v, MW_VF_images_refused_ns);
	const char *why = mw_view_get(v, MW_VF_images_refused)->s;

	if (!why)
		return;
	fputs("  its figures from the tracer are REFUSED", f);
	if (at->known)
		fprintf(f, " (found at %.3f s)", (double)at->v / 1e9);
	fputs(": ", f);
	mw_fputs_quoted(why, f);
	fputs("; its arenas, heaps, sbrk, threads, thresholds and events would not be its "
	      "program's alone: not shown (unknown)\n", f);
}

/* What the lists counted but did not keep (view.def's events.omitted). */
static void omitted_line(FILE *f, const struct mw_view *v)
{
	if (mw_view_section_zero(v, "events.omitted") ||
	    !mw_view_get(v, MW_VF_omitted_events)->known)	/* refused: mixed */
		return;
	fprintf(f, "  counted but not listed (lists stop at %" PRId64 "): %" PRId64 " events, %"
		PRId64 " settings, %" PRId64 " retries, %" PRId64 " threshold changes, %" PRId64
		" timeline markers\n", mw_view_get(v, MW_VF_keep)->v,
		mw_view_get(v, MW_VF_omitted_events)->v,
		mw_view_get(v, MW_VF_omitted_settings)->v, mw_view_get(v, MW_VF_omitted_retries)->v,
		mw_view_get(v, MW_VF_omitted_thresholds)->v, mw_view_get(v, MW_VF_omitted_marks)->v);
}

void mw_report_head_text(FILE *f, const struct mw_run_info *ri, const struct mw_view *v,
			 const struct mw_report_cost *cost)
{
	uint64_t total = (uint64_t)mw_view_get(v, MW_VF_events)->v;
	uint64_t lost = (uint64_t)mw_view_get(v, MW_VF_lost)->v;
	uint64_t garbled = (uint64_t)mw_view_get(v, MW_VF_garbled)->v;
	const struct mw_view_val *full = mw_view_get(v, MW_VF_full_tables);
	const struct mw_view_val *unknown = mw_view_get(v, MW_VF_attach_unknown);

	/* the command, the libc path and the runtime come from a stream or
	 * the target: quoted (msg.h) */
	fprintf(f, "mallocwatch:");
	for (const char *const *a = ri->argv; a && *a; a++) {
		fputc(' ', f);
		mw_fputs_quoted(*a, f);
	}
	if (!ri->argv && ri->comm) {	/* -p, live: the process names itself */
		fprintf(f, " process %d (", ri->pid);
		mw_fputs_quoted(ri->comm, f);
		fputs(")\n", f);
		if (ri->where)
			mw_where_text(f, ri->where);
	} else {
		fprintf(f, "%s(pid %d)\n", ri->argv ? " " : " process ", ri->pid);
	}
	if (ri->title) {	/* the title it gave itself: its bytes, quoted */
		fprintf(f, "  title %s: ", ri->title_at_end ? "at the end" : "at exit");
		mw_fputs_quoted(ri->title, f);
		fputc('\n', f);
	}
	fputs("  libc ", f);
	mw_fputs_quoted(ri->libc, f);
	fputs(", ", f);
	mw_fputs_quoted(ri->runtime, f);
	fputs(" runtime\n", f);
	if (ri->have_status && ri->term_signal)
		fprintf(f, "  killed by signal %d (%s)\n", ri->term_signal, strsignal(ri->term_signal));
	else if (ri->have_status)
		fprintf(f, "  exit status %d\n", ri->exit_status);
	else if (ri->status_why)
		fprintf(f, "  exit status unknown: %s\n", ri->status_why);
	if (mw_view_get(v, MW_VF_events)->known)
		fprintf(f, "  events: %" PRIu64 " probe hit%s, ", total, total == 1 ? "" : "s");
	else	/* refused (mixed_line) */
		fputs("  events: ? probe hits, ", f);
	if (mw_view_get(v, MW_VF_lost)->known)
		fprintf(f, "%" PRIu64 " lost", lost);
	else	/* past INT64_MAX: a hostile stream's images, never received */
		fputs("more than can be counted lost", f);
	if (garbled)
		fprintf(f, " (%" PRIu64 " garbled lines)", garbled);
	if (!mw_view_get(v, MW_VF_ended)->v)
		fprintf(f, "; the tracer's end-of-run totals are MISSING: heap sizes, "
			"waits and sbrk below are incomplete");
	fprintf(f, "\n");
	mw_report_cost_lines(f, cost, "");
	execs_line(f, v, ri);
	if (full->v)
		fprintf(f, "  the script's tables were FULL, later entries dropped: %s\n", full->s);
	mixed_line(f, v);
	if (unknown->v) {	/* before any figure it touches */
		fputs("  the allocator at attach is UNKNOWN (", f);
		mw_fputs_quoted(unknown->s, f);
		fputs("): the arenas, heaps and heap bytes at the end and the thresholds are "
		      "not known (shown as ?); events count what changed while traced\n", f);
	}
	omitted_line(f, v);
}
