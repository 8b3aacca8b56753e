/* findings.h - what a snapshot and its RSS ledger (ledger.h) say about
 * a process's memory, ranked, each with the figures it rests on and,
 * where a setting would change it, that setting and by how much.
 *
 * A finding says only what the figures show: measured figures are named
 * as such ("resident by pagemap"); an estimate says what it is computed
 * from and that it is not measured (`mallocwatch tune` measures).  One
 * reading cannot tell a leak from memory in use, and a snapshot sees no
 * lock waits; the findings say so rather than guess.
 *
 * Ranked by the bytes each is about, largest first; the summary of the
 * ledger (where the RSS is) always comes first.
 */
#ifndef MALLOCWATCH_FINDINGS_H
#define MALLOCWATCH_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ledger.h"
#include "snapshot.h"

struct mw_finding {
	const char *id;		/* "where", "trim_now", "idle_arenas", "arena_max",
				 * "mmap_threshold", "pinned", "returned",
				 * "mmapped_unfound", "waits" */
	uint64_t bytes;		/* what it is about (the rank) */
	char what[512];		/* the finding, with its numbers */
	char evidence[512];	/* which figures, measured or estimated how */
	char suggest[512];	/* a setting or call and its effect; "" none */
	char knob[96];		/* the GLIBC_TUNABLES setting the suggestion names
				 * ("glibc.malloc.arena_max=2"); "" none */
	uint64_t estimate;	/* with knob: the free and resident bytes it is
				 * estimated to save (mallocwatch tune sets the
				 * measured outcome beside it); 0 none */
};

/* The lock waits (memory_arena_reuse_wait hits) arena addr had while it
 * was traced: from a trace's model, for the "waits" finding. */
struct mw_finding_waits {
	uint64_t arena, waits;
};

/* The findings for snapshot s of a process and its ledger l (both of the
 * same reading), cpus the CPUs the process may run on (glibc's default
 * arena cap is 8 per CPU), w the lock waits of its arenas while traced
 * (nw of them; NULL, 0 for a snapshot alone: then no finding about waits
 * is made), into a new array *out of *n (free() it).  Thresholds: a
 * finding about memory is made from 1 MiB up, one about waits from 1. */
void mw_findings_make(const struct mw_snapshot *s, const struct mw_ledger *l, uint64_t cpus,
		      const struct mw_finding_waits *w, size_t nw, struct mw_finding **out,
		      size_t *n);

/* "Findings:" and each one, numbered, with its evidence and suggestion. */
void mw_findings_text(FILE *f, const struct mw_finding *v, size_t n);

/* [{"id", "rank", "bytes", "finding", "evidence", "suggestion"}] (a new
 * reference; NULL when out of memory); docs/json.md. */
json_t *mw_findings_json(const struct mw_finding *v, size_t n);

#endif /* MALLOCWATCH_FINDINGS_H */
