/* fsutil.h - file-system helpers shared by the stages that make
 * directories of their own (the run's work directory, the kernel-config
 * stub).
 */
#ifndef MALLOCWATCH_FSUTIL_H
#define MALLOCWATCH_FSUTIL_H

/* Remove path and everything below it, depth first, never following a
 * link and never crossing into another mount (nftw(3) with FTW_PHYS and
 * FTW_MOUNT).  Errors are ignored: what could not go stays.  "" or NULL
 * does nothing. */
void mw_remove_tree(const char *path);

#endif /* MALLOCWATCH_FSUTIL_H */
