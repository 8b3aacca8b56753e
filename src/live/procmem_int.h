/* procmem_int.h - what procmem.c (the copies of a process's memory),
 * procblocks.c (their blocks), procmarks.c (the marks of the words read
 * from them) and procahead.c (the blocks read ahead of a walk) share.  Not a public interface:
 * procmem.h is. */
#ifndef MALLOCWATCH_PROCMEM_INT_H
#define MALLOCWATCH_PROCMEM_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmem.h"

/* The copies (procmem.h): reads of another process served from copies of
 * its memory, MW_PROC_BLOCK bytes at a time: a walk of 2 million free
 * chunks in 443 MiB makes some 7,000 reads instead of 4 million, and a
 * walk of an idle process's few free chunks copies a few blocks.  A block
 * copied is known (its place in the table, its marks) until the copies
 * are forgotten; its bytes are held in one of POOL_BLOCKS buffers, used
 * again for another block once the walk has gone on (the one whose copy
 * was begun longest ago, round a ring): a walk of lists side by side goes through a heap
 * once, and buffers used again cost nothing more, where fresh ones cost
 * the kernel's page faults (2-7 ms a MiB here, docs/performance.md). */
#define MAX_BLOCKS (MW_PROC_COPY_MAX / MW_PROC_BLOCK)
#define TABLE_BITS 15	/* 2 x MAX_BLOCKS slots */
#define TABLE (1U << TABLE_BITS)
_Static_assert(TABLE == 2 * MAX_BLOCKS, "the table has room for every block twice over");
#define POOL_BYTES (16U << 20)
#define POOL_BLOCKS (POOL_BYTES / MW_PROC_BLOCK)
/* Buffers come in slabs: the first of FIRST_SLAB bytes in 4 KiB pages
 * (an idle process's few small blocks fault in a few pages), the others
 * of SLAB bytes, each asked to be backed by huge pages (2 MiB on x86_64):
 * filling them takes 1/512 of the page faults. */
#define FIRST_SLAB (4U << 20)
#define SLAB (4U << 20)
#define FIRST_BLOCKS (FIRST_SLAB / MW_PROC_BLOCK)
#define PER_SLAB (SLAB / MW_PROC_BLOCK)
#define NSLABS (1 + (MAX_BLOCKS - FIRST_BLOCKS + PER_SLAB - 1) / PER_SLAB)
/* Blocks copied again before the pool may grow past POOL_BLOCKS (up to a
 * buffer a block, as many as MAX_BLOCKS): GROW_AFTER, and an eighth of
 * the blocks copied once.  Lists that run through a heap both ways (one
 * up, one down: the C fixtures' non-main arenas) need every block twice
 * at times far apart; a pool that held the blocks would copy each once. */
#define GROW_AFTER 64

#define MARK_WORDS (MW_PROC_BLOCK / 8 / 64)	/* a block's marks: a bit a word */
#define BITS_GROUP 256U				/* blocks' marks allocated at once */

/* The fields a read from the copy touches first, in one 64-byte line of
 * the block (a walk of 2 million free chunks reads one or two blocks'
 * fields a chunk); the rest after. */
struct block {
	uint64_t base;		/* MW_PROC_BLOCK-aligned */
	uint64_t lo, hi;	/* [lo, hi) copied, at buf + (lo - base) */
	unsigned char *buf;	/* MW_PROC_BLOCK bytes, a buffer of the pool;
				 * NULL when it was given to another block
				 * (then hi is lo) */
	uint64_t *bits;		/* MARK_WORDS: the 8-byte words marked */
	uint64_t hash;		/* of the words marked (mark_hash) */
	uint64_t order;		/* when its buffer was taken: 1, 2, ... */
	_Atomic int pending;	/* queued to be read ahead, or being copied
				 * (procahead.c): buf and hi are not to be
				 * read until it is 0 */
	unsigned char verify;	/* copied again, marked: its marks to be checked */
	unsigned char marked;	/* a bit is set */
	uint64_t want;		/* [lo, want) to be copied: its mapping's part */
	uint32_t slot;		/* that buffer's, + 1; 0 none */
};

/* The blocks asked for last, by their number (base / MW_PROC_BLOCK)
 * modulo NEAR: a walk's reads, its prefetches and its questions of order
 * ask for a few blocks near each other, several times a chunk; the
 * table's hash and probe are for the others.  An entry says where the
 * block at base is (b), or that none is there (base + 1, b NULL) until
 * one is added (mw_proc_block_add sets its entry).  NEAR blocks are the
 * pool's 16 MiB. */
#define NEAR 256
struct near {
	uint64_t base;
	struct block *b;
};

struct mw_proc_copy {
	struct block blocks[MAX_BLOCKS];	/* [0, used) known */
	size_t used;
	unsigned char *bufs[MAX_BLOCKS];	/* [0, nslots) made */
	uint32_t owner[MAX_BLOCKS];	/* the block holding each, + 1; 0 free */
	size_t once, again;	/* blocks copied once, copied again */
	int grow;		/* the pool may grow past POOL_BLOCKS */
	size_t nslots, nowned, hand;	/* made, held; the next round the ring */
	uint32_t pin;		/* the block read last, + 1: never given away */
	uint64_t taken;		/* buffers taken so far (block order) */
	unsigned char *slabs[NSLABS];	/* as nslots needs them */
	uint64_t *bits[MAX_BLOCKS / BITS_GROUP];	/* the blocks' marks */
	int marking, lost;		/* mw_proc_mark; a read not marked */
	uint64_t key;			/* the marks' hash key (mark_hash) */
	uint32_t table[TABLE];	/* a block's index + 1 by its base; 0 free */
	struct near near[NEAR];	/* the blocks asked for last (mw_proc_block_near) */
	_Atomic uint64_t copied, nblocks;	/* mw_proc_copied */
	unsigned char *vbuf;	/* mw_proc_marks_same's, MARKS_BATCH blocks; NULL */
	struct mw_proc_ahead *ahead;	/* the reader thread (procahead.c); NULL */
	int no_ahead;		/* it could not be made: not tried again */
	int dir;		/* the walk's way through memory: +1, -1, 0 none */
	uint64_t front, ra_lo, ra_hi;	/* the next block to read ahead, in
					 * [ra_lo, ra_hi): its mapping */
	uint64_t last_base;	/* the block a read was served from last */
};

/* The block at base, when copied or queued (procblocks.c); NULL.
 * mw_proc_block_near: the same, from the blocks asked for last when it
 * is one of them (no call). */
struct block *mw_proc_block_find(struct mw_proc_copy *c, uint64_t base);

static inline struct block *mw_proc_block_near(struct mw_proc_copy *c, uint64_t base)
{
	const struct near *e = &c->near[(base / MW_PROC_BLOCK) % NEAR];

	if (e->base == base && e->b)
		return e->b;
	return e->base == base + 1 ? NULL : mw_proc_block_find(c, base);
}

/* A buffer and a place in the table for the block at base, clipped to
 * the readable mapping m, nothing copied yet ([lo, want) to copy): NULL
 * when no place or buffer is left (procblocks.c). */
struct block *mw_proc_block_add(struct mw_proc_copy *c, uint64_t base, const struct mw_map *m);

/* A buffer for block b, known but without one (its bytes to copy again):
 * 0, or -1 when every buffer is pinned or being copied (procblocks.c). */
int mw_proc_block_buffer(struct mw_proc_copy *c, struct block *b);

/* No block in c's table any more, none in use (their buffers kept for
 * the next copies; procblocks.c). */
void mw_proc_blocks_forget(struct mw_proc_copy *c);

/* Give back c's slabs from slab `from` on, their buffers and the marks of
 * blocks past the first BITS_GROUP (all when from is 0; procblocks.c). */
void mw_proc_blocks_release(struct mw_proc_copy *c, size_t from);

/* Reading ahead (procahead.c).  A walk that goes through a mapping block
 * after block, one way, has the blocks before it read by a thread of its
 * own, up to MW_AHEAD_WINDOW blocks ahead, while it walks the ones it
 * has: the copying (the kernel's, and its faults of fresh pages) then
 * runs on another CPU.  mw_ahead_missed: block b was just copied for a
 * read (fill): when the block beside it was copied before, the walk goes
 * that way and reading ahead starts.  mw_ahead_more: a read was served
 * from block base: the window kept ahead of it, or reading ahead ended
 * when the walk left the way.  mw_ahead_wait: block b queued, wait until
 * the reader has copied it.  mw_ahead_drain: no block is queued or being
 * copied when it returns (before the buffers are used again);
 * mw_ahead_stop: drained and the thread joined (before c is freed or
 * kept for another process).  The reader only copies: which blocks, the
 * table and the buffers are the walk's thread's. */
#define MW_AHEAD_WINDOW 64
void mw_ahead_missed(struct mw_proc *p, struct block *b);
void mw_ahead_more(struct mw_proc *p, uint64_t base);
void mw_ahead_wait(struct mw_proc_copy *c, struct block *b);
void mw_ahead_drain(struct mw_proc_copy *c);
void mw_ahead_stop(struct mw_proc_copy *c);

/* len bytes at addr straight from the process (no mapping check): the
 * bytes read (fewer: unmapped there) or -1 with errno (procmem.c). */
ssize_t mw_proc_raw(struct mw_proc *p, uint64_t addr, void *buf, size_t len);

/* Word at addr, of value v, in the marks' hash: a keyed mix of both,
 * the words combined by XOR (each is marked once, in any order). */
static inline uint64_t mark_hash(uint64_t key, uint64_t addr, uint64_t v)
{
	uint64_t h = (addr ^ key) * 0x9E3779B97F4A7C15ULL;

	h = (h ^ (h >> 31) ^ v) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ (h >> 29)) * 0x94D049BB133111EBULL;
	return h ^ (h >> 32);
}

#endif /* MALLOCWATCH_PROCMEM_INT_H */
