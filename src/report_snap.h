/* report_snap.h - snapshots of the allocator (snapshot.h) as text and
 * JSON: `mallocwatch snapshot`, the exit section of -c, and the
 * attach/end comparison of -p.  Byte counts are shown in human units
 * (units.h) with the exact figure where it matters; JSON keys are in
 * docs/json.md ("snapshot").
 */
#ifndef MALLOCWATCH_REPORT_SNAP_H
#define MALLOCWATCH_REPORT_SNAP_H

#include <stdio.h>

#include <jansson.h>

#include "snapshot.h"

/* Two snapshots of one process side by side (a: at attach, b: at the end,
 * b may be NULL): totals, thresholds, and the arenas that appeared,
 * vanished or changed.  Part of the summary of a -p run. */
void mw_snapshot_diff_text(FILE *out, const struct mw_snapshot *a, const struct mw_snapshot *b);

/* The arenas table of a snapshot and its totals line, under title. */
void mw_snapshot_arenas_text(FILE *out, const struct mw_snapshot *s, const char *title);

/* A snapshot (snapshot.h) of process comm as text: arenas (system, in use,
 * free, trimmable, top, heaps, attached threads), heaps, the main heap's
 * extent, thresholds and limits, mmapped chunks, totals.  0 or -1. */
int mw_snapshot_text(FILE *out, const struct mw_snapshot *s, const char *comm);

/* The same as JSON, {"version": 1, "snapshot": {...}} (docs/json.md);
 * and the inner object alone (new reference) for other reports.  0, or
 * -1 with errno set (ENOMEM: it could not be built); NULL when out of
 * memory.  Strings that are not UTF-8 (comm, paths) are escaped
 * (jsonout.h). */
int mw_snapshot_json(FILE *out, const struct mw_snapshot *s, const char *comm);
json_t *mw_snapshot_json_value(const struct mw_snapshot *s, const char *comm);

#endif /* MALLOCWATCH_REPORT_SNAP_H */
