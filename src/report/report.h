/* report.h - the end-of-run summary (text) and report (JSON).
 *
 * The text summary is for people: human units ("1.5 MiB (1572864 bytes)"),
 * one section per part of the allocator.  It covers what SystemTap's
 * example glibc-malloc.stp printed (lock contention per thread, arenas
 * per thread, heaps with sizes, total sbrk, final mmap threshold) and
 * more.  The JSON is for scripts; its keys are documented in docs/json.md.
 */
#ifndef MALLOCWATCH_REPORT_H
#define MALLOCWATCH_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "findings.h"
#include "ledger.h"
#include "report_snap.h"
#include "snapshot.h"
#include "state.h"
#include "units.h"

struct mw_stacks;	/* stacks.h */

/* What the run was, for the headers of both reports. */
struct mw_run_info {
	const char *const *argv;	/* the command, NULL-terminated; NULL for -p */
	const char *comm;		/* -p: the process's command name when
					 * tracing started; NULL unknown (a replay) */
	const struct mw_where *where;	/* -p: where it lives (procwhere.h), read
					 * when tracing started; NULL unknown */
	int pid;
	const char *libc;		/* path traced */
	const char *runtime;		/* "kernel" or "bpf" */
	int have_status;		/* exit_status/signal below are valid */
	int exit_status;		/* program's exit code, -1 if killed */
	int term_signal;		/* signal that killed it, 0 if none */
	int tracer_died;		/* the tracer ended before the program */
	int stopped;			/* -p: ended by ^C, SIGTERM or --duration */
	int in_tree;			/* -f: a process the program created (its
					 * end is in the tree's table: a signal
					 * that killed it is not an error) */
	int status_not_ours;		/* -p -f: the process's end is reported,
					 * not passed on as mallocwatch's status
					 * (nor a signal that killed it an error) */
	const char *status_why;		/* no exit status: why it is not known
					 * (mw_run_status_why); NULL: no reason */
	const char *title;		/* several processes: the title the process
					 * gave itself, its /proc/PID/cmdline at
					 * its exit (title_at_end: at the end) when
					 * it differs from argv; NULL none */
	int title_at_end;
	const char *end_why;		/* snap_attach but no snap_end nor snap_exit:
					 * why ("none at the end: the process had
					 * exited"); NULL: "none at the end" */
	/* -p: the allocator read from the process when the probes were armed
	 * and when tracing ended (NULL: not taken, e.g. no debug symbols, or
	 * the process had exited) */
	const struct mw_snapshot *snap_attach, *snap_end;
	/* -c: the command line of the program's last image, read at its
	 * exit, when it replaced its image (mw_state_execs); NULL: unknown */
	const char *const *last_argv;
	/* -c: the allocator read at the program's exit (NULL: not taken),
	 * and the RSS ledger read with it (NULL: none) */
	const struct mw_snapshot *snap_exit;
	const struct mw_ledger *ledger_exit;
	/* -p: the RSS ledger read with snap_end (NULL: none) */
	const struct mw_ledger *ledger_end;
	/* the findings as text (mw_run_findings_text), for the HTML page; a
	 * replay has them from the saved stream.  NULL: none */
	const char *findings_text;
	/* what decides arena counts, for CI baselines ("environment" in the
	 * JSON; NULL: not known, e.g. a replay) */
	const struct mw_environment *env;
	/* --stacks: the stacks taken (stacks.h; symbolized as the reports
	 * are written); NULL: none */
	struct mw_stacks *stacks;
	/* with stacks: the process whose stacks are this report's (a run of
	 * several processes: each its own); 0 every process's */
	pid_t stacks_pid;
	/* how long the probes were traced: from the program's start (-c) or
	 * the probes' arming (-p) to its exit or the stop, ns; 0 not known
	 * (a stream saved before it was kept, a process of -f's tree) */
	uint64_t traced_ns;
};

/* The findings (findings.h) of the last reading of ri (the exit's with
 * -c, the end's with -p: its snapshot and ledger, with the lock waits st
 * counted per arena), into a new array *out of *n (free() it); *out NULL
 * and *n 0 when there is no ledger. */
void mw_run_findings(const struct mw_state *st, const struct mw_run_info *ri,
		     struct mw_finding **out, size_t *n);

/* mw_run_findings as the text report writes them, in a new string
 * (free() it); NULL when there are none. */
char *mw_run_findings_text(const struct mw_state *st, const struct mw_run_info *ri);

/* The machine and settings a run had: arena limits follow from them
 * (glibc: 8 x cores unless M_ARENA_MAX / glibc.malloc.arena_max). */
struct mw_environment {
	int glibc_minor;		/* 2.N of the traced libc; 0 unknown */
	long nproc;			/* online CPUs */
	long cpus;			/* CPUs the target may run on (affinity) */
	char tunables[1024];		/* GLIBC_TUNABLES of the target; "" none */
	char malloc_vars[1024];		/* its MALLOC_* variables, "K=V" space-separated */
	const char *runtime;		/* "kernel" or "bpf" */
	const char *version;		/* mallocwatch's */
};

/* Write the summary.  Returns 0, or -1 if writing failed. */
int mw_report_text(FILE *out, const struct mw_state *st, const struct mw_run_info *ri);

/* Write the HTML report (--html; report_html.c): one self-contained page,
 * made from the stream alone, so that a replay writes the same bytes.
 * Returns 0, or -1 if writing failed. */
int mw_report_html(FILE *out, const struct mw_state *st, const struct mw_run_info *ri);

/* One page of several processes' reports (-f's tree, -p PID,PID,...):
 * title as its heading, intro (the tree's table; NULL none) under it,
 * then for each process st[i] (run info ri[i]) what mw_report_html
 * shows of one, under a heading of its own (anchor "process-PID").
 * Self-contained as that page is.  0, or -1 with errno set. */
int mw_report_html_procs(FILE *out, const struct mw_state *const *st,
			 const struct mw_run_info *ri, size_t n, const char *title,
			 const char *intro);

/* Write the JSON report (docs/json.md), through jansson.  Returns 0, or
 * -1 with errno set if writing failed (ENOMEM: it could not be built). */
int mw_report_json(FILE *out, const struct mw_state *st, const struct mw_run_info *ri);

/* The same report as a jansson object (a new reference), for rules;
 * NULL when out of memory. */
json_t *mw_report_json_value(const struct mw_state *st, const struct mw_run_info *ri);

#endif /* MALLOCWATCH_REPORT_H */
