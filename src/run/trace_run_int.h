/* trace_run_int.h - the pieces of one traced run (trace_run.c, its sink
 * in trace_sink.c) that --repeat under one session (trace_repeat.c) uses
 * once per run: where a run's tracer lines go (its model, its
 * --save-stream file), its allocator samples and exit snapshot, and its
 * reports.
 */
#ifndef MALLOCWATCH_TRACE_RUN_INT_H
#define MALLOCWATCH_TRACE_RUN_INT_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "glibcinfo.h"
#include "procmem.h"
#include "procs.h"
#include "trace_run.h"

struct mw_images_watch;

/* Where one run's tracer lines go: the state, and the --save-stream
 * file.  Zero it, set save, attach_pid (-p's process), g, progress and
 * read_timeout_ms, then mw_sink_start(). */
struct sink {
	struct mw_procs *procs;	/* the run's process (procs.h), one here */
	struct mw_process *pr;	/* it: its model, what is known of it, its
				 * snapshots (at attach, end, exit) */
	struct mw_state *st;	/* pr->st */
	FILE *save;		/* --save-stream: the lines go here too; NULL */
	pid_t attach_pid;	/* -p: say when tracing has started */
	struct mw_glibc *g;	/* -p: the layouts for snapshots; NULL: none */
	/* --interval samples (mw_sink_sample()) */
	int progress;		/* print a line per sample */
	struct mw_glibc sg;	/* -c: the layouts, loaded at the first sample
				 * or at the exit, whichever comes first */
	const char *libc_path;	/* the libc traced (mw_sink_start's, not
				 * owned): its layouts read while the tracer
				 * loads (mw_sink_arming) */
	int have_sg, sg_failed;
	struct mw_proc proc;	/* the process's mappings, refreshed per sample */
	int have_proc;
	uint64_t prev_waits, prev_retries;	/* at the last progress line */
	long read_timeout_ms;	/* --read-timeout; 0 = the default */
	unsigned long samples, skipped;	/* samples tried; not read (timed out,
					 * or the allocator is corrupt) */
	char skip_why[PATH_MAX + 512];	/* the first skipped sample's reason */
	uint64_t main_sym;	/* main_arena's link-time address; 0 unknown */
	int bias_sent;		/* a B record from a snapshot went out */
	struct mw_stacks *stacks;	/* --stacks; NULL without */
	unsigned execs;		/* -c: the program's execs, its start's included */
	struct mw_images_watch *xw;	/* -p: its execs watched (trace_images.h) */
	int want_samples;	/* samples read (mw_run_samples_wanted) */
};

/* The model of a run of o (one process; the pid comes when the program
 * starts) for libc (at libc_path) and libm (whose gst->math_sites
 * slow-math sites are traced; NULL: none), under runtime rt; with
 * k->save, the stream's header.  Dies when memory runs out. */
void mw_sink_start(struct sink *k, const struct trace_opts *o, const struct mw_elf *libc,
		   const char *libc_path, const struct mw_elf *libm, const char *libm_path,
		   const struct mw_gen_stats *gst, enum mw_runtime rt);

/* The tracer callbacks of one run (tracer.h), ctx a struct sink: a line
 * of the stream (without "@PID "), an allocator sample of pid (0, or -1
 * when none), the snapshot at the program's exit stop, and the events
 * the aggregates count that have not arrived. */
void mw_sink_line(void *ctx, const char *line);
int mw_sink_sample(void *ctx, pid_t pid);
void mw_sink_exit_snapshot(void *ctx, pid_t pid);
/* -c, while the tracer loads (tracer.h arming): read the traced libc's
 * layouts (glibcinfo.h mw_glibc_preload), so that the first sample and
 * the exit snapshot of a program mapping that file find them kept.  A
 * failure says nothing: those loads report it. */
void mw_sink_arming(void *ctx);
unsigned long long mw_sink_missing(void *ctx);

/* The program replaced its image (exec; trace_images.h).  The sink's
 * tracer callbacks (tracer.h on_exec, on_mixed: its figures from the
 * tracer refused, in the saved stream too), and at its exit stop:
 * refused when it exec'd a program that was not traced. */
void mw_sink_exec(void *ctx, pid_t pid, unsigned execs, int drained);
void mw_sink_mixed(void *ctx, pid_t pid, const char *why);
/* tracer.h exec_owed: the old image's streamed events still to come
 * (state.h mw_state_owed) */
unsigned long long mw_sink_exec_owed(void *ctx, pid_t pid);
void mw_sink_exit_images(struct sink *k, pid_t pid);
/* -p (k->xw): every sample tick, whether the process exec'd (then no
 * sample: its layouts are the old program's), then the sample when
 * k->want_samples; as mw_sink_sample. */
int mw_sink_watch_sample(void *ctx, pid_t pid);

/* Those callbacks as the run's consumer (tracer.h), in *c (returned),
 * ctx k: line and missing always; at_exit and arming for a program
 * started (-c: program 1); sample when samples are wanted. */
const struct mw_consumer *mw_sink_consumer(struct sink *k, struct mw_consumer *c, int program,
					   int samples);

/* After the run r of k worked: its notes (sites: the probe sites its
 * tracer still detaches from, under env's runtime), --save-stream's
 * footer, the reports into out.  The exit status; the report as a new
 * jansson value in *report when report is not NULL. */
int mw_sink_report(const struct trace_opts *o, struct outputs *out, struct sink *k,
		   const struct mw_trace_result *r, const struct mw_elf *libc,
		   const char *libc_path, const struct mw_runtime_env *env, int sites,
		   json_t **report);

#endif /* MALLOCWATCH_TRACE_RUN_INT_H */
