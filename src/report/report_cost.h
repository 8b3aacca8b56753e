/* report_cost.h - what tracing cost a run: the hits of each probe family,
 * the busiest one's share and rate, about how much of the threads' time
 * they took (bench/perhit.sh's figures) and which -e leaves them out; for
 * the summary's head, the JSON's "events" and a tree's totals (view.h). */
#ifndef MALLOCWATCH_REPORT_COST_H
#define MALLOCWATCH_REPORT_COST_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "probetab.h"

/* What tracing cost: the hits of each probe family and
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

/* What tracing cost a run is its view's (view.c: the model's hits, the
 * run info's traced time).  c's busiest family and whether it matters (c->total, by_family and
 * traced_ns set); its "cost" object of the JSON's "events" (docs/json.md;
 * new reference); its lines under the summary's events line, when it
 * matters, in naming where the hits were ("" one process, " in all
 * processes"). */
void mw_report_cost_decide(struct mw_report_cost *c);
json_t *mw_report_cost_json_of(const struct mw_report_cost *c);
void mw_report_cost_lines(FILE *f, const struct mw_report_cost *c, const char *in);

#endif /* MALLOCWATCH_REPORT_COST_H */
