/* proccopy.c - reads of another process served from copies of its
 * memory, MW_PROC_BLOCK bytes at a time (procmem.h): a walk of 2 million
 * free chunks in 443 MiB makes some 7,000 reads instead of 4 million, and
 * a walk of an idle process's few free chunks copies a few blocks. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "procmem.h"

#define MAX_BLOCKS (MW_PROC_COPY_MAX / MW_PROC_BLOCK)
#define TABLE_BITS 15	/* 2 x MAX_BLOCKS slots */
#define TABLE (1U << TABLE_BITS)
_Static_assert(TABLE == 2 * MAX_BLOCKS, "the table has room for every block twice over");
/* Buffers come in slabs: the first of FIRST_SLAB bytes in 4 KiB pages
 * (an idle process's few small blocks fault in a few pages), the others
 * of SLAB bytes, each asked to be backed by huge pages (2 MiB on x86_64):
 * a walk's reads, all over a big copy, then miss the TLB less, and
 * filling it takes 1/512 of the page faults. */
#define FIRST_SLAB (4U << 20)
#define SLAB (32U << 20)
#define FIRST_BLOCKS (FIRST_SLAB / MW_PROC_BLOCK)
#define PER_SLAB (SLAB / MW_PROC_BLOCK)
#define NSLABS (1 + (MAX_BLOCKS - FIRST_BLOCKS + PER_SLAB - 1) / PER_SLAB)
#define HUGE (2U << 20)

struct block {
	uint64_t base;		/* MW_PROC_BLOCK-aligned */
	uint64_t lo, hi;	/* [lo, hi) copied, at buf + (lo - base) */
	unsigned char *buf;	/* MW_PROC_BLOCK bytes, in a slab */
};

struct mw_proc_copy {
	struct block blocks[MAX_BLOCKS];	/* [0, used) hold copies now;
						 * [used, nbuf) buffers to reuse */
	size_t used, nbuf;
	unsigned char *slabs[NSLABS];	/* as nbuf needs them */
	uint32_t table[TABLE];	/* a block's index + 1 by its base; 0 free */
	uint32_t last;		/* the block found last, + 1 */
	uint64_t copied, nblocks;	/* mw_proc_copied */
};

/* Buffer bytes held by every process's copies together: bounded by
 * MW_PROC_COPY_MAX over all threads (snapmulti.h reads several at once). */
static _Atomic uint64_t held_all;

static uint32_t slot(uint64_t base)
{
	return (uint32_t)(((base / MW_PROC_BLOCK) * 0x9E3779B97F4A7C15ULL) >> (64 - TABLE_BITS));
}

static struct block *find(struct mw_proc_copy *c, uint64_t base)
{
	struct block *b;

	if (c->last && (b = &c->blocks[c->last - 1])->base == base)
		return b;
	for (uint32_t i = slot(base);; i = (i + 1) % TABLE) {
		if (!c->table[i])
			return NULL;
		if ((b = &c->blocks[c->table[i] - 1])->base == base) {
			c->last = c->table[i];
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

/* One more buffer for c, within the budget: 0, or -1 (read the process
 * instead). */
static int more_buffer(struct mw_proc_copy *c)
{
	size_t off, k;

	if (c->nbuf == MAX_BLOCKS)
		return -1;
	k = slab_of(c->nbuf, &off);
	if (!off) {
		uint64_t h = atomic_fetch_add(&held_all, slab_size(k));

		if (h + slab_size(k) > MW_PROC_COPY_MAX || !(c->slabs[k] = new_slab(k))) {
			atomic_fetch_sub(&held_all, slab_size(k));
			return -1;
		}
	}
	c->blocks[c->nbuf].buf = c->slabs[k] + off;
	c->nbuf++;
	return 0;
}

/* Copy the block at base, where addr is, clipped to addr's mapping:
 * into *out (0); 1 when it cannot be copied (not mapped readable, no
 * buffer left: read the process); -1 when the process is gone or
 * refuses (errno). */
static int fill(struct mw_proc *p, uint64_t base, uint64_t addr, struct block **out)
{
	struct mw_proc_copy *c = p->copy;
	ssize_t i = mw_proc_map_index(p, addr), n;
	const struct mw_map *m;
	struct block *b;
	uint64_t lo, hi;

	if (i < 0 || !(m = &p->maps[i])->readable)
		return 1;
	if (c->used == c->nbuf && more_buffer(c) < 0)
		return 1;
	b = &c->blocks[c->used];
	lo = base > m->start ? base : m->start;
	hi = base + MW_PROC_BLOCK < m->end ? base + MW_PROC_BLOCK : m->end;
	if ((n = mw_proc_raw(p, lo, b->buf + (lo - base), (size_t)(hi - lo))) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			return -1;
		n = 0;	/* unmapped meanwhile: nothing copied, read the process */
	}
	b->base = base;
	b->lo = lo;
	b->hi = lo + (uint64_t)n;
	c->copied += (uint64_t)n;
	c->nblocks++;
	for (uint32_t k = slot(base);; k = (k + 1) % TABLE)
		if (!c->table[k]) {
			c->table[k] = (uint32_t)++c->used;
			break;
		}
	*out = b;
	return 0;
}

int mw_proc_copy_read(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = addr & ~(uint64_t)(MW_PROC_BLOCK - 1);
	struct block *b;
	int r;

	if (!len || addr + len < addr || addr + len - base > MW_PROC_BLOCK)
		return 1;	/* across a block's end */
	if (!(b = find(p->copy, base)) && (r = fill(p, base, addr, &b)) != 0)
		return r;
	if (addr < b->lo || addr + len > b->hi)
		return 1;
	memcpy(buf, b->buf + (addr - base), len);
	return 0;
}

void mw_proc_copy(struct mw_proc *p, int on)
{
	if (on && !p->copy)
		p->copy = calloc(1, sizeof(*p->copy));	/* none: read the process */
	p->copying = on && p->copy;
}

void mw_proc_copy_drop(struct mw_proc *p)
{
	struct mw_proc_copy *c = p->copy;

	if (!c || !c->used)
		return;
	c->used = 0;
	c->last = 0;
	memset(c->table, 0, sizeof(c->table));
}

uint64_t mw_proc_copied(const struct mw_proc *p, uint64_t *blocks)
{
	if (blocks)
		*blocks = p->copy ? p->copy->nblocks : 0;
	return p->copy ? p->copy->copied : 0;
}

void mw_proc_copy_free(struct mw_proc *p)
{
	struct mw_proc_copy *c = p->copy;

	if (!c)
		return;
	for (size_t k = 0; k < NSLABS; k++)
		if (c->slabs[k]) {
			munmap(c->slabs[k], slab_size(k));
			atomic_fetch_sub(&held_all, slab_size(k));
		}
	free(c);
	p->copy = NULL;
	p->copying = 0;
}
