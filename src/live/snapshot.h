/* snapshot.h - glibc's allocator state in a live process, read now.
 *
 * Walks what glibc's malloc_info() walks (malloc/malloc.c,
 * __malloc_info): every arena
 * on the `next` ring from main_arena, its fastbins and bins, the heaps
 * (heap_info) of each non-main arena from its top chunk back, the main
 * heap's extent from mp_.sbrk_base to the end of its top chunk, and mp_'s
 * thresholds and counters.  Layouts and addresses come from glibcinfo.h.
 *
 * First the process keeps running while it is read and takes no lock for
 * us: every pointer is checked against its mappings before it is
 * followed (procmem.h); an arena's lists are followed in a copy of its
 * memory taken as they are walked, 64 KiB at a time (procmem.h: a walk
 * of 2 million free chunks makes thousands of reads, not millions), after
 * its header and lock were read, and its header is read again after its walk,
 * and its lock (malloc_state.mutex), glibc's list_lock and
 * free_list_lock must be free before and after.  Anything that does not
 * add up marks the walk inconsistent (with the reason): a lock held, a
 * header changed, figures no allocator can have (free bytes beyond the
 * arena's system bytes, a top or free chunk reaching beyond the
 * mappings, another number of arenas on the ring than glibc's narenas).
 * A full walk of a running process counts only when the next walk gives
 * the same figures (a thread may change a bin between two locks).  The
 * walk is tried up to MW_SNAP_TRIES times.
 *
 * When none was consistent the process is stopped (ptstop.h: every
 * thread held by ptrace, PTRACE_SEIZE and PTRACE_INTERRUPT, nothing the
 * process can see but the time) and walked still.  The threads held
 * inside libc's code are first let finish what they do while the others
 * stay held (mw_ptstop_settle), so no thread is half-way through malloc
 * or free; a lock still held then is let go for 1, 2, 4 ... ms and
 * stopped again, up to MW_SNAP_STOPS times, every stop within the stop
 * bounds (mw_snapshot_stop_bounds).  mw_snapshot_no_stop(1), a process traced by another (gdb,
 * strace, or -c's program, traced by us), one we may not ptrace, or one
 * in a job-control stop (letting it go does not make it run) is not
 * stopped.  No consistent walk: no snapshot (MW_SNAP_INCONSISTENT); a
 * snapshot returned is consistent.
 *
 * The process may also be corrupt or hostile, so a snapshot is bounded
 * whatever its memory holds:
 *  - steps: one budget for every arena, heap_info and chunk visited in a
 *    snapshot, tries included: the process's readable mapped bytes / 16,
 *    at least MW_SNAP_MIN_STEPS.  Free chunks are disjoint and at least 32
 *    bytes, heaps at least a page, arenas 2200 bytes, so a real process
 *    stays under half of it;
 *  - loops: the arena ring, every heap_info chain, bin and fastbin list
 *    is followed with Brent's cycle finder (constant memory).  A loop
 *    found again on a fresh walk of the same list is proved: no retry,
 *    MW_SNAP_CORRUPT.  A bin walk that runs into its arena (another bin's
 *    head: a chunk moved meanwhile) is a race, not a loop;
 *  - time: a deadline over the whole snapshot, tries included (the
 *    timeout_ms argument; MW_SNAP_TIMEOUT_MS by default, --read-timeout);
 *  - memory: the arenas' records (at most MW_SNAP_MAX_ARENAS) and the
 *    heaps' (at most MW_SNAP_MAX_HEAPS in all, 24 bytes each); the copies
 *    of the process's memory, MW_PROC_COPY_MAX (1 GiB) over all the
 *    snapshots being taken at once (past it, reads go to the process one
 *    by one), freed when the snapshot is taken; 16 bytes a fastbin chunk
 *    for what malloc_consolidate would make of them (snapshot_consolidate.c).
 * glibc's per-thread tcache lists are not reachable from the arenas and
 * are not read.
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
#define MW_SNAP_STOPS 4		/* stopped walks after the lock-free ones */
#define MW_SNAP_MAX_ARENAS 65536	/* 8 x 8192 CPUs (glibc's own limit) */
#define MW_SNAP_MAX_HEAPS (1 << 20)	/* per snapshot: 64 TiB of heaps */
#define MW_SNAP_MIN_STEPS (1 << 20)	/* the step budget's floor */
#define MW_SNAP_TIMEOUT_MS 2000		/* the default deadline */
#define MW_SNAP_MAX_KEPT (1 << 21)	/* free chunks kept (mw_snapshot_take_chunks) */
#define MW_SNAP_MAX_STOP_MS 100	/* one stop, by default (--max-stop) */
#define MW_SNAP_MAX_STOPPED_MS 200	/* a snapshot's stops (--max-stopped) */
#define MW_SNAP_STOP_SHARE 1.0		/* a run's, beyond: % (--max-stopped-share) */

/* What mw_snapshot_take and the others return. */
enum {
	MW_SNAP_OK = 0,
	MW_SNAP_ERROR = -1,	/* the process is gone or cannot be read */
	MW_SNAP_TIMEOUT = -2,	/* not read within the deadline */
	MW_SNAP_CORRUPT = -3,	/* a proved loop, or the step budget spent */
	MW_SNAP_INCONSISTENT = -4,	/* no walk was consistent */
};

struct mw_snap_heap {
	uint64_t addr;			/* the heap_info */
	uint64_t size, mprotect_size;	/* heap_info.size, .mprotect_size */
};

/* A free chunk kept by mw_snapshot_take_chunks: its address and its size
 * in bytes (chunksize(), flag bits off), with MW_SNAP_CHUNK_FAST or'ed in
 * when it is in a fastbin (sizes are multiples of 16, so bit 0 is free). */
#define MW_SNAP_CHUNK_FAST 1ULL
struct mw_snap_chunk {
	uint64_t addr, size;
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
	uint64_t trimmable;	/* what malloc_trim(0) could give back at most,
				 * as its malloc_consolidate leaves the arena
				 * (fastbin chunks merged with the free chunks
				 * and top beside them): whole free pages inside
				 * binned chunks, and for main_arena the top
				 * beyond a minimum chunk */
	uint64_t fast_into_top;	/* free bytes malloc_consolidate would merge
				 * into the top (fastbin chunks and the binned
				 * ones between them) */
	uint64_t attached_threads;	/* malloc_state.attached_threads */
	int on_free_list;		/* on glibc's free_list (no thread attached) */
	struct mw_snap_heap *heaps;	/* non-main: newest (top's) first */
	size_t nheaps;
	uint64_t heap_bytes, heap_mprotect;	/* sums over heaps */
	size_t chunk0, nchunks;	/* its free chunks in mw_snapshot.chunks (kept) */
};

/* mw_snapshot.check: a later read found every word the walk read the
 * same (snapshot_record.c); no thread of the process ran while it was
 * read (quiet.h), so it was read once; it was read with every thread
 * held (ptstop.h); headers only (mw_snapshot_sample, a trace's samples,
 * never written as a snapshot), read once, their fields compared around
 * the walk. */
enum { MW_SNAP_CHECK_REREAD, MW_SNAP_CHECK_IDLE, MW_SNAP_CHECK_STOPPED, MW_SNAP_CHECK_HEADERS };

struct mw_snapshot {
	pid_t pid;
	char libc[4096];		/* the module malloc lives in */
	char dwarf_file[4096];		/* where the layouts came from */
	int libc_elsewhere;		/* libc names another file in our mount
					 * namespace (glibcinfo.h, elsewhere) */
	int glibc_minor;		/* 2.N; 0 unknown */
	uint64_t taken_ns;		/* CLOCK_REALTIME when taken */
	uint64_t duration_ns;		/* how long the reading took */
	int tries;			/* walks made, the stopped ones included */
	int check;			/* how the walk kept was shown to be of one
					 * instant: MW_SNAP_CHECK_* */
	int consistent;			/* 1 in every snapshot returned */
	char why[256];			/* a walk's inconsistency, while taken */
	int stops;			/* times the process was stopped (ptstop.h) */
	uint64_t stopped_ns;		/* how long it was held, all stops */
	int settle_rounds;		/* times threads were let go to leave libc */
	struct mw_snap_arena *arenas;	/* main_arena first, then the ring's order */
	size_t narenas;
	uint64_t narenas_glibc;		/* glibc's own count (arena.c narenas) */
	/* mp_ */
	uint64_t trim_threshold, top_pad, mmap_threshold, arena_test, arena_max;
	uint64_t n_mmaps, n_mmaps_max, max_n_mmaps, no_dyn_threshold;
	uint64_t mmapped_mem, max_mmapped_mem;
	/* sizeof(struct malloc_state), sizeof(struct malloc_chunk), MINSIZE */
	uint64_t mstate_size, chunk_hdr, minsize;
	/* the main heap: sbrk_base .. end of main_arena's top; the break */
	uint64_t sbrk_base, main_end, brk;
	/* totals over arenas */
	uint64_t system_bytes, free_bytes, in_use_bytes, trimmable;
	/* mw_snapshot_take_chunks only: every free chunk in a bin or fastbin
	 * (the top and tcache chunks are not), arena by arena; chunks_dropped
	 * when there were more than MW_SNAP_MAX_KEPT (the list is then
	 * incomplete, the counts above are not) */
	struct mw_snap_chunk *chunks;
	size_t nchunks, chunks_cap;
	int chunks_kept, chunks_dropped;
};

/* Never stop a process for a snapshot (on: 1), for the rest of the
 * program (the commands' --no-stop; -c, whose program we trace).  Off at
 * the start. */
void mw_snapshot_no_stop(int on);

/* The stop bounds for the rest of the program (the commands'
 * --max-stop, --max-stopped, --max-stopped-share; a value <= 0, or < 0
 * for the share, keeps the one set before): one stop holds a process at
 * most max_stop_ms, a snapshot's stops together at most max_stopped_ms,
 * and all of this run's stops of one process at most max_stopped_ms plus
 * share_pct % of the time since the first of them.  A stop is cut (its
 * walk inconsistent) where its time ends; one that could not last what a
 * read takes is not made, and the snapshot is refused, saying which
 * bound.  Defaults: MW_SNAP_MAX_STOP_MS, MW_SNAP_MAX_STOPPED_MS,
 * MW_SNAP_STOP_SHARE.  (mw_snapshot_hold's process stays held after its
 * stopped read, for the caller's call: that time is the caller's.) */
void mw_snapshot_stop_bounds(long max_stop_ms, long max_stopped_ms, double share_pct);

/* The bound on one stop now (--max-stop), ns. */
uint64_t mw_snapshot_max_stop_ns(void);

/* Read every later snapshot with the process stopped (no read while it
 * runs), and once one is consistent leave the process in a job-control
 * stop (SIGSTOP) at that very point, for a debugger or a core dump
 * (ptstop.h, mw_ptstop_leave_stopped); on 1.  A snapshot refused lets it
 * go as it was.  Off at the start (snapshot --leave-stopped). */
void mw_snapshot_leave_stopped(int on);

/* Take a consistent snapshot of process p with layout g into a new *out
 * (free it with mw_snapshot_free), within timeout_ms milliseconds (> 0;
 * 0: MW_SNAP_TIMEOUT_MS), stopping the process when the lock-free walks
 * fail (see above).  Must be called from the thread that will detach
 * (ptrace ties a tracee to its tracing thread).  MW_SNAP_OK; else no
 * snapshot and a one-line reason in err: MW_SNAP_ERROR when the process
 * is gone or cannot be read at all ("process 42 exited while it was
 * read", "cannot read process 42's memory: Operation not permitted"),
 * MW_SNAP_TIMEOUT ("process 42's allocator was not read within 2 s"),
 * MW_SNAP_CORRUPT ("arena 0x7f..: bin 5 list loops at chunk 0x55..: the
 * allocator is corrupt or hostile"), MW_SNAP_INCONSISTENT ("process 42:
 * no consistent snapshot (4 reads, 1 stop in 0.9 ms); not stopped:
 * process 42 is traced by process 7 (gdb): arena 0x7f.. is locked (a
 * thread is inside malloc or free)"). */
int mw_snapshot_take(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     struct mw_snapshot **out, char *err, size_t errlen);

/* mw_snapshot_take that also keeps every free chunk it follows
 * (s->chunks, at most MW_SNAP_MAX_KEPT, 16 bytes each), for the RSS
 * ledger (ledger.h).  Returns as mw_snapshot_take. */
int mw_snapshot_take_chunks(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
			    struct mw_snapshot **out, char *err, size_t errlen);

/* The same, without following any bin or fastbin: arenas' headers
 * (system_mem, top), their heaps, mp_ and the break, for periodic samples
 * (--interval) whose cost must not grow with the number of free chunks.
 * free_bytes is the top chunk's size only; fast and rest counts are 0. */
int mw_snapshot_sample(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		       struct mw_snapshot **out, char *err, size_t errlen);

struct mw_ptstop;

/* mw_snapshot_take_chunks, read only with the process stopped, whose
 * threads are then all outside malloc's code and whose locks are all
 * free (no lock-free reads; a process in a job-control stop, or whose
 * threads do not all leave malloc within the settling's 0.1 s, is
 * refused), and left held: on MW_SNAP_OK *held is the process's threads
 * held by ptrace (ptstop.h), at a point where a call into the allocator
 * (malloc_trim) takes no lock another thread holds; the caller lets them
 * go with mw_ptstop_resume, from this thread.  Else *held is NULL and
 * the status as mw_snapshot_take's. */
int mw_snapshot_hold(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     struct mw_snapshot **out, struct mw_ptstop **held, char *err, size_t errlen);

/* mw_snapshot_take_chunks for a read that must see the process as it was
 * (the RSS ledger, ledger.h): read only with the process stopped, and left
 * held there (*held, as mw_snapshot_hold, though the threads need not be
 * out of malloc's code: no call is made), with reserve_ns of the stop's
 * time kept for the caller's read: the walk ends that much before the
 * stop bounds do, and a stop that cannot hold both is not made (the
 * snapshot refused, saying so).  With mw_snapshot_leave_stopped on, the
 * process is left in its job-control stop instead (*held NULL).  Returns
 * as mw_snapshot_take. */
int mw_snapshot_keep(struct mw_proc *p, const struct mw_glibc *g, long timeout_ms,
		     uint64_t reserve_ns, struct mw_snapshot **out, struct mw_ptstop **held,
		     char *err, size_t errlen);

/* mw_proc_open + mw_snapshot_take + mw_proc_close, for one snapshot of
 * pid.  As mw_snapshot_take (MW_SNAP_ERROR also when pid cannot be
 * opened). */
int mw_snapshot_read(pid_t pid, struct mw_glibc *g, long timeout_ms, struct mw_snapshot **out,
		     char *err, size_t errlen);


/* Free s and what it holds; NULL allowed. */
void mw_snapshot_free(struct mw_snapshot *s);

#endif /* MALLOCWATCH_SNAPSHOT_H */
