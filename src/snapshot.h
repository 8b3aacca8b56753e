/* snapshot.h - glibc's allocator state in a live process, read now.
 *
 * Walks what glibc's malloc_info() walks (malloc/malloc.c,
 * __malloc_info) without stopping or signalling the process: every arena
 * on the `next` ring from main_arena, its fastbins and bins, the heaps
 * (heap_info) of each non-main arena from its top chunk back, the main
 * heap's extent from mp_.sbrk_base to the end of its top chunk, and mp_'s
 * thresholds and counters.  Layouts and addresses come from glibcinfo.h.
 *
 * The process keeps running while it is read and takes no lock for us:
 * every pointer is checked against its mappings before it is followed
 * (procmem.h), every walk has a step limit, and an arena's header is read
 * again after its walk.  Anything that does not add up marks the
 * snapshot inconsistent (with the reason) instead of failing; the whole
 * walk is tried up to MW_SNAP_TRIES times for a consistent one.
 *
 * Counting follows malloc_info(0, fp) exactly, so the two can be
 * compared: "fast" = chunks in fastbins (count, and count x the first
 * chunk's size per bin), "rest" = the top chunk (size without flag bits)
 * plus every chunk in bins 1..NBINS-1 (each chunk's size field as stored,
 * flag bits included, as malloc_info adds them).  All sizes in bytes.
 */
#ifndef MALLOCWATCH_SNAPSHOT_H
#define MALLOCWATCH_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glibcinfo.h"
#include "procmem.h"

#define MW_SNAP_TRIES 3
#define MW_SNAP_MAX_ARENAS 4096
#define MW_SNAP_MAX_HEAPS 65536		/* per arena */
#define MW_SNAP_MAX_CHUNKS 20000000	/* free chunks followed, per snapshot */

struct mw_snap_heap {
	uint64_t addr;			/* the heap_info */
	uint64_t size, mprotect_size;	/* heap_info.size, .mprotect_size */
};

struct mw_snap_arena {
	uint64_t addr;
	int is_main;
	uint64_t system_mem, max_system_mem;	/* malloc_state's */
	uint64_t top, top_size;			/* top chunk and its size */
	uint64_t fast_count, fast_bytes;	/* malloc_info "fast" */
	uint64_t rest_count, rest_bytes;	/* malloc_info "rest" (top included) */
	uint64_t free_bytes;	/* fast + top + bins, sizes without flag bits:
				 * free but retained by the arena */
	uint64_t trimmable;	/* what malloc_trim(0) could give back at most:
				 * whole free pages inside binned chunks, and for
				 * main_arena the top beyond a minimum chunk */
	uint64_t attached_threads;	/* malloc_state.attached_threads */
	int on_free_list;		/* on glibc's free_list (no thread attached) */
	struct mw_snap_heap *heaps;	/* non-main: newest (top's) first */
	size_t nheaps;
	uint64_t heap_bytes, heap_mprotect;	/* sums over heaps */
};

struct mw_snapshot {
	pid_t pid;
	char libc[4096];		/* the module malloc lives in */
	char dwarf_file[4096];		/* where the layouts came from */
	int glibc_minor;		/* 2.N; 0 unknown */
	uint64_t taken_ns;		/* CLOCK_REALTIME when taken */
	uint64_t duration_ns;		/* how long the reading took */
	int tries;			/* walks made (1..MW_SNAP_TRIES) */
	int consistent;			/* 0: see why */
	char why[256];
	struct mw_snap_arena *arenas;	/* main_arena first, then the ring's order */
	size_t narenas;
	uint64_t narenas_glibc;		/* glibc's own count (arena.c narenas) */
	/* mp_ */
	uint64_t trim_threshold, top_pad, mmap_threshold, arena_test, arena_max;
	uint64_t n_mmaps, n_mmaps_max, max_n_mmaps, no_dyn_threshold;
	uint64_t mmapped_mem, max_mmapped_mem;
	/* the main heap: sbrk_base .. end of main_arena's top; the break */
	uint64_t sbrk_base, main_end, brk;
	/* totals over arenas */
	uint64_t system_bytes, free_bytes, in_use_bytes, trimmable;
};

/* Take a snapshot of process p with layout g into a new *out (free it
 * with mw_snapshot_free).  0, also for an inconsistent snapshot; -1 with
 * a one-line reason in err when the process is gone or cannot be read
 * at all ("process 42 exited while it was read", "cannot read process
 * 42's memory: Operation not permitted"). */
int mw_snapshot_take(struct mw_proc *p, const struct mw_glibc *g,
		     struct mw_snapshot **out, char *err, size_t errlen);

/* The same, without following any bin or fastbin: arenas' headers
 * (system_mem, top), their heaps, mp_ and the break, for periodic samples
 * (--interval) whose cost must not grow with the number of free chunks.
 * free_bytes is the top chunk's size only; fast and rest counts are 0. */
int mw_snapshot_sample(struct mw_proc *p, const struct mw_glibc *g,
		       struct mw_snapshot **out, char *err, size_t errlen);

/* mw_proc_open + mw_snapshot_take + mw_proc_close, for one snapshot of
 * pid.  0 or -1 with err. */
int mw_snapshot_read(pid_t pid, struct mw_glibc *g, struct mw_snapshot **out, char *err,
		     size_t errlen);

/* The arena at addr in s, or NULL. */
const struct mw_snap_arena *mw_snapshot_arena(const struct mw_snapshot *s, uint64_t addr);

void mw_snapshot_free(struct mw_snapshot *s);

#endif /* MALLOCWATCH_SNAPSHOT_H */
