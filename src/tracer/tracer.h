/* tracer.h - run the traced program and the SystemTap tracer together.
 *
 * -c (procset.h MW_PROCS_COMMAND): the program is forked and held on a
 * pipe before its first instruction; the tracer (stap, or stapbpf for the bpf runtime) is
 * started on its pid; when the tracer prints "MW 1 ready" (its begin probe
 * runs after every uprobe is attached) the program is released.  When
 * the program exits (its ptrace exit stop), the script's flush probe is
 * run (opts->flush): the aggregates come at once, while the tracer still
 * holds its uprobes; the tracer then gets SIGINT and is left to remove
 * them (about 0.11 s each under stapbpf, serialized machine-wide; see
 * docs/platform.md) while the report is written - mw_tracer_hand_off().
 * Without the flush the tracer gets SIGINT, its end probe prints the
 * aggregates once every uprobe is gone, and its output is read to the
 * end.
 *
 * -p (MW_PROCS_PIDS, MW_PROCS_CGROUP): the same without the fork; the
 * run ends when the process exits or mallocwatch gets SIGINT/SIGTERM/
 * SIGHUP, which stops the tracer the same way (its end probe runs: the
 * report is complete) and is the
 * normal end of an attach.  The process itself is never signalled.
 *
 * A signal before tracing started (while stap compiles, or before the
 * ready line) gives the run up: stap's process group gets SIGTERM, the
 * held program is killed before its first instruction, and -1 is
 * returned with r->interrupted set.
 *
 * The tracer runs in its own process group, so a terminal's ^C reaches
 * only the program (which then exits and ends the run normally).  Under
 * sudo with a terminal on stdin the program runs on a pseudo-terminal of
 * its own, relayed from the time it is released until it is reaped
 * (ptyrelay.h).
 */
#ifndef MALLOCWATCH_TRACER_H
#define MALLOCWATCH_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime.h"
#include "signals.h"	/* mw_signals_catch(), which the run acts on */
#include "procset.h"
#include "target.h"

struct mw_pidlist;
struct mw_linger;

/* The most processes a -f tree may have had (the script's target and
 * every one put in its set: the 257th is the first refused) for an exec
 * to be drained (procset.h mw_procset_ptraced): each drain scans every
 * one's entries in the script's maps. */
#define MW_EXEC_DRAIN_MAX 256
/* The most execs held waiting for their turn while the tracer empties
 * another's totals (tracer.h, the processes under ptrace); more are
 * refused.  Not memory (a pid each): each waits for those before it, a
 * drain at a time (a few ms each; bench/RESULTS-2026-11-29-firstexec.txt),
 * and a `make -j` burst of forks and execs must mostly fit. */
#define MW_EXEC_WAIT_MAX 64

struct mw_tracer_opts {
	const struct mw_runtime_env *env;
	const char *script;		/* the generated .stp file */
	const char *workdir;		/* where the bpf object is compiled */
	/* The processes traced (procset.h), and what the loop does for each
	 * kind:
	 * - MW_PROCS_COMMAND: the program started held (above).  With
	 *   runs >= 2 (--repeat, a script whose set of processes changes,
	 *   gen.h opts->dynamic), the program is run up to runs times under
	 *   this one session, one after the other: run i's program (i from
	 *   0) is started held, added to the set, the consumer's on_run is
	 *   called and it is released (run 0: when it is started, before the
	 *   tracer's ready line releases it); it leaves the set once reaped,
	 *   and the consumer's run_done says how it ended.  The next run
	 *   starts only when this one exited with status 0, the tracer is
	 *   still there and no signal of ours came.  The flush runs once, at
	 *   the last run's exit stop (or after the last run's end, when the
	 *   series stopped early): the aggregates of every run come then,
	 *   each record prefixed with its process.  r describes the last run
	 *   (its pid and status); r->runs counts the runs started.
	 * - MW_PROCS_PIDS: the processes, watched one after the other; the
	 *   run ends when every one has exited (or as duration_ms says).
	 * - follow (-f, ptrace_tree.h): every process the tree creates is
	 *   followed; the script's set of processes changes (gen.h
	 *   opts->dynamic): each new process is added to it (pidset.h)
	 *   before it runs, and removed once it has been reaped; the consumer
	 *   hears of each (on_new, on_exec, at_exit, on_exited).  The flush
	 *   runs at the exit stop of the last process; the run ends when
	 *   every process has ended (one that outlives the program included)
	 *   or on a signal of ours.
	 * - The processes under ptrace (-c, -f: mw_procset_ptraced): when one
	 *   replaces the program it started (an exec after its first: the
	 *   program's first is its start from mallocwatch), or a forked
	 *   process runs its first program (its first exec: until then it
	 *   ran a copy of its parent, whose hits - a shell child's sbrk, a
	 *   thread's arena - would else stay in the new program's totals:
	 *   t-fork-exec), hold it at that exec's stop, mark it in
	 *   the set (-f: pidset.h), read the script's exec file (protocol.h
	 *   MW_EXEC_FILE), and let it go on once its MW_LINE_EXEC has come
	 *   (or FLUSH_WAIT_MS passed: its figures from the tracer are then
	 *   refused, on_mixed).  One at a time; others that exec meanwhile
	 *   wait in their stops (MW_EXEC_WAIT_MAX at most; more are
	 *   refused, and so are those waiting when the one asked was not
	 *   answered in time, so that a tracer that stops answering holds
	 *   none of them FLUSH_WAIT_MS more in turn).  Each ask scans the
	 *   script's maps (bench: about 0.6 ms an exec, growing with them;
	 *   bench/RESULTS-2026-11-29-firstexec.txt has what draining first
	 *   execs costs a tree of forks): none is asked once more than
	 *   MW_EXEC_DRAIN_MAX processes were in the tree.  Any exec is
	 *   then refused (on_mixed), a forked process's first too: what the
	 *   copy of its parent hit between fork and exec (counted-only
	 *   probes leave no record until the totals are printed, so no hit
	 *   seen proves nothing) would stay in its totals (t-e2e-exec).
	 * - MW_PROCS_CGROUP: the processes that join the cgroup (or its
	 *   children) while the run goes on are added to the set (the
	 *   script's opts->dynamic) when the consumer's join accepts them;
	 *   looked for every MW_CGROUP_POLL_MS.  The run ends when every
	 *   process traced has exited, or on ^C, SIGTERM or --duration.
	 * - MW_PROCS_LISTED (serve, serve_probes.h): processes that come and
	 *   go, as the consumer's list gives them every MW_SERVE_POLL_MS,
	 *   under a session that lasts.  The set's pid is mallocwatch's own
	 *   (the script's target(), in no process's way): the run ends when
	 *   stop_fd becomes readable (as ^C ends -p: the flush, the tracer
	 *   left detaching) or the tracer ends.  Every live_ms the script's
	 *   MW_LIVE_FILE is read (gen.h opts->live). */
	const struct mw_procset *procs;
	int verbose;			/* echo the tracer's stderr */
	long duration_ms;		/* -p: stop after this long once tracing
					 * (as ^C would); 0 = until it exits */
	/* -c with the consumer's at_exit: after at_exit, when the whole
	 * process is ending, read the script's flush file (protocol.h) so
	 * the tracer prints its aggregates and MW_LINE_END while it still
	 * holds its uprobes; the program is held at its exit stop until they
	 * and every event they count have come (the consumer's missing() ==
	 * 0), then the tracer is told to stop and left to remove its uprobes
	 * on its own (r->detaching). */
	int flush;
	/* the consumer's sample (struct mw_consumer): every sample_ms */
	long sample_ms;
	/* > 0: a sample that took longer than this percent of sample_ms
	 * (CPU time of sample() and the question to the script) moves the
	 * next one further, so that sampling takes at most this share of
	 * the time (bench/sampler.sh: ~0.3 ms a sample with one arena, ~0.05
	 * ms more per arena); 0: every sample_ms whatever it costs */
	int sample_pct_max;
	int stop_fd;			/* MW_PROCS_LISTED: the run's end */
	long live_ms;			/* MW_PROCS_LISTED: the live file's period */
	/* -c --linger (linger.h), bpf runtime, a script with opts->linger:
	 * with session, the run is served by that idle session (the hold is
	 * the run's from then on): no compile, no tracer of its own; its
	 * program joins the set before it is released.  Else, with
	 * linger_key (and linger_id, mw_linger_key()), the run arms a
	 * session that lingers linger_ms after it (when it cannot, the run
	 * starts its tracer itself, as without).  Either way the program's
	 * exit stop takes it out of the set and reads the drain probe
	 * instead of the flush, and the tracer is left to the session
	 * (r->detaching stays 0). */
	struct mw_linger *session;
	const char *linger_key, *linger_id;
	long linger_ms;
};

#define MW_CGROUP_POLL_MS 200
#define MW_SERVE_POLL_MS 1000

/* What is done with a run's events, as perf's struct perf_tool is one
 * table of the callbacks a session calls: the run's consumer (the trace
 * command's sinks, serve's session).  Each is called with ctx; each but
 * line may be NULL (nothing done then, or as each says).
 *
 * line: each line of the tracer's stdout (no newline), and the lines
 *   sample makes.
 * arming: once while the tracer loads its programs (after it is
 *   started, before its ready line is awaited; a -c program still held):
 *   work the run needs later, done then instead of in the program's time
 *   or at its exit.
 * missing: events the aggregates count that have not arrived yet (the
 *   flush waits for them); NULL: do not wait for any.
 * sample: every opts->sample_ms while tracing (from the ready line until
 *   the program's exit or the stop) - it reads the allocator and gives
 *   its own lines to line, and returns 0, or -1 when there is no sample
 *   (skipped) - then, for a sample, the script's sample file
 *   (MW_SAMPLE_FILE) is read, whose probe prints the lock waits so far (a
 *   C record) through the tracer.  NULL: no samples.
 * at_exit: -c (and -f's every process): called when a process exits,
 *   while its memory still exists (a PTRACE_EVENT_EXIT stop: the program
 *   is traced with PTRACE_SEIZE and PTRACE_O_TRACEEXIT only, every
 *   signal passed on unchanged, group-stops kept).  NULL: the program is
 *   not ptraced.
 * on_new, on_exec, on_exited: -f (procset.h follow): on_new(ctx, parent,
 *   pid) first for the program itself (parent 0, when it is started),
 *   then for each new process; on_exec(ctx, pid, execs, drained) after a
 *   process exec'd, execs as ptrace_tree.h's event gives it (1: the
 *   program it started), drained 1 when the tracer emptied the old
 *   program's totals (mw_procset_ptraced; their records then end with the
 *   exec line); on_exited(ctx, pid, status) when it is gone (status as
 *   waitpid(2) gives it, -1 unknown); on_released(ctx, pid) when pid was
 *   let go on request (release.h): no longer traced, out of the set, none
 *   of its later forks, execs or its exit told.
 * exec_owed: -c, -f (mw_procset_ptraced): the streamed events of pid's
 *   old image that its drained totals count and that have not come
 *   (state.h mw_state_owed): it stays at its exec stop, after the exec
 *   line, until none is, or FLUSH_DRAIN_MS passed (then refused,
 *   on_mixed); NULL: not waited for.
 * on_mixed: -c, -f (mw_procset_ptraced): process pid replaced its image
 *   (an exec after the program's start) and the tracer's totals of the
 *   old one were not emptied for the new one: why ("the tracer did not
 *   answer in 3000 ms").  Its figures from the tracer mix the two
 *   programs from now (state.h mw_state_images_mixed); called after
 *   on_exec, or later (an answer that did not come in time; one that
 *   comes after that is not passed on).
 * join: --cgroup and serve: a process that appeared is added to the set
 *   when join returns 0 (it maps the traced libc file).
 * list: serve: every MW_SERVE_POLL_MS, append the processes to trace to
 *   l (returns 0, or -1: not this time); each one not seen before is
 *   offered to join and, when accepted, added to the set; one that joined
 *   and is no longer listed (it exited, or left the selection) is removed
 *   from the set, then leave(ctx, pid) is called.
 * on_run, run_done: --repeat (procset.h runs): on_run(ctx, i, pid) when run
 *   i's program is started and in the set, before it is released;
 *   run_done(ctx, i, status, untraced) when it ended (status as waitpid(2)
 *   gives it, -1 unknown; the processes it created, not traced). */
struct mw_consumer {
	void *ctx;
	void (*line)(void *ctx, const char *line);
	void (*arming)(void *ctx);
	unsigned long long (*missing)(void *ctx);
	int (*sample)(void *ctx, pid_t pid);
	void (*at_exit)(void *ctx, pid_t pid);
	void (*on_new)(void *ctx, pid_t parent, pid_t pid);
	void (*on_exec)(void *ctx, pid_t pid, unsigned execs, int drained);
	unsigned long long (*exec_owed)(void *ctx, pid_t pid);
	void (*on_mixed)(void *ctx, pid_t pid, const char *why);
	void (*on_exited)(void *ctx, pid_t pid, int status);
	void (*on_released)(void *ctx, pid_t pid);
	int (*join)(void *ctx, pid_t pid);
	int (*list)(void *ctx, struct mw_pidlist *l);
	void (*leave)(void *ctx, pid_t pid);
	void (*on_run)(void *ctx, int i, pid_t pid);
	void (*run_done)(void *ctx, int i, int status, unsigned long untraced);
};

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
	unsigned long long samples_unanswered;	/* samples taken while the
					 * tracer had not answered the last
					 * lock-wait question: no C record */
	long long exit_ms;		/* -c: mw_now_ms() at the exit stop */
	int flushed;			/* -c: the flush answered: complete */
	long long flush_ms;		/* its duration, exit stop to complete */
	unsigned long untraced;		/* -c without -f: processes the
					 * program created, not traced */
	unsigned long set_failed;	/* -f, --cgroup: processes that could
					 * not be added to the tracer's set */
	int runs;			/* -c --repeat: runs started (procs->runs) */
	int lingered;			/* --linger: the tracer was armed by a
					 * session's (0) or joined one (1), and
					 * left to it, drained; -1 neither */
	pid_t detaching;		/* tracer left removing its uprobes after
					 * the flush (not reaped; see
					 * mw_tracer_hand_off), or 0 */
	char tracer_msg[512];		/* its first error line, or its last line */
};


/* Run everything, the events to c; see above.  Returns 0 when the program ran traced to
 * the end (whatever its own exit status), -1 with a one-line reason in
 * err when the tracer could not start, the program could not be run or
 * a signal came first.  r is filled in either case.  Every child
 * (stap, stapbpf, the program) gets no descriptor of mallocwatch's but
 * stdin/stdout/stderr, and the tracer dies with mallocwatch
 * (PR_SET_PDEATHSIG). */
int mw_trace_run(const struct mw_tracer_opts *o, const struct mw_consumer *c,
		 struct mw_trace_result *r, char *err, size_t errlen);

/* After a run that left its tracer detaching (r->detaching): hand the
 * tracer and the run's work directory to a watcher process, which waits
 * for the tracer to end (killing it and removing its uprobe definitions
 * if it makes no progress for 20 s), then removes the work directory
 * and module's procfs directory, and exits.  The watcher has its own
 * session and none of mallocwatch's descriptors; it renames the work
 * directory to its own pid and marks it (MW_DETACHING_FILE) so sweeps
 * leave it alone and `mallocwatch --cleanup` waits for it.  Returns 0,
 * or -1 when it could not fork (the directory is then the caller's). */
int mw_tracer_hand_off(pid_t tracer, const char *workdir, const char *module);

/* Reap tracers and watchers of earlier runs that have ended (--repeat). */
void mw_tracer_reap(void);

#endif /* MALLOCWATCH_TRACER_H */
