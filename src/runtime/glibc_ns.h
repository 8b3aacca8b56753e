/* glibc_ns.h - run a program's whole process tree on the probe-enabled
 * glibc: a private mount namespace in which that glibc's files stand at
 * the system's paths.
 *
 * Where the system libc has no probes (Debian 12), mallocwatch -c used to
 * start the program through the probe-enabled glibc's loader
 * (target.h); whatever it exec'd then ran under the system's loader and
 * libc, untraced.  Instead, the program's child, after fork and before
 * exec, unshares its mount namespace, makes / a slave (the host's mounts
 * still reach it, its own never leave), and bind-mounts, read-only:
 *
 *	PREFIX/lib/ld-linux-x86-64.so.2  on  /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
 *	PREFIX/lib/libc.so.6             on  /usr/lib/x86_64-linux-gnu/libc.so.6
 *	PREFIX/lib/libm.so.6             on  /usr/lib/x86_64-linux-gnu/libm.so.6
 *	... every ELF library of PREFIX/lib with a file of that name in the
 *	    system libc's directory (libpthread, libdl, librt, libresolv,
 *	    libnss_*, ...: no process mixes the two builds' GLIBC_PRIVATE ABI)
 *	/etc/ld.so.cache                 on  PREFIX/etc/ld.so.cache
 *
 * The last one because the probe-enabled loader reads its own
 * PREFIX/etc/ld.so.cache and searches PREFIX/lib and /lib, not
 * /lib/x86_64-linux-gnu: with the system's cache it finds the system's
 * other libraries (liblzma, libstdc++, ...) and, for glibc's own, the
 * files bound above.  No environment variable is set.  PT_INTERP
 * (/lib64/ld-linux-x86-64.so.2) is a link to the loader's path on a
 * merged-/usr system; when it is a file of its own, it is bound too.
 *
 * Uprobes are set per inode: the tracer probes PREFIX/lib/libc.so.6 in
 * mallocwatch's namespace, the bind mount is that inode, so every
 * process of the tree hits the probes.  The mounts die with the last
 * process of the namespace; the host never sees them.
 *
 * The files mounted are ours: PREFIX/lib and PREFIX/etc are opened with
 * mw_dir_open_safe() (every directory from / down root's and writable by
 * no one else), each file relative to them with O_NOFOLLOW, and must be
 * root's and writable by no one else; the descriptors checked are the
 * ones mounted (open_tree(2) on them), so nothing can be swapped in
 * between.  Nothing of the program's enters.  Every descriptor is
 * close-on-exec.
 */
#ifndef MALLOCWATCH_LIBCNS_H
#define MALLOCWATCH_LIBCNS_H

#include <stddef.h>

/* At most this many files are bound (glibc 2.36 has 22 libraries). */
#define MW_LIBCNS_MAX 64

struct mw_libcns;

/* Plan the namespace for the probe-enabled libc at libc (PREFIX/lib/
 * libc.so.6) where the system libc is syslibc (a real path: its
 * directory is where glibc's libraries are replaced).  Opens and checks
 * every file (see above); nothing is mounted yet.  The plan, or NULL
 * with a one-line reason in err: "'PATH' belongs to uid N" (a directory),
 * "'PATH' could be changed by others than root (...)", "the loader
 * '...' does not read '.../etc/ld.so.cache'", "no 'libc.so.6' in
 * '/usr/lib/x86_64-linux-gnu'", ...  Free it with mw_libcns_free(). */
struct mw_libcns *mw_libcns_plan(const char *libc, const char *syslibc, char *err,
				 size_t errlen);

/* In a child after fork, before exec, while it still has CAP_SYS_ADMIN
 * (before dropping to the invoking user): make the namespace and its
 * mounts.  Only system calls (no allocation, no stdio: safe in the
 * child of a threaded process).  0, or -1 with errno set and *step (when
 * not NULL) the step that failed: -1 unshare, making / a slave or no
 * CAP_SYS_ADMIN (EPERM), else
 * the index of the file whose mount failed. */
int mw_libcns_enter(const struct mw_libcns *ns, int *step);

/* Make the namespace once in a throwaway child and say whether it
 * worked: 0, or -1 with a one-line reason in err ("cannot make a mount
 * namespace: Operation not permitted", "cannot mount '...' on '...':
 * ..."). */
int mw_libcns_try(const struct mw_libcns *ns, char *err, size_t errlen);

/* Close the plan's descriptors and free it; NULL does nothing. */
void mw_libcns_free(struct mw_libcns *ns);

#endif /* MALLOCWATCH_LIBCNS_H */
