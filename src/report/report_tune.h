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
};

struct mw_tune_row {
	char setting[1024];	/* the tunables added ("glibc.malloc.arena_max=1");
				 * "" for the baseline */
	struct mw_tune_sample *runs;	/* owned */
	size_t nruns;
	struct mw_tune_sample med;	/* medians over runs (per figure) */
	int best;		/* no other row beats it on both peak RSS and wall */
	struct mw_finding *findings;	/* at the first run's exit (owned); NULL none */
	size_t nfindings;
};

/* The medians of each row and the best marks; call before writing. */
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
