/* report_top.h - many processes' snapshots (snapmulti.h) as text and
 * JSON: one full report per process and a total (`snapshot -p A,B,C`,
 * `--cgroup DIR`), or one line per process sorted by free-but-retained
 * bytes, like top (`snapshot --all`).  JSON keys in docs/json.md
 * ("Many processes").  Everything a process named (comm, cgroup,
 * container, paths) is quoted (msg.h, jsonout.h).
 */
#ifndef MALLOCWATCH_REPORT_TOP_H
#define MALLOCWATCH_REPORT_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "snapmulti.h"

/* What the set of processes was and how it was read. */
struct mw_top_info {
	const char *mode;	/* "processes" (-p), "cgroup" or "all" */
	const char *cgroup;	/* the --cgroup directory, else NULL */
	size_t seen;		/* --all: processes looked at in /proc */
	uint64_t taken_ns;	/* CLOCK_REALTIME when the reading started */
	double seconds;		/* wall time of the whole reading */
};

/* Each process read, in v's order, as mw_snapshot_text_where shows one,
 * separated by a blank line, then one line with the totals ("Total over
 * 3 processes: ..."; "(1 not read)" when some were not: their reasons
 * are the caller's to print).  0, or -1 when writing failed. */
int mw_top_reports_text(FILE *out, const struct mw_psnap *v, size_t n);

/* The --all table: a heading (when, how many processes map a glibc or
 * may not be read, out of how many, how long it took), one row per process in v's order
 * (PID, COMMAND, ARENAS, SYSTEM, IN USE, FREE, TRIMMABLE, NSPID (its pid
 * in its own pid namespace when that is not ours), CGROUP/CONTAINER; a
 * process not read has "-" and its reason), then the totals.  0, or -1
 * when writing failed. */
int mw_top_table_text(FILE *out, const struct mw_psnap *v, size_t n,
		      const struct mw_top_info *info);

/* {"version": 1, "schema_version": 2, "mode", "cgroup", "processes_seen", "taken_unix_ns",
 * "duration_ns", "processes": [...], "totals": {...}} to out with
 * json_dumpf flags (jsonout.h mw_json_write).  0, or -1 with errno set
 * (ENOMEM: it could not be built). */
int mw_top_json(FILE *out, const struct mw_psnap *v, size_t n, const struct mw_top_info *info,
		size_t flags);

#endif /* MALLOCWATCH_REPORT_TOP_H */
