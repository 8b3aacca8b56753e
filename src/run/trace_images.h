/* trace_images.h - a traced process that replaced its image (exec): its
 * figures from the tracer right, or refused with why (trace_images.c).
 */
#ifndef MALLOCWATCH_TRACE_IMAGES_H
#define MALLOCWATCH_TRACE_IMAGES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "state.h"

/* Refuse st's figures from the tracer (state.h mw_state_images_mixed, at
 * the time now; the first reason stands), and say so in save (a
 * --save-stream file, MW_META_IMAGES_MIXED) when not NULL. */
void mw_images_refuse(struct mw_state *st, FILE *save, const char *why);

/* Is the program pid runs now untraced: it maps no libc (a static
 * program), or another file than libc_path, the one traced (by device
 * and inode)?  1 with why, else 0 (also when it cannot be told: no
 * libc_path, pid gone). */
int mw_images_untraced(pid_t pid, const char *libc_path, char *why, size_t whylen);

#endif /* MALLOCWATCH_TRACE_IMAGES_H */
