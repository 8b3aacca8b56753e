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
 *     a dead run gets SIGTERM through a pidfd (pidfd.h; it then detaches
 *     its uprobes and exits);
 *   - uprobe definitions "p:uprobes/stapprobe_PID_N" in
 *     /sys/kernel/debug/tracing/uprobe_events are removed only when PID
 *     is a tracer mallocwatch started (a record of root's in
 *     MW_RECORD_DIR, holding its start time), that tracer has ended,
 *     and no live stapbpf we can see calls itself PID (the innermost pid
 *     of its NSpid: a stapbpf in a pid namespace names its definitions
 *     with its pid there).  Another tool's definitions are never touched
 *     (uprobes.h: the records and the definitions);
 *   - work directories of dead runs owned by the caller are removed;
 *   - as root, what a killed run was making in root's cache (cache.h:
 *     temporaries nobody holds the lock on) is removed;
 *   - the release sockets of dead -f runs (relsock.h: directories whose
 *     lock no one holds) of the effective user are removed.
 * A run holds a lock (flock(2) LOCK_EX) on its work directory for its
 * whole life, its watcher after it; a run is dead when no process holds
 * that lock (the pid in the name may be of another pid namespace) and
 * that pid is not a process of the user's named mallocwatch or mw-detach
 * (an older mallocwatch took no lock; another user's process that got
 * the pid does not keep the directory).  A
 * sweep removes a directory only while holding its lock, and a run that
 * finds its new directory gone under it makes another.  Nothing of a
 * live run, or of another user, is touched.
 *
 * A run's sweep is bounded: it waits for nothing longer than
 * MW_SWEEP_RUN_MS in all (an orphaned tracer still detaching finishes
 * on its own; what it or the kernel still holds is swept next time),
 * and MW_SWEEP_KMOD_MS more for a kernel module a killed run left
 * loaded (only when the run and its stapio were both killed): removing
 * it runs its end probes, 1.3 s in make check-vm's emulated trixie
 * guest, and a removal cut short leaves it loaded, its uprobes armed.
 * `mallocwatch --cleanup` waits as long as there is progress, and kills
 * a tracer that makes none for MW_SWEEP_WAIT_MS.
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
#define MW_SWEEP_RUN_MS 1000
#define MW_SWEEP_KMOD_MS 10000

/* In a work directory whose tracer is removing its uprobes after the run
 * (tracer.h, mw_tracer_hand_off): the tracer's pid. */
#define MW_DETACHING_FILE "detaching"

/* What a sweep removed. */
struct mw_sweep {
	int tracers;		/* orphaned tracers stopped */
	int uprobes;		/* uprobe definitions removed */
	int dirs;		/* work directories removed */
	int modules;		/* kernel modules of dead runs removed */
	int cache;		/* temporaries in root's cache removed (cache.h) */
	int sockets;		/* -f runs' release sockets removed (relsock.h) */
};

/* Wait for tracers still removing their uprobes after their runs (work
 * directories marked MW_DETACHING_FILE) and for their watchers to remove
 * the directories, as long as each makes progress (MW_SWEEP_WAIT_MS
 * without a definition going ends the wait for it).  Returns how many
 * were waited for. */
int mw_wait_detaching(void);

/* Make this run's work directory, locked for as long as this process
 * (or a child that keeps mw_workdir_lock_fd()) lives; its path into dir.
 * 0, or -1 with a one-line reason in err. */
int mw_workdir_make(char *dir, size_t len, char *err, size_t errlen);

/* The descriptor holding that lock (close-on-exec), or -1. */
int mw_workdir_lock_fd(void);

/* Close it: the directory is another process's now (a watcher that
 * inherited the lock), or gone. */
void mw_workdir_unlock(void);

/* Remove a work directory and everything in it (not following links),
 * and let go of this process's lock.  "" is allowed. */
void mw_workdir_remove(const char *dir);

/* The kernel runtime's modules (runtime.h, MW_KMOD_PREFIX) left loaded
 * by a run whose stapio is gone - killed with SIGKILL: stapio removes
 * its module when it ends otherwise, also on the SIGTERM it gets when
 * mallocwatch dies - each removed with `staprun -d NAME` (its end probe
 * runs, its uprobes go), within budget_ms in all.  A module whose stapio
 * lives is another run's, and left alone.  Returns how many went. */
int mw_sweep_kmods(long budget_ms);

/* What s removed, as one clause for a note: "2 tracers stopped, 0
 * uprobe definitions, 1 work directory, 0 kernel modules, 0 release
 * sockets and 0 unfinished cache entries removed" (every count, in the
 * singular where it is 1), into buf (len bytes). */
void mw_sweep_text(const struct mw_sweep *s, char *buf, size_t len);

/* The whole sweep described above, into *out (may be NULL), waiting
 * for nothing longer than budget_ms in all (MW_SWEEP_RUN_MS before a
 * run).  With budget_ms >= MW_SWEEP_WAIT_MS (--cleanup) each part gets
 * budget_ms of its own: orphaned tracers are waited for, killed when
 * they have not ended by then and waited for again, and their
 * definitions are retried while the kernel still holds them. */
void mw_sweep(struct mw_sweep *out, long budget_ms);

#endif /* MALLOCWATCH_LEFTOVERS_H */
