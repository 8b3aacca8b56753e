/* trace_run.h - one traced run of `mallocwatch -c` / `-p` (trace_run.c;
 * its end in trace_end.c), for the trace command (cmd_trace.c) and its
 * snapshots-only mode (trace_snaps.c): the command's options, the files a
 * run writes, the run from the libc's probes to the reports, and what a
 * replay shares with it.
 *
 * Messages go to stderr through msg.h; functions return an exit status
 * (msg.h: MW_EXIT_*) or 0/-1 as each says.
 */
#ifndef MALLOCWATCH_TRACE_RUN_H
#define MALLOCWATCH_TRACE_RUN_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "gen.h"
#include "glibcinfo.h"
#include "ledger.h"
#include "metrics.h"
#include "report.h"
#include "runtime.h"
#include "snapshot.h"
#include "state.h"
#include "target.h"
#include "tracer.h"

#include "version.h"	/* MW_VERSION, made from VERSION (Makefile) */

struct mw_attach_set;

struct trace_opts {
	char **cmd;			/* -c / -- */
	/* the processes (procset.h, procsel.h mw_procsel_set): -c's program
	 * (its cmd, which stays NULL here: the run's), -p's, --cgroup's (its
	 * joiners are traced too), serve --probes' (MW_PROCS_LISTED: a
	 * changing set whose aggregates are read live, gen.h); -f's follow */
	struct mw_procset procs;
	const struct mw_attach_set *set;	/* -p PID,PID,...: set by attach */
	const char *libc, *libm;
	const char *out, *json, *save_script, *save_stream;
	enum mw_runtime runtime;
	unsigned families;		/* -e; 0 = all */
	int verbose;
	int cleanup;			/* --cleanup */
	long duration_ms;		/* --duration, -p only; 0 = until it exits */
	struct mw_rule *rules;		/* --check */
	size_t nrules, crules;
	const char *baseline_path;	/* --baseline */
	enum mw_format format;		/* --format of the --check results */
	const char *format_output;	/* --format-output: where they go */
	FILE *format_file;		/* it, opened before any run; NULL: stderr */
	long repeat;			/* --repeat: -c runs; 0 = once */
	long linger_ms;			/* --linger, MALLOCWATCH_LINGER: -c's
					 * session serves later runs this long
					 * after each (linger.h); 0 = off */
	enum mw_aggregate aggregate;	/* --aggregate of repeated runs' figures */
	int strict_env;			/* --strict-env */
	json_t *baseline;		/* loaded before anything runs */
	long interval_ms;		/* --interval; 0 = the default */
	long read_timeout_ms;		/* --read-timeout; 0 = MW_SNAP_TIMEOUT_MS */
	const char *html;		/* --html */
	int stacks;			/* --stacks: user stacks of the rare events */
	const char *folded;		/* --folded FILE: their folded lines */
	int progress;			/* --progress 1, --no-progress 0, else -1 */
};

/* The files a run writes, opened before anything is traced so that an
 * unwritable path fails at once instead of after the run. */
struct outputs {
	FILE *summary;			/* -o, else stderr */
	FILE *json;			/* --json; NULL when not asked */
	FILE *stream;			/* --save-stream; NULL when not asked */
	FILE *html;			/* --html; NULL when not asked */
	FILE *script;			/* --save-script; NULL when not asked */
	FILE *folded;			/* --folded; NULL when not asked */
	int summary_errno, json_errno, html_errno, folded_errno;	/* the first write
									 * error of each */
};

/* Open every output file o names, before anything runs, into *out (the
 * summary is stderr without -o); with_script: --save-script too, when a
 * script will be made.  Each FILE is made by mw_output_create (output.h).
 * 0, or -1 after an error message; either way mw_outputs_close() must
 * follow, to close what was opened. */
int mw_outputs_open(const struct trace_opts *o, struct outputs *out, int with_script);

/* Close every file in *out but stderr, naming the first write error of
 * each (its path and errno) in a message, and clear *out.  0, or -1 when
 * a file could not be written or closed. */
int mw_outputs_close(const struct trace_opts *o, struct outputs *out);

/* Everything from the libc's probes to the reports, in the work
 * directory dir (leftovers.h): open libc_path (and the libm, open_libm),
 * prepare the runtime, write the script, run the tracer on t (-c) or
 * o->pid (-p; t NULL, g the allocator's layouts for snapshots or NULL),
 * then conclude into out.  Returns the exit status; the report as a new
 * jansson value in *report when report is not NULL (left alone when the
 * run gave none); the pid of a tracer still removing its uprobes in
 * *detaching (left alone when there is none; mw_tracer_hand_off). */
int mw_run_trace(const struct trace_opts *o, struct outputs *out,
		 const struct mw_target *t, const char *libc_path, const char *dir,
		 struct mw_glibc *g, json_t **report, pid_t *detaching);

/* -c --repeat N (*runs = N >= 2, without -f): the N runs of t under one
 * tracer session (trace_repeat.c), each reported as mw_run_trace reports
 * its run: every run's summary in order, out's files (-o, --json,
 * --html, --save-stream) the last run's.  The series ends early when a
 * run's program does not exit 0 or a signal comes.  Returns the exit
 * status of the last run; *runs: the runs made; each one's report as a
 * new jansson value in reports[i] (an array of N) when reports is not
 * NULL; *detaching as mw_run_trace sets it. */
int mw_run_trace_repeat(const struct trace_opts *o, struct outputs *out,
			const struct mw_target *t, const char *libc_path, const char *dir,
			json_t **reports, size_t *runs, pid_t *detaching);

/* After the stream, for a live run and a replay alike: finish the model
 * st with the run's result r (pid, lost events), say how it ended, fill
 * ri's pid and tracer_died, and make the run's one view (view.h; it
 * points into st and ri; mw_view_free it), which every report renders;
 * the exit status into *status: the program's own with -c (128+N for
 * signal N), MW_EXIT_RUNTIME when the tracer ended early. */
struct mw_view *mw_run_finish(struct mw_state *st, const struct mw_trace_result *r,
			      struct mw_run_info *ri, int *status);
/* The summary, JSON and HTML of view v to out; -1 when the summary on
 * stderr could not be written (the files' errors are found when they
 * are closed). */
int mw_run_write_reports(struct outputs *out, const struct mw_view *v);
/* Both: the exit status, MW_EXIT_RUNTIME also when the summary on stderr
 * could not be written; the view into *view when view is not NULL (else
 * freed). */
int mw_run_conclude(struct outputs *out, struct mw_state *st,
		    const struct mw_trace_result *r, struct mw_run_info *ri,
		    struct mw_view **view);

/* -p: a snapshot of process pid at the end (layouts g, reading for at
 * most timeout_ms milliseconds), when g is not NULL and the process is
 * still there; the caller frees it (mw_snapshot_free).  NULL when there
 * is none (a failed read is warned about).  With ledger not NULL, also
 * its RSS ledger into *ledger (mw_ledger_free; NULL when none, noted). */
struct mw_snapshot *mw_run_end_snapshot(pid_t pid, struct mw_glibc *g, long timeout_ms,
					struct mw_ledger **ledger);

/* What a traced run makes before its tracer starts: the libc opened, the
 * runtime prepared (its note said), the libm whose slow-math probes are
 * traced, and the script written into the work directory (and to save,
 * --save-script, unless NULL).  pids/npids: gen.h's several processes
 * (NULL, 0 for one). */
struct mw_run_prep {
	struct mw_elf *libc, *libm;	/* owned; libm NULL when none */
	char libm_path[PATH_MAX];	/* "" when none */
	char script[PATH_MAX + 64];
	struct mw_runtime_env env;
	struct mw_gen_stats gst;
};

/* Fill p as above for libc_path in dir.  0, or -1 after an error message
 * (what was opened is in p either way: mw_run_prep_free). */
int mw_run_prepare(const struct trace_opts *o, const char *libc_path, const char *dir,
		   const int *pids, size_t npids, FILE *save, struct mw_run_prep *p);

/* With verbose (-v), the note of what the runtime prepared ("bpf
 * runtime: ...; uprobes attached as one uprobe_multi link": internal
 * detail, not for every run's stderr): mw_run_prepare says it, but with
 * --linger, where a run that joins a session arms nothing and the caller
 * says it only for a run that starts its own tracer. */
void mw_run_note_runtime(const struct mw_run_prep *p, int verbose);

/* The sweep after killed runs (leftovers.h), bounded by MW_SWEEP_RUN_MS,
 * and a note of what it removed.  Before a run starts a tracer: a run
 * that joins a --linger session starts none and skips it (its reads of
 * uprobe_events wait for the kernel's event_mutex, seconds while other
 * tracers remove uprobes). */
void mw_run_sweep(void);

/* Close what mw_run_prepare opened. */
void mw_run_prep_free(struct mw_run_prep *p);

/* Pieces of a run that a run of several processes (trace_multi.c)
 * shares:
 * - what decides arena counts (the environment of o->pid and the libc);
 * - how long the probes were traced (below). */
struct mw_elf;
void mw_run_environment(const struct trace_opts *o, const struct mw_elf *libc,
			const char *runtime, struct mw_environment *e);
/* How long the probes were traced (mw_run_info's traced_ns): from origin
 * (the O record) to the program's exit stop (-c) or now (-p: the stop);
 * 0 when not known. */
uint64_t mw_run_traced_ns(uint64_t origin, const struct mw_trace_result *r);

/* Why a process of a run has no exit status (report.h status_why):
 * running, tracing was stopped while it ran; attached (-p) and not
 * ptraced (-f ptraces every process of its tree), its status went to its
 * parent alone; NULL when neither is known. */
const char *mw_run_status_why(int attached, int ptraced, int running);

/* --folded FILE: the folded lines of the stacks s (report_stacks.h)
 * into out->folded, made with the other outputs before anything ran
 * (mw_outputs_open); nothing when it is NULL.  A write error is named
 * when the file is closed (mw_outputs_close). */
struct mw_stacks;
void mw_run_write_folded(struct outputs *out, struct mw_stacks *s);

/* Is the allocator to be read every interval during a -c or -p run?
 * Only where the samples go somewhere: the --html timeline, --progress
 * lines, --save-stream (for replay --html), or an --interval asked for.
 * A sample costs the program about 1 ms of its wall on a busy 2-core
 * machine (docs/performance.md, "Real programs"): 1% at the default 0.1 s, for nothing in a
 * summary or JSON, which take none.  1 or 0. */
int mw_run_samples_wanted(const struct trace_opts *o);

#endif /* MALLOCWATCH_TRACE_RUN_H */
