/* trace_snaps.h - `mallocwatch -p PID` when the process's libc has no
 * SDT probes: a report from snapshots alone (trace_snaps.c).
 */
#ifndef MALLOCWATCH_TRACE_SNAPS_H
#define MALLOCWATCH_TRACE_SNAPS_H

#include "glibcinfo.h"
#include "trace_run.h"

/* Report process o->pid, whose libc (a path, for the messages) has no
 * SDT probes, from snapshots read with the layouts g: at attach, every
 * o->interval_ms (default 1 s) and at the end, until the process exits,
 * a signal comes (tracer.h, mw_signals_catch) or o->duration_ms has
 * passed; the process is never stopped or signalled.  The summary and
 * --json go to the files o names; the report (the --json document) as a
 * new jansson value in *report when report is not NULL, for --check.
 * Returns the exit status: MW_EXIT_OK, or MW_EXIT_RUNTIME when the first
 * snapshot could not be read or an output could not be written. */
int mw_snapshots_only(const struct trace_opts *o, const char *libc, struct mw_glibc *g,
		      json_t **report);

#endif /* MALLOCWATCH_TRACE_SNAPS_H */
