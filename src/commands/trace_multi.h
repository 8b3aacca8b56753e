/* trace_multi.h - `mallocwatch -p PID,PID,...` (and --cgroup): several
 * running processes traced by one tracer session (trace_multi.c).
 *
 * They must map the same libc file (one script probes it; uprobes are per
 * inode).  The script takes the hits of these pids only and prefixes each
 * record with its process (procs.h), so every process gets a model of its
 * own, seeded from its own snapshot at attach (when its libc has debug
 * symbols) and compared with another at the end.  The run ends when every
 * process has exited, or on ^C, SIGTERM or --duration.
 *
 * Reports: the summary of each process, as a single -p run would print
 * it, then a line of totals; the JSON keeps a single report's top level
 * for the first process and adds "processes" (every process's report, the
 * first included) and "totals" (docs/json.md).  Not (yet) for several
 * processes: --interval samples, --html, --save-stream.
 */
#ifndef MALLOCWATCH_TRACE_MULTI_H
#define MALLOCWATCH_TRACE_MULTI_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "glibcinfo.h"
#include "trace_run.h"

/* The processes of -p PID,PID,...: pid[i], the layouts of its allocator
 * g[i] when have_g[i] (for its snapshots), n >= 2. */
struct mw_attach_set {
	size_t n;
	pid_t *pid;
	struct mw_glibc *g;
	int *have_g;
};

/* Trace the processes of set with the libc at libc_path, in the work
 * directory dir, into out.  Returns the exit status (MW_EXIT_OK, or
 * MW_EXIT_RUNTIME when the tracer failed); the JSON report as a new
 * jansson value in *report when report is not NULL (the per-process
 * reports under "processes", for --check); the pid of the tracer left
 * removing its uprobes in *detaching (left alone when none), as
 * mw_run_trace does. */
int mw_run_trace_multi(const struct trace_opts *o, struct outputs *out,
		       const struct mw_attach_set *set, const char *libc_path, const char *dir,
		       json_t **report, pid_t *detaching);

#endif /* MALLOCWATCH_TRACE_MULTI_H */
