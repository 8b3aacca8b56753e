/* state_read.c - what the reports read from the model (state.h): its
 * tables (arenas, heaps, threads, events, thresholds, settings, retries,
 * jumps, probes), sbrk, the totals of events seen, lost and missing, and
 * whether the allocator at attach is unknown (and why).
 * Split out of state_model.c; struct mw_state is in state_int.h.
 */
#include <stdlib.h>

#include "protocol.h"
#include "state.h"
#include "state_int.h"
#include "units.h"
#include "xalloc.h"

const struct mw_setting *mw_state_settings(const struct mw_state *st, size_t *n)
{
	*n = st->nsettings;
	return st->settings;
}

const struct mw_retry *mw_state_retries(const struct mw_state *st, size_t *n)
{
	*n = st->nretries;
	return st->retries;
}

const struct mw_jump *mw_state_jumps(const struct mw_state *st, size_t *n)
{
	*n = st->njumps;
	return st->jumps;
}

int mw_state_pid(const struct mw_state *st)
{
	return st->pid;
}

const struct mw_arena *mw_state_arenas(const struct mw_state *st, size_t *n)
{
	*n = st->narenas;
	return st->arenas;
}

const struct mw_heap *mw_state_heaps(const struct mw_state *st, size_t *n)
{
	*n = st->nheaps;
	return st->heaps;
}

const struct mw_thread *mw_state_threads(const struct mw_state *st, size_t *n)
{
	*n = st->nthreads;
	return st->threads;
}

const struct mw_event *mw_state_events(const struct mw_state *st, size_t *n)
{
	*n = st->nevents;
	return st->events;
}

const struct mw_threshold_change *mw_state_thresholds(const struct mw_state *st, size_t *n,
						      uint64_t *mmap, uint64_t *trim)
{
	*n = st->nthr;
	*mmap = st->mmap_threshold;
	*trim = st->trim_threshold;
	return st->thr;
}

const struct mw_sbrk *mw_state_sbrk_get(const struct mw_state *st)
{
	return &st->sbrk;
}

const struct mw_probe_count *mw_state_probes(const struct mw_state *st, size_t *n)
{
	*n = st->nprobes;
	return st->probes;
}

uint64_t mw_probe_samples_due(const struct mw_probe_count *p)
{
	if (!p->math)
		return 0;
	return p->hits < MW_MATH_SAMPLES ? p->hits : MW_MATH_SAMPLES;
}

uint64_t mw_state_missing(const struct mw_state *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nprobes; i++) {
		const struct mw_probe_count *p = &st->probes[i];

		if (p->streamed && p->hits > p->received)
			n = mw_count_add(n, p->hits - p->received);
		if (mw_probe_samples_due(p) > p->received)
			n = mw_count_add(n, mw_probe_samples_due(p) - p->received);
		n = mw_count_add(n, p->owed);	/* the image's before its exec */
	}
	return n;
}

void mw_state_totals(const struct mw_state *st, uint64_t *total, uint64_t *lost,
		     uint64_t *garbled, int *ended)
{
	*total = 0;
	/* held at UINT64_MAX (units.h): images of 2^62 streamed hits
	 * each, none received, are owed more than a uint64_t holds */
	*lost = mw_count_add(mw_count_add(st->tracer_lost, st->garbled), mw_state_missing(st));
	for (size_t i = 0; i < st->nprobes; i++)
		*total = mw_count_add(*total, st->probes[i].hits);
	*garbled = st->garbled;
	*ended = st->ended;
}

uint64_t mw_state_hits_unthreaded(const struct mw_state *st)
{
	return st->hits_unthreaded;
}

uint64_t mw_state_probe_unthreaded(const struct mw_state *st, int known)
{
	return known >= 0 && known < MW_P_COUNT ? st->unthreaded[known] : 0;
}

const struct mw_state_omitted *mw_state_omitted_get(const struct mw_state *st)
{
	return &st->omitted;
}

void mw_state_attach_unknown(struct mw_state *st, const char *why)
{
	if (st->seeded)
		return;
	free(st->attach_refused);
	st->attach_refused = xstrdup(why && why[0] ? why : "no snapshot at attach");
}

const char *mw_state_attach_refused(const struct mw_state *st)
{
	return st->attach_refused;
}

void mw_state_images_mixed(struct mw_state *st, const char *why, uint64_t ns)
{
	if (st->mixed)	/* the first reason stands: from then on they mix */
		return;
	st->mixed = xstrdup(why && why[0] ? why : "the figures mix the process's images");
	st->mixed_ns = ns;
}

const char *mw_state_images_refused(const struct mw_state *st, uint64_t *ns)
{
	if (ns)
		*ns = st->mixed_ns;
	return st->mixed;
}
