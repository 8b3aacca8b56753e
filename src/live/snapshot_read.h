/* snapshot_read.h - snapshot_read.c's part of the walk (snapshot_int.h
 * includes it once struct walk is whole; not included alone): giving a
 * walk up or marking it, the reads of one word or member, and the step
 * a walk takes a chunk, inline where a walk takes one a chunk. */
#ifndef MALLOCWATCH_SNAPSHOT_READ_H
#define MALLOCWATCH_SNAPSHOT_READ_H

/* Give the snapshot up, without another try: kind MW_SNAP_TIMEOUT, or
 * MW_SNAP_CORRUPT with what is corrupt (the first reason is kept); -1. */
int mw_snap_halt(struct walk *w, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Mark the walk inconsistent (the first reason is kept); -1. */
int mw_snap_badf(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with one number (an address, a size) for the format's one %ll
 * conversion. */
#define mw_snap_bad(w, fmt, v) mw_snap_badf((w), (fmt), (unsigned long long)(v))

/* snapshot_read.c's reads for the walk and its helpers: one word at addr (a failed read
 * marks the walk: -1); one more step (-1: halted); the whole pages
 * malloc_trim(0) could give back in free chunk p of size sz.  The step
 * and the pages are here, inline (a walk takes one a chunk):
 * mw_snap_step_due is the step's rarer part, the budget spent or the
 * deadline looked at (every 32 steps), after the step was counted. */
int mw_snap_word(struct walk *w, uint64_t addr, uint64_t *v);
int mw_snap_step_due(struct walk *w);

static inline int mw_snap_step(struct walk *w)
{
	if (w->stop)
		return -1;
	if (++w->steps > w->max_steps || !(w->steps % 32))
		return mw_snap_step_due(w);
	return 0;
}

/* Whole pages malloc_trim() could release inside free chunk p of size sz
 * (malloc.c, mtrim): past the chunk's header, page-aligned. */
static inline uint64_t mw_snap_chunk_trimmable(const struct walk *w, uint64_t p, uint64_t sz)
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

/* snapshot_read.c's too, for the walk (snapshot.c) and its lists
 * (snapshot_lists.c): a member of the structure at base, of at most 8
 * bytes (0 when absent in this glibc); the copies forgotten before a
 * list that looped is walked again to prove it. */
int mw_snap_field(struct walk *w, uint64_t base, struct mw_member m, uint64_t *v);
void mw_snap_reread(struct walk *w);

/* MALLOC_ALIGNMENT on 64-bit targets: 2 * sizeof(size_t). */
#define MW_SNAP_CHUNK_ALIGN 16ULL

/* Chunk p aligned and mapped up to the end of its member m, the last
 * this walk reads of it: not the whole struct malloc_chunk, which a
 * MINSIZE top at the end of its heap (a state glibc reaches) does not
 * have mapped past its size field's next word.  Then one more step. */
static inline int mw_snap_chunk_ok(struct walk *w, uint64_t p, struct mw_member m)
{
	if (p % MW_SNAP_CHUNK_ALIGN)
		return mw_snap_bad(w, "misaligned chunk 0x%llx", p);
	if (m.off < 0 || m.size <= 0 || !mw_proc_mapped(w->p, p, (uint64_t)m.off + (uint64_t)m.size))
		return mw_snap_bad(w, "chunk 0x%llx is not mapped", p);
	return mw_snap_step(w);
}

#endif /* MALLOCWATCH_SNAPSHOT_READ_H */
