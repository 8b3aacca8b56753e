/* tune_run.h - one run of a program for `mallocwatch tune`: started with
 * GLIBC_TUNABLES set, held in its ptrace exit stop (PTRACE_SEIZE with
 * PTRACE_O_TRACEEXIT only: signals pass on unchanged) while its allocator
 * and RSS ledger are read (explain.h), then reaped with its rusage.  No
 * tracer and no probes. */
#ifndef MALLOCWATCH_TUNE_RUN_H
#define MALLOCWATCH_TUNE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "report_tune.h"

/* Run argv (argv[0] looked up in PATH) with tunables (GLIBC_TUNABLES;
 * appended to the one inherited, after a ':'; NULL or "" leaves it as it
 * is), stdin from /dev/null, stdout and stderr to /dev/null unless
 * show_output, into *m (every figure; MW_TUNE_UNKNOWN those not read).
 * When findings is not NULL, the findings at its exit go to a new array
 * *findings of *nfindings (free() it; NULL, 0 when none).  0, or -1 with
 * a one-line reason in err when it could not be started (exec failed:
 * status 127 and err set too).  The wall time leaves out the time the
 * program was held in its exit stop to be read. */
int mw_tune_run(char *const *argv, const char *tunables, int show_output, long timeout_ms,
		struct mw_tune_sample *m, struct mw_finding **findings, size_t *nfindings,
		char *err, size_t errlen);

/* 1 with the reason in why when the process's mp_ at its exit shows that
 * glibc did not apply tunables (GLIBC_TUNABLES' "NAME=V:NAME=V" form): one
 * of mmap_threshold, trim_threshold, top_pad and mmap_max is named, whose
 * setting makes mp_.no_dyn_threshold 1, and no_dyn_threshold is 0 (known:
 * this glibc's malloc_par has the member).  0 when it cannot tell. */
int mw_tune_not_applied(const char *tunables, int known, uint64_t no_dyn_threshold,
			uint64_t mmap_threshold, char *why, size_t len);

/* Run argv with tunables as above once more under the tracer
 * (mallocwatch -q -e arena --json FILE -c ARGV, this very binary, with
 * FILE in a private temporary directory) for the lock waits its arenas
 * had (memory_arena_reuse_wait) into *waits.  0, or -1 with a one-line
 * reason in err (the tracer failed, the report has no such figure). */
int mw_tune_waits(char *const *argv, const char *tunables, uint64_t *waits, char *err,
		  size_t errlen);

#endif /* MALLOCWATCH_TUNE_RUN_H */
