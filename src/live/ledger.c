/* ledger.c - the RSS ledger and the arenas' fragmentation; see ledger.h.
 *
 * The arenas' regions, the mmapped chunks and the free intervals (free
 * chunks and tops) are each sorted by address, and every page of the
 * mappings that hold them is visited once, in address order, with a
 * cursor into each list: a page's bytes are split between the free
 * intervals over it, the top, the region's slack and what is left (in
 * use), and it goes to the ledger as resident or not by its pagemap word.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ledger.h"
#include "ledger_int.h"
#include "xalloc.h"

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define REGION_MAX (1ULL << 32)		/* a heap (4 x 1 GiB huge pages at most) */
#define MAIN_MAX (1ULL << 44)		/* the main heap */
#define PAGEMAP_BLOCK 65536		/* words read at once */

/* A free interval of an arena (a chunk, or its top), or a range that
 * malloc_trim(0) would give back. */
struct sweep {
	struct mw_ledger *l;
	uint64_t page, zero_pfn;
	struct lg_range *r;	/* regions and mmapped chunks, sorted */
	size_t nr, ri;
	struct lg_ival *fv, *tv;	/* free intervals; trim ranges (sorted) */
	size_t nf, fi, nt, ti;
	uint64_t pages;		/* pagemap words read, at most MW_LEDGER_MAX_PAGES */
	uint64_t by;		/* CLOCK_MONOTONIC ns to be done by; 0 no bound */
};

/* Past sw's time (mw_ledger_read_by)?  Then errno ETIME. */
static int late(const struct sweep *sw)
{
	if (!sw->by || mw_now_ns() <= sw->by)
		return 0;
	errno = ETIME;
	return 1;
}

int mw_frag_bucket(uint64_t size)
{
	int b = 0;

	for (size >>= 6; size && b < MW_FRAG_BUCKETS - 1; size >>= 1)
		b++;
	return b;
}

static int by_start_r(const void *a, const void *b)
{
	const struct lg_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_start_i(const void *a, const void *b)
{
	const struct lg_ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* lg_sort_ivals (ledger_int.h): a stable LSD radix sort, RADIX bits a pass (a
 * count table in the L1 cache), the passes whose digit is the same in
 * every key skipped (the top bits of a user address); every pass's counts
 * taken in one read of v.  Measured on 2 million free chunks: 70-80 ms
 * where qsort's merge sort took 150-200 ms of a held trim (issue 44);
 * 55-60 ms with its buffer in huge pages (xmalloc_big). */
#define RADIX 12
#define PASSES ((64 + RADIX - 1) / RADIX)
void lg_sort_ivals(struct lg_ival *v, size_t n)
{
	const uint64_t mask = (1U << RADIX) - 1;
	struct lg_ival *tmp, *src = v, *dst;
	size_t (*count)[1U << RADIX];

	if (n < 2)
		return;
	if (n < 4096) {
		qsort(v, n, sizeof(*v), by_start_i);
		return;
	}
	tmp = xmalloc_big(n, sizeof(*v));
	count = xcalloc(PASSES, sizeof(*count));
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < PASSES; p++)
			count[p][(v[i].s >> (p * RADIX)) & mask]++;
	dst = tmp;
	for (int p = 0; p < PASSES; p++) {
		const int shift = p * RADIX;
		size_t sum = 0;

		if (count[p][(src[0].s >> shift) & mask] == n)
			continue;	/* one digit for all: nothing to move */
		for (size_t d = 0; d <= mask; d++) {
			size_t c = count[p][d];

			count[p][d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[p][(src[i].s >> shift) & mask]++] = src[i];
		dst = src;
		src = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(count);
	free(tmp);
}

static void incomplete(struct mw_ledger *l, const char *why)
{
	if (!l->incomplete)
		snprintf(l->why, sizeof(l->why), "%s", why);
	l->incomplete = 1;
}

static void add_range(struct lg_range **r, size_t *n, size_t *cap, struct lg_range x)
{
	if (*n == *cap)
		xgrow((void **)r, *n, cap, sizeof(**r));
	(*r)[(*n)++] = x;
}

/* The arenas' regions into *r: main_arena's heap from sbrk_base to the
 * break (or its top's end), each heap from its heap_info to its
 * mprotect_size (or size), page aligned; their chunks from past the
 * headers to the top's end or heap_info.size. */
static void regions(struct mw_ledger *l, const struct mw_snapshot *s, struct lg_range **r,
		    size_t *n, size_t *cap)
{
	uint64_t pm1 = l->page - 1, hisz = 0;

	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];

		if (!a->is_main && a->nheaps && a->addr > a->heaps[a->nheaps - 1].addr &&
		    a->addr - a->heaps[a->nheaps - 1].addr <= 256) {
			hisz = a->addr - a->heaps[a->nheaps - 1].addr;	/* sizeof(heap_info) */
			break;
		}
	}
	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];

		if (a->is_main) {
			uint64_t end = s->brk > s->main_end ? s->brk : s->main_end;

			if (!s->sbrk_base && !a->system_mem)
				continue;	/* never used: no heap yet, nothing missing */
			if (!s->sbrk_base || s->main_end <= s->sbrk_base ||
			    end - s->sbrk_base > MAIN_MAX) {
				incomplete(l, "main_arena's heap has no sane extent");
				continue;
			}
			add_range(r, n, cap, (struct lg_range){ .start = s->sbrk_base & ~pm1,
				.end = (end + pm1) & ~pm1, .cstart = (s->sbrk_base + 15) & ~15ULL,
				.cend = s->main_end, .arena = (int)i });
			continue;
		}
		for (size_t j = 0; j < a->nheaps; j++) {
			const struct mw_snap_heap *h = &a->heaps[j];
			uint64_t len = h->mprotect_size > h->size ? h->mprotect_size : h->size,
				 cs = h->addr + hisz;

			if ((h->addr & pm1) || len > REGION_MAX || h->size < hisz) {
				incomplete(l, "a heap_info's address or size is not sane");
				continue;
			}
			if (j == a->nheaps - 1 && a->addr + s->mstate_size > cs)	/* the arena's own */
				cs = (a->addr + s->mstate_size + 15) & ~15ULL;
			add_range(r, n, cap, (struct lg_range){ .start = h->addr,
				.end = (h->addr + len + pm1) & ~pm1, .cstart = cs,
				.cend = h->addr + h->size, .arena = (int)i });
		}
	}
}

/* Free intervals that overlap (a list of a hostile heap's leading into a
 * free chunk, or one that changed while it was read): each byte counted
 * once, the first interval's (by start), and the ledger incomplete.
 * sw->fv sorted by start stays so. */
static void disjoint(struct sweep *sw)
{
	uint64_t end = 0;

	for (size_t i = 0; i < sw->nf; i++) {
		struct lg_ival *v = &sw->fv[i];

		if (i && v->s < end) {
			incomplete(sw->l, "free chunks overlap (a hostile heap's lists, or "
				   "ones that changed while read): each byte counted once");
			v->s = end;
			if (v->e < end)
				v->e = end;
		}
		if (v->e > end)
			end = v->e;
	}
}

/* Free intervals (chunks and tops) into sw->fv; the histogram, count
 * and largest free chunk of each arena. */
static void free_intervals(struct sweep *sw, const struct mw_snapshot *s)
{
	size_t cap = s->nchunks + s->narenas;	/* every chunk, every top: at once */

	sw->fv = xmalloc_big(cap ? cap : 1, sizeof(*sw->fv));

	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];
		struct mw_frag *f = &sw->l->arenas[i].f;

		for (size_t j = a->chunk0; j < a->chunk0 + a->nchunks && j < s->nchunks; j++) {
			uint64_t sz = s->chunks[j].size & ~MW_SNAP_CHUNK_FAST;
			int b = mw_frag_bucket(sz);

			f->count[b]++;
			f->bytes[b] += sz;
			f->nfree++;
			if (sz > f->largest)
				f->largest = sz;
			if (sw->nf == cap)
				xgrow((void **)&sw->fv, sw->nf, &cap, sizeof(*sw->fv));
			sw->fv[sw->nf++] = (struct lg_ival){ .s = s->chunks[j].addr,
				.e = s->chunks[j].addr + sz, .arena = (int)i };
		}
		if (sw->nf == cap)
			xgrow((void **)&sw->fv, sw->nf, &cap, sizeof(*sw->fv));
		sw->fv[sw->nf++] = (struct lg_ival){ .s = a->top, .e = a->top + a->top_size,
						  .arena = (int)i, .top = 1 };
	}
	lg_sort_ivals(sw->fv, sw->nf);
	disjoint(sw);
}

/* What malloc_trim(0) would give back (malloc.c mtrim, systrim): runs of
 * adjacent free intervals (malloc_consolidate merges fastbin chunks with
 * their free neighbours and the top); in a run without the top, the
 * whole pages past its first chunk's header; main_arena's top (with what
 * runs into it) down to MINSIZE, when the break is still its end. */
static void trim_ranges(struct sweep *sw, const struct mw_snapshot *s)
{
	uint64_t pm1 = sw->page - 1;
	size_t cap = 0;

	for (size_t i = 0; i < sw->nf;) {
		uint64_t rs = sw->fv[i].s, re = sw->fv[i].e, ts = 0, te = 0;
		int arena = sw->fv[i].arena, top = sw->fv[i].top;

		for (i++; i < sw->nf && sw->fv[i].s == re && sw->fv[i].arena == arena; i++) {
			re = sw->fv[i].e;
			top |= sw->fv[i].top;
		}
		if (!top) {
			ts = (rs + s->chunk_hdr + pm1) & ~pm1;
			te = re & ~pm1;
		} else if (s->arenas[arena].is_main && (!s->brk || s->brk == s->main_end) &&
			   re - rs > s->minsize + 1) {
			te = re;
			ts = re - ((re - rs - s->minsize - 1) & ~pm1);
		}
		if (te <= ts)
			continue;
		if (sw->nt == cap)
			xgrow((void **)&sw->tv, sw->nt, &cap, sizeof(*sw->tv));
		sw->tv[sw->nt++] = (struct lg_ival){ .s = ts, .e = te, .arena = arena };
	}
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t s = a > c ? a : c, e = b < d ? b : d;

	return e > s ? e - s : 0;
}

/* Page pg of region r (an arena's), present or not. */
static void arena_page(struct sweep *sw, const struct lg_range *r, uint64_t pg, int present,
		       int swapped)
{
	struct mw_ledger_arena *a = &sw->l->arenas[r->arena];
	uint64_t ps = sw->page, pe = pg + ps, cs = pg > r->cstart ? pg : r->cstart,
		 ce = pe < r->cend ? pe : r->cend, area = ce > cs ? ce - cs : 0, fr = 0, tp = 0,
		 used;

	while (sw->fi < sw->nf && sw->fv[sw->fi].e <= pg)
		sw->fi++;
	for (size_t j = sw->fi; j < sw->nf && sw->fv[j].s < pe; j++) {
		uint64_t o = area ? overlap(sw->fv[j].s, sw->fv[j].e, cs, ce) : 0;

		if (sw->fv[j].top)
			tp += o;
		else
			fr += o;
	}
	if (fr + tp > area)	/* overlapping intervals: a hostile or changing list */
		fr = area > tp ? area - tp : 0, tp = area - fr;
	used = area - fr - tp;
	if (used)
		a->f.pinned += fr;
	if (swapped)
		a->l.swapped += ps;
	if (!present) {
		a->l.free_returned += fr;
		a->l.top_returned += tp;
		a->l.in_use_gone += used;
		return;
	}
	a->l.rss += ps;
	a->l.in_use += used;
	a->l.free_resident += fr;
	a->l.top += tp;
	a->l.heap_slack += ps - area;
	if (fr == ps)
		a->f.free_pages_resident += ps;
	while (sw->ti < sw->nt && sw->tv[sw->ti].e <= pg)
		sw->ti++;
	if (sw->ti < sw->nt && sw->tv[sw->ti].s <= pg)
		sw->l->arenas[sw->tv[sw->ti].arena].f.trim_now += ps;
}

/* Every page of mapping m, from pagemap: to its region, its mmapped
 * chunk or not_malloc; its present pages set against its Rss. */
/* The not_malloc figure of mappings of kind (LG_*). */
static uint64_t *nm_of(struct mw_ledger *l, int kind)
{
	switch (kind) {
	case LG_FILE: return &l->nm_file;
	case LG_STACK: return &l->nm_stack;
	case LG_KERNEL: return &l->nm_kernel;
	case LG_SHM: return &l->nm_shm;
	default: return &l->nm_anon;
	}
}

static int paged(struct sweep *sw, int fd, const struct lg_vma *m, uint64_t *buf)
{
	struct mw_ledger *l = sw->l;
	uint64_t ps = sw->page, present_bytes = 0;

	for (uint64_t a = m->start; a < m->end;) {
		size_t n = (size_t)((m->end - a) / ps);

		if (n > PAGEMAP_BLOCK)
			n = PAGEMAP_BLOCK;
		if ((sw->pages += n) > MW_LEDGER_MAX_PAGES) {
			incomplete(l, "more pages in malloc's mappings than the ledger reads "
				   "(MW_LEDGER_MAX_PAGES)");
			return 0;
		}
		if (late(sw) || lg_pagemap(fd, a, ps, buf, n) < 0)
			return -1;
		for (size_t k = 0; k < n; k++, a += ps) {
			uint64_t w = buf[k];
			int present = (w & PM_PRESENT) &&
				      !(sw->zero_pfn && (w & PM_PFN_MASK) == sw->zero_pfn),
			    swapped = !!(w & PM_SWAPPED);

			present_bytes += present ? ps : 0;
			while (sw->ri < sw->nr && sw->r[sw->ri].end <= a)
				sw->ri++;
			if (sw->ri < sw->nr && sw->r[sw->ri].start <= a) {
				if (sw->r[sw->ri].arena >= 0) {
					arena_page(sw, &sw->r[sw->ri], a, present, swapped);
				} else {
					l->total.mmapped += present ? ps : 0;
					l->total.mmapped_gone += present ? 0 : ps;
					l->total.swapped += swapped ? ps : 0;
				}
				continue;
			}
			if (!present)
				continue;
			*nm_of(l, m->kind) += ps;
		}
	}
	l->paged_disagree += present_bytes > m->rss ? present_bytes - m->rss :
			     m->rss - present_bytes;
	return 0;
}

static void add_part(struct mw_ledger_part *t, const struct mw_ledger_part *a)
{
	t->rss += a->rss;
	t->in_use += a->in_use;
	t->free_resident += a->free_resident;
	t->free_returned += a->free_returned;
	t->top += a->top;
	t->top_returned += a->top_returned;
	t->heap_slack += a->heap_slack;
	t->swapped += a->swapped;
	t->in_use_gone += a->in_use_gone;
}

static void add_frag(struct mw_frag *t, const struct mw_frag *a)
{
	for (int b = 0; b < MW_FRAG_BUCKETS; b++) {
		t->count[b] += a->count[b];
		t->bytes[b] += a->bytes[b];
	}
	t->nfree += a->nfree;
	t->largest = a->largest > t->largest ? a->largest : t->largest;
	t->pinned += a->pinned;
	t->free_pages_resident += a->free_pages_resident;
	t->trim_now += a->trim_now;
}

/* The totals and the check against smaps_rollup. */
static void totals(struct mw_ledger *l)
{
	struct mw_ledger_part *t = &l->total;
	uint64_t mm = t->mmapped, sw = t->swapped, mg = t->mmapped_gone;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < l->narenas; i++) {
		add_part(t, &l->arenas[i].l);
		add_frag(&l->frag, &l->arenas[i].f);
	}
	t->mmapped = mm;
	t->mmapped_gone = mg;
	t->swapped += sw;
	t->not_malloc = l->nm_stack + l->nm_file + l->nm_anon + l->nm_kernel + l->nm_shm;
	t->rss += t->mmapped + t->not_malloc;
	l->tolerance = (uint64_t)l->nvmas * l->page;
	l->diff = (int64_t)(t->rss - l->rollup_rss);
	l->ok = (l->diff < 0 ? (uint64_t)-l->diff : (uint64_t)l->diff) <= l->tolerance;
}

/* Mark the mappings that hold a range of sw->r (sorted) as paged. */
static void mark_paged(struct sweep *sw, struct lg_vma *v, size_t nv)
{
	size_t j = 0;

	for (size_t i = 0; i < nv; i++) {
		while (j < sw->nr && sw->r[j].end <= v[i].start)
			j++;
		v[i].paged = j < sw->nr && sw->r[j].start < v[i].end;
	}
}

static int count(struct sweep *sw, pid_t pid, struct lg_vma *v, size_t nv, char *err,
		 size_t errlen)
{
	struct mw_ledger *l = sw->l;
	uint64_t *buf = xcalloc(PAGEMAP_BLOCK, sizeof(*buf));
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < nv && ret == 0; i++) {
		if (v[i].paged) {
			l->npaged++;
			if (paged(sw, fd, &v[i], buf) < 0) {
				if (errno == ETIME)
					snprintf(err, errlen, "its read did not end within the "
						 "stop's time (--max-stop)");
				else
					snprintf(err, errlen, "cannot read '%s': %s", path,
						 errno ? strerror(errno) : "short read");
				ret = -1;
			}
			continue;
		}
		*nm_of(l, v[i].kind) += v[i].rss;
		if (v[i].kind == LG_ANON && v[i].rss) {
			l->nm_anon_maps++;
			if (v[i].rss > l->nm_anon_largest)
				l->nm_anon_largest = v[i].rss, l->nm_anon_largest_at = v[i].start;
		}
	}
	close(fd);
	free(buf);
	return ret;
}

int mw_ledger_read(struct mw_proc *p, const struct mw_snapshot *s, struct mw_ledger **out,
		   char *err, size_t errlen)
{
	return mw_ledger_read_by(p, s, 0, out, err, errlen);
}

int mw_ledger_read_by(struct mw_proc *p, const struct mw_snapshot *s, uint64_t by,
		      struct mw_ledger **out, char *err, size_t errlen)
{
	struct mw_ledger *l = xcalloc(1, sizeof(*l));
	struct sweep sw = { .l = l, .by = by };
	struct lg_vma *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t t0 = mw_now_ns();
	int ret = -1;

	l->pid = p->pid;
	l->page = sw.page = (uint64_t)sysconf(_SC_PAGESIZE);
	l->narenas = s->narenas;
	l->arenas = xcalloc(s->narenas ? s->narenas : 1, sizeof(*l->arenas));
	if (!s->chunks_kept)
		incomplete(l, "the snapshot kept no free chunks");
	else if (s->chunks_dropped)
		incomplete(l, "more free chunks than a snapshot keeps (MW_SNAP_MAX_KEPT, 2097152)");
	mw_proc_refresh(p, err, errlen);
	if (lg_read_smaps(p->pid, &v, &nv, err, errlen) < 0)
		goto out;
	l->nvmas = nv;
	l->nstacks = lg_mark_stacks(p->pid, v, nv);
	sw.zero_pfn = lg_zero_pfn();
	l->zero_page_known = sw.zero_pfn != 0;
	regions(l, s, &sw.r, &sw.nr, &cap);
	qsort(sw.r, sw.nr, sizeof(*sw.r), by_start_r);
	for (size_t i = 1; i < sw.nr; i++)
		if (sw.r[i].start < sw.r[i - 1].end) {
			incomplete(l, "two heaps overlap");
			sw.r[i].start = sw.r[i].end = sw.r[i - 1].end;	/* counted once */
		}
	l->mmapped_found = lg_find_mmapped(p, v, nv, sw.page, &sw.r, &sw.nr, &cap);
	for (size_t i = 0; i < sw.nr; i++)
		if (sw.r[i].arena < 0)
			l->mmapped_found_bytes += sw.r[i].end - sw.r[i].start;
	qsort(sw.r, sw.nr, sizeof(*sw.r), by_start_r);
	free_intervals(&sw, s);
	trim_ranges(&sw, s);
	lg_sort_ivals(sw.tv, sw.nt);
	mark_paged(&sw, v, nv);
	if (late(&sw)) {
		snprintf(err, errlen, "its read did not end within the stop's time (--max-stop)");
		goto out;
	}
	if (count(&sw, p->pid, v, nv, err, errlen) < 0)
		goto out;
	if (lg_read_rollup(p->pid, &l->rollup_rss, &l->rollup_swap) < 0) {
		snprintf(err, errlen, "cannot read '/proc/%d/smaps_rollup'", (int)p->pid);
		goto out;
	}
	l->peak_rss = lg_peak_rss(p->pid);
	totals(l);
	l->readings = 1;
	l->read_ns = mw_now_ns() - t0;
	ret = 0;
out:
	free(v);
	free(sw.r);
	free(sw.fv);
	free(sw.tv);
	if (ret < 0)
		mw_ledger_free(l);
	else
		*out = l;
	return ret;
}

void mw_ledger_free(struct mw_ledger *l)
{
	if (!l)
		return;
	free(l->arenas);
	free(l);
}
