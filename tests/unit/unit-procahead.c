/* unit-procahead.c - blocks copied ahead of a walk by a thread of their
 * own (procahead.c), on this very process: a walk down through a big
 * mapping, block after block, has the blocks below read ahead (more
 * blocks copied than it read) by one more thread, with every signal
 * blocked; every byte read is the process's, from a copy or not; reading
 * ahead stops at the mapping's end (a PROT_NONE hole below it: EFAULT, as
 * without copies); memory unmapped meanwhile is never read as anything
 * but what it held or EFAULT; the thread is gone once the copies are
 * freed, and a drop while blocks are queued leaves no stale copy. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmem.h"
#include "unit.h"
#include "procmem-harness.h"

#define MIB (1UL << 20)
#define BLOCKS 128	/* the region above the hole: 8 MiB */

/* Threads of this process now. */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* The signals blocked in this process's thread other than this one:
 * SigBlk of /proc/self/task/TID/status, or 0 when there is none. */
static unsigned long long other_sigblk(void)
{
	char path[300], line[256];
	unsigned long long v = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != getpid()) {
			FILE *f;

			snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
			if ((f = fopen(path, "re"))) {
				while (fgets(line, sizeof(line), f))
					sscanf(line, "SigBlk: %llx", &v);
				fclose(f);
			}
		}
	if (d)
		closedir(d);
	return v;
}

/* A region of 1 MiB PROT_NONE, then BLOCKS blocks, each word its own
 * address; block-aligned. */
static unsigned char *region(void)
{
	size_t len = MIB + BLOCKS * MW_PROC_BLOCK;
	unsigned char *r = aligned_region(len, MIB);

	if (!r)
		return NULL;
	for (size_t i = MIB; i < len; i += 8)
		*(uint64_t *)(r + i) = (uintptr_t)(r + i);
	mprotect(r, MIB, PROT_NONE);
	return r + MIB;
}

/* Read one word in each block from block `from` down to `to`, 200 bytes
 * in: 0 when each is its address. */
static int walk_down(struct mw_proc *p, const unsigned char *r, int from, int to)
{
	int bad = 0;

	for (int k = from; k >= to; k--) {
		uint64_t a = (uintptr_t)r + (uint64_t)k * MW_PROC_BLOCK + 200, v = 0;

		if (mw_proc_word(p, a, &v) < 0 || v != a)
			bad++;
	}
	return bad;
}

int main(void)
{
	unsigned char *r = region();
	uint64_t base = (uintptr_t)r, v = 0, blocks = 0;
	int before = threads(), bad = 0;
	struct mw_proc p;

	if (open_self(&p, r) < 0)
		return 1;
	/* down from the top: 40 blocks read, more copied; one more thread */
	CHECK(walk_down(&p, r, BLOCKS - 1, BLOCKS - 40) == 0);
	mw_proc_copied(&p, &blocks);
	CHECK(blocks > 40, "%llu blocks copied for 40 read", (unsigned long long)blocks);
	CHECK(threads() == before + 1, "%d threads, %d before", threads(), before);
	/* signals 1 to 31 but SIGKILL and SIGSTOP: bit N-1 each */
	CHECK((other_sigblk() & 0x7ffbfeffULL) == 0x7ffbfeffULL, "the reader blocks %llx",
	      other_sigblk());
	/* dropped while blocks are queued: what is read next is what is there now */
	*(uint64_t *)(r + (BLOCKS - 50) * MW_PROC_BLOCK + 200) = 7;
	mw_proc_copy_drop(&p);
	CHECK(mw_proc_word(&p, base + (BLOCKS - 50) * MW_PROC_BLOCK + 200, &v) == 0 && v == 7);
	*(uint64_t *)(r + (BLOCKS - 50) * MW_PROC_BLOCK + 200) = base + (BLOCKS - 50) *
								   MW_PROC_BLOCK + 200;
	mw_proc_copy_drop(&p);
	/* the whole way down again, then into the hole below: EFAULT */
	CHECK(walk_down(&p, r, BLOCKS - 1, 0) == 0);
	errno = 0;
	CHECK(mw_proc_word(&p, base - 8, &v) < 0 && errno == EFAULT);
	/* unmapped meanwhile (the maps not read again): what it held, or EFAULT */
	mw_proc_copy_drop(&p);
	CHECK(walk_down(&p, r, BLOCKS - 1, BLOCKS - 30) == 0);
	munmap(r, (BLOCKS - 40) * MW_PROC_BLOCK);
	for (int k = BLOCKS - 31; k >= 0; k--) {
		uint64_t a = base + (uint64_t)k * MW_PROC_BLOCK + 200;

		errno = 0;
		v = 0;
		if (mw_proc_word(&p, a, &v) == 0 ? v != a : errno != EFAULT)
			bad++;
	}
	CHECK(bad == 0, "%d blocks read wrong", bad);
	mw_proc_close(&p);
	CHECK(threads() == before, "%d threads after, %d before", threads(), before);
	mw_proc_copy_spare_free();
	return failed ? 1 : 0;
}
