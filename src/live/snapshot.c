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

/* One arena's header fields (read again after the walk to compare). */
struct header {
	uint64_t top, next, system_mem;
};

static int header(struct walk *w, uint64_t addr, struct header *h)
{
	const struct mw_glibc *g = w->g;

	return mw_snap_field(w, addr, g->ms_top, &h->top) < 0 ||
	       mw_snap_field(w, addr, g->ms_next, &h->next) < 0 ||
	       mw_snap_field(w, addr, g->ms_system_mem, &h->system_mem) < 0 ? -1 : 0;
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
		return mw_snap_bad(w, "arena 0x%llx is not mapped", a->addr);
	mw_snap_arena_lock(w, a, 0);
	if (header(w, a->addr, &before) < 0 ||
	    mw_snap_field(w, a->addr, g->ms_max_system_mem, &a->max_system_mem) < 0 ||
	    mw_snap_field(w, a->addr, g->ms_attached_threads, &a->attached_threads) < 0)
		return -1;
	a->top = before.top;
	a->system_mem = before.system_mem;
	*next = before.next;
	/* main_arena of a process that never called malloc: its top is set
	 * by malloc_init_state() at the first call (malloc.c), nothing to
	 * walk yet */
	if (a->is_main && !a->top && !a->system_mem)
		goto reread;
	if (mw_snap_chunk_ok(w, a->top, g->ch_size) < 0 ||
	    mw_snap_word(w, a->top + (uint64_t)g->ch_size.off, &a->top_size) < 0)
		return -1;
	a->top_size &= ~MW_SNAP_SIZE_BITS;
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
		return mw_snap_bad(w, "arena 0x%llx changed while it was read", a->addr);
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

	mw_snap_field(w, mp, g->mp_trim_threshold, &s->trim_threshold);
	mw_snap_field(w, mp, g->mp_top_pad, &s->top_pad);
	mw_snap_field(w, mp, g->mp_mmap_threshold, &s->mmap_threshold);
	mw_snap_field(w, mp, g->mp_arena_test, &s->arena_test);
	mw_snap_field(w, mp, g->mp_arena_max, &s->arena_max);
	mw_snap_field(w, mp, g->mp_n_mmaps, &s->n_mmaps);
	mw_snap_field(w, mp, g->mp_n_mmaps_max, &s->n_mmaps_max);
	mw_snap_field(w, mp, g->mp_max_n_mmaps, &s->max_n_mmaps);
	mw_snap_field(w, mp, g->mp_no_dyn_threshold, &s->no_dyn_threshold);
	mw_snap_field(w, mp, g->mp_mmapped_mem, &s->mmapped_mem);
	mw_snap_field(w, mp, g->mp_max_mmapped_mem, &s->max_mmapped_mem);
	mw_snap_field(w, mp, g->mp_sbrk_base, &s->sbrk_base);
	mw_snap_field(w, mp, g->mp_hp_pagesize, hp_pagesize);
	if (g->narenas)
		mw_snap_word(w, g->narenas, &s->narenas_glibc);
	if (g->curbrk)
		mw_snap_word(w, g->curbrk, &s->brk);
}

/* Mark the arenas on glibc's free_list (linked through next_free): 0;
 * -1 (marked or halted); 1 when it loops, through *at. */
static int free_list_walk(struct walk *w, uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	struct brent b;
	uint64_t a;

	if (mw_snap_word(w, g->free_list, &a) < 0)
		return -1;
	mw_snap_brent_init(&b, a);
	while (a) {
		struct mw_snap_arena *x = (struct mw_snap_arena *)mw_snapshot_arena(w->s, a);

		if (!x)
			return mw_snap_bad(w, "arena 0x%llx on the free list is not on the ring", a);
		x->on_free_list = 1;
		if (mw_snap_step(w) < 0 || mw_snap_field(w, a, g->ms_next_free, &a) < 0)
			return -1;
		if (a && mw_snap_brent_loops(&b, a)) {
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
	if (free_list_walk(w, &at) == 1 && (mw_snap_reread(w), free_list_walk(w, &at)) == 1)
		mw_snap_halt(w, MW_SNAP_CORRUPT, "the arenas' free list loops at arena 0x%llx",
		     (unsigned long long)at);
}

static void totals(struct walk *w)
{
	struct mw_snapshot *s = w->s;
	struct mw_snap_arena *m = &s->arenas[0];
	uint64_t minsize = (uint64_t)w->g->ch_fd_nextsize.off;	/* MINSIZE */
	uint64_t top;

	if (!s->narenas)	/* stopped before the first arena (its time
				 * spent, the process gone): no figures */
		return;
	top = m->top_size + m->fast_into_top;	/* after malloc_consolidate */
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

	mw_snap_brent_init(&b, m);
	for (;;) {
		if (mw_snap_step(w) < 0 || mw_snap_field(w, a, w->g->ms_next, &a) < 0)
			return -1;
		if (!a || a == m)
			return 0;
		if (mw_snap_brent_loops(&b, a)) {
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
	if (!mw_snap_brent_loops(b, next))
		return 0;
	mw_snap_reread(w);
	if (ring_loops(w, &at) == 1)
		mw_snap_halt(w, MW_SNAP_CORRUPT, "the arena ring loops at arena 0x%llx, never back to "
		     "main_arena 0x%llx", (unsigned long long)at,
		     (unsigned long long)w->g->main_arena);
	else
		mw_snap_bad(w, "the arena ring changed while it was read (looped at 0x%llx)", next);
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
	mw_snap_brent_init(&b, a);
	do {
		struct mw_snap_arena *x;

		if (mw_snap_step(w) < 0)
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
