/* snapshot_lists.c - an arena's lists, followed by the walk (snapshot.c)
 * after its header and lock were read: its fastbins and bins (in a copy
 * of its memory, or as an earlier walk of this snapshot found them,
 * snapshot_record.c) and a non-main arena's heap_info chain, each with
 * Brent's cycle finder, a loop proved by a second walk; see snapshot.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

/* heap_for_ptr(): heaps are aligned to HEAP_MAX_SIZE (arena.c), which is
 * 2 * DEFAULT_MMAP_THRESHOLD_MAX = 2 * 4 MiB * sizeof(long), or four huge
 * pages when mp_.hp_pagesize is set (2.35+). */
#define HEAP_MAX_SIZE (2ULL * 4 * 1024 * 1024 * sizeof(long))

/* List k walked to its end from where it is: 0; -1 (marked or halted);
 * 1 when it loops, through *at. */
static int walk_list(struct walk *w, struct mw_snap_cursor *k, uint64_t *at)
{
	while (!k->done) {
		int r = mw_snap_cursor_step(w, k, at);

		if (r < 0)
			return -1;
		if (r == 2)
			return 1;
	}
	return 0;
}

/* What fastbin list c, and bin list c, add to arena a. */
static void add_fast(struct mw_snap_arena *a, const struct mw_snap_list *c)
{
	a->fast_count += c->n;
	a->fast_bytes += c->n * c->first;
	a->free_bytes += c->bytes;
}

static void add_bin(struct mw_snap_arena *a, const struct mw_snap_list *c)
{
	a->rest_count += c->n;
	a->rest_bytes += c->raw;
	a->free_bytes += c->bytes;
	a->trimmable += c->trimmable;
}

/* List i of arena a (a fastbin, else bin i), walked whole into *c: 0; -1
 * (marked or halted); 1 when it loops, through *at. */
static int one_list(struct walk *w, struct mw_snap_arena *a, int fast, int i,
		    struct mw_snap_list *c, uint64_t *at)
{
	struct mw_snap_cursor k;
	int r = fast ? mw_snap_cursor_fast(w, a, i, &k) : mw_snap_cursor_bin(w, a, i, &k);

	if (r < 0)
		return -1;
	r = walk_list(w, &k, at);
	*c = k.c;
	return r;
}

/* The fastbins, as malloc_info counts them, then bins 1..NBINS-1
 * (circular lists through fd, headed inside the arena), one list after
 * the other.  A loop is walked again from the start: found again, it is
 * proved. */
static int lists_in_turn(struct walk *w, struct mw_snap_arena *a)
{
	int nf = w->g->nfastbins, nb = w->g->nbin_slots / 2;

	for (int j = 0; j < nf + nb; j++) {
		int fast = j < nf, i = fast ? j : j - nf + 1, r;
		struct mw_snap_list c;
		uint64_t at;
		size_t mark = w->s->nchunks, fmark = w->nfast;

		r = one_list(w, a, fast, i, &c, &at);
		if (r == 1 && (mw_snap_reread(w), w->s->nchunks = mark, w->nfast = fmark,
			       r = one_list(w, a, fast, i, &c, &at)) == 1)
			return mw_snap_halt(w, MW_SNAP_CORRUPT, "arena 0x%llx: %s %d list loops at "
				    "chunk 0x%llx", (unsigned long long)a->addr, fast ? "fastbin" : "bin",
				    i, (unsigned long long)at);
		if (r < 0)
			return -1;
		if (fast)
			add_fast(a, &c);
		else
			add_bin(a, &c);
	}
	return 0;
}

/* List c's turn in side_by_side(): steps while its next chunk lies in a
 * block copied already whose copy was begun by lim (procmem.h,
 * mw_proc_copy_order), or while the block it read last was (*last: the
 * list is not ahead of the others), and then once at most into a block
 * not copied yet, which copies it.  mw_snap_cursor_step's 0, 1 or 2, or
 * -1. */
static int turn(struct walk *w, struct mw_snap_cursor *c, uint64_t *last, uint64_t lim)
{
	uint64_t off = (uint64_t)w->g->ch_size.off, at;
	int r = 0, copies = 0;

	while (!r) {
		uint64_t from = c->p, o = mw_proc_copy_order(w->p, from + off);

		if (o ? o > lim && *last > lim : copies++ || *last > lim)
			break;
		r = mw_snap_cursor_step(w, c, &at);
		*last = o ? o : mw_proc_copy_order(w->p, from + off);
	}
	return r;
}

/* Arena a's lists side by side, in rounds: in each, a turn of every list
 * not ended (turn()), none let ahead of the list furthest behind by more
 * than LEAD blocks in the order their copies were begun.  Lists that
 * sweep the same heaps in the same order (python3's small bins, freed in
 * address order), sparse or dense, then go through them together: each
 * block is read while it is fresh in the cache, and copied once, into
 * buffers used again round a ring (procmem_int.h); a list let run on
 * through the blocks copied ahead of it would leave the others behind,
 * the buffers of their blocks given away.  The figures as
 * lists_in_turn() makes them (sums, added in list order), the same checks
 * on the same chunks: 0; -1 when anything is wrong (a chunk that fails a
 * check, a loop): the caller then walks them in turn (as it does when a
 * chunk kept went past MW_SNAP_MAX_KEPT: which are kept depends on the
 * order). */
#define LEAD 8
static int side_by_side(struct walk *w, struct mw_snap_arena *a)
{
	int nf = w->g->nfastbins, n = nf + w->g->nbin_slots / 2, left = 0, r = 0;
	struct mw_snap_cursor *k = xcalloc((size_t)n, sizeof(*k));
	uint64_t *last = xcalloc((size_t)n, sizeof(*last));
	int *live = xcalloc((size_t)n, sizeof(*live));

	for (int i = 0; i < n && !r; i++)
		r = i < nf ? mw_snap_cursor_fast(w, a, i, &k[i]) : mw_snap_cursor_bin(w, a, i - nf + 1, &k[i]);
	for (int i = 0; i < n && !r; i++)
		if (!k[i].done)
			live[left++] = i;
	while (!r && left) {
		uint64_t lim = UINT64_MAX;
		int m = 0;

		for (int j = 0; j < left; j++)
			if (last[live[j]] + LEAD < lim)
				lim = last[live[j]] + LEAD;
		for (int j = 0; j < left && r >= 0 && r != 2; j++) {
			r = turn(w, &k[live[j]], &last[live[j]], lim);
			if (!k[live[j]].done)
				live[m++] = live[j];
		}
		left = m;
		r = r < 0 || r == 2 ? -1 : 0;
	}
	for (int i = 0; i < n && !r; i++)
		if (i < nf)
			add_fast(a, &k[i].c);
		else
			add_bin(a, &k[i].c);
	free(k);
	free(last);
	free(live);
	return r;
}

/* The heap_info chain of a non-main arena from h, into a->heaps (what
 * was there is dropped): 0; -1 (marked or halted); 1 when it loops,
 * through *at. */
static int heap_chain(struct walk *w, struct mw_snap_arena *a, uint64_t h, uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	size_t cap = 0;
	struct brent b;

	w->nheaps -= a->nheaps;
	free(a->heaps);
	a->heaps = NULL;
	a->nheaps = 0;
	a->heap_bytes = a->heap_mprotect = 0;
	mw_snap_brent_init(&b, h);
	while (h) {
		uint64_t ar, prev, size, mprot;

		if (mw_snap_step(w) < 0)
			return -1;
		if (w->nheaps == MW_SNAP_MAX_HEAPS)
			return mw_snap_halt(w, MW_SNAP_CORRUPT, "more than %d heaps", MW_SNAP_MAX_HEAPS);
		if (mw_snap_field(w, h, g->hi_ar_ptr, &ar) < 0 || mw_snap_field(w, h, g->hi_prev, &prev) < 0 ||
		    mw_snap_field(w, h, g->hi_size, &size) < 0 ||
		    mw_snap_field(w, h, g->hi_mprotect_size, &mprot) < 0)
			return -1;
		if (ar != a->addr)
			return mw_snap_bad(w, "heap 0x%llx does not belong to its arena", h);
		if (a->nheaps == cap)
			xgrow((void **)&a->heaps, a->nheaps, &cap, sizeof(*a->heaps));
		a->heaps[a->nheaps++] = (struct mw_snap_heap){ .addr = h, .size = size,
							       .mprotect_size = mprot };
		w->nheaps++;
		a->heap_bytes += size;
		a->heap_mprotect += mprot;
		h = prev;
		if (h && mw_snap_brent_loops(&b, h)) {
			*at = h;
			return 1;
		}
	}
	return 0;
}

/* The heaps of a non-main arena, from its top's heap back; a loop is
 * walked again: found again, it is proved. */
int mw_snap_heaps(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize)
{
	uint64_t max = hp_pagesize ? hp_pagesize * 4 : HEAP_MAX_SIZE, h = a->top & ~(max - 1), at;
	int r = heap_chain(w, a, h, &at);

	if (r == 1 && (mw_snap_reread(w), r = heap_chain(w, a, h, &at)) == 1)
		return mw_snap_halt(w, MW_SNAP_CORRUPT, "arena 0x%llx: heap_info chain loops at heap "
			    "0x%llx", (unsigned long long)a->addr, (unsigned long long)at);
	return r;
}

/* The walk's state that side_by_side() changes and the walk in turn
 * starts from again.  Not the steps taken: the walk in turn gets what the
 * side-by-side walk left of the one budget (w->max_steps), so that a
 * hostile heap costs one budget, not two.  A walk of lists whose chunks
 * lie apart (MINSIZE, 32 bytes, at least) takes at most half the budget
 * (a step for every 16 readable bytes), so the two take no more than the
 * walk in turn alone could, and it finds first what it found with a
 * budget of its own; only lists with more chunks than their bytes hold
 * (a hostile heap's, overlapping) can run out of it, and then the walk in
 * turn stops with that reason (unit-snaplists). */
struct saved {
	struct mw_snap_arena a;
	int consistent, stop, dropped;
	size_t nchunks, nfast;
	char why[sizeof(((struct mw_snapshot *)0)->why)];
	char stop_why[sizeof(((struct walk *)0)->stop_why)];
};

/* x kept into y, or (back) put back from it. */
#define KEEP(x, y) do {							\
	_Static_assert(sizeof(x) == sizeof(y), #x " is kept whole");	\
	if (back)							\
		memcpy(&(x), &(y), sizeof(x));				\
	else								\
		memcpy(&(y), &(x), sizeof(x));				\
} while (0)

/* The state of w and arena a kept into v, or (back) put back from it. */
static void keep_state(struct walk *w, struct mw_snap_arena *a, struct saved *v, int back)
{
	KEEP(*a, v->a);
	KEEP(w->s->consistent, v->consistent);
	KEEP(w->stop, v->stop);
	KEEP(w->s->chunks_dropped, v->dropped);
	KEEP(w->s->nchunks, v->nchunks);
	KEEP(w->nfast, v->nfast);
	KEEP(w->s->why, v->why);
	KEEP(w->stop_why, v->stop_why);
}

/* Arena a's lists side by side, or, when that finds anything wrong,
 * in turn from where the walk was before (the first reason found, the
 * chunks kept, the figures, as only that walk makes them): 0; -1
 * (marked or halted). */
static int all_lists(struct walk *w, struct mw_snap_arena *a)
{
	struct saved v;

	keep_state(w, a, &v, 0);
	if (side_by_side(w, a) == 0 && w->s->chunks_dropped == v.dropped)
		return 0;
	if (w->fatal || w->stop == MW_SNAP_TIMEOUT)
		return -1;	/* the process is gone, or no time for another walk */
	keep_state(w, a, &v, 1);
	return lists_in_turn(w, a);
}

/* Arena a's lists, after its header and lock were read (and read again
 * after, from the process): as an earlier walk of this snapshot found
 * them when the process still holds every word it read (snapshot_record.c), else
 * walked in a copy of its memory taken now (procmem.h).  0 or -1. */
int mw_snap_lists(struct walk *w, struct mw_snap_arena *a)
{
	int r = mw_snap_rec_use(w, a);

	if (r <= 0)
		return r;
	mw_proc_copy_drop(w->p);
	mw_proc_copy(w->p, 1);
	mw_snap_rec_begin(w, a);
	w->nfast = 0;
	r = all_lists(w, a) < 0 || mw_snap_consolidate(w, a) < 0 ? -1 : 0;
	mw_snap_rec_end(w, a, r);
	mw_proc_copy(w->p, 0);
	return r;
}
