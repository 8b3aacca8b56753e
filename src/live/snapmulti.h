/* snapmulti.h - snapshots (snapshot.h) of many processes, several at
 * once (a few threads, each reading one process at a time within its own
 * deadline), each with where it lives (procwhere.h): for `snapshot -p
 * A,B,C`, `--cgroup DIR` and `--all`, and serve's.
 *
 * A process that cannot be read is not an error of the whole: its entry
 * says why, as a kind (for scripts) and one line (for people):
 *
 *	exited      gone before or while it was read
 *	unreadable  its maps or memory cannot be read (not permitted)
 *	no_glibc    it maps no glibc (a static binary, another libc)
 *	no_symbols  its libc's symbols or DWARF cannot be found or used
 *	            (the line names the debug package)
 *	timeout     not read within the deadline (--read-timeout)
 *	corrupt     its allocator is corrupt or hostile (a proved loop)
 */
#ifndef MALLOCWATCH_SNAPMULTI_H
#define MALLOCWATCH_SNAPMULTI_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procwhere.h"
#include "snapshot.h"

enum mw_psnap_fail {
	MW_PSNAP_READ = 0,	/* read: snap is set */
	MW_PSNAP_EXITED,
	MW_PSNAP_UNREADABLE,
	MW_PSNAP_NO_GLIBC,
	MW_PSNAP_NO_SYMBOLS,
	MW_PSNAP_TIMEOUT,
	MW_PSNAP_CORRUPT,
	MW_PSNAP_INCONSISTENT,	/* no consistent read (snapshot.h) */
};

/* One process's snapshot or why there is none. */
struct mw_psnap {
	pid_t pid;
	char comm[64];			/* /proc/PID/comm; "?" when gone, or not
					 * read within the budget */
	struct mw_where where;		/* have_where: it could be read */
	int have_where;
	struct mw_snapshot *snap;	/* owned; NULL unless fail is MW_PSNAP_READ */
	enum mw_psnap_fail fail;
	char err[PATH_MAX + 512];	/* one line when fail is set, else "" */
	double seconds;			/* wall time spent on it, libc loading included */
};

/* Sums over the processes read consistently: an inconsistent snapshot's
 * figures are its last try's, maybe far off (counted in inconsistent,
 * not summed). */
struct mw_psnap_totals {
	size_t read, inconsistent, failed;
	uint64_t arenas, system_bytes, in_use_bytes, free_bytes, trimmable;
	uint64_t mmapped_bytes;	/* mmapped chunks (mp_.mmapped_mem), not in the arenas' */
};

#define MW_PSNAP_MAX_THREADS 16

/* How mw_psnap_read_all reads. */
struct mw_psnap_opts {
	long timeout_ms;	/* each process's deadline (--read-timeout); > 0 */
	long budget_ms;		/* all of them; 0: none.  A process not begun
				 * by then, or still being read, is
				 * MW_PSNAP_TIMEOUT, with its reason */
	double deadline;	/* the budget's end, mw_now_s() (clock.h);
				 * 0: budget_ms from now (it names the budget
				 * in the reasons) */
	int threads;		/* at most this many at once; 0: 2 x the CPUs
				 * online, MW_PSNAP_MAX_THREADS at most */
	int (*cancelled)(void);	/* polled before each process: nonzero
				 * (a stop signal) begins no more; NULL */
};

/* Read the n processes of pids into a new array of n entries, in pids'
 * order (mw_psnap_read each, in threads of their own; a process that
 * exits meanwhile gets its entry with the reason).  With a budget it
 * returns at its end, whatever is still being read: each walk ends by
 * then (its timeout cut to what is left once its libc is loaded), but
 * what cannot be cut (a libc's DWARF loaded, a thread the machine's
 * load keeps from a CPU) is left behind, its result dropped.  Stopping a process
 * for a consistent read follows mw_snapshot_no_stop (snapshot.h): a
 * whole-host view sets it first.  NULL when cancelled said so (nothing
 * is kept).  Free the entries with mw_psnap_release, then the array. */
struct mw_psnap *mw_psnap_read_all(const pid_t *pids, size_t n, const struct mw_psnap_opts *o);

/* Free ps's snapshot (ps stays readable; snap NULL). */
void mw_psnap_release(struct mw_psnap *ps);

/* Drop from v (n entries, *n updated) the processes that were gone
 * before anything of them could be read (no where, exited): for --all,
 * whose list is a moment old when each is read.  Their snapshots are
 * released. */
void mw_psnap_drop_vanished(struct mw_psnap *v, size_t *n);

/* The kind of failure as a word: "exited", "unreadable", ... (above);
 * NULL for MW_PSNAP_READ. */
const char *mw_psnap_fail_name(enum mw_psnap_fail fail);

/* Sort v: processes read consistently first, by free-but-retained
 * bytes, most first (then by pid), then those read inconsistently, then
 * those not read, each by pid. */
void mw_psnap_sort_by_free(struct mw_psnap *v, size_t n);

/* The sums over v into *t (read counts the consistent ones). */
void mw_psnap_totals(const struct mw_psnap *v, size_t n, struct mw_psnap_totals *t);

#endif /* MALLOCWATCH_SNAPMULTI_H */
