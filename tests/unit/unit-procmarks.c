/* unit-procmarks.c - the marks of reads served from copies (procmem.h),
 * on this very process: the words read are marked, and found the same
 * again until one of them changes (an unmarked one may); a read across a
 * block's end is served from the two blocks and marked; marks that do
 * not hold every word read (a copy dropped meanwhile) are not taken;
 * marked memory unmapped since is not the same.  With a pool of two
 * buffers, a third block takes the first's, which is copied again when
 * read again: its marks hold when its words are as they were, and are
 * lost when a marked one changed in between; a walk that keeps coming
 * back grows the pool, and then copies nothing more. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmem.h"
#include "unit.h"

#define MIB (1UL << 20)

/* The pool of buffers (procmem.h), two of them, over the blocks at base
 * (r: the same memory, ours) */
static void pool(uint64_t base, unsigned char *r)
{
	const uint64_t B = MW_PROC_BLOCK;
	uint64_t v, blocks, before;
	struct mw_proc_marks *mk;
	struct mw_proc p;
	char err[256];

	CHECK(mw_proc_open(&p, getpid(), err, sizeof(err)) == 0, "%s", err);
	mw_proc_copy_pool(&p, 2);
	mw_proc_mark(&p, 1);
	/* blocks 0, 1, 2: block 2 takes block 0's buffer; block 0 read
	 * again (another word too) is copied again, its marks hold */
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && mw_proc_word(&p, base + B + 8, &v) == 0 &&
	      mw_proc_word(&p, base + 2 * B + 8, &v) == 0);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	CHECK(mw_proc_word(&p, base + 64, &v) == 0 && v == *(uint64_t *)(r + 64));
	CHECK(mw_proc_copied(&p, &blocks) == 4 * B && blocks == 4, "%lu", (unsigned long)blocks);
	CHECK((mk = mw_proc_marks_take(&p)) != NULL && mw_proc_marks_same(&p, mk) == 1);
	r[64] ^= 1;	/* the word read after the second copy is marked */
	CHECK(mk && mw_proc_marks_same(&p, mk) == 0);
	r[64] ^= 1;
	mw_proc_marks_free(mk);
	/* a marked word of block 0 changes before block 0 is copied again:
	 * the walk would read the new value, the marks hold the old one */
	mw_proc_copy_drop(&p);
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && mw_proc_word(&p, base + B + 8, &v) == 0 &&
	      mw_proc_word(&p, base + 2 * B + 8, &v) == 0);
	r[8] ^= 1;
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	r[8] ^= 1;
	CHECK(mw_proc_marks_take(&p) == NULL, "marks taken across a changed copy");
	/* round and round three blocks: the pool grows, copies stop */
	mw_proc_copy_drop(&p);
	for (int i = 0; i < 30; i++)
		CHECK(mw_proc_word(&p, base + (uint64_t)(i % 3) * B, &v) == 0);
	mw_proc_copied(&p, &before);
	for (int i = 0; i < 30; i++)
		CHECK(mw_proc_word(&p, base + (uint64_t)(i % 3) * B, &v) == 0, "%d %s", i, strerror(errno));
	CHECK(mw_proc_copied(&p, &blocks) && blocks == before, "%lu then %lu",
	      (unsigned long)before, (unsigned long)blocks);
	mw_proc_close(&p);
}

int main(void)
{
	unsigned char *m = mmap(NULL, 3 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0), *r, buf[16];
	uint64_t base, v, blocks;
	struct mw_proc_marks *mk;
	struct mw_proc p;
	char err[256];

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return 1;
	r = (unsigned char *)(((uintptr_t)m + MIB - 1) & ~(uintptr_t)(MIB - 1));
	base = (uintptr_t)r;
	for (size_t i = 0; i < MIB; i++)
		r[i] = (unsigned char)(i * 13);
	CHECK(mw_proc_open(&p, getpid(), err, sizeof(err)) == 0, "%s", err);
	mw_proc_copy(&p, 1);
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	CHECK(mw_proc_word(&p, base + 4096, &v) == 0);
	/* across the first block's end: from the copies of both */
	CHECK(mw_proc_read(&p, base + MW_PROC_BLOCK - 8, buf, 16) == 0 &&
	      !memcmp(buf, r + MW_PROC_BLOCK - 8, 16));
	CHECK(mw_proc_copied(&p, &blocks) == 2 * MW_PROC_BLOCK && blocks == 2, "%lu",
	      (unsigned long)blocks);
	CHECK((mk = mw_proc_marks_take(&p)) != NULL);
	CHECK(mw_proc_marks_same(&p, mk) == 1);
	/* a word not read changes: the same */
	r[100] ^= 0xff;
	CHECK(mw_proc_marks_same(&p, mk) == 1);
	/* a word read changes, one byte of it: not; back: the same */
	r[4096 + 5] ^= 0x01;
	CHECK(mw_proc_marks_same(&p, mk) == 0);
	r[4096 + 5] ^= 0x01;
	CHECK(mw_proc_marks_same(&p, mk) == 1);
	/* the second half of the read across the blocks' end */
	r[MW_PROC_BLOCK + 7] ^= 0x80;
	CHECK(mw_proc_marks_same(&p, mk) == 0);
	r[MW_PROC_BLOCK + 7] ^= 0x80;
	CHECK(mw_proc_marks_same(&p, mk) == 1);
	/* the marked memory unmapped since: not the same */
	munmap(r + MW_PROC_BLOCK, MW_PROC_BLOCK);
	CHECK(mw_proc_refresh(&p, err, sizeof(err)) == 0, "%s", err);
	CHECK(mw_proc_marks_same(&p, mk) == 0);
	mw_proc_marks_free(mk);
	/* a copy dropped while marking: the marks hold not every word read */
	mw_proc_copy(&p, 1);
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 8, &v) == 0);
	mw_proc_copy_drop(&p);
	CHECK(mw_proc_word(&p, base + 16, &v) == 0);
	CHECK(mw_proc_marks_take(&p) == NULL);
	/* marking again after a take: from nothing */
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 24, &v) == 0);
	CHECK((mk = mw_proc_marks_take(&p)) != NULL && mw_proc_marks_same(&p, mk) == 1);
	r[24] ^= 1;
	CHECK(mw_proc_marks_same(&p, mk) == 0);
	mw_proc_marks_free(mk);
	mw_proc_close(&p);
	pool(base + 4 * MW_PROC_BLOCK, r + 4 * MW_PROC_BLOCK);	/* block 1 is unmapped */
	return failed ? 1 : 0;
}
