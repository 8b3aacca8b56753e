/* run_info.h - what a run was (its command, libc, runtime, end and the
 * allocator read at its ends), for the headers of its reports and its
 * view (view.h); filled by the run stage (src/run/) or by replay. */
#ifndef MALLOCWATCH_RUN_INFO_H
#define MALLOCWATCH_RUN_INFO_H

#include <stdint.h>
#include <sys/types.h>

struct mw_where;	/* procwhere.h */
struct mw_snapshot;	/* snapshot.h */
struct mw_ledger;	/* ledger.h */
struct mw_environment;	/* report.h */
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
	/* a replay's findings as text, from the saved stream (the view's
	 * mw_view_findings_text gives them, else its own).  NULL: none */
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

#endif /* MALLOCWATCH_RUN_INFO_H */
