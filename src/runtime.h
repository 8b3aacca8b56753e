/* runtime.h - choose a SystemTap runtime and prepare the machine for it.
 *
 * The kernel runtime (stap's default) builds and loads a kernel module:
 * it needs loadable-module support (/proc/modules) and the running
 * kernel's build tree (/lib/modules/RELEASE/build).  The bpf runtime
 * (stap --runtime=bpf, stapbpf) needs, on a machine like the one in
 * PLATFORM.md:
 *   - a directory stap -r accepts: .config (from /proc/config.gz), an
 *     empty Module.symvers, include/config/kernel.release;
 *   - debugfs mounted (stapbpf opens /sys/kernel/debug/tracing/uprobe_events);
 *   - where RLIMIT_MEMLOCK cannot be raised, memlock-shim.so preloaded
 *     into stapbpf alone.
 */
#ifndef MALLOCWATCH_RUNTIME_H
#define MALLOCWATCH_RUNTIME_H

#include <limits.h>
#include <stddef.h>

#include "gen.h"

struct mw_runtime_env {
	enum mw_runtime rt;		/* MW_RT_KERNEL or MW_RT_BPF */
	char kbuild[PATH_MAX];		/* for stap -r; "" = stap's default */
	char shim[PATH_MAX];		/* LD_PRELOAD for stapbpf; "" = none */
	char did[512];			/* what was prepared, for one note */
};

/* Pick the runtime for want (MW_RT_AUTO: kernel when modules can load and
 * the build tree exists, else bpf) and prepare it.  for_run is 0 when the
 * script is only translated (stap -p3): nothing is mounted then.
 * Returns 0, or -1 with a one-line reason in err. */
int mw_runtime_prepare(enum mw_runtime want, int for_run,
		       struct mw_runtime_env *env, char *err, size_t errlen);

/* Make (or reuse) a kernel-config stub directory for `stap -r` in
 * dir_out; see above.  Returns 0 or -1 with err. */
int mw_runtime_kstub(char *dir_out, size_t len, char *err, size_t errlen);

#endif /* MALLOCWATCH_RUNTIME_H */
