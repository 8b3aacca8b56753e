/* snapshot_int.h - what the snapshot's files share: snapshot.c (the
 * walk), snapshot_lists.c (an arena's lists), snapshot_steps.c (a step
 * along one), snapshot_read.c (the walk's
 * checked reads), snapshot_consolidate.c, snapshot_record.c,
 * snapshot_stop.c (its verdicts, and the threads let out of malloc) and
 * snapshot_take.c (the reads, running and stopped).  Not a public
 * interface: snapshot.h is. */
#ifndef MALLOCWATCH_SNAPSHOT_INT_H
#define MALLOCWATCH_SNAPSHOT_INT_H

#include <stdint.h>
#include <time.h>

#include "snapshot.h"

struct walk {
	struct mw_proc *p;
	const struct mw_glibc *g;
	struct mw_snapshot *s;
	uint64_t page;
	int fatal;		/* the process is gone or unreadable */
	int headers_only;	/* mw_snapshot_sample: no bins followed */
	int keep;		/* mw_snapshot_take_chunks: keep free chunks */
	uint64_t steps, max_steps;	/* arenas, heaps and chunks visited, over
					 * all tries, and the budget */
	uint64_t readable;	/* the process's readable mapped bytes */
	uint64_t deadline;	/* CLOCK_MONOTONIC ns */
	size_t nheaps;		/* heaps recorded in this walk, all arenas */
	int stop;		/* MW_SNAP_TIMEOUT or MW_SNAP_CORRUPT: give up */
	size_t arenas_locked;	/* arenas whose lock this walk found held */
	uint64_t first_locked, arena_locked;	/* the first such, the last */
	int list_locked;	/* glibc's list_lock held */
	int settled;		/* stopped, every thread known out of malloc's code */
	const char *unsettled;	/* stopped, not settled: why (else NULL) */
	char stop_why[200];	/* the corruption, for MW_SNAP_CORRUPT */
	int leave_stopped;	/* mw_snapshot_leave_stopped */
	int hold;		/* keep it held once consistent: MW_HOLD_CALL
				 * (mw_snapshot_hold: every thread out of malloc,
				 * for a call), MW_HOLD_READ (mw_snapshot_keep:
				 * for reading it still) */
	uint64_t reserve;	/* ns of each stop left to the caller's read */
	struct mw_ptstop *held;	/* then: the threads held */
	uint64_t figures;	/* the last consistent walk's (mw_snap_confirm) */
	int have_figures;
	/* the arena's fastbin chunks, for what malloc_consolidate makes of
	 * them (snapshot_consolidate.c): address | MW_SNAP_F_* flags | size / 16 << 48 */
	uint64_t *fast;
	size_t nfast, fast_cap;
	uint64_t walk_ns;	/* the least CPU time of a running walk: what a
				 * stopped one will take (0: not known) */
	int execd;		/* the process exec'd while it was read */
	uint64_t image;		/* mw_ptstop_image at the start */
	/* the arenas' lists as an earlier walk found them, with the words it
	 * read (snapshot_record.c) */
	struct mw_snap_rec *recs;
	size_t nrecs, recs_cap;
	int rec_lost;		/* a list walked twice in one walk (reread) */
	int verified;		/* lists taken from records in this walk */
};

enum { MW_HOLD_CALL = 1, MW_HOLD_READ = 2 };

#include "snapshot_read.h"	/* snapshot_read.c's: the walk's reads, steps, marks */

/* glibc's chunk flag bits (malloc.c: PREV_INUSE, IS_MMAPPED,
 * NON_MAIN_ARENA), masked off by chunksize(). */
#define MW_SNAP_SIZE_BITS 7ULL

/* The verdicts (snapshot_stop.c).  mw_snap_held: is the 4-byte lock at addr
 * held?  1, 0 (or unknown: addr 0), -1 unreadable (marked).
 * mw_snap_arena_lock: arena a's lock before (after 0) or after its walk,
 * a held one counted once per arena.  mw_snap_judge_locks: at the walk's
 * end, marks it for a lock held, unless the locks held are fork()'s.
 * mw_snap_implausible: marks (-1) an arena with figures no allocator can
 * have. */
int mw_snap_held(struct walk *w, uint64_t addr);
void mw_snap_arena_lock(struct walk *w, const struct mw_snap_arena *a, int after);
void mw_snap_judge_locks(struct walk *w);
int mw_snap_implausible(struct walk *w, const struct mw_snap_arena *a);

/* Brent's cycle finder, fed a list's nodes one by one, in constant
 * memory: a node equal to the one saved closes a loop, found at most
 * about mu + 2 lambda nodes in (mu before the loop, lambda on it). */
struct brent {
	uint64_t saved, power, lam;
};

void mw_snap_brent_init(struct brent *b, uint64_t first);

/* 1 when x closes a loop (x is on it), else 0. */
static inline int mw_snap_brent_loops(struct brent *b, uint64_t x)
{
	if (x == b->saved)
		return 1;
	if (b->lam == b->power) {
		b->saved = x;
		b->power *= 2;
		b->lam = 0;
	}
	b->lam++;
	return 0;
}

/* One free list followed (snapshot_steps.c): a fastbin (fast) or a bin,
 * its next chunk p (done: none, or back at the bin's head), its Brent
 * state and what its chunks add up to.  mw_snap_cursor_fast and
 * mw_snap_cursor_bin start list i of arena a from its head: 0; -1
 * (marked).  mw_snap_cursor_step: chunk p checked, read, kept, (a
 * fastbin's) noted for mw_snap_consolidate and counted: 0, more to
 * come; 1, the list ended (done); 2, it loops through *at; -1 (marked
 * or halted). */
struct mw_snap_list {
	uint64_t n, first;	/* chunks; the first one's size */
	uint64_t raw;		/* size fields as stored (flag bits in) */
	uint64_t bytes;		/* sizes */
	uint64_t trimmable;	/* mw_snap_chunk_trimmable() */
};

struct mw_snap_cursor {
	const struct mw_snap_arena *a;
	int fast, done;
	uint64_t head, p;
	struct brent b;
	struct mw_snap_list c;
};

int mw_snap_cursor_fast(struct walk *w, const struct mw_snap_arena *a, int i,
			struct mw_snap_cursor *k);
int mw_snap_cursor_bin(struct walk *w, const struct mw_snap_arena *a, int i,
		       struct mw_snap_cursor *k);
int mw_snap_cursor_step(struct walk *w, struct mw_snap_cursor *k, uint64_t *at);

/* Fastbin chunk p of arena a, its size field sz as stored, noted for
 * mw_snap_consolidate with what lies beside it: 0; -1 (marked). */
int mw_snap_fast_note(struct walk *w, const struct mw_snap_arena *a, uint64_t p, uint64_t sz);

/* What malloc_trim(0) would give back of arena a once its
 * malloc_consolidate has merged the noted fastbin chunks with the free
 * chunks and top beside them, into a->trimmable and a->fast_into_top;
 * the notes dropped.  0; -1 (marked). */
int mw_snap_consolidate(struct walk *w, struct mw_snap_arena *a);

/* The records of an arena's lists (snapshot_record.c).  mw_snap_rec_use: when
 * this snapshot walked arena a's lists before (top and mappings as now)
 * and the process still holds every word that walk read
 * (mw_proc_marks_same), their figures and kept chunks go into a as that
 * walk found them: 0; 1 when they are to be walked; -1 (marked: the
 * process is gone, or out of time).  mw_snap_rec_begin, before the
 * lists are walked from a fresh copy: marks on.  mw_snap_rec_end, after
 * (r: the walk's result): the marks and what the lists added to a
 * recorded, when r is 0 and the marks hold every word read.
 * mw_snap_recs_free: all of them. */
int mw_snap_rec_use(struct walk *w, struct mw_snap_arena *a);
void mw_snap_rec_begin(struct walk *w, const struct mw_snap_arena *a);
void mw_snap_rec_end(struct walk *w, const struct mw_snap_arena *a, int r);
void mw_snap_recs_free(struct walk *w);

/* One walk of everything into w->s, consistent or marked with why. */
void mw_snap_walk(struct walk *w);

/* An arena's lists (snapshot_lists.c).  mw_snap_lists: arena a's
 * fastbins and bins, after its header and lock were read, as an earlier
 * walk found them or walked in a copy of its memory taken now.
 * mw_snap_heaps: a non-main arena's heap_info chain from its top's heap
 * back.  0 or -1 (marked or halted). */
int mw_snap_lists(struct walk *w, struct mw_snap_arena *a);
int mw_snap_heaps(struct walk *w, struct mw_snap_arena *a, uint64_t hp_pagesize);

/* A consistent walk of a running process counts when the one before it
 * gave the same figures (arenas, their system, free and top bytes, free
 * chunk counts, heaps, the break, mp_'s counters): else it is marked
 * inconsistent, and its figures kept for the next. */
void mw_snap_confirm(struct walk *w);

struct mw_ptstop;
struct mw_snap_unwinder;

/* Let the held threads (st) that are inside malloc's code finish what
 * they do (mw_ptstop_settle: none let go past budget_end or w's
 * deadline, each stopped again by stop_by), unless the process is in a
 * job-control stop or past that already; the unwinder is made at the
 * first call into *up if it was not (mw_snap_unwinder_new; free it with
 * mw_snap_unwinder_free; NULL is fine).  1 when settled, 0 when not
 * (then only a process with more than one thread can be judged: by its
 * locks), with why not into why: the job-control stop, the time spent,
 * the unwinder that could not be made, the thread whose stack could not
 * be unwound, or the one still inside malloc's code at the deadline. */
int mw_snap_settle(struct walk *w, struct mw_ptstop *st, struct mw_snap_unwinder **up,
		   uint64_t budget_end, uint64_t stop_by, char *why, size_t len);
/* The unwinder for w's process, made before it is stopped (reading the
 * libc's ELF takes time no stop should hold); never NULL (one that could
 * not be made settles nothing). */
struct mw_snap_unwinder *mw_snap_unwinder_new(struct walk *w);
void mw_snap_unwinder_free(struct mw_snap_unwinder *u);

#endif /* MALLOCWATCH_SNAPSHOT_INT_H */
