/* uprobes.h - the uprobe definitions of the tracers mallocwatch starts,
 * and root's records of those tracers.
 *
 * A stapbpf defines its uprobes in MW_UPROBE_EVENTS (runtime.h) as
 * "p:uprobes/stapprobe_PID_N ...", PID its own pid (the innermost of its
 * NSpid), and removes them when it exits; one killed with SIGKILL, or
 * whose perf events the kernel still holds, leaves them.  They are
 * removed only when PID is a tracer mallocwatch started (a record of
 * root's in MW_RECORD_DIR, holding its start time and its module), that
 * tracer has ended (its module's lock is free: runtime.h; for a record
 * of an older mallocwatch, without a module, by the processes seen), no
 * record of that PID in another pid namespace may still run, and no live
 * stapbpf we can see calls itself PID.  Another tool's definitions are
 * never touched.  The rest of the sweep, and the
 * work directories, are leftovers.h's.
 */
#ifndef MALLOCWATCH_UPROBES_H
#define MALLOCWATCH_UPROBES_H

#include <sys/types.h>

/* Root's record of the tracers mallocwatch started (tmpfs: a reboot,
 * which ends every tracer, clears it): MW_RECORD_DIR/NS.PID (NS: the inode of
 * the pid namespace PID is in) holds the tracer's start time (proc(5) stat field 22)
 * and, on a second line, the module whose lock it holds (runtime.h's
 * mw_runtime_procfs_module()).  Made 0700; not used when
 * it is not the effective user's alone. */
#define MW_RUN_DIR "/run/mallocwatch"
#define MW_RECORD_DIR MW_RUN_DIR "/tracers"

/* Record tracer (a stapbpf just started) as one of ours, so that a
 * sweep may remove its definitions once it has ended; _unrecord when
 * it ended and left none.  Nothing is recorded when MW_RECORD_DIR
 * cannot be made the effective user's alone (not root). */
void mw_tracer_record(pid_t tracer);
void mw_tracer_unrecord(pid_t tracer);

/* The pids of the records in MW_RECORD_DIR (tracers running, or ended
 * and not swept yet) that are of our pid namespace, up to max into pids;
 * how many there are (more than max: look at every process instead).
 * *foreign is set to 1 when a record of another pid namespace is there
 * (its pid names no process of ours), else 0.  Without any record no
 * tracer of ours can be left: a sweep need not list /proc. */
int mw_tracer_records(pid_t *pids, int max, int *foreign);

/* 1 when pid is a tracer mallocwatch started (recorded) that is still
 * running: a process with that pid and the recorded start time; else 0. */
int mw_tracer_recorded_alive(pid_t pid);

/* 1 when pid is a stapbpf of the effective user's (anyone may name a
 * process "stapbpf"; only root's can hold uprobes) that is still running,
 * not dead and not a zombie; else 0. */
int mw_stapbpf_live(pid_t pid);

/* 1 when this process is in the initial pid namespace (its inode is
 * fixed: PROC_PID_INIT_INO) and so sees every process in /proc: only
 * then may what a run of an older mallocwatch left (no lock, runtime.h)
 * be judged by the processes seen; else 0. */
int mw_pidns_initial(void);

/* How many uprobe definitions stapbpf process tracer has; -1 when
 * uprobe_events cannot be read. */
int mw_uprobes_of(pid_t tracer);

/* After SIGINT the tracer detaches its uprobes, about 0.1 s each and
 * serialized with every other tracer on the machine; it is killed only
 * when MW_STOP_GRACE_MS pass without one of its uprobe definitions going
 * (the watcher of tracer.h's mw_tracer_hand_off, and a lingering session
 * as it ends: linger.h). */
#define MW_STOP_GRACE_MS 20000

/* Wait while the tracer (stap or stapbpf, not necessarily a child; pidfd
 * a pidfd for it, pidfd.h) is alive and removing its uprobes: each
 * definition of its that goes (counted once a second) gives it grace_ms
 * more.  Returns 0 once it has ended (or is a zombie), -1 when grace_ms
 * passed without progress. */
int mw_wait_tracer(pid_t tracer, int pidfd, long grace_ms);

/* Remove the uprobe definitions of tracers of ours that are gone (or
 * zombies; see above); how many.  Definitions the kernel still holds
 * are tried again for up to budget_ms.  Records of ended tracers with
 * no definition left are removed. */
int mw_sweep_uprobes(long budget_ms);

#endif /* MALLOCWATCH_UPROBES_H */
