/* report_int.h - the few helpers the text summary (report.c) and the JSON
 * report (report_json.c) share.  Only those two include it; everyone else
 * goes through report.h.  All are defined in report.c.
 */
#ifndef MALLOCWATCH_REPORT_INT_H
#define MALLOCWATCH_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "probetab.h"
#include "report.h"
#include "state.h"

/* How a thread came to use an arena, as both reports name it: "new",
 * "reuse", "free_list" or "initial" ("?" for a value out of the enum).
 * A static string. */
const char *mw_report_attach_name(enum mw_attach how);

/* 1 when the stream has any probe of the setjmp family (setjmp, longjmp,
 * longjmp_target), hit or not; else 0.  The reports print their setjmp
 * section only then. */
int mw_report_has_setjmp(const struct mw_state *st);

/* The J records (mw_state_jumps) of one kind, and of the probe named
 * probe unless it is NULL, busiest first (ties by key, ascending): a
 * malloc'ed array the caller frees, never NULL (xalloc.h: out of memory
 * exits), of *n entries (0 possible).  The names point into st. */
struct mw_jump *mw_report_jumps_of(const struct mw_state *st, enum mw_jump_kind kind,
				   const char *probe, size_t *n);

/* The summary's head (report_head.c): the command, the libc and runtime,
 * the exit, the probe hits and lost events, and what tracing cost when
 * it matters, each on its lines. */
void mw_report_head_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri);

/* What tracing cost (report_head.c): the hits of each probe family and
 * the busiest one's.  The summary says so (matters) when that family made
 * at least MW_COST_SHARE_PCT% of the hits and, over the time traced, at
 * least MW_COST_MIN_HITS of them and MW_COST_RATE a second (about 1% of
 * one CPU at bench/perhit.sh's 0.6-0.8 µs a hit), or, the time not
 * known, MW_COST_HITS of them. */
#define MW_COST_SHARE_PCT 50
#define MW_COST_MIN_HITS 10000
#define MW_COST_RATE 10000
#define MW_COST_HITS 1000000

struct mw_report_cost {
	uint64_t total;			/* probe hits */
	uint64_t by_family[MW_FAM_UNKNOWN + 1];
	int family;			/* the busiest (enum mw_family), -1 none */
	uint64_t hits;			/* its hits */
	uint64_t traced_ns;		/* mw_run_info's; 0 not known */
	double per_hit_us;		/* bench/perhit.sh's figure; 0 none */
	const char *loses;		/* what -e '!FAMILY' leaves out; NULL */
	int matters;
};

void mw_report_cost_of(const struct mw_state *st, const struct mw_run_info *ri,
		       struct mw_report_cost *c);
/* Its lines under the summary's events line, when it matters. */
void mw_report_cost_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri);
/* "cost" of the JSON's "events" (docs/json.md); new reference. */
json_t *mw_report_cost_json(const struct mw_state *st, const struct mw_run_info *ri);

#endif /* MALLOCWATCH_REPORT_INT_H */
