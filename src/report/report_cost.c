/* report_cost.c - what tracing cost a run; see report_cost.h.  The
 * summary's head says, when it matters:
 *
 *	  tracing cost: setjmp made 600001 of the 600002 hits (99%), 308121 a second over
 *	    the 1.95 s traced; at about 0.60 µs a hit (bench/perhit.sh, this family; more on
 *	    busy CPUs), about 360 ms of the threads' time;
 *	    -e '!setjmp' leaves them out (and the setjmp/longjmp counts)
 */
#include <inttypes.h>
#include <string.h>

#include "jsonout.h"
#include "report_cost.h"
#include "units.h"

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
	/* a total past INT64_MAX (processes of hostile streams, units.h)
	 * is not known: no line then */
	if (c->family < 0 || c->family == MW_FAM_UNKNOWN || !mw_count_known(c->total) ||
	    (unsigned __int128)c->hits * 100 < (unsigned __int128)c->total * MW_COST_SHARE_PCT)
		return;
	if (c->traced_ns)
		c->matters = c->hits >= MW_COST_MIN_HITS &&
			     (double)c->hits * 1e9 / (double)c->traced_ns >= MW_COST_RATE;
	else
		c->matters = c->hits >= MW_COST_HITS;
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
		c->hits, c->total, in, (unsigned)((unsigned __int128)c->hits * 100 / c->total));
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
				    mw_count_known(c->by_family[fam]) ?
				    json_integer((json_int_t)c->by_family[fam]) : json_null());
	if (c->family >= 0)
		snprintf(leave, sizeof(leave), "!%s", mw_family_name((enum mw_family)c->family));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
		"by_family", by,
		"family", c->family >= 0 ?
		json_string(mw_family_name((enum mw_family)c->family)) : json_null(),
		"leave_out", c->family >= 0 ? json_string(leave) : json_null(),
		"hits", mw_count_known(c->hits) ? json_integer((json_int_t)c->hits) : json_null(),
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
