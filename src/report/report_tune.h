/* report_tune.h - `mallocwatch tune`'s results: one row per setting
 * (GLIBC_TUNABLES values tried, the baseline first), the runs measured
 * for it and their medians, as a text table, markdown and JSON
 * (docs/json.md, "tune").  A row no other beats on both peak RSS and
 * wall time is marked best.  The baseline's findings (findings.h) that
 * name a tried setting are set beside what was measured with it.
 */
#ifndef MALLOCWATCH_REPORT_TUNE_H
#define MALLOCWATCH_REPORT_TUNE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "findings.h"

#define MW_TUNE_UNKNOWN UINT64_MAX	/* a figure not measured */
#define MW_TUNE_FLOOR_RSS (64 * 1024)	/* peak RSS: page-fault noise (fault-around) */
#define MW_TUNE_FLOOR_WALL 0.02		/* wall time, seconds: scheduling noise */

/* One run of the program. */
struct mw_tune_sample {
	int status;		/* exit code, or 128 + the signal that killed it */
	double wall_s, cpu_s;	/* wall time; user + system CPU time */
	uint64_t peak_rss;	/* VmHWM at its exit, else ru_maxrss (bytes) */
	/* at its exit (ptrace exit stop), MW_TUNE_UNKNOWN when the allocator
	 * could not be read: RSS, malloc's in use, free and resident (free
	 * chunks and tops), arenas */
	uint64_t rss_exit, in_use_exit, free_exit, arenas_exit;
	uint64_t waits;		/* lock waits (MW_TUNE_UNKNOWN: no tracer) */
	char why[1024];		/* why the figures at exit are unknown; "" known */
};

struct mw_tune_row {
	char setting[1024];	/* the tunables added ("glibc.malloc.arena_max=1");
				 * "" for the baseline */
	struct mw_tune_sample *runs;	/* owned */
	size_t nruns;
	struct mw_tune_sample med;	/* medians over runs (per figure; of an even
					 * count, the mean of the middle two) */
	struct mw_tune_sample lo, hi;	/* the spread: least and most over runs */
	int best;		/* see mw_tune_finish() */
	struct mw_finding *findings;	/* at the first run's exit (owned); NULL none */
	size_t nfindings;
};

/* The medians and spreads of each row and the best marks; call before
 * writing.  Row A beats row B on a figure (peak RSS, wall time) when
 * A's spread lies wholly below B's, by more than the figure's noise
 * floor (MW_TUNE_FLOOR_*).  A row is marked best when it beats some other
 * row, none beats it, and its peak RSS is known in every run; when no row
 * is, the table says "no difference". */
void mw_tune_finish(struct mw_tune_row *rows, size_t n);

/* The table ("SETTING  PEAK RSS  RSS@EXIT ..."), then the baseline's
 * estimates beside the measured outcomes.  cmd: the program's words. */
void mw_tune_text(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd);

/* The same as a markdown table. */
void mw_tune_markdown(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd);

/* {"version": 1, "tune": {"command", "settings": [...], "estimates":
 * [...]}}.  0, or -1 with errno set (ENOMEM, or the write's). */
int mw_tune_json(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd);

#endif /* MALLOCWATCH_REPORT_TUNE_H */
