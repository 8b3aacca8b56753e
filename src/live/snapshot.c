/* snapshot.c - walk glibc's arenas in a live process; see snapshot.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

/* snapshot_read.c's checked reads, by their short names here. */
#define bad(w, fmt, v) mw_snap_badf((w), (fmt), (unsigned long long)(v))
#define word mw_snap_word
#define step mw_snap_step

/* glibc's chunk flag bits (malloc.c: PREV_INUSE, IS_MMAPPED,
 * NON_MAIN_ARENA), masked off by chunksize(). */
#define SIZE_BITS 7ULL
/* MALLOC_ALIGNMENT on 64-bit targets: 2 * sizeof(size_t). */
#define CHUNK_ALIGN 16ULL
/* heap_for_ptr(): heaps are aligned to HEAP_MAX_SIZE (arena.c), which is
 * 2 * DEFAULT_MMAP_THRESHOLD_MAX = 2 * 4 MiB * sizeof(long), or four huge
 * pages when mp_.hp_pagesize is set (2.35+). */
#define HEAP_MAX_SIZE (2ULL * 4 * 1024 * 1024 * sizeof(long))

/* Brent's cycle finder, fed a list's nodes one by one, in constant
 * memory: a node equal to the one saved closes a loop, found at most
 * about mu + 2 lambda nodes in (mu before the loop, lambda on it). */
struct brent {
	uint64_t saved, power, lam;
};

static void brent_init(struct brent *b, uint64_t first)
{
	*b = (struct brent){ .saved = first, .power = 1, .lam = 1 };
}

/* 1 when x closes a loop (x is on it), else 0. */
static int brent_loops(struct brent *b, uint64_t x)
{
	if (x == b->saved)
		return 1;
	if (b->lam == b->power) {
		b->saved = x;
		b->power *= 2;
		b->lam = 0;
	}
	b->lam++;
	return 0;
}

/* Before a list that looped is walked again to prove it: forget the
 * copies (procmem.h), so that the second walk reads the process again -
 * a running process may have moved the list between the two, and a walk
 * of the same copy would find the same loop whatever the process did. */
static void reread(struct walk *w)
{
	mw_proc_copy_drop(w->p);
	w->rec_lost = 1;	/* the words of two copies: record neither */
}

/* Is x inside arena a's malloc_state (a bin's head, say)? */
static int in_arena(const struct walk *w, const struct mw_snap_arena *a, uint64_t x)
{
	return x >= a->addr && x - a->addr < (uint64_t)w->g->mstate_size;
}

/* A member of the structure at base, of at most 8 bytes. */
static int field(struct walk *w, uint64_t base, struct mw_member m, uint64_t *v)
{
	uint64_t x = 0;

	*v = 0;
	if (m.off < 0 || m.size <= 0 || m.size > 8)
		return 0;	/* absent in this glibc: 0 */
	if (mw_proc_read(w->p, base + (uint64_t)m.off, &x, (size_t)m.size) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			w->fatal = errno;
		return bad(w, "cannot read a field at 0x%llx", base + (uint64_t)m.off);
	}
	*v = m.size == 4 ? (uint64_t)(uint32_t)x : x;	/* little-endian x86_64 */
	return 0;
}

/* Chunk p aligned and mapped up to the end of its member m, the last
 * this walk reads of it: not the whole struct malloc_chunk, which a
 * MINSIZE top at the end of its heap (a state glibc reaches) does not
 * have mapped past its size field's next word. */
static int chunk_ok(struct walk *w, uint64_t p, struct mw_member m)
{
	if (p % CHUNK_ALIGN)
		return bad(w, "misaligned chunk 0x%llx", p);
	if (m.off < 0 || m.size <= 0 || !mw_proc_mapped(w->p, p, (uint64_t)m.off + (uint64_t)m.size))
		return bad(w, "chunk 0x%llx is not mapped", p);
	return step(w);
}

/* Chunk p's size field and fd, in one read when they are adjacent (as
 * in every glibc): the cost of a walk is its reads. */
static int chunk_words(struct walk *w, uint64_t p, uint64_t *sz, uint64_t *fd)
{
	const struct mw_glibc *g = w->g;
	uint64_t v[2];

	if (g->ch_fd.off != g->ch_size.off + 8)
		return word(w, p + (uint64_t)g->ch_size.off, sz) < 0 ||
		       word(w, p + (uint64_t)g->ch_fd.off, fd) < 0 ? -1 : 0;
	if (mw_proc_read(w->p, p + (uint64_t)g->ch_size.off, v, sizeof(v)) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			w->fatal = errno;
		return bad(w, "cannot read chunk 0x%llx (not mapped, or unmapped meanwhile)", p);
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
	if (word(w, a->addr + (uint64_t)g->ms_fastbins.off + (uint64_t)g->fastbin_slot *
		    (uint64_t)i, &p) < 0)
		return -1;
	brent_init(&b, p);
	while (p) {
		uint64_t fdaddr = p + (uint64_t)g->ch_fd.off, fd;

		if (in_arena(w, a, p))	/* consolidated into a bin meanwhile */
			return bad(w, "fastbin list ran into arena 0x%llx", a->addr);
		if (chunk_ok(w, p, g->ch_fd) < 0 || chunk_words(w, p, &sz, &fd) < 0)
			return -1;
		if (!mw_proc_mapped(w->p, p, sz & ~SIZE_BITS))
			return bad(w, "free chunk 0x%llx reaches beyond the mappings", p);
		if (!c->n)
			c->first = sz & ~SIZE_BITS;
		keep(w, p, (sz & ~SIZE_BITS) | MW_SNAP_CHUNK_FAST);
		if (mw_snap_fast_note(w, a, p, sz) < 0)
			return -1;
		c->n++;
		c->bytes += sz & ~SIZE_BITS;
		p = g->safe_linking ? (fdaddr >> 12) ^ fd : fd;	/* REVEAL_PTR */
		if (p && brent_loops(&b, p)) {
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

		if (r == 1 && (reread(w), w->s->nchunks = mark, w->nfast = fmark,
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
	if (word(w, head + (uint64_t)g->ch_fd.off, &r) < 0)
		return -1;
	brent_init(&b, head);
	while (r && r != head) {
		if (brent_loops(&b, r)) {
			*at = r;
			return 1;
		}
		if (in_arena(w, a, r))	/* another bin's head: a chunk moved meanwhile */
			return bad(w, "bin list ran into another bin of arena 0x%llx", a->addr);
		if (chunk_ok(w, r, g->ch_fd) < 0 || chunk_words(w, r, &sz, &fd) < 0)
			return -1;
		if (!mw_proc_mapped(w->p, r, sz & ~SIZE_BITS))
			return bad(w, "free chunk 0x%llx reaches beyond the mappings", r);
		keep(w, r, sz & ~SIZE_BITS);
		c->n++;
		c->raw += sz;	/* chunksize_nomask, as malloc_info */
		c->bytes += sz & ~SIZE_BITS;
		c->trimmable += mw_snap_chunk_trimmable(w, r, sz & ~SIZE_BITS);
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

		if (r == 1 && (reread(w), w->s->nchunks = mark, r = bin(w, a, head, &c, &at)) == 1)
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
	brent_init(&b, h);
	while (h) {
		uint64_t ar, prev, size, mprot;

		if (step(w) < 0)
			return -1;
		if (w->nheaps == MW_SNAP_MAX_HEAPS)
			return mw_snap_halt(w, MW_SNAP_CORRUPT, "more than %d heaps", MW_SNAP_MAX_HEAPS);
		if (field(w, h, g->hi_ar_ptr, &ar) < 0 || field(w, h, g->hi_prev, &prev) < 0 ||
		    field(w, h, g->hi_size, &size) < 0 ||
		    field(w, h, g->hi_mprotect_size, &mprot) < 0)
			return -1;
		if (ar != a->addr)
			return bad(w, "heap 0x%llx does not belong to its arena", h);
		if (a->nheaps == cap)
			xgrow((void **)&a->heaps, a->nheaps, &cap, sizeof(*a->heaps));
		a->heaps[a->nheaps++] = (struct mw_snap_heap){ .addr = h, .size = size,
							       .mprotect_size = mprot };
		w->nheaps++;
		a->heap_bytes += size;
		a->heap_mprotect += mprot;
		h = prev;
		if (h && brent_loops(&b, h)) {
			*at = h;
			return 1;
		}
	}
	return 0;
}

/* The heaps of a non-main arena, from its top's heap back; a loop is
 * walked again: found again, it is proved. */
static int heaps(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize)
{
	uint64_t max = hp_pagesize ? hp_pagesize * 4 : HEAP_MAX_SIZE, h = a->top & ~(max - 1), at;
	int r = heap_chain(w, a, h, &at);

	if (r == 1 && (reread(w), r = heap_chain(w, a, h, &at)) == 1)
		return mw_snap_halt(w, MW_SNAP_CORRUPT, "arena 0x%llx: heap_info chain loops at heap "
			    "0x%llx", (unsigned long long)a->addr, (unsigned long long)at);
	return r;
}

/* One arena's header fields (read again after the walk to compare). */
struct header {
	uint64_t top, next, system_mem;
};

static int header(struct walk *w, uint64_t addr, struct header *h)
{
	const struct mw_glibc *g = w->g;

	return field(w, addr, g->ms_top, &h->top) < 0 || field(w, addr, g->ms_next, &h->next) < 0 ||
	       field(w, addr, g->ms_system_mem, &h->system_mem) < 0 ? -1 : 0;
}

/* The arena at addr in s, or NULL. */
static const struct mw_snap_arena *mw_snapshot_arena(const struct mw_snapshot *s, uint64_t addr)
{
	for (size_t i = 0; i < s->narenas; i++)
		if (s->arenas[i].addr == addr)
			return &s->arenas[i];
	return NULL;
}

/* Arena a's lists, after its header and lock were read (and read again
 * after, from the process): as an earlier walk of this snapshot found
 * them when the process still holds every word it read (snapshot_record.c), else
 * walked in a copy of its memory taken now (procmem.h).  0 or -1. */
static int lists(struct walk *w, struct mw_snap_arena *a)
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

static int arena(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize, uint64_t *next)
{
	const struct mw_glibc *g = w->g;
	struct header before, after;
	int r;

	if (!mw_proc_mapped(w->p, a->addr, (uint64_t)g->mstate_size))
		return bad(w, "arena 0x%llx is not mapped", a->addr);
	mw_snap_arena_lock(w, a, 0);
	if (header(w, a->addr, &before) < 0 ||
	    field(w, a->addr, g->ms_max_system_mem, &a->max_system_mem) < 0 ||
	    field(w, a->addr, g->ms_attached_threads, &a->attached_threads) < 0)
		return -1;
	a->top = before.top;
	a->system_mem = before.system_mem;
	*next = before.next;
	/* main_arena of a process that never called malloc: its top is set
	 * by malloc_init_state() at the first call (malloc.c), nothing to
	 * walk yet */
	if (a->is_main && !a->top && !a->system_mem)
		goto reread;
	if (chunk_ok(w, a->top, g->ch_size) < 0 || word(w, a->top + (uint64_t)g->ch_size.off, &a->top_size) < 0)
		return -1;
	a->top_size &= ~SIZE_BITS;
	a->rest_count = 1;	/* the top always exists */
	a->rest_bytes = a->top_size;
	a->free_bytes = a->top_size;
	a->chunk0 = w->s->nchunks;
	r = w->headers_only ? 0 : lists(w, a);
	if (r < 0)
		return -1;
	a->nchunks = w->s->nchunks - a->chunk0;
	if (!a->is_main && heaps(w, a, hp_pagesize) < 0)
		return -1;
reread:
	if (header(w, a->addr, &after) < 0)
		return -1;
	if (memcmp(&before, &after, sizeof(before)) != 0)
		return bad(w, "arena 0x%llx changed while it was read", a->addr);
	mw_snap_arena_lock(w, a, 1);
	mw_snap_implausible(w, a);	/* marked; the ring is followed on (a loop is
				 * corruption, to be proved, not an inconsistency) */
	return 0;
}

static void read_mp(struct walk *w, uint64_t *hp_pagesize)
{
	const struct mw_glibc *g = w->g;
	struct mw_snapshot *s = w->s;
	uint64_t mp = g->mp;

	field(w, mp, g->mp_trim_threshold, &s->trim_threshold);
	field(w, mp, g->mp_top_pad, &s->top_pad);
	field(w, mp, g->mp_mmap_threshold, &s->mmap_threshold);
	field(w, mp, g->mp_arena_test, &s->arena_test);
	field(w, mp, g->mp_arena_max, &s->arena_max);
	field(w, mp, g->mp_n_mmaps, &s->n_mmaps);
	field(w, mp, g->mp_n_mmaps_max, &s->n_mmaps_max);
	field(w, mp, g->mp_max_n_mmaps, &s->max_n_mmaps);
	field(w, mp, g->mp_no_dyn_threshold, &s->no_dyn_threshold);
	field(w, mp, g->mp_mmapped_mem, &s->mmapped_mem);
	field(w, mp, g->mp_max_mmapped_mem, &s->max_mmapped_mem);
	field(w, mp, g->mp_sbrk_base, &s->sbrk_base);
	field(w, mp, g->mp_hp_pagesize, hp_pagesize);
	if (g->narenas)
		word(w, g->narenas, &s->narenas_glibc);
	if (g->curbrk)
		word(w, g->curbrk, &s->brk);
}

/* Mark the arenas on glibc's free_list (linked through next_free): 0;
 * -1 (marked or halted); 1 when it loops, through *at. */
static int free_list_walk(struct walk *w, uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	struct brent b;
	uint64_t a;

	if (word(w, g->free_list, &a) < 0)
		return -1;
	brent_init(&b, a);
	while (a) {
		struct mw_snap_arena *x = (struct mw_snap_arena *)mw_snapshot_arena(w->s, a);

		if (!x)
			return bad(w, "arena 0x%llx on the free list is not on the ring", a);
		x->on_free_list = 1;
		if (step(w) < 0 || field(w, a, g->ms_next_free, &a) < 0)
			return -1;
		if (a && brent_loops(&b, a)) {
			*at = a;
			return 1;
		}
	}
	return 0;
}

static void free_list(struct walk *w)
{
	uint64_t at;

	if (!w->g->free_list || w->g->ms_next_free.off < 0)
		return;
	if (free_list_walk(w, &at) == 1 && (reread(w), free_list_walk(w, &at)) == 1)
		mw_snap_halt(w, MW_SNAP_CORRUPT, "the arenas' free list loops at arena 0x%llx",
		     (unsigned long long)at);
}

static void totals(struct walk *w)
{
	struct mw_snapshot *s = w->s;
	struct mw_snap_arena *m = &s->arenas[0];
	uint64_t minsize = (uint64_t)w->g->ch_fd_nextsize.off;	/* MINSIZE */
	uint64_t top = m->top_size + m->fast_into_top;	/* after malloc_consolidate */

	s->main_end = m->top + m->top_size;
	/* systrim(0): the top's whole pages beyond MINSIZE, when the break is
	 * still the top's end */
	if (top > minsize + 1 && (!s->brk || s->brk == s->main_end))
		m->trimmable += (top - minsize - 1) & ~(w->page - 1);
	for (size_t i = 0; i < s->narenas; i++) {
		s->system_bytes += s->arenas[i].system_mem;
		s->free_bytes += s->arenas[i].free_bytes;
		s->trimmable += s->arenas[i].trimmable;
	}
	s->in_use_bytes = s->system_bytes > s->free_bytes ? s->system_bytes - s->free_bytes : 0;
}

static void reset(struct mw_snapshot *s)
{
	for (size_t i = 0; i < s->narenas; i++)
		free(s->arenas[i].heaps);
	free(s->arenas);
	s->arenas = NULL;
	s->narenas = 0;
	s->consistent = 1;
	s->why[0] = '\0';
	s->system_bytes = s->free_bytes = s->in_use_bytes = s->trimmable = 0;
}

/* The arena ring again, next pointers only, from main_arena: 1 when it
 * loops without coming back (through *at); 0; -1 (marked or halted). */
static int ring_loops(struct walk *w, uint64_t *at)
{
	uint64_t m = w->g->main_arena, a = m;
	struct brent b;

	brent_init(&b, m);
	for (;;) {
		if (step(w) < 0 || field(w, a, w->g->ms_next, &a) < 0)
			return -1;
		if (!a || a == m)
			return 0;
		if (brent_loops(&b, a)) {
			*at = a;
			return 1;
		}
	}
}

/* The next arena on the ring after one at *a (next): 0 to go on, -1
 * at the ring's end, a loop (confirmed by ring_loops) or a stop. */
static int ring_next(struct walk *w, struct brent *b, uint64_t next, uint64_t *a)
{
	uint64_t at;

	*a = next;
	if (!next || next == w->g->main_arena || w->fatal || w->stop)
		return -1;
	if (!brent_loops(b, next))
		return 0;
	reread(w);
	if (ring_loops(w, &at) == 1)
		mw_snap_halt(w, MW_SNAP_CORRUPT, "the arena ring loops at arena 0x%llx, never back to "
		     "main_arena 0x%llx", (unsigned long long)at,
		     (unsigned long long)w->g->main_arena);
	else
		bad(w, "the arena ring changed while it was read (looped at 0x%llx)", next);
	return -1;
}

void mw_snap_walk(struct walk *w)
{
	struct mw_snapshot *s = w->s;
	uint64_t a = w->g->main_arena, next = 0, hp = 0;
	struct brent b;
	size_t cap = 0;

	reset(s);
	s->nchunks = 0;
	s->chunks_dropped = 0;
	s->chunks_kept = w->keep;
	w->nheaps = 0;
	w->verified = 0;
	w->arenas_locked = 0;
	w->arena_locked = 0;
	w->list_locked = mw_snap_held(w, w->g->list_lock) == 1;
	if (mw_snap_held(w, w->g->free_list_lock) == 1)
		mw_snap_badf(w, "glibc's free_list_lock is held (a thread is taking an arena)");
	read_mp(w, &hp);
	brent_init(&b, a);
	do {
		struct mw_snap_arena *x;

		if (step(w) < 0)
			break;
		if (s->narenas == MW_SNAP_MAX_ARENAS) {
			mw_snap_halt(w, MW_SNAP_CORRUPT, "more than %d arenas on the ring",
			     MW_SNAP_MAX_ARENAS);
			break;
		}
		if (s->narenas == cap)
			xgrow((void **)&s->arenas, s->narenas, &cap, sizeof(*s->arenas));
		x = &s->arenas[s->narenas++];
		memset(x, 0, sizeof(*x));
		x->addr = a;
		x->is_main = a == w->g->main_arena;
		if (arena(w, x, hp, &next) < 0)
			break;
	} while (ring_next(w, &b, next, &a) == 0);
	if (!a && s->consistent && !w->stop)
		mw_snap_badf(w, "the arena ring is broken (a null next)");
	if (!w->fatal && !w->stop)
		free_list(w);
	if (!w->fatal && !w->stop)
		mw_snap_judge_locks(w);
	/* glibc counts an arena before it is on the ring (arena_get2) */
	if (!w->fatal && !w->stop && w->g->narenas && s->narenas != s->narenas_glibc)
		mw_snap_badf(w, "%zu arenas on the ring, glibc counts %llu (an arena is being made)",
		     s->narenas, (unsigned long long)s->narenas_glibc);
	totals(w);
	free(w->fast);	/* the fastbin notes of the last arena */
	w->fast = NULL;
	w->nfast = w->fast_cap = 0;
}


void mw_snapshot_free(struct mw_snapshot *s)
{
	if (!s)
		return;
	reset(s);
	free(s->chunks);
	free(s);
}
