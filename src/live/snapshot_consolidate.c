/* snapshot_consolidate.c - what malloc_trim(0) gives back of an arena whose
 * fastbins hold chunks (snapshot_int.h).
 *
 * malloc_trim(0) first runs malloc_consolidate (malloc.c, mtrim): every
 * fastbin chunk is merged with the free chunks beside it - fastbin chunks
 * too, whose neighbours still see them in use, and binned ones - into one
 * chunk in the unsorted bin, or into the top when the run reaches it.
 * Only then are whole free pages given back (madvise) and main_arena's top
 * trimmed (systrim).  So 500,000 freed 100-byte chunks side by side at the
 * top hold no free page while they sit in a fastbin, and give back 53 MiB
 * to malloc_trim(0).
 *
 * While the fastbins are walked each chunk is noted with what lies beside
 * it: the chunk before free in a bin (its PREV_INUSE bit clear), the chunk
 * after the top, or free in a bin (the chunk after that has PREV_INUSE
 * clear).  Then the notes are sorted by address and the runs of adjacent
 * free chunks are rebuilt: fastbin chunks side by side, or with one binned
 * chunk between.  Every read is a checked one (mw_snap_word()); the
 * reads are of the arena's copy (procmem.h), the work linear in the
 * fastbin chunks but for the sort (a radix sort, three passes).
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

#define PREV_INUSE 1ULL

/* A note's flags, in the address's low bits (chunks are 16-aligned). */
#define F_PREV_BINNED 1ULL	/* the chunk before is free in a bin */
#define F_NEXT_BINNED 2ULL	/* the chunk after is free in a bin */
#define F_NEXT_TOP 4ULL		/* the chunk after is the top */
#define F_ALL 15ULL

struct note {
	uint64_t key;	/* address | flags */
	uint64_t size;	/* flag bits off */
};

static int add(struct walk *w, uint64_t key, uint64_t size)
{
	struct note *v = (struct note *)w->fast;

	if (w->nfast == w->fast_cap) {
		xgrow((void **)&v, w->nfast, &w->fast_cap, sizeof(*v));
		w->fast = (uint64_t *)v;
	}
	v[w->nfast++] = (struct note){ .key = key, .size = size };
	return 0;
}

int mw_snap_fast_note(struct walk *w, const struct mw_snap_arena *a, uint64_t p, uint64_t sz)
{
	const struct mw_glibc *g = w->g;
	uint64_t size = sz & ~MW_SNAP_SIZE_BITS, next = p + size, flags = 0, nsz, after;

	if (!(sz & PREV_INUSE))
		flags |= F_PREV_BINNED;
	if (next == a->top) {
		flags |= F_NEXT_TOP;
	} else if (size) {	/* a size 0 loops on itself: the list walk says so */
		if (mw_snap_word(w, next + (uint64_t)g->ch_size.off, &nsz) < 0)
			return -1;
		nsz &= ~MW_SNAP_SIZE_BITS;
		/* in use, a fastbin or a tcache chunk: PREV_INUSE set after it */
		if (nsz && mw_snap_word(w, next + nsz + (uint64_t)g->ch_size.off, &after) < 0)
			return -1;
		if (nsz && !(after & PREV_INUSE))
			flags |= F_NEXT_BINNED;
	}
	return add(w, p | flags, size);
}

/* Sort v (n notes) by address: LSD radix, 16 bits a pass. */
static void sort_notes(struct note *v, size_t n)
{
	struct note *tmp;
	uint64_t max = 0;
	size_t *count;

	for (size_t i = 0; i < n; i++)
		if (v[i].key > max)
			max = v[i].key;
	if (n < 2)
		return;
	tmp = xmalloc(n * sizeof(*tmp));
	count = xmalloc(65536 * sizeof(*count));
	for (int shift = 4; shift < 64 && (max >> shift); shift += 16) {
		size_t sum = 0;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(v[i].key >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].key >> shift) & 0xffff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
	free(count);
}

/* A run of free chunks being rebuilt. */
struct run {
	uint64_t start, bytes;	/* [start, start + bytes) */
	uint64_t binned_trim;	/* what its binned chunks counted alone */
	int top;		/* it reaches the top */
};

/* The binned chunk at b, of size field stored at b: its size (flag bits
 * off) into *size, checked against want when want is not 0 (a boundary
 * tag: the prev_size a chunk after it holds).  0; -1 (marked). */
static int binned(struct walk *w, uint64_t b, uint64_t want, uint64_t *size)
{
	uint64_t sz;

	if (b % 16 || mw_snap_step(w) < 0 ||
	    mw_snap_word(w, b + (uint64_t)w->g->ch_size.off, &sz) < 0)
		return mw_snap_badf(w, "free chunk 0x%llx beside a fastbin chunk cannot be read",
				    (unsigned long long)b);
	*size = sz & ~MW_SNAP_SIZE_BITS;
	if ((want && *size != want) || !*size)
		return mw_snap_badf(w, "free chunk 0x%llx beside a fastbin chunk has size %llu, "
				    "its boundary tag says %llu", (unsigned long long)b,
				    (unsigned long long)*size, (unsigned long long)want);
	return 0;
}

/* The run that note v[*i] starts: from the binned chunk before it, if
 * any, through the fastbin chunks after it (side by side, or with one
 * binned chunk between), *i past them.  0; -1 (marked). */
static int one_run(struct walk *w, const struct mw_snap_arena *a, const struct note *v,
		   size_t n, size_t *i, struct run *r)
{
	const struct mw_glibc *g = w->g;
	uint64_t p = v[*i].key & ~F_ALL, ps, sz = 0;	/* (binned sets it, or fails) */

	*r = (struct run){ .start = p };
	if ((v[*i].key & F_PREV_BINNED) && g->ch_prev_size.off >= 0) {
		if (mw_snap_word(w, p + (uint64_t)g->ch_prev_size.off, &ps) < 0 || ps > p ||
		    binned(w, p - ps, ps, &sz) < 0)
			return -1;
		r->start = p - ps;
		r->bytes = ps;
		r->binned_trim = mw_snap_chunk_trimmable(w, p - ps, ps);
	}
	for (;;) {
		uint64_t key = v[*i].key, next = (key & ~F_ALL) + v[*i].size;

		r->bytes += v[(*i)++].size;
		if (key & F_NEXT_TOP) {
			r->top = 1;
			return 0;
		}
		if (key & F_NEXT_BINNED) {
			if (binned(w, next, 0, &sz) < 0)
				return -1;
			r->bytes += sz;
			r->binned_trim += mw_snap_chunk_trimmable(w, next, sz);
			if ((next += sz) == a->top) {	/* not in a consistent heap */
				r->top = 1;
				return 0;
			}
		}
		/* a note at the same address (a chunk in two lists) starts a run
		 * of its own, and is then found twice: judged by the caller */
		if (*i == n || (v[*i].key & ~F_ALL) != next)
			return 0;
	}
}

int mw_snap_consolidate(struct walk *w, struct mw_snap_arena *a)
{
	struct note *v = (struct note *)w->fast;
	size_t n = w->nfast, i = 0;

	w->nfast = 0;
	if (!n)
		return 0;
	sort_notes(v, n);
	for (size_t k = 1; k < n; k++)
		if ((v[k].key & ~F_ALL) == (v[k - 1].key & ~F_ALL))
			return mw_snap_badf(w, "chunk 0x%llx is twice in arena 0x%llx's fastbins",
					    (unsigned long long)(v[k].key & ~F_ALL),
					    (unsigned long long)a->addr);
	while (i < n) {
		struct run r;

		if (one_run(w, a, v, n, &i, &r) < 0)
			return -1;
		/* its binned chunks were counted alone (bins()): take them out */
		a->trimmable -= r.binned_trim < a->trimmable ? r.binned_trim : a->trimmable;
		if (r.top)
			a->fast_into_top += r.bytes;	/* main_arena's: totals() */
		else
			a->trimmable += mw_snap_chunk_trimmable(w, r.start, r.bytes);
	}
	return 0;
}
