/* snapshot.c - walk glibc's arenas in a live process; see snapshot.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "snapshot.h"
#include "xalloc.h"

/* glibc's chunk flag bits (malloc.c: PREV_INUSE, IS_MMAPPED,
 * NON_MAIN_ARENA), masked off by chunksize(). */
#define SIZE_BITS 7ULL
/* MALLOC_ALIGNMENT on 64-bit targets: 2 * sizeof(size_t). */
#define CHUNK_ALIGN 16ULL
/* heap_for_ptr(): heaps are aligned to HEAP_MAX_SIZE (arena.c), which is
 * 2 * DEFAULT_MMAP_THRESHOLD_MAX = 2 * 4 MiB * sizeof(long), or four huge
 * pages when mp_.hp_pagesize is set (2.35+). */
#define HEAP_MAX_SIZE (2ULL * 4 * 1024 * 1024 * sizeof(long))

struct walk {
	struct mw_proc *p;
	const struct mw_glibc *g;
	struct mw_snapshot *s;
	uint64_t chunks;	/* free chunks followed so far */
	uint64_t page;
	int fatal;		/* the process is gone or unreadable */
	int headers_only;	/* mw_snapshot_sample: no bins followed */
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Mark the snapshot inconsistent (the first reason is kept); -1. */
static int bad(struct walk *w, const char *fmt, uint64_t v)
{
	if (w->s->consistent) {
		w->s->consistent = 0;
		snprintf(w->s->why, sizeof(w->s->why), fmt, (unsigned long long)v);
	}
	return -1;
}

/* One word at addr; a failed read marks the walk (and, when the process
 * is gone or refuses, the whole snapshot). */
static int word(struct walk *w, uint64_t addr, uint64_t *v)
{
	if (mw_proc_word(w->p, addr, v) == 0)
		return 0;
	if (errno == ESRCH || errno == EPERM || errno == EACCES)
		w->fatal = errno;
	return bad(w, "cannot read 0x%llx (not mapped, or unmapped meanwhile)", addr);
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

static int chunk_ok(struct walk *w, uint64_t p)
{
	if (p % CHUNK_ALIGN)
		return bad(w, "misaligned chunk 0x%llx", p);
	if (!mw_proc_mapped(w->p, p, (uint64_t)w->g->chunk_struct_size))
		return bad(w, "chunk 0x%llx is not mapped", p);
	if (++w->chunks > MW_SNAP_MAX_CHUNKS)
		return bad(w, "more than %llu free chunks: gave up", MW_SNAP_MAX_CHUNKS);
	return 0;
}

/* The fastbins, as malloc_info counts them. */
static int fastbins(struct walk *w, struct mw_snap_arena *a)
{
	const struct mw_glibc *g = w->g;

	for (int i = 0; i < g->nfastbins; i++) {
		uint64_t p, sz, n = 0, first = 0;

		if (word(w, a->addr + (uint64_t)g->ms_fastbins.off +
			    (uint64_t)g->fastbin_slot * (uint64_t)i, &p) < 0)
			return -1;
		while (p) {
			uint64_t fdaddr = p + (uint64_t)g->ch_fd.off, fd;

			if (chunk_ok(w, p) < 0 || word(w, p + (uint64_t)g->ch_size.off, &sz) < 0 ||
			    word(w, fdaddr, &fd) < 0)
				return -1;
			if (!n)
				first = sz & ~SIZE_BITS;
			n++;
			a->free_bytes += sz & ~SIZE_BITS;
			p = g->safe_linking ? (fdaddr >> 12) ^ fd : fd;	/* REVEAL_PTR */
		}
		a->fast_count += n;
		a->fast_bytes += n * first;
	}
	return 0;
}

/* Whole pages malloc_trim() could release inside free chunk p of size sz
 * (malloc.c, mtrim): past the chunk's header, page-aligned. */
static uint64_t chunk_trimmable(const struct walk *w, uint64_t p, uint64_t sz)
{
	uint64_t psm1 = w->page - 1, hdr = (uint64_t)w->g->chunk_struct_size, aligned;

	if (sz <= psm1 + hdr)
		return 0;
	aligned = (p + hdr + psm1) & ~psm1;
	if (p + sz <= aligned)
		return 0;
	sz -= aligned - p;
	return sz > psm1 ? sz & ~psm1 : 0;
}

/* Bins 1..NBINS-1: circular lists through fd, headed inside the arena. */
static int bins(struct walk *w, struct mw_snap_arena *a)
{
	const struct mw_glibc *g = w->g;
	int nbins = g->nbin_slots / 2 + 1;

	for (int i = 1; i < nbins; i++) {
		/* bin_at(): a fake chunk whose fd overlays bins[(i-1)*2] */
		uint64_t head = a->addr + (uint64_t)g->ms_bins.off +
				(uint64_t)(i - 1) * 2 * (uint64_t)g->bin_slot -
				(uint64_t)g->ch_fd.off, r, sz;

		if (word(w, head + (uint64_t)g->ch_fd.off, &r) < 0)
			return -1;
		while (r && r != head) {
			if (chunk_ok(w, r) < 0 || word(w, r + (uint64_t)g->ch_size.off, &sz) < 0)
				return -1;
			a->rest_count++;
			a->rest_bytes += sz;	/* chunksize_nomask, as malloc_info */
			a->free_bytes += sz & ~SIZE_BITS;
			a->trimmable += chunk_trimmable(w, r, sz & ~SIZE_BITS);
			if (word(w, r + (uint64_t)g->ch_fd.off, &r) < 0)
				return -1;
		}
	}
	return 0;
}

/* The heap_info chain of a non-main arena, from its top's heap back. */
static int heaps(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize)
{
	const struct mw_glibc *g = w->g;
	uint64_t max = hp_pagesize ? hp_pagesize * 4 : HEAP_MAX_SIZE, h = a->top & ~(max - 1);
	size_t cap = 0;

	while (h) {
		uint64_t ar, prev, size, mprot;

		if (a->nheaps == MW_SNAP_MAX_HEAPS)
			return bad(w, "more than %llu heaps in one arena: a cycle?",
				   MW_SNAP_MAX_HEAPS);
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
		a->heap_bytes += size;
		a->heap_mprotect += mprot;
		h = prev;
	}
	return 0;
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

static int arena(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize, uint64_t *next)
{
	const struct mw_glibc *g = w->g;
	struct header before, after;

	if (!mw_proc_mapped(w->p, a->addr, (uint64_t)g->mstate_size))
		return bad(w, "arena 0x%llx is not mapped", a->addr);
	if (header(w, a->addr, &before) < 0 ||
	    field(w, a->addr, g->ms_max_system_mem, &a->max_system_mem) < 0 ||
	    field(w, a->addr, g->ms_attached_threads, &a->attached_threads) < 0)
		return -1;
	a->top = before.top;
	a->system_mem = before.system_mem;
	*next = before.next;
	if (chunk_ok(w, a->top) < 0 || word(w, a->top + (uint64_t)g->ch_size.off, &a->top_size) < 0)
		return -1;
	a->top_size &= ~SIZE_BITS;
	a->rest_count = 1;	/* the top always exists */
	a->rest_bytes = a->top_size;
	a->free_bytes = a->top_size;
	if ((!w->headers_only && (fastbins(w, a) < 0 || bins(w, a) < 0)) ||
	    (!a->is_main && heaps(w, a, hp_pagesize) < 0))
		return -1;
	if (header(w, a->addr, &after) < 0)
		return -1;
	if (memcmp(&before, &after, sizeof(before)) != 0)
		return bad(w, "arena 0x%llx changed while it was read", a->addr);
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

/* Mark the arenas on glibc's free_list (linked through next_free). */
static void free_list(struct walk *w)
{
	const struct mw_glibc *g = w->g;
	uint64_t a;

	if (!g->free_list || g->ms_next_free.off < 0 || word(w, g->free_list, &a) < 0)
		return;
	for (size_t steps = 0; a && steps < MW_SNAP_MAX_ARENAS; steps++) {
		struct mw_snap_arena *x = (struct mw_snap_arena *)mw_snapshot_arena(w->s, a);

		if (!x) {
			bad(w, "arena 0x%llx on the free list is not on the ring", a);
			return;
		}
		x->on_free_list = 1;
		if (field(w, a, g->ms_next_free, &a) < 0)
			return;
	}
}

static void totals(struct walk *w)
{
	struct mw_snapshot *s = w->s;
	struct mw_snap_arena *m = &s->arenas[0];
	uint64_t minsize = (uint64_t)w->g->ch_fd_nextsize.off;	/* MINSIZE */

	s->main_end = m->top + m->top_size;
	/* systrim(0): the top's whole pages beyond MINSIZE, when the break is
	 * still the top's end */
	if (m->top_size > minsize + 1 && (!s->brk || s->brk == s->main_end))
		m->trimmable += (m->top_size - minsize - 1) & ~(w->page - 1);
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

/* One walk of everything. */
static void walk(struct walk *w)
{
	struct mw_snapshot *s = w->s;
	uint64_t a = w->g->main_arena, next, hp = 0;
	size_t cap = 0;

	reset(s);
	w->chunks = 0;
	read_mp(w, &hp);
	do {
		struct mw_snap_arena *x;

		if (s->narenas == MW_SNAP_MAX_ARENAS) {
			bad(w, "more than %llu arenas: a broken ring?", MW_SNAP_MAX_ARENAS);
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
		a = next;
	} while (a && a != w->g->main_arena && !w->fatal);
	if (!a && s->consistent)
		bad(w, "the arena ring is broken (a null next)", 0);
	if (!w->fatal)
		free_list(w);
	totals(w);
}

static int take(struct mw_proc *p, const struct mw_glibc *g, int headers_only,
		struct mw_snapshot **out, char *err, size_t errlen)
{
	struct mw_snapshot *s = xcalloc(1, sizeof(*s));
	struct walk w = { .p = p, .g = g, .s = s, .page = (uint64_t)sysconf(_SC_PAGESIZE),
			  .headers_only = headers_only };
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	s->pid = p->pid;
	snprintf(s->libc, sizeof(s->libc), "%s", g->module);
	snprintf(s->dwarf_file, sizeof(s->dwarf_file), "%s", g->dwarf_file);
	s->glibc_minor = g->version_minor;
	s->taken_ns = now_ns(CLOCK_REALTIME);
	for (s->tries = 1;; s->tries++) {
		walk(&w);
		if (s->consistent || w.fatal || s->tries == MW_SNAP_TRIES)
			break;
		mw_proc_refresh(p, err, errlen);	/* it may have mapped new heaps */
	}
	s->duration_ns = now_ns(CLOCK_MONOTONIC) - t0;
	if (w.fatal) {
		if (w.fatal == ESRCH || !mw_process_alive(p->pid))
			snprintf(err, errlen, "process %d exited while it was read", (int)p->pid);
		else
			snprintf(err, errlen, "cannot read process %d's memory: %s", (int)p->pid,
				 strerror(w.fatal));
		mw_snapshot_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int mw_snapshot_take(struct mw_proc *p, const struct mw_glibc *g,
		     struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 0, out, err, errlen);
}

int mw_snapshot_sample(struct mw_proc *p, const struct mw_glibc *g,
		       struct mw_snapshot **out, char *err, size_t errlen)
{
	return take(p, g, 1, out, err, errlen);
}

int mw_snapshot_read(pid_t pid, struct mw_glibc *g, struct mw_snapshot **out, char *err,
		     size_t errlen)
{
	struct mw_proc p;
	int ret;

	if (mw_proc_open(&p, pid, err, errlen) < 0)
		return -1;
	ret = mw_snapshot_take(&p, g, out, err, errlen);
	mw_proc_close(&p);
	return ret;
}

const struct mw_snap_arena *mw_snapshot_arena(const struct mw_snapshot *s, uint64_t addr)
{
	for (size_t i = 0; i < s->narenas; i++)
		if (s->arenas[i].addr == addr)
			return &s->arenas[i];
	return NULL;
}

void mw_snapshot_free(struct mw_snapshot *s)
{
	if (!s)
		return;
	reset(s);
	free(s);
}
