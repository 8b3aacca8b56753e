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

/* Is x inside arena a's malloc_state (a bin's head, say)? */
static int in_arena(const struct walk *w, const struct mw_snap_arena *a, uint64_t x)
{
	return x >= a->addr && x - a->addr < (uint64_t)w->g->mstate_size;
}

/* Chunk p's size field and fd, in one read when they are adjacent (as
 * in every glibc): the cost of a walk is its reads. */
static int chunk_words(struct walk *w, uint64_t p, uint64_t *sz, uint64_t *fd)
{
	const struct mw_glibc *g = w->g;
	uint64_t v[2];

	if (g->ch_fd.off != g->ch_size.off + 8)
		return mw_snap_word(w, p + (uint64_t)g->ch_size.off, sz) < 0 ||
		       mw_snap_word(w, p + (uint64_t)g->ch_fd.off, fd) < 0 ? -1 : 0;
	if (mw_proc_read(w->p, p + (uint64_t)g->ch_size.off, v, sizeof(v)) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			w->fatal = errno;
		return mw_snap_bad(w, "cannot read chunk 0x%llx (not mapped, or unmapped meanwhile)", p);
	}
	*sz = v[0];
	*fd = v[1];
	return 0;
}

/* Keep free chunk p of size sz (flags in) when asked to, up to
 * MW_SNAP_MAX_KEPT. */
static void keep(struct walk *w, uint64_t p, uint64_t sz)
{
	struct mw_snapshot *s = w->s;

	if (!w->keep)
		return;
	if (s->nchunks == MW_SNAP_MAX_KEPT) {
		s->chunks_dropped = 1;
		return;
	}
	if (s->nchunks == s->chunks_cap)
		xgrow((void **)&s->chunks, s->nchunks, &s->chunks_cap, sizeof(*s->chunks));
	s->chunks[s->nchunks++] = (struct mw_snap_chunk){ .addr = p, .size = sz };
}

/* A list walked from chunk p to next: the next one's size and fd asked
 * into the CPU's cache (procmem.h, mw_proc_prefetch) while this one is
 * counted, and the one four steps on if the list keeps its stride (a
 * list freed in address order does: glibc pushes each on its head).  A
 * guess is only a hint: nothing is read from it. */
static void prefetch_next(struct walk *w, uint64_t p, uint64_t next)
{
	uint64_t off = (uint64_t)w->g->ch_size.off;

	mw_proc_prefetch(w->p, next + off);
	mw_proc_prefetch(w->p, next + 4 * (next - p) + off);
}

/* One free list's chunks, summed. */
struct list {
	uint64_t n, first;	/* chunks; the first one's size */
	uint64_t raw;		/* size fields as stored (flag bits in) */
	uint64_t bytes;		/* sizes */
	uint64_t trimmable;	/* mw_snap_chunk_trimmable() */
};

/* Fastbin i of arena a into c: 0; -1 (marked or halted); 1 when the
 * list loops, through *at. */
static int fastbin(struct walk *w, const struct mw_snap_arena *a, int i, struct list *c,
		   uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	uint64_t p, sz;
	struct brent b;

	memset(c, 0, sizeof(*c));
	if (mw_snap_word(w, a->addr + (uint64_t)g->ms_fastbins.off + (uint64_t)g->fastbin_slot *
		    (uint64_t)i, &p) < 0)
		return -1;
	mw_snap_brent_init(&b, p);
	while (p) {
		uint64_t fdaddr = p + (uint64_t)g->ch_fd.off, fd;

		if (in_arena(w, a, p))	/* consolidated into a bin meanwhile */
			return mw_snap_bad(w, "fastbin list ran into arena 0x%llx", a->addr);
		if (mw_snap_chunk_ok(w, p, g->ch_fd) < 0 || chunk_words(w, p, &sz, &fd) < 0)
			return -1;
		/* the chunk after this one (fast_note), and the next ones */
		mw_proc_prefetch(w->p, p + (sz & ~MW_SNAP_SIZE_BITS) + (uint64_t)g->ch_size.off);
		prefetch_next(w, p, g->safe_linking ? (fdaddr >> 12) ^ fd : fd);
		if (!mw_proc_mapped(w->p, p, sz & ~MW_SNAP_SIZE_BITS))
			return mw_snap_bad(w, "free chunk 0x%llx reaches beyond the mappings", p);
		if (!c->n)
			c->first = sz & ~MW_SNAP_SIZE_BITS;
		keep(w, p, (sz & ~MW_SNAP_SIZE_BITS) | MW_SNAP_CHUNK_FAST);
		if (mw_snap_fast_note(w, a, p, sz) < 0)
			return -1;
		c->n++;
		c->bytes += sz & ~MW_SNAP_SIZE_BITS;
		p = g->safe_linking ? (fdaddr >> 12) ^ fd : fd;	/* REVEAL_PTR */
		if (p && mw_snap_brent_loops(&b, p)) {
			*at = p;
			return 1;
		}
	}
	return 0;
}

/* The fastbins, as malloc_info counts them.  A loop is walked again from
 * the start: found again, it is proved. */
static int fastbins(struct walk *w, struct mw_snap_arena *a)
{
	for (int i = 0; i < w->g->nfastbins; i++) {
		struct list c;
		uint64_t at;
		size_t mark = w->s->nchunks, fmark = w->nfast;
		int r = fastbin(w, a, i, &c, &at);

		if (r == 1 && (mw_snap_reread(w), w->s->nchunks = mark, w->nfast = fmark,
			       r = fastbin(w, a, i, &c, &at)) == 1)
			return mw_snap_halt(w, MW_SNAP_CORRUPT, "arena 0x%llx: fastbin %d list loops at "
				    "chunk 0x%llx", (unsigned long long)a->addr, i,
				    (unsigned long long)at);
		if (r < 0)
			return -1;
		a->fast_count += c.n;
		a->fast_bytes += c.n * c.first;
		a->free_bytes += c.bytes;
	}
	return 0;
}

/* Bin i of arena a, headed by the fake chunk head, into c: 0; -1 (marked
 * or halted); 1 when the list loops without coming back to head, through
 * *at. */
static int bin(struct walk *w, const struct mw_snap_arena *a, uint64_t head, struct list *c,
	       uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	uint64_t r, sz, fd;
	struct brent b;

	memset(c, 0, sizeof(*c));
	if (mw_snap_word(w, head + (uint64_t)g->ch_fd.off, &r) < 0)
		return -1;
	mw_snap_brent_init(&b, head);
	while (r && r != head) {
		if (mw_snap_brent_loops(&b, r)) {
			*at = r;
			return 1;
		}
		if (in_arena(w, a, r))	/* another bin's head: a chunk moved meanwhile */
			return mw_snap_bad(w, "bin list ran into another bin of arena 0x%llx", a->addr);
		if (mw_snap_chunk_ok(w, r, g->ch_fd) < 0 || chunk_words(w, r, &sz, &fd) < 0)
			return -1;
		prefetch_next(w, r, fd);
		if (!mw_proc_mapped(w->p, r, sz & ~MW_SNAP_SIZE_BITS))
			return mw_snap_bad(w, "free chunk 0x%llx reaches beyond the mappings", r);
		keep(w, r, sz & ~MW_SNAP_SIZE_BITS);
		c->n++;
		c->raw += sz;	/* chunksize_nomask, as malloc_info */
		c->bytes += sz & ~MW_SNAP_SIZE_BITS;
		c->trimmable += mw_snap_chunk_trimmable(w, r, sz & ~MW_SNAP_SIZE_BITS);
		r = fd;
	}
	return 0;
}

/* Bins 1..NBINS-1: circular lists through fd, headed inside the arena.
 * A loop is walked again from the head: found again, it is proved. */
static int bins(struct walk *w, struct mw_snap_arena *a)
{
	const struct mw_glibc *g = w->g;
	int nbins = g->nbin_slots / 2 + 1;

	for (int i = 1; i < nbins; i++) {
		/* bin_at(): a fake chunk whose fd overlays bins[(i-1)*2] */
		uint64_t head = a->addr + (uint64_t)g->ms_bins.off +
				(uint64_t)(i - 1) * 2 * (uint64_t)g->bin_slot -
				(uint64_t)g->ch_fd.off, at;
		struct list c;
		size_t mark = w->s->nchunks;
		int r = bin(w, a, head, &c, &at);

		if (r == 1 && (mw_snap_reread(w), w->s->nchunks = mark, r = bin(w, a, head, &c, &at)) == 1)
			return mw_snap_halt(w, MW_SNAP_CORRUPT, "arena 0x%llx: bin %d list loops at chunk "
				    "0x%llx", (unsigned long long)a->addr, i,
				    (unsigned long long)at);
		if (r < 0)
			return -1;
		a->rest_count += c.n;
		a->rest_bytes += c.raw;
		a->free_bytes += c.bytes;
		a->trimmable += c.trimmable;
	}
	return 0;
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
	r = fastbins(w, a) < 0 || bins(w, a) < 0 || mw_snap_consolidate(w, a) < 0 ? -1 : 0;
	mw_snap_rec_end(w, a, r);
	mw_proc_copy(w->p, 0);
	return r;
}
