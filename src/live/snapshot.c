/* snapshot.c - walk glibc's arenas in a live process; see snapshot.h.
 * An arena's lists are followed in snapshot_lists.c. */
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
#define field mw_snap_field
#define chunk_ok mw_snap_chunk_ok
#define reread mw_snap_reread
#define brent_init mw_snap_brent_init
#define brent_loops mw_snap_brent_loops

/* glibc's chunk flag bits (malloc.c: PREV_INUSE, IS_MMAPPED,
 * NON_MAIN_ARENA), masked off by chunksize(). */
#define SIZE_BITS 7ULL

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
	r = w->headers_only ? 0 : mw_snap_lists(w, a);
	if (r < 0)
		return -1;
	a->nchunks = w->s->nchunks - a->chunk0;
	if (!a->is_main && mw_snap_heaps(w, a, hp_pagesize) < 0)
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
