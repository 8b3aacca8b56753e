/* report_head.c - the summary's head: the run (its command, libc and
 * runtime, its end, its probe hits and what went wrong), and what tracing
 * cost the program, for that head and the JSON's "events": which probe
 * family made most of the hits,
 * how many a second, about how much of the threads' time they took, and
 * which -e leaves them out (report_int.h).  When that family made most
 * of the hits and they came often (MW_COST_* below), the summary says:
 *
 *	  tracing cost: setjmp made 600001 of the 600002 hits (99%), 308121 a second over
 *	    the 1.95 s traced; at about 0.60 µs a hit (bench/perhit.sh, this family; more on
 *	    busy CPUs), about 360 ms of the threads' time;
 *	    -e '!setjmp' leaves them out (and the setjmp/longjmp counts)
 */
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "jsonout.h"
#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "report_int.h"

/* What one hit costs the thread that makes it, trap and handler, as
 * bench/perhit.sh measured it (ours, median of 3 rounds, 2 cores under
 * the load of other runs, 2026-11-28, bench/RESULTS-2026-11-28.txt:
 * setjmp 0.60 at load ~4 and 3.09 at ~13, heap 0.78 at ~10; the lower
 * is kept: the trap and handler, less the waiting for a CPU), and what
 * leaving the family out loses.  Families not here have no figure
 * of their own: the report gives their rate, not a time. */
static const struct {
	enum mw_family fam;
	double us;		/* µs a hit; 0 none measured */
	const char *loses;
} families[] = {
	{ MW_FAM_SETJMP, 0.60, "the setjmp/longjmp counts" },
	{ MW_FAM_HEAP, 0.78, "the heaps' sizes, growth and peaks" },
	{ MW_FAM_SBRK, 0.0, "the main arena's sbrk account" },
	{ MW_FAM_ARENA, 0.0, "the arenas, who made them and the lock waits" },
	{ MW_FAM_MATH, 0.0, "the slow-math calls" },
};

static int fam_row(int fam)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if ((int)families[i].fam == fam)
			return (int)i;
	return -1;
}

/* The busiest family of c->by_family, its figures and whether it
 * matters (c->total and c->traced_ns set). */
void mw_report_cost_decide(struct mw_report_cost *c)
{
	int row;

	c->family = -1;
	c->hits = 0;
	for (int f = 0; f <= MW_FAM_UNKNOWN; f++)
		if (c->by_family[f] && (c->family < 0 || c->by_family[f] > c->hits))
			c->family = f, c->hits = c->by_family[f];
	row = fam_row(c->family);
	c->per_hit_us = row >= 0 ? families[row].us : 0;
	c->loses = row >= 0 ? families[row].loses : NULL;
	c->matters = 0;
	if (c->family < 0 || c->family == MW_FAM_UNKNOWN ||
	    c->hits * 100 < c->total * MW_COST_SHARE_PCT)
		return;
	if (c->traced_ns)
		c->matters = c->hits >= MW_COST_MIN_HITS &&
			     (double)c->hits * 1e9 / (double)c->traced_ns >= MW_COST_RATE;
	else
		c->matters = c->hits >= MW_COST_HITS;
}

void mw_report_cost_of(const struct mw_state *st, const struct mw_run_info *ri,
		       struct mw_report_cost *c)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(st, &n);

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);

		c->by_family[info ? info->family : MW_FAM_UNKNOWN] += p[i].hits;
		c->total += p[i].hits;
	}
	c->traced_ns = ri->traced_ns;
	mw_report_cost_decide(c);
}

/* The lines of c, when it matters; in names where the hits were ("" one
 * process, " in all processes"). */
void mw_report_cost_lines(FILE *f, const struct mw_report_cost *c, const char *in)
{
	const char *name;

	if (!c->matters)
		return;
	name = mw_family_name((enum mw_family)c->family);
	/* the share rounded down: 100% only when it made them all */
	fprintf(f, "  tracing cost: %s made %" PRIu64 " of the %" PRIu64 " hits%s (%u%%)", name,
		c->hits, c->total, in, (unsigned)(c->hits * 100 / c->total));
	if (c->traced_ns)
		fprintf(f, ", %.0f a second over\n    the %.2f s traced", (double)c->hits * 1e9 /
			(double)c->traced_ns, (double)c->traced_ns / 1e9);
	else
		fprintf(f, "\n    (the time traced is not known: the rate is not given)");
	if (c->per_hit_us > 0) {
		double s = (double)c->hits * c->per_hit_us / 1e6;

		fprintf(f, "; at about %.2f µs a hit (bench/perhit.sh, this family; more on\n"
			"    busy CPUs), about %.*f %s of the threads' time", c->per_hit_us,
			s >= 1 ? 2 : s >= 0.01 ? 0 : 1, s >= 1 ? s : s * 1e3, s >= 1 ? "s" : "ms");
	}
	fprintf(f, ";\n    -e '!%s' leaves them out%s%s%s\n", name, c->loses ? " (and " : "",
		c->loses ? c->loses : "", c->loses ? ")" : "");
}

json_t *mw_report_cost_json_of(const struct mw_report_cost *c)
{
	json_t *by = json_object();
	char leave[48];

	for (int fam = 0; fam <= MW_FAM_UNKNOWN; fam++)
		if (c->by_family[fam])
			mw_json_set(&by, mw_family_name((enum mw_family)fam),
				    json_integer((json_int_t)c->by_family[fam]));
	if (c->family >= 0)
		snprintf(leave, sizeof(leave), "!%s", mw_family_name((enum mw_family)c->family));
	return json_pack("{s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:b}",
		"by_family", by,
		"family", c->family >= 0 ?
		json_string(mw_family_name((enum mw_family)c->family)) : json_null(),
		"leave_out", c->family >= 0 ? json_string(leave) : json_null(),
		"hits", (json_int_t)c->hits,
		"share", c->total ? json_real((double)c->hits / (double)c->total) : json_null(),
		"traced_seconds", c->traced_ns ? json_real((double)c->traced_ns / 1e9) :
		json_null(),
		"per_second", c->traced_ns ?
		json_real((double)c->hits * 1e9 / (double)c->traced_ns) : json_null(),
		"per_hit_us", c->per_hit_us > 0 ? json_real(c->per_hit_us) : json_null(),
		"seconds_estimate", c->per_hit_us > 0 ?
		json_real((double)c->hits * c->per_hit_us / 1e6) : json_null(),
		"shown", c->matters);
}

/* The images the program replaced (exec), when it did. */
static void execs_line(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	uint64_t before;
	unsigned n = mw_state_execs(st, &before);

	if (!n)
		return;
	fprintf(f, "  the program replaced its image (exec) %u time%s: this report is of the last",
		n, n == 1 ? "" : "s");
	for (const char *const *a = ri->last_argv; a && *a; a++) {
		fputs(a == ri->last_argv ? ", " : " ", f);
		mw_fputs_quoted(*a, f);	/* the process's: quoted */
	}
	fprintf(f, " (the %" PRIu64 " probe hit%s before it %s not above)\n", before,
		before == 1 ? "" : "s", before == 1 ? "is" : "are");
}

void mw_report_head_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri,
			 const struct mw_view *v)
{
	uint64_t total = (uint64_t)mw_view_get(v, MW_VF_events)->v;
	uint64_t lost = (uint64_t)mw_view_get(v, MW_VF_lost)->v;
	uint64_t garbled = (uint64_t)mw_view_get(v, MW_VF_garbled)->v, ignored;
	int ended;

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
	mw_state_totals(st, &ignored, &ignored, &ignored, &ended);
	fprintf(f, "  events: %" PRIu64 " probe hit%s, %" PRIu64 " lost", total,
		total == 1 ? "" : "s", lost);
	if (garbled)
		fprintf(f, " (%" PRIu64 " garbled lines)", garbled);
	if (!ended)
		fprintf(f, "; the tracer's end-of-run totals are MISSING: heap sizes, "
			"waits and sbrk below are incomplete");
	fprintf(f, "\n");
	mw_report_cost_lines(f, mw_view_cost(v), "");
	execs_line(f, st, ri);
	if (mw_state_full_tables(st)[0])
		fprintf(f, "  the script's tables were FULL, later entries dropped: %s\n",
			mw_state_full_tables(st));
	if (mw_state_attach_refused(st)) {	/* before any figure it touches */
		fputs("  the allocator at attach is UNKNOWN (", f);
		mw_fputs_quoted(mw_state_attach_refused(st), f);
		fputs("): the arenas, heaps and heap bytes at the end and the thresholds are "
		      "not known (shown as ?); events count what changed while traced\n", f);
	}
	{
		const struct mw_state_omitted *o = mw_state_omitted_get(st);

		if (o->events || o->settings || o->retries || o->thresholds || o->marks)
			fprintf(f, "  counted but not listed (lists stop at %d): %" PRIu64
				" events, %" PRIu64 " settings, %" PRIu64 " retries, %" PRIu64
				" threshold changes, %" PRIu64 " timeline markers\n", MW_STATE_KEEP,
				o->events, o->settings, o->retries, o->thresholds, o->marks);
	}
}
