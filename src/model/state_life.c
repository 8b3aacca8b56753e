/* state_life.c - the allocator state model's life (state.h): made,
 * freed, started again at an exec (the run's probes and counts kept, the
 * image's state dropped), and the few facts a run sets on it.  Split out
 * of state_model.c.
 */
#include <stdint.h>
#include <stdlib.h>

#include "idmap.h"
#include "protocol.h"
#include "state.h"
#include "state_int.h"
#include "units.h"
#include "xalloc.h"

struct mw_state *mw_state_new(int pid)
{
	struct mw_state *st = xcalloc(1, sizeof(*st));

	st->pid = pid;
	st->mmap_threshold = MW_DEFAULT_MMAP_THRESHOLD;
	st->trim_threshold = MW_DEFAULT_TRIM_THRESHOLD;
	/* main_arena always exists; its address comes with the bias */
	XGROW(st->arenas, st->narenas, st->carenas);
	st->arenas[st->narenas++] = (struct mw_arena){ .is_main = 1 };
	st->stride = 1;
	return st;
}

/* Free what st holds, not st. */
static void free_contents(struct mw_state *st)
{
	for (size_t i = 0; i < st->narenas; i++)
		free(st->arenas[i].att);
	for (size_t i = 0; i < st->nprobes; i++)
		free((char *)st->probes[i].name);
	free(st->arenas);
	free(st->heaps);
	free(st->heap_guess);
	free(st->heap_rule);
	free(st->threads);
	free(st->events);
	free(st->thr);
	free(st->probes);
	free(st->jumps);
	free(st->settings);
	free(st->retries);
	free(st->libm);
	free(st->attach_refused);
	free(st->mixed);
	free(st->marks);
	free(st->samples);
	free(st->sarenas);
	free(st->parenas);
	mw_idmap_free(&st->thread_ix);
	mw_idmap_free(&st->arena_ix);
	mw_idmap_free(&st->heap_ix);
	mw_idmap_free(&st->probe_ix);
	for (int i = 0; i < 3; i++)
		for (int k = 0; k <= MW_JUMP_VALUE; k++)
			mw_idmap_free(&st->jump_ix[i][k]);
}

void mw_state_free(struct mw_state *st)
{
	if (!st)
		return;
	free_contents(st);
	free(st);
}

void mw_state_exec(struct mw_state *st)
{
	struct mw_state *fresh = mw_state_new(st->pid), old = *st;

	/* the run's: its probes (their counts of the image that ended go to
	 * hits_before), its origin and counts of what went wrong, the libc's
	 * and libm's facts; the rest is the image's */
	for (size_t i = 0; i < old.nprobes; i++) {
		struct mw_probe_count *p = &old.probes[i];
		uint64_t due = p->streamed ? p->hits : mw_probe_samples_due(p);

		if (due > p->received)	/* slow-math samples too (protocol.h) */
			p->owed = mw_count_add(p->owed, due - p->received);
		/* (more than a run can count: a hostile stream's exec lines) */
		p->hits_before = mw_count_add(p->hits_before, p->hits);
		p->hits = p->received = p->samples = 0;
	}
	*st = *fresh;
	free(fresh);
	st->seq = old.seq;
	st->ready = old.ready;
	st->garbled = old.garbled;
	st->tracer_lost = old.tracer_lost;
	st->main_sym = old.main_sym;
	st->libm = old.libm;
	st->libm_sites = old.libm_sites;
	st->probes = old.probes;
	st->nprobes = old.nprobes;
	st->cprobes = old.cprobes;
	st->probe_ix = old.probe_ix;
	st->origin = old.origin;
	st->execs = old.execs + 1;
	old.libm = NULL;
	old.probes = NULL;
	old.nprobes = 0;
	old.probe_ix = (struct mw_idmap){ 0 };
	free_contents(&old);
}

uint64_t mw_state_owed(const struct mw_state *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nprobes; i++)
		n = mw_count_add(n, st->probes[i].owed);
	return n;
}

int mw_state_owed_take(struct mw_state *st, char tag, int id)
{
	size_t i;

	if ((tag != MW_REC_TIMED && tag != MW_REC_EVENT && tag != MW_REC_HEAP &&
	     tag != MW_REC_HEAPHITS) || !mw_state_owed(st))
		return 0;
	if ((tag == MW_REC_TIMED || tag == MW_REC_EVENT) &&
	    (i = mw_idmap_get(&st->probe_ix, (uint64_t)id)) != MW_IDMAP_NONE &&
	    st->probes[i].owed)
		st->probes[i].owed--;
	return 1;
}

unsigned mw_state_execs(const struct mw_state *st, uint64_t *hits_before)
{
	*hits_before = 0;
	for (size_t i = 0; i < st->nprobes; i++)
		*hits_before = mw_count_add(*hits_before, st->probes[i].hits_before);
	return st->execs;
}

void mw_state_set_libm(struct mw_state *st, const char *path, int sites)
{
	free(st->libm);
	st->libm = xstrdup(path);
	st->libm_sites = sites;
}

const char *mw_state_libm(const struct mw_state *st, int *sites)
{
	*sites = st->libm_sites;
	return st->libm;
}

void mw_state_set_pid(struct mw_state *st, int pid)
{
	st->pid = pid;
}

void mw_state_set_main_arena_sym(struct mw_state *st, uint64_t sym)
{
	st->main_sym = sym;
}
