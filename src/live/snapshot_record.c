/* snapshot_record.c - an arena's lists walked once per snapshot (snapshot_int.h).
 *
 * A snapshot of a running process walks it twice and keeps the figures
 * when both walks agree (mw_snap_confirm), unless no thread of it ran
 * while the first read it (quiet.h); a stopped walk follows the running
 * ones when they did not agree.  Walking 2 million free chunks again
 * means copying every heap again (procmem.h).  Instead, the first walk
 * of an arena's lists marks every word it read in its copy (the bin
 * heads, each chunk's size and fd, the neighbours' sizes malloc_trim's
 * consolidation looks at) and keeps, besides, what the lists added to
 * the arena: free counts and bytes, trimmable bytes, and the free chunks
 * when they are kept.  A later walk of the same snapshot reads those
 * words again (mw_proc_marks_same, a span of each 64 KiB block into one
 * buffer, no copy made) and, when every one holds what it held, takes
 * the figures as they were: the walk is a function of those words, the
 * arena's top and the mappings, so a walk made now would find exactly
 * them.  When any differs (or the top or the mappings do), the lists are
 * walked again.  The words' comparison is stricter than the figures'.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

struct mw_snap_rec {
	uint64_t arena, top, maps;	/* what the walk of its lists depends on */
	int keep;			/* free chunks kept */
	struct mw_proc_marks *marks;	/* NULL: nothing recorded */
	struct mw_snap_arena before;	/* the arena as its lists began */
	uint64_t fast_count, fast_bytes, rest_count, rest_bytes, free_bytes, trimmable,
		 fast_into_top;	/* what its lists added */
	struct mw_snap_chunk *chunks;	/* the free chunks kept */
	size_t nchunks, chunk0;
	int dropped;		/* s->chunks_dropped as its lists began */
};

/* FNV-1a of the mappings (the walk checks chunks against them). */
static uint64_t maps_hash(const struct mw_proc *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < p->nmaps; i++) {
		uint64_t v[] = { p->maps[i].start, p->maps[i].end, (uint64_t)p->maps[i].readable };

		for (size_t k = 0; k < 3; k++)
			h = (h ^ v[k]) * 0x100000001b3ULL;
	}
	return h;
}

/* Arena addr's record, made (empty) when asked to. */
static struct mw_snap_rec *rec_of(struct walk *w, uint64_t addr, int make)
{
	struct mw_snap_rec *r;

	for (size_t i = 0; i < w->nrecs; i++)
		if (w->recs[i].arena == addr)
			return &w->recs[i];
	if (!make)
		return NULL;
	XGROW(w->recs, w->nrecs, w->recs_cap);
	r = &w->recs[w->nrecs++];
	memset(r, 0, sizeof(*r));
	r->arena = addr;
	return r;
}

static void rec_clear(struct mw_snap_rec *r)
{
	mw_proc_marks_free(r->marks);
	free(r->chunks);
	r->marks = NULL;
	r->chunks = NULL;
	r->nchunks = 0;
}

/* r's kept chunks after w's, up to MW_SNAP_MAX_KEPT, as keep() does. */
static void add_chunks(struct walk *w, const struct mw_snap_rec *r)
{
	struct mw_snapshot *s = w->s;
	size_t n = r->nchunks;

	if (!w->keep || !n)
		return;
	if (n > MW_SNAP_MAX_KEPT - s->nchunks) {
		n = MW_SNAP_MAX_KEPT - s->nchunks;
		s->chunks_dropped = 1;
	}
	while (s->chunks_cap < s->nchunks + n)	/* doubled: n as the count */
		XGROW(s->chunks, s->chunks_cap, s->chunks_cap);
	memcpy(s->chunks + s->nchunks, r->chunks, n * sizeof(*r->chunks));
	s->nchunks += n;
}

int mw_snap_rec_use(struct walk *w, struct mw_snap_arena *a)
{
	struct mw_snap_rec *r = rec_of(w, a->addr, 0);
	int same;

	if (!r || !r->marks || r->top != a->top || r->keep != w->keep ||
	    r->maps != maps_hash(w->p))
		return 1;
	if ((same = mw_proc_marks_same(w->p, r->marks)) < 0) {
		w->fatal = errno;
		return mw_snap_badf(w, "cannot read arena 0x%llx's lists again",
				    (unsigned long long)a->addr);
	}
	if (mw_now_ns() >= w->deadline)
		return mw_snap_halt(w, MW_SNAP_TIMEOUT, "out of time");
	if (!same)
		return 1;
	a->fast_count += r->fast_count;
	a->fast_bytes += r->fast_bytes;
	a->rest_count += r->rest_count;
	a->rest_bytes += r->rest_bytes;
	a->free_bytes += r->free_bytes;
	a->trimmable += r->trimmable;
	a->fast_into_top += r->fast_into_top;
	add_chunks(w, r);
	w->verified++;
	return 0;
}

void mw_snap_rec_begin(struct walk *w, const struct mw_snap_arena *a)
{
	struct mw_snap_rec *r = rec_of(w, a->addr, 1);

	rec_clear(r);
	r->before = *a;
	r->chunk0 = w->s->nchunks;
	r->dropped = w->s->chunks_dropped;
	w->rec_lost = 0;
	mw_proc_mark(w->p, 1);
}

void mw_snap_rec_end(struct walk *w, const struct mw_snap_arena *a, int ret)
{
	struct mw_snap_rec *r = rec_of(w, a->addr, 1);
	struct mw_proc_marks *m = mw_proc_marks_take(w->p);
	const struct mw_snap_arena *b = &r->before;
	const struct mw_snapshot *s = w->s;

	if (ret < 0 || !m || w->rec_lost || w->stop || w->fatal ||
	    s->chunks_dropped != r->dropped) {
		mw_proc_marks_free(m);
		return;
	}
	r->marks = m;
	r->top = a->top;
	r->keep = w->keep;
	r->maps = maps_hash(w->p);
	r->fast_count = a->fast_count - b->fast_count;
	r->fast_bytes = a->fast_bytes - b->fast_bytes;
	r->rest_count = a->rest_count - b->rest_count;
	r->rest_bytes = a->rest_bytes - b->rest_bytes;
	r->free_bytes = a->free_bytes - b->free_bytes;
	r->trimmable = a->trimmable - b->trimmable;
	r->fast_into_top = a->fast_into_top - b->fast_into_top;
	if (w->keep && (r->nchunks = s->nchunks - r->chunk0)) {
		r->chunks = xmalloc(r->nchunks * sizeof(*r->chunks));
		memcpy(r->chunks, s->chunks + r->chunk0, r->nchunks * sizeof(*r->chunks));
	}
}

void mw_snap_recs_free(struct walk *w)
{
	for (size_t i = 0; i < w->nrecs; i++)
		rec_clear(&w->recs[i]);
	free(w->recs);
	w->recs = NULL;
	w->nrecs = w->recs_cap = 0;
}
