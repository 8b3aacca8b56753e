/* snapattach.h - the snapshot of a process at attach, that every figure
 * of a -p run is measured from.
 */
#ifndef MALLOCWATCH_SNAPATTACH_H
#define MALLOCWATCH_SNAPATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "glibcinfo.h"
#include "snapshot.h"

/* Pauses between tries of an attach snapshot (ms). */
#define MW_ATTACH_RETRY_MS 100

/* The snapshot of process pid (layouts g) at attach, that every figure
 * is measured from: a busy process may refuse a try (a lock held, a
 * header that moved: MW_SNAP_INCONSISTENT), so it is tried again every
 * MW_ATTACH_RETRY_MS ms while a try is refused so, all tries within one
 * deadline of timeout_ms (0: MW_SNAP_TIMEOUT_MS, --read-timeout).  As
 * mw_snapshot_read; the last try's reason in err, prefixed with how many
 * tries there were when more than one ("5 tries in 2.0 s: ..."). */
int mw_attach_snapshot(pid_t pid, struct mw_glibc *g, long timeout_ms, struct mw_snapshot **out,
		       char *err, size_t errlen);

#endif /* MALLOCWATCH_SNAPATTACH_H */
