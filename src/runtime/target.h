/* target.h - the program to trace: its path, the libc it will load, and
 * how to start it so that libc is the probe-enabled one.
 *
 * The libc chosen, in order:
 *   0. for a chroot(8) command (argv[0] named chroot; coreutils' options
 *      --userspec, --groups, --skip-chdir), not with --libc: the libc.so.6
 *      its program will map inside NEWROOT - the first regular file of
 *      that name in the root's lib/x86_64-linux-gnu, usr/lib/x86_64-linux-gnu,
 *      lib64, usr/lib64, lib, usr/lib, each looked up inside the root (its
 *      links resolve there), named by its path here:
 *
 *	mallocwatch -c chroot /var/cache/mallocwatch/roots/bullseye ./prog
 *	  -> traces .../roots/bullseye/usr/lib/x86_64-linux-gnu/libc-2.31.so
 *
 *      chroot itself runs as it is, on our libc, untraced; the program it
 *      execs (the same process) is traced from its first instruction on the
 *      root's libc (scripts/glibc-root.sh makes such roots).  Not with the
 *      kernel runtime (by_path: it matches the path the process maps,
 *      which is the root's inside it);
 *   1. --libc PATH;
 *   2. the system libc (the one mallocwatch itself runs on) when it has
 *      memory_* SDT notes, as on Fedora, RHEL and Ubuntu;
 *   3. the probe-enabled glibc cached under MW_GLIBC_PREFIX (environment,
 *      else the build-time default /var/cache/mallocwatch/glibc; see
 *      scripts/build-glibc.sh).
 * When the chosen libc is the cached probe-enabled glibc (3., not --libc),
 * the program is exec'd as it is, in a mount namespace of its own where
 * that glibc stands at the system's paths (glibc_ns.h): it and everything it
 * execs run on the probe-enabled libc, and no variable says so.  When that
 * namespace cannot be made (no CAP_SYS_ADMIN, files not root's, ...), and
 * for --libc, the program is started through the loader beside the libc:
 *
 *	LOADER --library-path PREFIX/lib:$LD_LIBRARY_PATH:/lib/x86_64-linux-gnu:...
 *	       --argv0 ARGV0 PROGRAM ARGS...
 *
 * so the program gets the probe-enabled libc while the system's other
 * libraries (liblzma for xz, ...) are still found; what it execs runs on
 * the system's loader and libc, untraced.  A script (a "#!" line) is
 * followed to its interpreter, as the kernel would (one level, and
 * through "#!/usr/bin/env NAME", NAME found on PATH):
 *
 *	#!/usr/bin/env python3    ->  LOADER ... --argv0 python3 /usr/bin/python3 x.py ARGS...
 *
 * the script's own ARGS unchanged; a script for a shell (a pyenv shim, a
 * wrapper that execs the real program) is refused, naming the shell:
 * only the shell would be traced, not the program it runs.
 */
#ifndef MALLOCWATCH_TARGET_H
#define MALLOCWATCH_TARGET_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "glibc_ns.h"

struct mw_target {
	char path[PATH_MAX];	/* the program, found on PATH like execvp */
	char libc[PATH_MAX];	/* the libc.so.6 to trace */
	char loader[PATH_MAX];	/* "" when the program is exec'd directly */
	struct mw_libcns *ns;	/* the probe-enabled glibc's mount namespace
				 * to exec in (owned), or NULL */
	char ns_why[PATH_MAX + 128];	/* why there is none, when loader is set
					 * for the probe-enabled glibc; else "" */
	char interp[PATH_MAX];	/* loader: a script's interpreter, else "" */
	char interp_argv0[PATH_MAX];	/* its argv[0], as the kernel (or env)
					 * would give it */
	char interp_arg[256];	/* the "#!" line's optional argument, or "" */
	char **argv;		/* what to execve: owned, NULL-terminated */
	const char *const *user_argv;	/* the command as given (not owned) */
	uid_t uid;		/* run as this user: SUDO_UID under sudo (root */
	gid_t gid;		/* with SUDO_UID and SUDO_GID), else (uid_t)-1 */
	char user[64];		/* SUDO_USER, for initgroups; "" if none */
};

/* Does the ELF file at path carry memory_* SDT notes? 1 yes, 0 no, -1
 * when it cannot be read. */
int mw_libc_has_probes(const char *path);

/* The one place that chooses the libc to trace: --libc (libc_opt, made
 * absolute; it must be a regular file), else the libc process pid maps
 * (pid != 0, -p), else the order above.  0, or -1 with err. */
int mw_choose_libc(const char *libc_opt, pid_t pid, char *out, size_t len,
		   char *err, size_t errlen);

/* The libm for slow-math probes: --libm (libm_opt, absolute, a regular
 * file), else the libm.so.6 beside libc when there is one; out is ""
 * when there is none.  0, or -1 with err for a bad --libm. */
int mw_choose_libm(const char *libm_opt, const char *libc, char *out, size_t len,
		   char *err, size_t errlen);

/* Resolve argv[0], choose the libc (libc_opt: --libc or NULL), how to
 * start the program (t->ns, else t->loader, else directly; makes the
 * namespace once in a throwaway child to know it can) and build t->argv.
 * by_path: the tracer finds the libc by the path it is mapped at (the
 * kernel runtime's task finder), not by its inode as uprobe_events does:
 * no namespace then (in it the libc is mapped at the system's path), the
 * loader, with the reason in t->ns_why.
 * Returns 0, or -1 with a one-line reason in err - also when
 * SUDO_UID/SUDO_GID are set but not both numeric. */
int mw_target_resolve(const char *const *argv, const char *libc_opt, int by_path,
		      struct mw_target *t, char *err, size_t errlen);

/* Free t->argv and t->ns. */
void mw_target_free(struct mw_target *t);

#endif /* MALLOCWATCH_TARGET_H */
