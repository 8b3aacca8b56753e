/* state_timeline.c - the model's timeline (state.h): the program's start
 * (MW_REC_ORIGIN), the markers of timed events, and the allocator
 * samples of --interval (Y records, their arenas' U records and the lock
 * waits of C records).  At most MW_STATE_SAMPLES samples are kept: when
 * full, every other one is dropped and only every stride-th new one is
 * kept, the newest always kept aside to end the line.  Split out of
 * state_model.c; struct mw_state is in state_int.h.
 */
#include <string.h>

#include "state.h"
#include "state_int.h"
#include "xalloc.h"

void mw_state_origin_set(struct mw_state *st, uint64_t ns)
{
	st->origin = ns;
}

uint64_t mw_state_origin(const struct mw_state *st)
{
	return st->origin;
}

const struct mw_mark *mw_state_marks(const struct mw_state *st, size_t *n)
{
	*n = st->nmarks;
	return st->marks;
}

const struct mw_sample *mw_state_samples(const struct mw_state *st, size_t *n)
{
	*n = st->nsamples;
	return st->samples;
}

const struct mw_sample_arena *mw_state_sample_arenas(const struct mw_state *st, size_t *n)
{
	*n = st->nsarenas;
	return st->sarenas;
}

/* Full: keep every other sample (the first, third, ...) and their arenas. */
static void samples_halve(struct mw_state *st)
{
	size_t k = 0, ka = 0;

	for (size_t i = 0; i < st->nsamples; i += 2) {
		struct mw_sample s = st->samples[i];

		memmove(&st->sarenas[ka], &st->sarenas[s.first], s.n * sizeof(*st->sarenas));
		s.first = ka;
		ka += s.n;
		st->samples[k++] = s;
	}
	st->nsamples = k;
	st->nsarenas = ka;
	st->stride *= 2;
}

static void sample_keep(struct mw_state *st, const struct mw_sample *s)
{
	XGROW(st->samples, st->nsamples, st->csamples);
	st->samples[st->nsamples] = *s;
	st->samples[st->nsamples].first = st->nsarenas;
	st->samples[st->nsamples].n = 0;
	st->nsamples++;
}

void mw_state_sample(struct mw_state *st, const struct mw_sample *s, size_t narenas)
{
	uint64_t k = st->samples_seen++;

	st->expect_u = narenas;
	if (k % st->stride == 0 && st->nsamples >= MW_STATE_SAMPLES)
		samples_halve(st);
	st->cur_kept = k % st->stride == 0;
	if (st->cur_kept) {
		sample_keep(st, s);
		st->have_pend = 0;
		return;
	}
	st->pend = *s;	/* the newest is kept aside: the end of the line */
	st->pend.n = 0;
	st->nparenas = 0;
	st->have_pend = 1;
}

int mw_state_sample_arena(struct mw_state *st, const struct mw_sample_arena *a)
{
	if (!st->expect_u)
		return -1;
	st->expect_u--;
	if (st->cur_kept) {
		XGROW(st->sarenas, st->nsarenas, st->csarenas);
		st->sarenas[st->nsarenas++] = *a;
		st->samples[st->nsamples - 1].n++;
	} else {
		XGROW(st->parenas, st->nparenas, st->cparenas);
		st->parenas[st->nparenas++] = *a;
		st->pend.n++;
	}
	return 0;
}

int mw_state_sample_waits(struct mw_state *st, uint64_t waits)
{
	struct mw_sample *s = st->cur_kept && st->nsamples ? &st->samples[st->nsamples - 1] :
			      st->have_pend ? &st->pend : NULL;

	if (!s)
		return -1;
	s->waits = waits;
	s->have_waits = 1;
	st->waits_latest = waits;
	return 0;
}

uint64_t mw_state_waits_latest(const struct mw_state *st)
{
	return st->waits_latest;
}

/* The newest sample, when the stride left it aside, ends the list
 * (state_int.h). */
void mw_state_samples_finish(struct mw_state *st)
{
	if (!st->have_pend)
		return;
	sample_keep(st, &st->pend);
	for (size_t i = 0; i < st->nparenas; i++) {
		XGROW(st->sarenas, st->nsarenas, st->csarenas);
		st->sarenas[st->nsarenas++] = st->parenas[i];
	}
	st->samples[st->nsamples - 1].n = st->nparenas;
	st->have_pend = 0;
}
