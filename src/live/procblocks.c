/* procblocks.c - the blocks of a process's copies (procmem_int.h): their
 * buffers (a pool of POOL_BLOCKS, in slabs within MW_PROC_COPY_MAX for
 * all copies together, each used again for another block round a ring) and
 * the table that finds a block by its base.  Below procmem.c (the reads
 * served from them) and procahead.c (the blocks read ahead), which both
 * use it; it calls neither. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "procmem.h"
#include "procmem_int.h"

/* A huge page on x86_64: the slabs after the first are aligned to it
 * (procmem_int.h). */
#define HUGE (2U << 20)

/* Buffer bytes held by every process's copies together: bounded by
 * MW_PROC_COPY_MAX over all threads (snapmulti.h reads several at once). */
static _Atomic uint64_t held_all;

static uint32_t slot(uint64_t base)
{
	return (uint32_t)(((base / MW_PROC_BLOCK) * 0x9E3779B97F4A7C15ULL) >> (64 - TABLE_BITS));
}

/* Block b is the one at base, or none is there (b NULL): the entry for
 * its number (procmem_int.h, struct near). */
static void near_set(struct mw_proc_copy *c, uint64_t base, struct block *b)
{
	struct near *e = &c->near[(base / MW_PROC_BLOCK) % NEAR];

	e->base = b ? base : base + 1;
	e->b = b;
}

struct block *mw_proc_block_find(struct mw_proc_copy *c, uint64_t base)
{
	struct block *b;

	for (uint32_t i = slot(base);; i = (i + 1) % TABLE) {
		if (!c->table[i]) {
			near_set(c, base, NULL);
			return NULL;
		}
		if ((b = &c->blocks[c->table[i] - 1])->base == base) {
			near_set(c, base, b);
			return b;
		}
	}
}

/* Slab k's size, and where block i is: its slab, its offset there. */
static size_t slab_size(size_t k)
{
	return k ? SLAB : FIRST_SLAB;
}

static size_t slab_of(size_t i, size_t *off)
{
	if (i < FIRST_BLOCKS) {
		*off = i * MW_PROC_BLOCK;
		return 0;
	}
	*off = (i - FIRST_BLOCKS) % PER_SLAB * MW_PROC_BLOCK;
	return 1 + (i - FIRST_BLOCKS) / PER_SLAB;
}

/* Slab k: from the second on HUGE-aligned and asked for huge pages; NULL
 * when there is no memory. */
static unsigned char *new_slab(size_t k)
{
	size_t size = slab_size(k), extra = k ? HUGE : 0;
	unsigned char *m = mmap(NULL, size + extra, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *s;
	uintptr_t head;

	if (m == MAP_FAILED)
		return NULL;
	if (!k)
		return m;
	s = (unsigned char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	head = (uintptr_t)(s - m);
	if (head)
		munmap(m, head);
	munmap(s + size, HUGE - head);
	madvise(s, size, MADV_HUGEPAGE);	/* a wish: without it, 4 KiB pages */
	return s;
}

/* One more buffer for c, within the pool and the budget: 0, or -1. */
static int more_buffer(struct mw_proc_copy *c)
{
	size_t off, k;

	if (c->nslots == (c->grow ? MAX_BLOCKS : POOL_BLOCKS))
		return -1;
	k = slab_of(c->nslots, &off);
	if (!off) {
		uint64_t h = atomic_fetch_add(&held_all, slab_size(k));

		if (h + slab_size(k) > MW_PROC_COPY_MAX || !(c->slabs[k] = new_slab(k))) {
			atomic_fetch_sub(&held_all, slab_size(k));
			return -1;
		}
	}
	c->bufs[c->nslots] = c->slabs[k] + off;
	c->owner[c->nslots++] = 0;
	return 0;
}

/* Buffer s taken from its block, if any: that block's bytes are gone. */
static void give_up(struct mw_proc_copy *c, size_t s)
{
	if (c->owner[s]) {
		struct block *b = &c->blocks[c->owner[s] - 1];

		b->buf = NULL;
		b->slot = 0;
		b->hi = b->lo;
		c->owner[s] = 0;
		c->nowned--;
	}
}

/* A buffer for block b: a new one while the pool grows, else the next
 * one round the ring (the copy begun longest ago, of a block the walk
 * has gone past: lists walked side by side stay together, procmem.h),
 * skipping the block read last and those being copied.  0, or -1. */
static int take_buffer(struct mw_proc_copy *c, struct block *b)
{
	size_t s = SIZE_MAX;

	if (c->nowned == c->nslots && more_buffer(c) == 0)
		s = c->nslots - 1;
	for (size_t n = 0; s == SIZE_MAX && n < c->nslots; n++) {
		size_t h = c->hand;
		struct block *o = c->owner[h] ? &c->blocks[c->owner[h] - 1] : NULL;

		c->hand = (h + 1) % c->nslots;
		if (!o || (c->owner[h] != c->pin &&
			   !atomic_load_explicit(&o->pending, memory_order_acquire)))
			s = h;
	}
	if (s == SIZE_MAX)
		return -1;
	give_up(c, s);
	c->owner[s] = (uint32_t)(b - c->blocks) + 1;
	c->nowned++;
	b->buf = c->bufs[s];
	b->slot = (uint32_t)s + 1;
	b->order = ++c->taken;
	return 0;
}

int mw_proc_block_buffer(struct mw_proc_copy *c, struct block *b)
{
	if (++c->again >= GROW_AFTER && c->again * 8 >= c->once)
		c->grow = 1;
	return take_buffer(c, b);
}

struct block *mw_proc_block_add(struct mw_proc_copy *c, uint64_t base, const struct mw_map *m)
{
	size_t g = c->used / BITS_GROUP;
	struct block *b;

	if (c->used == MAX_BLOCKS ||
	    (!c->bits[g] && !(c->bits[g] = calloc(BITS_GROUP, MARK_WORDS * 8))))
		return NULL;
	c->once++;
	b = &c->blocks[c->used];
	*b = (struct block){ .base = base, .bits = c->bits[g] + c->used % BITS_GROUP * MARK_WORDS };
	if (take_buffer(c, b) < 0)
		return NULL;
	b->lo = base > m->start ? base : m->start;
	b->want = base + MW_PROC_BLOCK < m->end ? base + MW_PROC_BLOCK : m->end;
	b->hi = b->lo;
	for (uint32_t k = slot(base);; k = (k + 1) % TABLE)
		if (!c->table[k]) {
			c->table[k] = (uint32_t)++c->used;
			near_set(c, base, b);
			break;
		}
	return b;
}

void mw_proc_blocks_forget(struct mw_proc_copy *c)
{
	if (c->used > TABLE / 16) {
		memset(c->table, 0, sizeof(c->table));
	} else {
		for (size_t i = 0; i < c->used; i++)
			for (uint32_t k = slot(c->blocks[i].base);; k = (k + 1) % TABLE)
				if (c->table[k] == i + 1) {
					c->table[k] = 0;
					break;
				}
	}
	memset(c->owner, 0, sizeof(c->owner));
	c->nowned = 0;
	c->hand = 0;
	c->pin = 0;
	c->used = 0;
	memset(c->near, 0, sizeof(c->near));
}

void mw_proc_blocks_release(struct mw_proc_copy *c, size_t from)
{
	size_t keep = from ? FIRST_BLOCKS + (from - 1) * PER_SLAB : 0;

	for (size_t k = from; k < NSLABS; k++)
		if (c->slabs[k]) {
			munmap(c->slabs[k], slab_size(k));
			atomic_fetch_sub(&held_all, slab_size(k));
			c->slabs[k] = NULL;
		}
	for (size_t g = from ? 1 : 0; g < MAX_BLOCKS / BITS_GROUP; g++) {
		free(c->bits[g]);
		c->bits[g] = NULL;
	}
	if (c->nslots > keep)
		c->nslots = keep;
	c->hand = 0;	/* (round the buffers left) */
}
