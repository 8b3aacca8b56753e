/* trace_multi_int.h - what a run of several processes under one tracer
 * session (trace_multi.c: its sink's callbacks, its start and end) shares
 * with its reports (trace_multi_report.c).  Not a public interface:
 * trace_multi.h is.
 */
#ifndef MALLOCWATCH_TRACE_MULTI_INT_H
#define MALLOCWATCH_TRACE_MULTI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "ledger.h"
#include "mapped.h"
#include "procs.h"
#include "snapshot.h"
#include "stacks.h"
#include "trace_multi.h"
#include "trace_run.h"

/* Where the tracer's lines of several processes go: their models, and
 * what the models of processes added during the run are made with. */
struct msink {
	struct mw_procs *procs;
	const char *libc_path;	/* -c -f: the libc traced, its layouts read
				 * while the tracer loads (tree_arming) */
	const struct mw_attach_set *set;	/* -p: the processes at the start;
						 * NULL for -f */
	long read_timeout_ms;
	unsigned long garbled_warned;
	/* for the models of processes added during the run */
	uint64_t main_sym;		/* main_arena's link-time address */
	int have_sym;
	const char *libm_path;		/* NULL: no slow-math probes */
	int math_sites;
	struct mw_mapped libc;		/* --cgroup: the file traced */
	int tree;			/* -f: the processes of -c's tree */
	char *before;			/* -p -f: the processes under the process
					 * as tracing started, not followed
					 * (mw_tree_before); NULL none */
	struct mw_stacks *stacks;	/* --stacks; NULL without */
	uint64_t traced_ns;		/* the run's time traced (mw_run_traced_ns) */
	struct mw_images_watch *xw;	/* -p, --cgroup: execs (trace_images.h) */
};

/* pid's allocator now into *out (its layouts loaded, or from the cache
 * per libc file: glibcinfo.h), and with ledger not NULL its RSS ledger
 * into *ledger (NULL when it could not be made); 0, or -1 with err
 * (trace_multi_report.c). */
int mw_msink_snapshot(const struct msink *k, pid_t pid, struct mw_snapshot **out,
		      struct mw_ledger **ledger, char *err, size_t errlen);

/* Each process's summary (as one -p run prints it; -f: the tree first,
 * then the summaries of the processes summarized) to out->summary, the
 * JSON of them all to out->json, their page to out->html, after the run
 * r (trace_multi_report.c).  The exit status: -p the worst; -f the
 * program's; the report as a new jansson value in *report when report
 * is not NULL. */
int mw_msink_report(const struct trace_opts *o, struct outputs *out, struct msink *k,
		    const struct mw_trace_result *r, const struct mw_elf *libc,
		    const char *libc_path, enum mw_runtime rt, json_t **report);

#endif /* MALLOCWATCH_TRACE_MULTI_INT_H */
