/* unit-procmarks.c - the marks of reads served from copies (procmem.h),
 * on this very process: the words read are marked, and found the same
 * again until one of them changes (an unmarked one may); a read across a
 * block's end is served from the two blocks and marked; a change in the
 * 18th of 20 blocks marked is found (16 are read at a time); marks that do
 * not hold every word read (a copy dropped meanwhile) are not taken;
 * marked memory unmapped since is not the same; a copy given back and
 * taken again by the same thread starts empty. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmem.h"
#include "unit.h"

#define MIB (1UL << 20)

int main(void)
{
	unsigned char *m = mmap(NULL, 3 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0), *r, buf[16];
	uint64_t base, v, blocks;
	struct mw_proc_marks *mk, *m20;
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
	/* marks in 20 blocks, checked 16 blocks a read: one in the 18th */
	mw_proc_mark(&p, 1);
	for (uint64_t i = 0; i < 20; i++)
		CHECK(mw_proc_word(&p, base + i * MW_PROC_BLOCK + 16, &v) == 0);
	CHECK((m20 = mw_proc_marks_take(&p)) != NULL && mw_proc_marks_same(&p, m20) == 1);
	r[17 * MW_PROC_BLOCK + 16] ^= 1;
	CHECK(m20 && mw_proc_marks_same(&p, m20) == 0);
	r[17 * MW_PROC_BLOCK + 16] ^= 1;
	CHECK(m20 && mw_proc_marks_same(&p, m20) == 1);
	mw_proc_marks_free(m20);
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
	/* a copy given back holding a mark, taken again by this thread (its
	 * first slab kept): nothing of it is left, neither its copy of a
	 * word changed since nor its mark */
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 32, &v) == 0);
	mw_proc_close(&p);
	CHECK(mw_proc_open(&p, getpid(), err, sizeof(err)) == 0, "%s", err);
	mw_proc_copy(&p, 1);
	CHECK(mw_proc_copied(&p, &blocks) == 0 && blocks == 0);
	mw_proc_mark(&p, 1);
	CHECK(mw_proc_word(&p, base + 24, &v) == 0 && v == *(uint64_t *)(r + 24), "an old copy");
	CHECK((mk = mw_proc_marks_take(&p)) != NULL);
	r[32] ^= 1;
	CHECK(mk && mw_proc_marks_same(&p, mk) == 1, "an old mark");
	mw_proc_marks_free(mk);
	mw_proc_close(&p);
	mw_proc_copy_spare_free();
	return failed ? 1 : 0;
}
