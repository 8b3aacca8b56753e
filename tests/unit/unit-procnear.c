/* unit-procnear.c - the blocks asked for last (procmem_int.h, struct near:
 * an entry by block number, a block there or none), on this very
 * process: a block asked for before it is copied (a prefetch, a question
 * of order) is copied once when it is read, and known after; two blocks
 * whose numbers share an entry are both read right; the usual read's
 * marks (a chunk's size and fd) hold both its words, the two in one word
 * of marks or across two (mw_proc_marks_same: a change in either is
 * seen). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmem.h"
#include "unit.h"

#define MIB (1UL << 20)
#define APART (16 * MIB)	/* 256 blocks: the same entry */

/* APART + 2 blocks, block-aligned; each 8-byte word its offset. */
static unsigned char *region(void)
{
	size_t len = APART + 2 * MW_PROC_BLOCK;
	unsigned char *m = mmap(NULL, len + MW_PROC_BLOCK, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *r;

	if (m == MAP_FAILED)
		return NULL;
	r = (unsigned char *)(((uintptr_t)m + MW_PROC_BLOCK - 1) & ~(uintptr_t)(MW_PROC_BLOCK - 1));
	for (uint64_t i = 0; i < len; i += 8)
		memcpy(r + i, &i, 8);
	return r;
}

/* The 16 bytes at off read from the copies as a chunk's size and fd: right? */
static int pair(struct mw_proc *p, const unsigned char *r, uint64_t off)
{
	uint64_t v[2] = { 1, 1 };

	return mw_proc_read(p, (uintptr_t)r + off, v, sizeof(v)) == 0 && !memcmp(v, r + off, 16);
}

/* Marks on, the 16 bytes at off read (after 16 others in its block):
 * do the marks hold (mw_proc_marks_same 1), and, the word at
 * off + word * 8 changed, see the change (0)?  1 or 0. */
static int seen(struct mw_proc *p, unsigned char *r, uint64_t off, int word)
{
	struct mw_proc_marks *mk;
	int same;

	mw_proc_copy_drop(p);
	mw_proc_mark(p, 1);
	/* another word of the block first: the pair is then a read from a
	 * block found last */
	if (!pair(p, r, off ^ 0x800) || !pair(p, r, off) || !(mk = mw_proc_marks_take(p)))
		return 0;
	same = mw_proc_marks_same(p, mk) == 1;	/* unchanged: the same */
	r[off + (uint64_t)word * 8] ^= 0x40;
	same = same && mw_proc_marks_same(p, mk) == 0;
	r[off + (uint64_t)word * 8] ^= 0x40;
	mw_proc_marks_free(mk);
	return same;
}

int main(void)
{
	unsigned char *r = region();
	uint64_t base = (uintptr_t)r, blocks;
	struct mw_proc p;
	char err[256];

	CHECK(r != NULL);
	if (!r)
		return 1;
	CHECK(mw_proc_open(&p, getpid(), err, sizeof(err)) == 0, "%s", err);
	mw_proc_copy(&p, 1);
	/* asked for first (none there), then read: copied once, then known */
	CHECK(mw_proc_copy_order(&p, base + 64) == 0);
	mw_proc_prefetch(&p, base + 64);
	CHECK(pair(&p, r, 64) && pair(&p, r, 4096));
	CHECK(mw_proc_copy_order(&p, base + 64) != 0, "a block read is not known");
	CHECK(mw_proc_copied(&p, &blocks) == MW_PROC_BLOCK && blocks == 1, "%lu blocks",
	      (unsigned long)blocks);
	/* a block APART on: the same entry; both read right, each copied once */
	CHECK(mw_proc_copy_order(&p, base + APART + 64) == 0);
	CHECK(pair(&p, r, APART + 64) && pair(&p, r, 128) && pair(&p, r, APART + 128));
	CHECK(mw_proc_copied(&p, &blocks) == 2 * MW_PROC_BLOCK && blocks == 2, "%lu blocks",
	      (unsigned long)blocks);
	/* the usual read's marks: both words, in one word of marks (at 0)
	 * and across two (the 64th word and the 65th) */
	CHECK(seen(&p, r, 0, 0) && seen(&p, r, 0, 1), "the marks of a pair in one word of marks wrong");
	CHECK(seen(&p, r, 63 * 8, 0) && seen(&p, r, 63 * 8, 1), "the marks of a pair across words of marks wrong");
	CHECK(seen(&p, r, APART + 62 * 8, 1), "the marks wrong");
	mw_proc_close(&p);
	mw_proc_copy_spare_free();
	munmap(r, APART + 2 * MW_PROC_BLOCK);
	return failed ? 1 : 0;
}
