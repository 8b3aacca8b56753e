/* leftovers.h - the private work directory of a run, and what killed
 * runs left behind.
 *
 * Each traced run works in a directory of its own,
 *
 *	$TMPDIR/mallocwatch.PID.XXXXXX		(default TMPDIR: /tmp)
 *
 * made by mkdtemp(3) (mode 0700, owned by the caller), where PID is the
 * mallocwatch process: the script (mallocwatch.stp), the BPF object
 * stap compiles (mallocwatch.bo), and for a run without root the
 * kernel-config stub for `stap -r`.  The tracer (stap or stapbpf) runs
 * with this directory as its working directory.
 *
 * A run that ends in any way it can see removes the directory and its
 * tracer stops with it (the tracer gets SIGTERM through
 * PR_SET_PDEATHSIG if mallocwatch dies).  A run killed with SIGKILL
 * cannot clean up itself, so every later run (and `mallocwatch
 * --cleanup`) sweeps first:
 *   - a stap or stapbpf whose working directory is the work directory of
 *     a dead run gets SIGTERM (it then detaches its uprobes) and is waited
 *     for, SIGKILL after MW_SWEEP_WAIT_MS;
 *   - uprobe definitions "p:uprobes/stapprobe_PID_N" in
 *     /sys/kernel/debug/tracing/uprobe_events whose PID is no longer a
 *     stapbpf (stapbpf names its definitions so) are removed;
 *   - work directories of dead runs owned by the caller are removed.
 * A run is dead when no process has its PID (or only a zombie does).
 * Nothing of a live run, or of another user, is touched.
 *
 * A -c run whose report is complete before its tracer has removed its
 * uprobes (tracer.h) hands the tracer to a watcher process, which
 * renames the work directory to its own pid (so the run stays live for
 * sweeps), marks it with MW_DETACHING_FILE, and removes it once the
 * tracer has ended.  `mallocwatch --cleanup` waits for those
 * (mw_wait_detaching) before it sweeps.
 */
#ifndef MALLOCWATCH_LEFTOVERS_H
#define MALLOCWATCH_LEFTOVERS_H

#include <stddef.h>
#include <sys/types.h>

#define MW_SWEEP_WAIT_MS 30000

/* In a work directory whose tracer is removing its uprobes after the run
 * (tracer.h, mw_tracer_hand_off): the tracer's pid. */
#define MW_DETACHING_FILE "detaching"
#define MW_UPROBE_EVENTS "/sys/kernel/debug/tracing/uprobe_events"

/* What a sweep removed. */
struct mw_sweep {
	int tracers;		/* orphaned tracers stopped */
	int uprobes;		/* uprobe definitions removed */
	int dirs;		/* work directories removed */
};

/* Wait for tracers still removing their uprobes after their runs (work
 * directories marked MW_DETACHING_FILE) and for their watchers to remove
 * the directories, as long as each makes progress (MW_SWEEP_WAIT_MS
 * without a definition going ends the wait for it).  Returns how many
 * were waited for. */
int mw_wait_detaching(void);

/* Make this run's work directory; its path into dir.  0, or -1 with a
 * one-line reason in err. */
int mw_workdir_make(char *dir, size_t len, char *err, size_t errlen);

/* Remove a work directory and everything in it (not following links).
 * "" is allowed and does nothing. */
void mw_workdir_remove(const char *dir);

/* Remove the uprobe definitions of tracers that are gone (or zombies);
 * how many.  Definitions the kernel still holds are tried again for up
 * to MW_SWEEP_WAIT_MS. */
int mw_sweep_uprobes(void);

/* How many uprobe definitions stapbpf process tracer has; -1 when
 * uprobe_events cannot be read. */
int mw_uprobes_of(pid_t tracer);

/* Wait while the tracer (stap or stapbpf, not necessarily a child) is
 * alive and removing its uprobes: each definition of its that goes
 * (counted once a second) gives it grace_ms more.  Returns 0 once it has
 * ended (or is a zombie), -1 when grace_ms passed without progress. */
int mw_wait_tracer(pid_t tracer, long grace_ms);

/* The whole sweep described above, into *out (may be NULL). */
void mw_sweep(struct mw_sweep *out);

#endif /* MALLOCWATCH_LEFTOVERS_H */
