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
 * or mallocwatch gets SIGINT/SIGTERM.
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
	unsigned long long lost;	/* events the tracer itself said it lost */
	char tracer_msg[512];		/* its first error line, or its last line */
};

/* Run everything; see above.  Returns 0 when the program ran traced to
 * the end (whatever its own exit status), -1 with a one-line reason in
 * err when the tracer could not start or the program could not be run.
 * r is filled in either case. */
int mw_trace_run(const struct mw_tracer_opts *o, mw_line_fn fn, void *ctx,
		 struct mw_trace_result *r, char *err, size_t errlen);

#endif /* MALLOCWATCH_TRACER_H */
