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

#include "procwhere.h"
#include "snapshot.h"

/* Two snapshots of one process side by side (a: at attach, b: at the end,
 * b may be NULL): totals, thresholds, and the arenas that appeared,
 * vanished or changed.  Part of the summary of a -p run. */
void mw_snapshot_diff_text(FILE *out, const struct mw_snapshot *a, const struct mw_snapshot *b);

/* The same with the columns named: a_name ("AT ATTACH", "AT FORK"),
 * b_name ("AT THE END", "AT EXIT"), and without b, why there is none
 * (NULL: "none at the end"); a_what, when not NULL, says what a is after
 * the title ("at fork: the copy of its parent's allocator it started
 * with"). */
void mw_snapshot_diff_text_named(FILE *out, const struct mw_snapshot *a,
				 const struct mw_snapshot *b, const char *a_name,
				 const char *b_name, const char *a_what, const char *why_none);

/* The arenas table of a snapshot and its totals line, under title; the
 * table alone; the totals line alone ("\nTotal: system ... = arenas ...
 * + mmapped chunks ...", and its "in use" line under it). */
void mw_snapshot_arenas_text(FILE *out, const struct mw_snapshot *s, const char *title);
void mw_snapshot_arenas_only_text(FILE *out, const struct mw_snapshot *s, const char *title);
void mw_snapshot_totals_text(FILE *out, const struct mw_snapshot *s);

/* A snapshot (snapshot.h) of process comm as text: arenas (system, in use,
 * free, trimmable, top, heaps, attached threads), heaps, the main heap's
 * extent, thresholds and limits, mmapped chunks, totals.  0 or -1. */
int mw_snapshot_text(FILE *out, const struct mw_snapshot *s, const char *comm);

/* The same as JSON: the object under {"version": 1, "snapshot": {...}}
 * (docs/json.md; the document is report_ledger.h's
 * mw_snapshot_json_ledger), a new reference, NULL when out of memory.
 * Strings that are not UTF-8 (comm, paths) are escaped (jsonout.h). */
json_t *mw_snapshot_json_value(const struct mw_snapshot *s, const char *comm);

/* The snapshot an object of mw_snapshot_json_value's describes, made
 * anew (free it with mw_snapshot_free): what a saved stream keeps of the
 * snapshots a run read (stream.h, MW_META_SNAPSHOT) and a replay reports
 * again.  Its free chunks, its layout sizes (mstate_size, chunk_hdr,
 * minsize) and a path that was not UTF-8 (kept escaped) are not in the
 * JSON.  NULL with a one-line reason in err when o is not such an object
 * (a key missing or of another type, a hex address that does not parse,
 * more than MW_SNAP_MAX_ARENAS arenas or MW_SNAP_MAX_HEAPS heaps). */
struct mw_snapshot *mw_snapshot_from_json(const json_t *o, char *err, size_t errlen);

/* mw_snapshot_text with where the process lives (procwhere.h) when w is
 * not NULL: a line under the text's first one ("  pid 7 in its pid
 * namespace 4026532201 (not ours), mount namespace 4026532199 (not
 * ours); cgroup /docker/3f2a... (memory), container docker:3f2a1b9c0d4e";
 * the JSON's is the key "where" of the snapshot object: mw_where_json).
 * With w NULL, the same bytes as without. */
int mw_snapshot_text_where(FILE *out, const struct mw_snapshot *s, const char *comm,
			   const struct mw_where *w);

/* That line alone, to out; cgroup and container quoted (msg.h). */
void mw_where_text(FILE *out, const struct mw_where *w);

/* w as a JSON object (new reference; NULL when out of memory):
 * {"pid_namespace": {"inode", "ours"}, "mount_namespace": {...},
 * "nspid": [...], "pid_in_namespace", "cgroup", "cgroup_from",
 * "container"}, null where unknown (docs/json.md). */
json_t *mw_where_json(const struct mw_where *w);

#endif /* MALLOCWATCH_REPORT_SNAP_H */
