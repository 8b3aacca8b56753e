/* tracer.h - run the traced program and the SystemTap tracer together.
 *
 * -c mode: the program is forked and held on a pipe before its first
 * instruction; the tracer (stap, or stapbpf for the bpf runtime) is
 * started on its pid; when the tracer prints "MW 1 ready" (its begin probe
 * runs after every uprobe is attached) the program is released.  When
 * the program exits, the tracer gets SIGINT so that its end probe prints
 * the aggregates, and its output is read to the end.
 *
 * -p mode: the same without the fork; the run ends when the process exits
 * or mallocwatch gets SIGINT/SIGTERM/SIGHUP, which stops the tracer the
 * same way (its end probe runs: the report is complete) and is the
 * normal end of an attach.  The process itself is never signalled.
 *
 * A signal before tracing started (while stap compiles, or before the
 * ready line) gives the run up: stap's process group gets SIGTERM, the
 * held program is killed before its first instruction, and -1 is
 * returned with r->interrupted set.
 *
 * The tracer runs in its own process group, so a terminal's ^C reaches
 * only the program (which then exits and ends the run normally).
 */
#ifndef MALLOCWATCH_TRACER_H
#define MALLOCWATCH_TRACER_H

#include <stddef.h>
#include <sys/types.h>

#include "runtime.h"
#include "target.h"

struct mw_tracer_opts {
	const struct mw_runtime_env *env;
	const char *script;		/* the generated .stp file */
	const char *workdir;		/* where the bpf object is compiled */
	const struct mw_target *target;	/* -c: the program; NULL for -p */
	pid_t attach_pid;		/* -p: the process */
	int verbose;			/* echo the tracer's stderr */
	long duration_ms;		/* -p: stop after this long once tracing
					 * (as ^C would); 0 = until it exits */
	/* -c: called when the program exits, while its memory still exists
	 * (a PTRACE_EVENT_EXIT stop: the program is traced with PTRACE_SEIZE
	 * and PTRACE_O_TRACEEXIT only, every signal passed on unchanged,
	 * group-stops kept).  NULL: the program is not ptraced. */
	void (*at_exit)(void *ctx, pid_t pid);
};

/* Called with each line of the tracer's stdout (no newline). */
typedef void (*mw_line_fn)(void *ctx, const char *line);

struct mw_trace_result {
	pid_t pid;			/* the traced process */
	int have_status;		/* -c: status below is valid */
	int status;			/* -c: waitpid() status of the program */
	int tracer_status;		/* waitpid() status of stap/stapbpf */
	int ready;			/* the tracer reported ready */
	int tracer_died;		/* the tracer ended before the program */
	int stopped;			/* -p: stopped by a signal to mallocwatch
					 * (^C, SIGTERM): the normal end */
	int interrupted;		/* a signal that arrived before tracing
					 * started: the run was given up */
	int exit_stopped;		/* -c: at_exit ran at the program's exit */
	char ptrace_msg[160];		/* -c: why it could not be ptraced, or "" */
	unsigned long long lost;	/* events the tracer itself said it lost */
	char tracer_msg[512];		/* its first error line, or its last line */
};

/* CLOCK_MONOTONIC in milliseconds: deadlines and waits. */
long long mw_now_ms(void);

/* Catch SIGINT, SIGTERM and SIGHUP from now on (no SA_RESTART); the
 * run loop and the compile act on them.  Call it before anything that
 * must be cleaned up exists. */
void mw_signals_catch(void);

/* The signal caught and not yet taken, 0 if none; _take clears it. */
int mw_signal_pending(void);
int mw_signal_take(void);

/* Run everything; see above.  Returns 0 when the program ran traced to
 * the end (whatever its own exit status), -1 with a one-line reason in
 * err when the tracer could not start, the program could not be run or
 * a signal came first.  r is filled in either case.  Every child
 * (stap, stapbpf, the program) gets no descriptor of mallocwatch's but
 * stdin/stdout/stderr, and the tracer dies with mallocwatch
 * (PR_SET_PDEATHSIG). */
int mw_trace_run(const struct mw_tracer_opts *o, mw_line_fn fn, void *ctx,
		 struct mw_trace_result *r, char *err, size_t errlen);

#endif /* MALLOCWATCH_TRACER_H */
