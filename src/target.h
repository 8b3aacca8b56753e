/* target.h - the program to trace: its path, the libc it will load, and
 * how to start it so that libc is the probe-enabled one.
 *
 * The libc chosen, in order:
 *   1. --libc PATH;
 *   2. the system libc (the one mallocwatch itself runs on) when it has
 *      memory_* SDT notes, as on Fedora, RHEL and Ubuntu;
 *   3. the probe-enabled glibc cached under MW_GLIBC_PREFIX (environment,
 *      else the build-time default /var/cache/mallocwatch/glibc; see
 *      scripts/build-glibc.sh).
 * When the chosen libc is not the system's and a dynamic loader sits beside
 * it, the program is started through that loader:
 *
 *	LOADER --library-path PREFIX/lib:$LD_LIBRARY_PATH:/lib/x86_64-linux-gnu:...
 *	       --argv0 ARGV0 PROGRAM ARGS...
 *
 * so the program gets the probe-enabled libc while the system's other
 * libraries (liblzma for xz, ...) are still found.
 */
#ifndef MALLOCWATCH_TARGET_H
#define MALLOCWATCH_TARGET_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct mw_target {
	char path[PATH_MAX];	/* the program, found on PATH like execvp */
	char libc[PATH_MAX];	/* the libc.so.6 to trace */
	char loader[PATH_MAX];	/* "" when the program is exec'd directly */
	char **argv;		/* what to execve: owned, NULL-terminated */
	const char *const *user_argv;	/* the command as given (not owned) */
	uid_t uid;		/* run as this user: SUDO_UID under sudo, */
	gid_t gid;		/* else (uid_t)-1 = unchanged */
	char user[64];		/* SUDO_USER, for initgroups; "" if none */
};

/* The libc this process (mallocwatch) runs on, found with
 * dl_iterate_phdr.  Returns 0 and fills out, or -1. */
int mw_system_libc(char *out, size_t len);

/* Does the ELF file at path carry memory_* SDT notes? 1 yes, 0 no, -1
 * when it cannot be read. */
int mw_libc_has_probes(const char *path);

/* Resolve argv[0], choose the libc (libc_opt: --libc or NULL) and build
 * t->argv.  Returns 0, or -1 with a one-line reason in err. */
int mw_target_resolve(const char *const *argv, const char *libc_opt,
		      struct mw_target *t, char *err, size_t errlen);

/* The libc of a running process, from /proc/PID/maps: the first mapped
 * file whose name starts with "libc.so" or "libc-".  0 or -1 with err. */
int mw_target_libc_of_pid(pid_t pid, char *out, size_t len, char *err, size_t errlen);

/* The libm beside libc (same directory, libm.so.6) into out; 0, or -1
 * when there is none. */
int mw_libm_beside(const char *libc, char *out, size_t len);

/* Free t->argv. */
void mw_target_free(struct mw_target *t);

#endif /* MALLOCWATCH_TARGET_H */
