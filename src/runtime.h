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
 *     into stapbpf alone.
 */
#ifndef MALLOCWATCH_RUNTIME_H
#define MALLOCWATCH_RUNTIME_H

#include <limits.h>
#include <stddef.h>

/* Root's cache of what runs share (the kernel-config stub). */
#define MW_CACHE_DIR "/var/cache/mallocwatch"

/* SystemTap's runtimes: its kernel-module runtime (stap's default) and
 * stapbpf (stap --runtime=bpf).  AUTO is resolved by mw_runtime_prepare. */
enum mw_runtime { MW_RT_AUTO, MW_RT_KERNEL, MW_RT_BPF };

struct mw_runtime_env {
	enum mw_runtime rt;		/* MW_RT_KERNEL or MW_RT_BPF */
	char kbuild[PATH_MAX];		/* for stap -r; "" = stap's default */
	char shim[PATH_MAX];		/* LD_PRELOAD for stapbpf; "" = none */
	char did[512];			/* what was prepared, for one note */
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

/* Make (or reuse) a kernel-config stub directory for `stap -r`, its path
 * into dir_out; see above (workdir: the run's private directory, used
 * when not root).  Returns 0 or -1 with err. */
int mw_runtime_kstub(char *dir_out, size_t len, const char *workdir, char *err, size_t errlen);

#endif /* MALLOCWATCH_RUNTIME_H */
