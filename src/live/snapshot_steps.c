/* snapshot_steps.c - one step along a free list of an arena (snapshot_int.h:
 * struct mw_snap_cursor): a fastbin's or a bin's next chunk checked, read,
 * kept and counted.  snapshot_lists.c walks a list with them alone, or all
 * of an arena's lists side by side; below it, it calls nothing of it. */
#include <errno.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_int.h"
#include "xalloc.h"

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
static inline void keep(struct walk *w, uint64_t p, uint64_t sz)
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

int mw_snap_cursor_fast(struct walk *w, const struct mw_snap_arena *a, int i,
			struct mw_snap_cursor *k)
{
	const struct mw_glibc *g = w->g;

	memset(k, 0, sizeof(*k));
	k->a = a;
	k->fast = 1;
	if (mw_snap_word(w, a->addr + (uint64_t)g->ms_fastbins.off + (uint64_t)g->fastbin_slot *
		    (uint64_t)i, &k->p) < 0)
		return -1;
	mw_snap_brent_init(&k->b, k->p);
	k->done = !k->p;
	return 0;
}

int mw_snap_cursor_bin(struct walk *w, const struct mw_snap_arena *a, int i,
		       struct mw_snap_cursor *k)
{
	const struct mw_glibc *g = w->g;

	memset(k, 0, sizeof(*k));
	k->a = a;
	/* bin_at(): a fake chunk whose fd overlays bins[(i-1)*2] */
	k->head = a->addr + (uint64_t)g->ms_bins.off + (uint64_t)(i - 1) * 2 * (uint64_t)g->bin_slot -
		  (uint64_t)g->ch_fd.off;
	if (mw_snap_word(w, k->head + (uint64_t)g->ch_fd.off, &k->p) < 0)
		return -1;
	mw_snap_brent_init(&k->b, k->head);
	k->done = !k->p || k->p == k->head;
	return 0;
}

/* Fastbin chunk k->p: checked, read, kept, noted and counted. */
static int fast_step(struct walk *w, struct mw_snap_cursor *k, uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	uint64_t p = k->p, fdaddr = p + (uint64_t)g->ch_fd.off, fd, sz;

	if (in_arena(w, k->a, p))	/* consolidated into a bin meanwhile */
		return mw_snap_bad(w, "fastbin list ran into arena 0x%llx", k->a->addr);
	if (mw_snap_chunk_ok(w, p, g->ch_fd) < 0 || chunk_words(w, p, &sz, &fd) < 0)
		return -1;
	/* the chunk after this one (fast_note), and the next ones */
	mw_proc_prefetch(w->p, p + (sz & ~MW_SNAP_SIZE_BITS) + (uint64_t)g->ch_size.off);
	prefetch_next(w, p, g->safe_linking ? (fdaddr >> 12) ^ fd : fd);
	if (!mw_proc_mapped(w->p, p, sz & ~MW_SNAP_SIZE_BITS))
		return mw_snap_bad(w, "free chunk 0x%llx reaches beyond the mappings", p);
	if (!k->c.n)
		k->c.first = sz & ~MW_SNAP_SIZE_BITS;
	keep(w, p, (sz & ~MW_SNAP_SIZE_BITS) | MW_SNAP_CHUNK_FAST);
	if (mw_snap_fast_note(w, k->a, p, sz) < 0)
		return -1;
	k->c.n++;
	k->c.bytes += sz & ~MW_SNAP_SIZE_BITS;
	k->p = g->safe_linking ? (fdaddr >> 12) ^ fd : fd;	/* REVEAL_PTR */
	if (k->p && mw_snap_brent_loops(&k->b, k->p)) {
		*at = k->p;
		return 2;
	}
	return (k->done = !k->p);
}

/* Bin chunk k->p: checked, read, kept and counted. */
static int bin_step(struct walk *w, struct mw_snap_cursor *k, uint64_t *at)
{
	const struct mw_glibc *g = w->g;
	uint64_t r = k->p, sz, fd;

	if (mw_snap_brent_loops(&k->b, r)) {
		*at = r;
		return 2;
	}
	if (in_arena(w, k->a, r))	/* another bin's head: a chunk moved meanwhile */
		return mw_snap_bad(w, "bin list ran into another bin of arena 0x%llx", k->a->addr);
	if (mw_snap_chunk_ok(w, r, g->ch_fd) < 0 || chunk_words(w, r, &sz, &fd) < 0)
		return -1;
	prefetch_next(w, r, fd);
	if (!mw_proc_mapped(w->p, r, sz & ~MW_SNAP_SIZE_BITS))
		return mw_snap_bad(w, "free chunk 0x%llx reaches beyond the mappings", r);
	keep(w, r, sz & ~MW_SNAP_SIZE_BITS);
	k->c.n++;
	k->c.raw += sz;	/* chunksize_nomask, as malloc_info */
	k->c.bytes += sz & ~MW_SNAP_SIZE_BITS;
	k->c.trimmable += mw_snap_chunk_trimmable(w, r, sz & ~MW_SNAP_SIZE_BITS);
	k->p = fd;
	return (k->done = !fd || fd == k->head);
}

int mw_snap_cursor_step(struct walk *w, struct mw_snap_cursor *k, uint64_t *at)
{
	return k->fast ? fast_step(w, k, at) : bin_step(w, k, at);
}
