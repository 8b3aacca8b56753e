/* runtime.h - choose a SystemTap runtime and prepare the machine for it.
 *
 * The kernel runtime (stap's default) builds and loads a kernel module:
 * it needs loadable-module support (/proc/modules) and the running
 * kernel's build tree (/lib/modules/RELEASE/build).  The bpf runtime
 * (stap --runtime=bpf, stapbpf) needs, on a machine like the one in
 * docs/platform.md:
 *   - a directory stap -r accepts: .config (from /proc/config.gz), an
 *     empty Module.symvers, include/config/kernel.release.  As root it is
 *     cached in MW_CACHE_DIR/kernel-RELEASE (root-owned, built in a fresh
 *     directory and renamed into place); otherwise it is made inside the
 *     run's private work directory (leftovers.h), never in a shared
 *     place where another user could plant links;
 *   - debugfs mounted (stapbpf opens /sys/kernel/debug/tracing/uprobe_events);
 *   - where RLIMIT_MEMLOCK cannot be raised, memlock-shim.so preloaded
 *     into stapbpf alone;
 *   - where the kernel has uprobe_multi links (Linux 6.6), umulti-shim.so
 *     preloaded into stapbpf alone: its uprobe sites become one link per
 *     file instead of a tracefs event each (shim/umulti-shim.c), armed
 *     and removed at once.  MALLOCWATCH_ATTACH=tracefs keeps stapbpf's
 *     own tracefs events.
 */
#ifndef MALLOCWATCH_RUNTIME_H
#define MALLOCWATCH_RUNTIME_H

#include <limits.h>
#include <stddef.h>

/* Where stapbpf defines its uprobes (stapprobe_PID_N), in debugfs. */
#define MW_UPROBE_EVENTS "/sys/kernel/debug/tracing/uprobe_events"

/* SystemTap's runtimes: its kernel-module runtime (stap's default) and
 * stapbpf (stap --runtime=bpf).  AUTO is resolved by mw_runtime_prepare. */
enum mw_runtime { MW_RT_AUTO, MW_RT_KERNEL, MW_RT_BPF };

struct mw_runtime_env {
	enum mw_runtime rt;		/* MW_RT_KERNEL or MW_RT_BPF */
	char kbuild[PATH_MAX];		/* for stap -r; "" = stap's default */
	/* LD_PRELOAD for stapbpf, paths joined by ':'; "" = none */
	char shim[2 * PATH_MAX + 2];
	char did[512];			/* what was prepared, for one note */
	/* the bpf runtime's sites armed as uprobe_multi links: umulti-shim.so
	 * is in shim (mw_runtime_uprobe_multi said yes) */
	int umulti;
	/* --stacks under the kernel runtime: the module is built with
	 * --ldd and `-d unwind` (the program's file, "" none) so that the
	 * script's ubacktrace() has their unwind data (stap(1)) */
	int ustack;
	char unwind[PATH_MAX];
	/* the tracer gets no -x PID (gen.h, mw_gen_untargeted): a set of
	 * processes under the kernel runtime */
	int untargeted;
};

/* "kernel", "bpf" or "auto". */
const char *mw_runtime_name(enum mw_runtime rt);

/* Pick the runtime for want (MW_RT_AUTO: kernel when modules can load and
 * the build tree exists, else bpf) and prepare it.  for_run is 0 when the
 * script is only translated (stap -p3): nothing is mounted then.
 * workdir is the run's private directory (leftovers.h).
 * Returns 0, or -1 with a one-line reason in err. */
int mw_runtime_prepare(enum mw_runtime want, int for_run, const char *workdir,
		       struct mw_runtime_env *env, char *err, size_t errlen);

#define MW_MODULE_PREFIX "mallocwatch_"

/* The kernel runtime's modules: MW_KMOD_PREFIX and 16 hex digits (a hash
 * of what the module is built from), loaded by staprun -R as that name's
 * head and "_PID" (PID: the staprun, then stapio, that holds it). */
#define MW_KMOD_PREFIX "mallocwatch_k"

/* The runtime want resolves to, without preparing anything: AUTO is the
 * kernel runtime when modules can load (/proc/modules) and the running
 * kernel's build tree is there, else bpf. */
enum mw_runtime mw_runtime_pick(enum mw_runtime want);

/* The module name of the run whose work directory is workdir,
 * "mallocwatch_PID_XXXXXX" (PID: this mallocwatch; XXXXXX: the work
 * directory's mkdtemp suffix, letters and digits), into buf: stap -m
 * NAME, the .bo file's name and the directory of the script's procfs
 * probes.  Unique per run: a later run with the same pid (reused, or
 * --repeat) never shares a FIFO directory with one still detaching.
 * Returns buf. */
const char *mw_runtime_module(const char *workdir, char *buf, size_t len);

/* stapbpf makes its procfs FIFOs under /var/tmp/systemtap-USER/MODULE/
 * (a path stapbpf.cxx hard-codes: no TMPDIR) and reopens them by path.
 * /var/tmp is every user's: another could make systemtap-root there
 * first, and every root run would have to refuse it.  So stapbpf runs in
 * a mount namespace of its own (mw_runtime_vartmp_enter) where this
 * directory, root's and 0700, is mounted on /var/tmp: what stapbpf
 * calls /var/tmp/systemtap-USER is MW_STAPBPF_TMP/systemtap-USER for
 * everyone else, and no other user's file is in its way. */
#define MW_STAPBPF_TMP "/run/mallocwatch/vartmp"

/* In stapbpf's child, before the exec: a new mount namespace (its
 * mounts propagate to no other; the host's still reach it) with
 * MW_STAPBPF_TMP bound on /var/tmp (nosuid, nodev, noexec).  0, or -1
 * with errno. */
int mw_runtime_vartmp_enter(void);

/* Where the tracer puts the script's procfs probe file name (protocol.h's
 * MW_FLUSH_FILE) for module: bpf MW_STAPBPF_TMP/systemtap-USER/MODULE/NAME
 * (USER: the effective user's name; stapbpf makes it a FIFO there, in
 * its /var/tmp), kernel /proc/systemtap/MODULE/NAME.  Returns 0, -1 when
 * the user has no name. */
int mw_runtime_procfs_path(enum mw_runtime rt, const char *module, const char *name,
			   char *buf, size_t len);

/* stapbpf's directory of procfs FIFO directories for the effective
 * user, MW_STAPBPF_TMP/systemtap-USER, into buf.  0, or -1 (no user
 * name). */
int mw_runtime_procfs_base(char *buf, size_t len);

/* Open that file to make the tracer run the probe: O_RDONLY|O_NONBLOCK,
 * close-on-exec, no links followed.  Under bpf every directory on the way
 * below MW_STAPBPF_TMP must be the effective user's own and not group or
 * other writable (the module's may be, in a systemtap-USER no one else
 * can enter: stap 5.1's stapbpf makes it 0777), and the file a FIFO of
 * that user.  Returns the fd (the
 * caller closes it once the probe's output has come), or -1 with a
 * reason in err. */
int mw_runtime_procfs_open(enum mw_runtime rt, const char *module, const char *name,
			   char *err, size_t errlen);

/* Whether a tracer's module is in use (its FIFO directory, its uprobe
 * definitions: uprobes.h) is told by a lock, never by a look at /proc
 * (a sweeper in a pid namespace of its own sees none of the host's
 * processes, a container's none of another's): MODULE MW_PROCFS_LOCK_SUFFIX
 * in the FIFO directories' directory (mw_runtime_procfs_base), a regular
 * file of the effective user's, locked (flock(2) LOCK_EX) by the run
 * before it starts the tracer.  Its descriptor is close-on-exec but for
 * stapbpf, which mw_tracer_spawn() hands it to and then lets go of
 * (mw_runtime_procfs_release): the lock lasts until the tracer has
 * exited, whoever waits for it (the run, its watcher, a --linger
 * session).  A sweep takes a lock no one holds and removes what it stood
 * for, then the file. */
#define MW_PROCFS_LOCK_SUFFIX ".lock"

/* Make and lock module's lock file (one hold per process: a later one
 * lets go of the earlier); a FIFO directory a killed stapbpf left under
 * that name is removed first.  0, or -1 with a one-line reason in err. */
int mw_runtime_procfs_hold(const char *module, char *err, size_t errlen);

/* The held lock's descriptor, or -1. */
int mw_runtime_procfs_lock_fd(void);

/* The module of this process's latest hold (held still, or handed to its
 * tracer), or NULL. */
const char *mw_runtime_procfs_module(void);

/* Move the held descriptor to the lowest free number from at on (a
 * --linger session keeps it among its few descriptors). */
void mw_runtime_procfs_lock_move(int at);

/* Let go of the held descriptor (the tracer holds the lock now). */
void mw_runtime_procfs_release(void);

/* For the sweep: take module's lock.  1 with the locked descriptor in
 * *fd (the caller removes what the lock stood for, the lock's file with
 * mw_runtime_procfs_remove, then closes *fd); 0 when there is no lock
 * file (a run of an older mallocwatch, or one swept); -1 when it is held
 * (or not ours). */
int mw_runtime_procfs_take(const char *module, int *fd);

/* 1 when module's lock is held by someone (its tracer, or its run about
 * to start it), else 0. */
int mw_runtime_procfs_held(const char *module);

/* Remove the procfs FIFO directory stapbpf left for module (it removes it
 * itself unless killed), when it is the effective user's own, and the
 * module's lock file: only once its tracer has ended, or under the lock
 * (mw_runtime_procfs_take). */
void mw_runtime_procfs_remove(const char *module);

#endif /* MALLOCWATCH_RUNTIME_H */
