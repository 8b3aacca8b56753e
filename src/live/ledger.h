/* ledger.h - where a process's resident memory is, glibc's malloc's
 * share of it part by part, and how fragmented each arena's free space is.
 *
 * From a snapshot that kept its free chunks (mw_snapshot_take_chunks),
 * the process's mappings with their resident and swapped sizes
 * (/proc/PID/smaps, proc(5)):
 *
 *	55d0c0a6e000-55d0c0a8f000 rw-p 00000000 00:00 0      [heap]
 *	Rss:                 132 kB
 *	Swap:                  0 kB
 *
 * and, page by page, whether each page of malloc's memory is resident or
 * swapped (/proc/PID/pagemap: one 64-bit word a page, bit 63 present,
 * bit 62 swapped, bits 0-54 the frame number, which only CAP_SYS_ADMIN
 * sees; kernel's Documentation/admin-guide/mm/pagemap.rst).  A page that
 * maps the shared zero page (read, never written) is present in pagemap
 * but not counted in Rss; when frame numbers can be seen the zero page's
 * is learnt (a page of our own read once) and such pages are not
 * resident here either.
 *
 * Every resident byte of the process goes to exactly one part:
 *  - an arena's memory - main_arena's heap from mp_.sbrk_base to the
 *    break, each heap_info heap from its start to its mprotect_size - is
 *    split page by page, byte by byte, into free chunks (bins and
 *    fastbins), the top chunk, heap slack (in the region but in no chunk:
 *    heap_info and malloc_state headers, pages past heap_info.size or
 *    past the main heap's top) and in use (the rest: chunks in use,
 *    tcache chunks included: they are not reachable from the arenas);
 *  - mmapped chunks: found in anonymous mappings that no heap covers, by
 *    their headers at the start of a resident or swapped page (the kernel
 *    merges adjacent mappings, so a chunk may start anywhere in one):
 *    prev_size 0, IS_MMAPPED alone, a page multiple that fits; their
 *    resident pages (the count and bytes found are set
 *    against mp_.n_mmaps and mp_.mmapped_mem);
 *  - not malloc's: everything else, as stacks (the main stack and every
 *    mapping holding a thread's stack pointer, /proc/PID/task/TID/syscall),
 *    shared memory (shmem: shared anonymous mappings, SysV and POSIX shm,
 *    memfds), files (code, data, mapped files), other anonymous memory, and the
 *    kernel's own ([vdso], [vvar]).
 * Mappings holding malloc's memory are counted page by page from pagemap;
 * the others take smaps' Rss.  The sum is set against smaps_rollup's Rss:
 * they agree within one page per mapping when the process did not change
 * meanwhile (the check's tolerance).
 *
 * Bounded like the snapshot, in size though not by its deadline: at most
 * MW_LEDGER_MAX_VMAS mappings, regions of at most 2^32 bytes each,
 * MW_LEDGER_MAX_PAGES pages of the mappings holding them read from
 * pagemap (past that the ledger is incomplete), MW_LEDGER_MAX_MMAPPED
 * pages looked at for mmapped chunks (16 bytes read from each resident
 * one, batched);
 * every pointer from the process is checked against its mappings.
 * All sizes are bytes.
 */
#ifndef MALLOCWATCH_LEDGER_H
#define MALLOCWATCH_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmem.h"
#include "snapshot.h"

#define MW_LEDGER_MAX_VMAS (1 << 20)
#define MW_LEDGER_MAX_MMAPPED (1 << 22)	/* pages looked at for mmapped chunks */
#define MW_LEDGER_MAX_PAGES (1ULL << 26)	/* pagemap words read for the arenas'
						 * mappings (256 GiB of 4 KiB pages) */
#define MW_FRAG_BUCKETS 22		/* free chunk sizes by powers of two */

/* One account, bytes.  rss = in_use + free_resident + top + mmapped +
 * heap_slack + not_malloc; free_returned and top_returned are free bytes
 * whose pages are not resident (given back, or never touched),
 * in_use_gone and mmapped_gone bytes in use (in the arenas' chunks, in
 * mmapped chunks) on pages not resident (never written, or swapped),
 * swapped malloc's pages in swap: none of them is in rss.  For an arena,
 * mmapped, mmapped_gone and not_malloc are 0 (they are the process's). */
struct mw_ledger_part {
	uint64_t rss, in_use, free_resident, free_returned, top, top_returned, mmapped,
		heap_slack, not_malloc, swapped, in_use_gone, mmapped_gone;
};

/* Fragmentation of an arena's free chunks (bins and fastbins; the top
 * is not one of them).  Bucket i holds sizes in [2^(i+5), 2^(i+6)); the
 * first also smaller ones, the last also larger ones. */
struct mw_frag {
	uint64_t count[MW_FRAG_BUCKETS], bytes[MW_FRAG_BUCKETS];
	uint64_t nfree, largest;	/* free chunks; the largest one's size */
	uint64_t pinned;	/* free bytes on pages that also hold bytes in use:
				 * no trim can give them back */
	uint64_t free_pages_resident;	/* whole pages of free chunks, resident */
	uint64_t trim_now;	/* resident bytes malloc_trim(0) would give back
				 * now, by its own rule (malloc.c mtrim: pages past
				 * each free run's header; main_arena's top past
				 * MINSIZE when the break is its end) */
};

struct mw_ledger_arena {
	struct mw_ledger_part l;
	struct mw_frag f;
};

struct mw_ledger {
	pid_t pid;
	uint64_t page;			/* the page size */
	struct mw_ledger_part total;	/* the whole process */
	struct mw_frag frag;		/* over all arenas (largest: the largest) */
	struct mw_ledger_arena *arenas;	/* as the snapshot's arenas */
	size_t narenas;
	/* not_malloc, by kind */
	uint64_t nm_stack, nm_file, nm_anon, nm_kernel, nm_shm;	/* shm: shared memory */
	size_t nstacks;			/* thread stacks found by stack pointer */
	size_t nm_anon_maps;		/* mappings with resident bytes in nm_anon */
	uint64_t nm_anon_largest, nm_anon_largest_at;	/* the one with the most
							 * (its Rss, its start) */
	/* mmapped chunks found in the mappings */
	uint64_t mmapped_found, mmapped_found_bytes;
	uint64_t peak_rss;	/* the process's peak RSS (VmHWM, /proc/PID/status); 0 unknown */
	/* the check against smaps_rollup */
	uint64_t rollup_rss, rollup_swap;
	size_t nvmas, npaged;	/* mappings; those counted page by page */
	uint64_t paged_disagree;	/* sum over those of |pages present - Rss| */
	uint64_t tolerance;	/* one page per mapping */
	int64_t diff;		/* total.rss - rollup_rss */
	int ok;			/* |diff| <= tolerance */
	int zero_page_known;	/* the zero page's frame was learnt */
	int incomplete;		/* a part could not be counted: why */
	char why[256];
	/* how it was read (explain.h sets them): the readings made (the last
	 * is this one), how long the process was held for it (0: it ran),
	 * why it was not held ("" when it was, or added up) */
	int readings;
	uint64_t read_ns, held_ns;
	uint64_t max_stop_ns;	/* the bound on one stop then (held_ns may pass
				 * it when the ledger's read took longer than
				 * foreseen: the report says so) */
	char not_held[400];
};

/* The ledger of process p (its mappings read again) from s, a snapshot
 * of it taken by mw_snapshot_take_chunks, into a new *out (free it with
 * mw_ledger_free).  0, or -1 with a one-line reason in err when p's
 * smaps or pagemap cannot be read ("cannot read '/proc/42/pagemap': ...").
 * A region that cannot be counted (a hostile heap size, a free chunk
 * list cut at MW_SNAP_MAX_KEPT) marks the ledger incomplete, with why. */
int mw_ledger_read(struct mw_proc *p, const struct mw_snapshot *s, struct mw_ledger **out,
		   char *err, size_t errlen);

/* mw_ledger_read, done by `by` (CLOCK_MONOTONIC ns; 0 no bound): a read
 * still going then is given up, -1 with "its read did not end within the
 * stop's time (--max-stop)" in err (a process held for the read is let
 * go within its stop bound). */
int mw_ledger_read_by(struct mw_proc *p, const struct mw_snapshot *s, uint64_t by,
		      struct mw_ledger **out, char *err, size_t errlen);

/* Free l and what it holds; NULL allowed. */
void mw_ledger_free(struct mw_ledger *l);

/* The bucket of mw_frag for a free chunk of size bytes. */
int mw_frag_bucket(uint64_t size);

#endif /* MALLOCWATCH_LEDGER_H */
