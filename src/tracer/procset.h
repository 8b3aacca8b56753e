/* procset.h - the processes a run is about, as one object: perf's
 * struct target (util/target.h), which the commands fill and the session
 * loop asks, instead of a mode flag per option.
 *
 * Kinds, with what fills them:
 *
 *	MW_PROCS_COMMAND  -c CMD: a program started held (cmd), run up to
 *			  runs times under one session (--repeat); with
 *			  follow (-f), every process its tree creates
 *	MW_PROCS_PIDS	  -p PID[,PID...]: running processes (pid, npid),
 *			  the run ends when the last has exited; with
 *			  follow, the processes they create from then on
 *	MW_PROCS_CGROUP	  --cgroup DIR: its processes now (pid, npid), and
 *			  those that join it (or a child cgroup) later
 *	MW_PROCS_LISTED	  serve --probes (-p, --cgroup or --all): the
 *			  processes the run's consumer lists (tracer.h,
 *			  struct mw_consumer list), looked at again and
 *			  again; pid is then mallocwatch's own
 *
 * The commands build one (procsel.h mw_procsel_set for the selection
 * options; -c's program by the trace command), the run stage passes it
 * on, and the tracer asks it: whether it starts the program
 * (mw_procset_starts), follows forks, polls for processes that join
 * (mw_procset_polled), and whether its set changes while it runs
 * (mw_procset_changes, the script's gen.h opts->dynamic).
 */
#ifndef MALLOCWATCH_PROCSET_H
#define MALLOCWATCH_PROCSET_H

#include <stddef.h>
#include <sys/types.h>

struct mw_target;

enum mw_procset_kind {
	MW_PROCS_COMMAND,
	MW_PROCS_PIDS,
	MW_PROCS_CGROUP,
	MW_PROCS_LISTED,
};

struct mw_procset {
	enum mw_procset_kind kind;
	const struct mw_target *cmd;	/* COMMAND: the program (target.h);
					 * NULL until the run resolves it */
	int runs;			/* COMMAND: --repeat's runs under one
					 * session when >= 2; else 0 or 1 */
	const pid_t *pid;		/* the processes at the start, the
					 * first watched first (not owned) */
	size_t npid;
	const char *cgroup;		/* CGROUP: its directory */
	int follow;			/* -f: the processes they create too */
};

/* Does the run start its program (-c)? */
int mw_procset_starts(const struct mw_procset *s);

/* Are its processes under ptrace, so that their execs and exits stop
 * them (-c, -f: ptrace_tree.h)?  A process that replaces its program is
 * then held at that exec until the tracer has drained the old program's
 * totals (tracer.h, MW_EXEC_DRAIN_MAX). */
int mw_procset_ptraced(const struct mw_procset *s);

/* Are processes looked for while it runs (--cgroup's joiners, serve's
 * list), every MW_CGROUP_POLL_MS or MW_SERVE_POLL_MS (tracer.h)? */
int mw_procset_polled(const struct mw_procset *s);

/* Does the set of processes traced change while the run goes on (-f,
 * --cgroup, serve, --repeat)?  The script then keeps a set it is told
 * of (gen.h opts->dynamic, pidset.h). */
int mw_procset_changes(const struct mw_procset *s);

/* The first process (-p's first, serve's own pid), or 0 (-c: it comes
 * when the program is started). */
pid_t mw_procset_first(const struct mw_procset *s);

#endif /* MALLOCWATCH_PROCSET_H */
