/* unit-proccopy.c - reads served from copies of a process's memory
 * (procmem.h), on this very process: a copy holds what was
 * there when its block was read until it is dropped; reads across a
 * block's end, past a readable mapping's end, and of memory unmapped
 * since the mappings were read are answered as without copies (the
 * bytes, or -1 with EFAULT), never from a copy they are not in. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "procmem.h"
#include "unit.h"
#include "procmem-harness.h"

#define MIB (1UL << 20)

/* A 4 MiB region, block-aligned, its last MiB PROT_NONE; each byte its
 * offset's low bits. */
static unsigned char *region(void)
{
	unsigned char *r = aligned_region(5 * MIB, MIB);

	if (!r)
		return NULL;
	for (size_t i = 0; i < 3 * MIB; i++)
		r[i] = (unsigned char)(i * 7);
	mprotect(r + 3 * MIB, MIB, PROT_NONE);
	return r;
}

int main(void)
{
	unsigned char *r = region(), buf[64];
	uint64_t base = (uintptr_t)r, v = 0, blocks;
	struct mw_proc p;
	char err[256];

	if (open_self(&p, r) < 0)
		return 1;
	CHECK(p.copying);
	/* a word, then the same block again: one block read */
	CHECK(mw_proc_word(&p, base + 8, &v) == 0 && v == *(uint64_t *)(r + 8));
	CHECK(mw_proc_read(&p, base + 100, buf, 16) == 0 && !memcmp(buf, r + 100, 16));
	CHECK(mw_proc_copied(&p, &blocks) == MW_PROC_BLOCK && blocks == 1, "%lu", (unsigned long)blocks);
	/* what changed since is not seen until the copy is dropped */
	r[200] ^= 0xff;
	CHECK(mw_proc_read(&p, base + 200, buf, 1) == 0 && buf[0] == (unsigned char)(r[200] ^ 0xff));
	mw_proc_copy_drop(&p);
	CHECK(mw_proc_read(&p, base + 200, buf, 1) == 0 && buf[0] == r[200]);
	/* across a block's end: from the copies of both, right */
	CHECK(mw_proc_read(&p, base + MW_PROC_BLOCK - 8, buf, 16) == 0 &&
	      !memcmp(buf, r + MW_PROC_BLOCK - 8, 16));
	/* the last readable bytes, and past them (PROT_NONE): EFAULT */
	CHECK(mw_proc_read(&p, base + 3 * MIB - 16, buf, 16) == 0 &&
	      !memcmp(buf, r + 3 * MIB - 16, 16));
	errno = 0;
	CHECK(mw_proc_read(&p, base + 3 * MIB + 64, buf, 8) < 0 && errno == EFAULT);
	errno = 0;
	CHECK(mw_proc_read(&p, base + 3 * MIB - 8, buf, 16) < 0 && errno == EFAULT);
	/* unmapped since the mappings were read: not served, EFAULT */
	munmap(r + 2 * MIB, MIB);
	mw_proc_copy_drop(&p);
	errno = 0;
	CHECK(mw_proc_read(&p, base + 2 * MIB + 64, buf, 8) < 0 && errno == EFAULT);
	/* the block before it is still read whole */
	CHECK(mw_proc_read(&p, base + MIB + 64, buf, 8) == 0 && !memcmp(buf, r + MIB + 64, 8));
	/* copies off: the process itself */
	mw_proc_copy(&p, 0);
	r[300] ^= 0xff;
	CHECK(mw_proc_read(&p, base + 300, buf, 1) == 0 && buf[0] == r[300]);
	/* the maps read again: the copies go */
	mw_proc_copy(&p, 1);
	CHECK(mw_proc_read(&p, base + 400, buf, 1) == 0 && buf[0] == r[400]);
	r[400] ^= 0xff;
	CHECK(mw_proc_refresh(&p, err, sizeof(err)) == 0, "%s", err);
	CHECK(mw_proc_read(&p, base + 400, buf, 1) == 0 && buf[0] == r[400]);
	mw_proc_close(&p);
	CHECK(p.copy == NULL && !p.copying);
	return failed ? 1 : 0;
}
