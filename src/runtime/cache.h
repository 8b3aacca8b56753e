/* cache.h - root's cache of what runs build once, and its sweep.
 *
 * As root, what a run would otherwise make afresh each time is kept in
 * MW_CACHE_DIR (/var/cache/mallocwatch, 0755, root's), each part in a
 * directory of root's alone (0700):
 *
 *	kernel-RELEASE/		the kernel-config stub for `stap -r` (runtime.h)
 *	modules/bpf_HASH.bo	compiled scripts: bpf objects and kernel
 *	modules/mallocwatch_kHASH.ko	modules (tracer_proc.h)
 *	runtime/HASH/		mended copies of SystemTap's runtime (kmod_sources.h)
 *
 * Everything is made under a temporary name, MW_CACHE_NEW and six
 * characters (mkdtemp(3)/mkostemp(3)), beside its place, and renamed
 * into place whole, so a run never sees half of one.  The process making
 * it holds a lock on it (flock(2) LOCK_EX on a close-on-exec descriptor)
 * until the rename: a temporary nobody holds the lock on was left by a
 * process that was killed (SIGKILL included), and the next run's sweep
 * (leftovers.h) or `mallocwatch --cleanup` removes it.
 *
 * The compiled scripts are bounded, as SystemTap bounds its own cache
 * (stap's cache_mb_limit): after each compile, the least recently used
 * (by mtime: a run that uses one sets its time) go until the rest fit in
 * MALLOCWATCH_CACHE_MB MiB (default MW_CACHE_MB_DEFAULT).  One used in
 * the last MW_CACHE_FRESH_S seconds is kept even over the bound: a run
 * may be about to load it.
 *
 * A mended runtime is kept per SystemTap: when a new copy is made (its
 * stap was upgraded), the copies made from the same runtime directory
 * before go (kmod_sources.c).
 *
 * Without root, or with MW_NO_CACHE set, nothing is kept: each run makes
 * what it needs in its own work directory.
 */
#ifndef MALLOCWATCH_CACHE_H
#define MALLOCWATCH_CACHE_H

#include <stddef.h>

#define MW_CACHE_DIR "/var/cache/mallocwatch"

/* The name a part is made under before its rename: "new." and six
 * characters. */
#define MW_CACHE_NEW "new."

#define MW_CACHE_MB_DEFAULT 256
#define MW_CACHE_FRESH_S 600

/* MW_CACHE_DIR/name, made root's alone (0700) when missing, into dir
 * (len bytes); 0, or -1 when it is not a directory of root's alone, we
 * are not root, or MW_NO_CACHE is set in the environment (no cache then:
 * what it would keep is made afresh each run). */
int mw_cache_subdir(const char *name, char *dir, size_t len);

/* A temporary directory in parent (MW_CACHE_NEW "XXXXXX", mode 0700),
 * its path into path (len bytes), locked for as long as the returned
 * descriptor (close-on-exec) stays open: close it after the rename.
 * Made again under another name when a sweep took it before its lock (8
 * tries); -1 with errno set when it cannot be made. */
int mw_cache_tmpdir(const char *parent, char *path, size_t len);

/* The same for a file (mode 0600, open read-write on the descriptor). */
int mw_cache_tmpfile(const char *parent, char *path, size_t len);

/* Mark the kept file path as used now (its mtime), for the bound above.
 * Errors are ignored. */
void mw_cache_used(const char *path);

/* The bound in bytes: MALLOCWATCH_CACHE_MB MiB (a whole number of at
 * least 1), else MW_CACHE_MB_DEFAULT with a warning when it is set but
 * not such a number. */
long long mw_cache_limit(void);

/* Remove the least recently used compiled scripts in MW_CACHE_DIR/modules
 * until the rest take at most limit bytes (st_size), keeping those used
 * in the last MW_CACHE_FRESH_S seconds.  Returns how many went (0 when
 * there is no cache). */
int mw_cache_evict(long long limit);

/* Remove the temporaries (MW_CACHE_NEW) nobody holds the lock on in
 * MW_CACHE_DIR, its modules/ and runtime/.  Returns how many went. */
int mw_cache_sweep(void);

#endif /* MALLOCWATCH_CACHE_H */
