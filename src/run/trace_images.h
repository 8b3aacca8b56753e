/* trace_images.h - a traced process that replaced its image (exec): its
 * figures from the tracer right, or refused with why (trace_images.c).
 */
#ifndef MALLOCWATCH_TRACE_IMAGES_H
#define MALLOCWATCH_TRACE_IMAGES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "state.h"

struct mw_process;

/* Refuse st's figures from the tracer (state.h mw_state_images_mixed, at
 * the time now; the first reason stands), and say so in save (a
 * --save-stream file, MW_META_IMAGES_MIXED) when not NULL. */
void mw_images_refuse(struct mw_state *st, FILE *save, const char *why);

/* Is the program pid runs now untraced: it maps no libc (a static
 * program), or another file than libc_path, the one traced (by device
 * and inode)?  1 with why, else 0 (also when it cannot be told: no
 * libc_path, pid gone). */
int mw_images_untraced(pid_t pid, const char *libc_path, char *why, size_t whylen);

/* -p without -f (and --cgroup): the processes are not ptraced, so an exec
 * is not held for the tracer to empty the old program's totals (tracer.h
 * on_exec); each is watched instead (procexec.h), from before the
 * tracer's probes are armed: one found to have exec'd has its figures
 * from the tracer refused (mw_images_refuse, into save too when not
 * NULL), warned once, and no snapshot at the end (the layouts read at
 * attach are of the old program). */
struct mw_images_watch;

struct mw_images_watch *mw_images_watch_new(FILE *save);
/* Watch pr, process pid, from now; refused at once when it maps another
 * libc file than libc_path, the one traced (not NULL): it replaced its
 * program after the libc was found and before the watch began. */
void mw_images_watch_add(struct mw_images_watch *w, struct mw_process *pr, pid_t pid,
			 const char *libc_path);
/* Look at each process now; one that exec'd is refused.  The number of
 * processes found to have exec'd so far.  w may be NULL (none). */
size_t mw_images_watch_check(struct mw_images_watch *w);
/* Why pr has no snapshot at the end, when it was found to have exec'd
 * (by the last check); else NULL. */
const char *mw_images_watch_end_why(const struct mw_images_watch *w,
				    const struct mw_process *pr);
void mw_images_watch_free(struct mw_images_watch *w);

#endif /* MALLOCWATCH_TRACE_IMAGES_H */
