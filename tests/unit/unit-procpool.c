/* unit-procpool.c - the copies' buffers are a pool used again
 * (procmem_int.h), on this very process: a walk through more memory than
 * the pool holds reads every word right, and a block whose buffer went to
 * another is copied again when it is read again - what it holds then is
 * read, and when a word marked in its first copy changed meanwhile the
 * marks are lost (mw_proc_marks_take: NULL), since the walk may have seen
 * two values of one word; unchanged, they hold.  A walk that copies many
 * blocks again (lists running through a heap both ways) lets the pool
 * grow: a block copied then is held. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "procmem.h"
#include "unit.h"
#include "procmem-harness.h"

#define MIB (1UL << 20)
#define HALF (48 * MIB / MW_PROC_BLOCK)	/* blocks of a half: three times the pool */
#define SPAN ((2 * HALF + 1) * MW_PROC_BLOCK)

/* Block k of half h: the halves two mappings, a PROT_NONE block between
 * (the blocks read ahead of a sweep, which stay in its mapping, are then
 * all read by it, and copied when it ends). */
static uint64_t at(uint64_t base, int h, uint64_t k)
{
	return base + ((uint64_t)h * (HALF + 1) + k) * MW_PROC_BLOCK;
}

/* SPAN bytes, block-aligned; the word at 16 of each block its number in
 * its half. */
static unsigned char *region(void)
{
	unsigned char *r = aligned_region(SPAN, MW_PROC_BLOCK);

	if (!r)
		return NULL;
	for (int h = 0; h < 2; h++)
		for (uint64_t k = 0; k < HALF; k++)
			memcpy((unsigned char *)(uintptr_t)at((uintptr_t)r, h, k) + 16, &k, 8);
	mprotect(r + HALF * MW_PROC_BLOCK, MW_PROC_BLOCK, PROT_NONE);
	return r;
}

/* A word of every block of half h (0, 1), up, or down when down is 1:
 * each right?  1 or 0. */
static int sweep(struct mw_proc *p, uint64_t base, int h, int down)
{
	int ok = 1;

	for (uint64_t k = 0; k < HALF; k++) {
		uint64_t i = down ? HALF - 1 - k : k, v = ~0ULL;

		ok &= mw_proc_word(p, at(base, h, i) + 16, &v) == 0 && v == i;
	}
	return ok;
}

int main(void)
{
	unsigned char *r = region();
	uint64_t base = (uintptr_t)r, v = 0, before, after;
	struct mw_proc_marks *mk;
	struct mw_proc p;

	if (open_self(&p, r) < 0)
		return 1;
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	CHECK(sweep(&p, base, 0, 0), "a word read wrong");
	/* block 0 read again: its buffer went to another, so it is copied
	 * again (the copies hold no more than the pool) */
	before = mw_proc_copied(&p, NULL);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	after = mw_proc_copied(&p, NULL);
	CHECK(after == before + MW_PROC_BLOCK, "block 0 still held: %llu bytes more copied",
	      (unsigned long long)(after - before));
	/* copied again the same: the marks hold */
	CHECK((mk = mw_proc_marks_take(&p)) != NULL && mw_proc_marks_same(&p, mk) == 1);
	mw_proc_marks_free(mk);
	CHECK(p.changed == 0, "a change seen where none was: %llu", (unsigned long long)p.changed);
	/* a marked word changed before its block is copied again (the other
	 * half read meanwhile, new blocks): read as it is now, and the marks
	 * lost */
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0);
	CHECK(sweep(&p, base, 1, 0), "a word read wrong");
	r[8] ^= 1;
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8), "an old copy");
	CHECK((mk = mw_proc_marks_take(&p)) == NULL, "marks kept over a word that changed");
	/* and the walk's read is no quiet one (snapshot_take.c) */
	CHECK(p.changed == 1, "the change not counted: %llu", (unsigned long long)p.changed);
	mw_proc_marks_free(mk);
	/* the first half down (every block copied again: the pool may grow),
	 * up and down again: the last sweep copies nothing */
	CHECK(sweep(&p, base, 0, 1) && sweep(&p, base, 0, 0), "a word read wrong");
	before = mw_proc_copied(&p, NULL);
	CHECK(sweep(&p, base, 0, 1), "a word read wrong");
	after = mw_proc_copied(&p, NULL);
	CHECK(after == before, "the pool did not grow: %llu bytes copied again",
	      (unsigned long long)(after - before));
	mw_proc_close(&p);
	mw_proc_copy_spare_free();
	munmap(r, SPAN);
	return failed ? 1 : 0;
}
