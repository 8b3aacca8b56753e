/* state_int.h - the allocator model's own structure, shared by its
 * parts: state_model.c (the model built from records; state_jumps.c the
 * setjmp family's keys, state_finish.c its end), state_life.c (made,
 * freed, started again at an exec), state_timeline.c (the
 * timeline of samples) and state_read.c (what the reports read).  Only
 * those include it; everyone else sees struct mw_state as opaque
 * (state.h).
 */
#ifndef MALLOCWATCH_STATE_INT_H
#define MALLOCWATCH_STATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "probetab.h"
#include "state.h"

struct mw_state {
	int pid;
	uint64_t seq;
	int ready, ended;
	uint64_t garbled, tracer_lost;
	const char *why;	/* why the last record was refused (mw_state_why) */
	uint64_t main_sym;	/* link-time main_arena; 0 if unknown */
	uint64_t bias;
	int have_bias;

	struct mw_arena *arenas;
	size_t narenas, carenas;
	struct mw_heap *heaps;
	size_t nheaps, cheaps;
	uint64_t *heap_guess;	/* rule 3 guess per heap */
	int *heap_rule;		/* which rule attributed it (1..3), 0 none */
	size_t cguess;
	struct mw_thread *threads;
	size_t nthreads, cthreads;
	struct mw_event *events;
	size_t nevents, cevents;
	struct mw_threshold_change *thr;
	size_t nthr, cthr;
	uint64_t mmap_threshold, trim_threshold;
	struct mw_sbrk sbrk;
	struct mw_probe_count *probes;
	size_t nprobes, cprobes;
	struct mw_jump *jumps;
	size_t njumps, cjumps;
	struct mw_setting *settings;
	size_t nsettings, csettings;
	struct mw_retry *retries;
	size_t nretries, cretries;
	char *libm;
	int libm_sites;
	/* key -> array index: threads by tid, arenas by address (not 0),
	 * the newest heap by address, probes by stream id */
	struct mw_idmap thread_ix, arena_ix, heap_ix, probe_ix;
	struct mw_idmap jump_ix[3][MW_JUMP_VALUE + 1];	/* [jump_slot][kind]: key -> jumps[] */
	size_t n_tuples;	/* K records */
	struct mw_state_omitted omitted;	/* past MW_STATE_KEEP */
	size_t n_hits, n_heap_records, n_waits, n_jumps[4];	/* end-record counts */
	uint64_t hits_unthreaded;	/* probe hits of G and S records (no thread) */
	uint64_t unthreaded[MW_P_COUNT];	/* the same by probe (MW_P_*) */
	char full[160];
	int seeded;
	char *attach_refused;	/* why there is no attach snapshot; NULL */
	char *mixed;		/* why the figures mix images; NULL */
	uint64_t mixed_ns;	/* when that was found (CLOCK_MONOTONIC) */
	/* the timeline */
	uint64_t now_ns;	/* the time of the event being applied, or 0 */
	uint64_t origin;
	struct mw_mark *marks;
	size_t nmarks, cmarks;
	struct mw_sample *samples;	/* kept, every stride-th seen */
	size_t nsamples, csamples;
	struct mw_sample_arena *sarenas;
	size_t nsarenas, csarenas;
	uint64_t samples_seen, stride;
	struct mw_sample pend;	/* the newest sample when not kept */
	struct mw_sample_arena *parenas;
	size_t nparenas, cparenas;
	int have_pend, cur_kept;	/* which one U and C records go to */
	uint64_t waits_latest;	/* the newest C record's count, kept or not */
	size_t expect_u;	/* U records still to come for it */
	unsigned execs;		/* images replaced (mw_state_exec) */
};

/* At the end of the stream (mw_state_finish): the newest sample, when
 * the stride left it aside, becomes the last in the list; nothing when
 * there is none. */
void mw_state_samples_finish(struct mw_state *st);

/* state_model.c's, for state_jumps.c and state_finish.c: the declared
 * probe id, or NULL; the declared probe glibc names known_id (MW_P_*), or
 * NULL; thread tid attached to the arena at addr, how, at this record. */
struct mw_probe_count *mw_state_probe(struct mw_state *st, int id);
struct mw_probe_count *mw_state_probe_known(struct mw_state *st, int known_id);
void mw_state_attach(struct mw_state *st, int tid, uint64_t addr, enum mw_attach how);

/* state_model.c's, for mw_state_hits and state_jumps.c: the index of a
 * setjmp-family probe in mw_thread.jumps, or -1. */
int mw_state_jump_slot(int known);

#endif /* MALLOCWATCH_STATE_INT_H */
