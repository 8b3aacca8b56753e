/* ledger_int.h - what ledger.c and ledger_maps.c share: the process's
 * mappings with their Rss, the ranges malloc owns, and pagemap reads.
 * Sizes in bytes, addresses the process's. */
#ifndef MALLOCWATCH_LEDGER_INT_H
#define MALLOCWATCH_LEDGER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmem.h"

/* what a mapping is, for not_malloc */
enum { LG_ANON, LG_FILE, LG_STACK, LG_KERNEL, LG_SHM };

struct lg_vma {
	uint64_t start, end;	/* [start, end) */
	uint64_t rss, swap;	/* smaps' Rss and Swap */
	uint64_t inode;
	char perms[8];		/* "rw-p" */
	char name[64];		/* the pathname's start, or "[heap]" ... */
	int kind;		/* LG_* */
	int paged;		/* holds malloc's memory: counted from pagemap */
};

/* A range malloc owns: an arena's region (arena >= 0: [start, end) page
 * aligned, its chunks in [cstart, cend)) or an mmapped chunk (arena -1,
 * [start, end) = cstart, cend). */
struct lg_range {
	uint64_t start, end, cstart, cend;
	int arena;
};

/* /proc/PID/smaps into a new array *v of *n mappings, sorted (as the
 * kernel lists them).  0, or -1 with a reason in err. */
int lg_read_smaps(pid_t pid, struct lg_vma **v, size_t *n, char *err, size_t errlen);

/* smaps_rollup's Rss and Swap, bytes; -1 when it cannot be read. */
int lg_read_rollup(pid_t pid, uint64_t *rss, uint64_t *swap);

/* VmHWM of /proc/PID/status, bytes; 0 when it cannot be read. */
uint64_t lg_peak_rss(pid_t pid);

/* Mark as LG_STACK the anonymous mappings holding a thread's stack
 * pointer (/proc/PID/task/TID/syscall, second last field); the number
 * of such mappings. */
size_t lg_mark_stacks(pid_t pid, struct lg_vma *v, size_t n);

/* A free interval [s, e) of arena `arena`: a free chunk, or its top. */
struct lg_ival {
	uint64_t s, e;
	int arena, top;
};

/* Sort v[0..n) by s (ledger.c; stable from 4096 intervals on, a radix
 * sort: a walk of 2 million free chunks gives as many). */
void lg_sort_ivals(struct lg_ival *v, size_t n);

/* The zero page's frame number (a page of ours read once, through
 * /proc/self/pagemap); 0 when frame numbers are hidden from us. */
uint64_t lg_zero_pfn(void);

/* npages pagemap words from addr (page aligned) into buf: 0 or -1. */
int lg_pagemap(int fd, uint64_t addr, uint64_t page, uint64_t *buf, size_t npages);

/* The mmapped chunks in the anonymous read-write mappings of v that
 * overlap no range of r (n of them), appended to *r (grown; *cap) as
 * arena -1 ranges; at most MW_LEDGER_MAX_MMAPPED pages looked at.  The
 * number of chunks found. */
size_t lg_find_mmapped(struct mw_proc *p, const struct lg_vma *v, size_t nv, uint64_t page,
		       struct lg_range **r, size_t *n, size_t *cap);

#endif /* MALLOCWATCH_LEDGER_INT_H */
