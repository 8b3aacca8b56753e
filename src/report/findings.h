/* findings.h - what a snapshot and its RSS ledger (ledger.h) say about
 * a process's memory, ranked, each with the figures it rests on and
 * what (if anything) gives its memory back.
 *
 * A finding says only what the figures show: measured figures are named
 * as such ("resident by pagemap").  What a call does now is exact
 * (malloc_trim(0)'s own rule: trim_now); what a setting would change is
 * not estimated from one reading (estimates were 5 to 100 times off what
 * was then measured), the finding names the `mallocwatch tune` command
 * that measures it.  Every kind of held memory has a finding from 1 MiB:
 * free (trim_now, pinned, idle arenas, thread arenas' tops), in use
 * (in idle arenas, mmapped chunks, not resident), and not malloc's (other
 * anonymous memory).  One reading cannot tell a leak from memory in use,
 * and a snapshot sees no lock waits; the findings say so rather than
 * guess.
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
	const char *id;		/* "where", "trim_now", "idle_arenas", "idle_in_use",
				 * "arena_max", "mmap_threshold", "thread_tops",
				 * "mmapped", "other_anonymous", "pinned", "returned",
				 * "in_use_not_resident", "mmapped_unfound", "waits" */
	uint64_t bytes;		/* what it is about (the rank) */
	char what[512];		/* the finding, with its numbers */
	char evidence[512];	/* which figures, measured or estimated how */
	char suggest[1024];	/* a setting or call and its effect; "" none */
	char knob[96];		/* the GLIBC_TUNABLES setting the suggestion names
				 * ("glibc.malloc.arena_max=2"); "" none */
	char measure[512];	/* the command that measures what the setting
				 * changes (mallocwatch tune ...); "" none.  No
				 * finding estimates a setting's effect: a
				 * snapshot cannot tell it within 2 times (what
				 * tune then measured was 5 to 100 times less) */
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

/* The same, with argv the process's command line (NULL-terminated; NULL
 * unknown) for the `mallocwatch tune` commands the findings name: its
 * words shell-quoted when they are all printable ASCII and fit, else
 * "PROGRAM [ARGS]" stands for them. */
void mw_findings_make_cmd(const struct mw_snapshot *s, const struct mw_ledger *l, uint64_t cpus,
			  const struct mw_finding_waits *w, size_t nw, const char *const *argv,
			  struct mw_finding **out, size_t *n);

/* "Findings:" and each one, numbered, with its evidence and suggestion. */
void mw_findings_text(FILE *f, const struct mw_finding *v, size_t n);

/* [{"id", "rank", "bytes", "finding", "evidence", "suggestion", "tunable",
 * "estimate_bytes" (always null: no estimate is given), "measure_with"}] (a new
 * reference; NULL when out of memory); docs/json.md. */
json_t *mw_findings_json(const struct mw_finding *v, size_t n);

#endif /* MALLOCWATCH_FINDINGS_H */
