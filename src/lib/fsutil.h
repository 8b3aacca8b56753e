/* fsutil.h - file-system helpers shared by the stages that make
 * directories of their own (the run's work directory, the kernel-config
 * stub).
 */
#ifndef MALLOCWATCH_FSUTIL_H
#define MALLOCWATCH_FSUTIL_H

#include <stdio.h>

/* Remove path and everything below it, depth first, never following a
 * link and never crossing into another mount (nftw(3) with FTW_PHYS and
 * FTW_MOUNT).  Errors are ignored: what could not go stays.  "" or NULL
 * does nothing. */
void mw_remove_tree(const char *path);

/* Open the directory path (absolute) for root to make files in, after
 * checking every directory from / down through O_NOFOLLOW descriptors:
 * each must be owned by the effective user or root and writable by no
 * one else, except that a directory other than the last may be when it
 * is sticky (like /var/tmp: no one else can rename or remove what root
 * makes in it); with sticky_last, the last may be sticky too (like
 * /tmp).  With create, a missing last directory is made 0700.  Returns
 * the descriptor (close-on-exec), or -1 with a one-line reason in err:
 * "'PATH' belongs to uid N", "'PATH' is writable by others (mode
 * 0777)", "cannot open 'PATH': ... (a link or not a directory)". */
int mw_dir_open_safe(const char *path, int create, int sticky_last, char *err, size_t errlen);

/* 1 when path is a directory only root can change: owned by root, no
 * group or other write permission, not a link; else 0. */
int mw_root_only_dir(const char *path);

/* Take an exclusive flock(2) on the file or directory open on fd without
 * waiting, and check that it is still the one at path: not removed (it
 * has a link) and not replaced (path, not followed if a link, names the
 * same inode on the same device).  1 when both hold (the lock stays with
 * fd), else 0: another process holds the lock, or the name went or now
 * names another file (whoever removed it held the lock first). */
int mw_lock_path(int fd, const char *path);

/* Open path (absolute, or relative to dirfd) for reading only when it
 * names a regular file, and without ever opening anything else: it is
 * looked up with O_PATH (which opens no device and waits for no FIFO's
 * writer), checked with fstat(2), and only then opened through
 * /proc/self/fd (O_RDONLY, O_NONBLOCK, O_NOCTTY, close-on-exec), so a
 * name swapped in between cannot change what is opened.  resolve:
 * openat2(2)'s RESOLVE_* flags (0: links followed as by open(2)); need:
 * mode bits the file must have (S_IROTH: one every user may read), or
 * 0.  The descriptor, or -1 with errno (EINVAL: not a regular file;
 * EACCES: without the bits of need). */
int mw_open_regular(int dirfd, const char *path, unsigned long long resolve, unsigned need);

/* A file a command reads (a report, a stream, folded stacks), opened as
 * mw_open_regular does (links followed; never a FIFO, a device or a
 * socket, so no open waits), blocking again, as a FILE "r".  NULL with
 * errno (EINVAL: not a regular file; mw_input_strerror says so). */
FILE *mw_fopen_input(const char *path);
const char *mw_input_strerror(int e);

#endif /* MALLOCWATCH_FSUTIL_H */
