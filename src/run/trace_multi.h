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
 * processes: --interval samples, --save-stream (--html: one page of them
 * all, mw_report_html_procs).
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
	const pid_t *pid;
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

/* -c -f: the program t and every process its tree creates, under one
 * tracer session whose set of processes grows as they are created
 * (tracer.h, procset.h follow).  Each process gets a model of its own and a
 * snapshot at its exit stop (its libc's debug symbols permitting).  The
 * summary lists the tree (pid, parent, exit, arenas, the allocator at
 * exit, command line) then each process's summary (every one of a tree
 * of at most 10; else the program and the 9 that held the most at exit);
 * the JSON is that of several processes, each with "ppid" (the process
 * of the tree that created it; 0 for the program).  Returns the
 * program's exit status as mw_run_trace does (MW_EXIT_RUNTIME when the
 * tracer failed); *report and *detaching as above. */
int mw_run_trace_tree(const struct trace_opts *o, struct outputs *out, const struct mw_target *t,
		      const char *libc_path, const char *dir, json_t **report, pid_t *detaching);

/* -p PID -f, as tracing starts: the processes under root (its
 * descendants, read from /proc) that procs does not have, which -f will
 * not follow, named (at most 10) in a line of text with the ways to
 * trace them too (-p ROOT,PID,..., --cgroup DIR of root's cgroup):
 * trace_before.c.  A new string (free()), or NULL when there is none;
 * *count how many there are. */
struct mw_procs;
char *mw_tree_before(pid_t root, const struct mw_procs *procs, size_t *count);

#endif /* MALLOCWATCH_TRACE_MULTI_H */
