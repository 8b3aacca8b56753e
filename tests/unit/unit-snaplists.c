/* unit-snaplists.c - an arena's lists walked (snapshot_lists.c), in a
 * heap built in this very process's memory (procmem-harness.h) with a
 * glibc layout of the test's own: the lists side by side first, and
 * when that finds anything wrong, in turn, whose first reason is the one
 * given (the side-by-side walk's first is another); both walks take
 * their steps from one budget (w->max_steps): the walk in turn used to
 * start again with the steps the side-by-side walk had taken given back,
 * so that a hostile heap cost two budgets. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "glibcinfo.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "unit.h"
#include "procmem-harness.h"

#define MIB (1UL << 20)
#define BINS 4		/* bins 1..4; no fastbins hold chunks */
#define BINS_OFF 112	/* bins[] in the arena, as in glibc 2.36 */

/* malloc_state: two empty fastbins at 16, bins[] at BINS_OFF; chunks:
 * size at 8, fd at 16. */
static struct mw_glibc g = {
	.mstate_size = 2200, .nfastbins = 2, .fastbin_slot = 8, .nbin_slots = 2 * BINS,
	.bin_slot = 8, .ms_fastbins = { 16, 8 }, .ms_bins = { BINS_OFF, 8 },
	.chunk_struct_size = 48, .ch_size = { 8, 8 }, .ch_fd = { 16, 8 },
};

/* Bin i's fd word, in the arena at arena; its head (bin_at()). */
static uint64_t *bin_fd(unsigned char *arena, int i)
{
	return (uint64_t *)(arena + BINS_OFF + (i - 1) * 16);
}

static uint64_t bin_head(unsigned char *arena, int i)
{
	return (uintptr_t)bin_fd(arena, i) - 16;
}

/* Bin i of arena: n chunks of 32 bytes from at, stride apart, the last
 * one's fd the bin's head, or, bad, a misaligned address (returned). */
static uint64_t bin_list(unsigned char *arena, int i, unsigned char *at, size_t stride, int n,
			 int bad)
{
	uint64_t head = bin_head(arena, i);

	*bin_fd(arena, i) = (uintptr_t)at;
	for (int k = 0; k < n; k++) {
		unsigned char *c = at + (size_t)k * stride;

		*(uint64_t *)(c + 8) = 32 | 1;
		*(uint64_t *)(c + 16) = k < n - 1 ? (uintptr_t)(c + stride) :
					bad ? (uintptr_t)(c + 8 * MIB + 8) : head;
	}
	return (uintptr_t)(at + (size_t)(n - 1) * stride + 8 * MIB + 8);
}

struct walked {
	int r, consistent, stop;
	uint64_t steps;
	char why[256];
};

/* The lists of the arena at arena walked with a budget of max steps. */
static struct walked walk(struct mw_proc *p, unsigned char *arena, uint64_t max)
{
	struct mw_snapshot s = { .consistent = 1 };
	struct walk w = { .p = p, .g = &g, .s = &s, .page = 4096, .max_steps = max,
			  .readable = max * 16, .deadline = mw_now_ns() + 60000000000ULL };
	struct mw_snap_arena a = { .addr = (uintptr_t)arena };
	struct walked o;

	mw_proc_copy_drop(p);
	o.r = mw_snap_lists(&w, &a);
	o.consistent = s.consistent;
	o.stop = w.stop;
	o.steps = w.steps;
	snprintf(o.why, sizeof(o.why), "%s", w.stop ? w.stop_why : s.why);
	mw_snap_recs_free(&w);
	free(w.fast);
	free(s.chunks);
	return o;
}

int main(void)
{
	unsigned char *r = aligned_region(16 * MIB, MW_PROC_BLOCK), *arena = r;
	struct mw_proc p;
	struct walked o;
	uint64_t bad1, bad2;
	char want[64];

	if (open_self(&p, r) < 0)
		return 1;
	/* bin 1: 1000 chunks in one block; bin 2: 3, the last one's fd
	 * misaligned.  Side by side, bin 1 is walked whole in its first
	 * turn, then bin 2 fails: 1003 steps; in turn again 1003 */
	bin_list(arena, 1, r + MW_PROC_BLOCK, 64, 1000, 0);
	bad2 = bin_list(arena, 2, r + 2 * MW_PROC_BLOCK, 64, 3, 1);
	snprintf(want, sizeof(want), "misaligned chunk 0x%llx", (unsigned long long)bad2);
	o = walk(&p, arena, 1000000);
	CHECK(o.r < 0 && !o.consistent && strcmp(o.why, want) == 0, "r %d, why '%s'", o.r, o.why);
	CHECK(o.steps == 2 * 1003, "%llu steps counted for two walks of 1003",
	      (unsigned long long)o.steps);
	/* a budget of 1500 (lists holding more chunks than its 24000 bytes
	 * could: a hostile heap's): the walk in turn gets the 497 left,
	 * not 1500 again, and stops with that reason */
	o = walk(&p, arena, 1500);
	CHECK(o.r < 0 && o.stop == MW_SNAP_CORRUPT && o.steps <= 1501 &&
	      strstr(o.why, "more than 1500 arenas, heaps and free chunks"),
	      "%llu steps of a budget of 1500: r %d, stop %d, why '%s'",
	      (unsigned long long)o.steps, o.r, o.stop, o.why);
	/* bin 1: 200 chunks 8 KiB apart, the last one's fd misaligned,
	 * far behind the side-by-side walk when it finds bin 2's; the
	 * reason given is bin 1's, the first the walk in turn finds */
	memset(arena, 0, 4096);
	bad1 = bin_list(arena, 1, r + 4 * MIB, 8192, 200, 1);
	bin_list(arena, 3, r + 2 * MW_PROC_BLOCK + 4096, 64, 5, 0);
	bad2 = bin_list(arena, 2, r + 2 * MW_PROC_BLOCK, 64, 3, 1);
	snprintf(want, sizeof(want), "misaligned chunk 0x%llx", (unsigned long long)bad1);
	o = walk(&p, arena, 1000000);
	CHECK(o.r < 0 && !o.consistent && strcmp(o.why, want) == 0,
	      "the first reason: '%s', not '%s' (bin 2's 0x%llx)", o.why, want,
	      (unsigned long long)bad2);
	/* whole lists: the figures, in one walk */
	memset(arena, 0, 4096);
	bin_list(arena, 1, r + MW_PROC_BLOCK, 64, 1000, 0);
	bin_list(arena, 4, r + 3 * MW_PROC_BLOCK, 64, 7, 0);
	o = walk(&p, arena, 1000000);
	CHECK(o.r == 0 && o.consistent && o.steps == 1007, "r %d, %llu steps, why '%s'", o.r,
	      (unsigned long long)o.steps, o.why);
	mw_proc_close(&p);
	mw_proc_copy_spare_free();
	return failed ? 1 : 0;
}
