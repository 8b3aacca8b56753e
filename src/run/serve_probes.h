/* serve_probes.h - `mallocwatch serve --probes`: one tracer session for
 * the served processes, whose counters (view.h, mw_view_counters: from
 * each one's model and live readings, procs.h) each scrape reads
 * (serve_probes.c).
 *
 * A thread of its own waits until a served process maps a libc with SDT
 * probes (the first found, looking every MW_SERVE_POLL_MS), then runs
 * the tracer on that libc file with the machinery of `-p --cgroup`
 * (tracer.h: the consumer's list, a set of pids that changes, pidset.h): every
 * served process that maps that very file (device and inode) joins the
 * set and gets a model; one that exits or is no longer selected leaves
 * it and its model is dropped.  Processes on another libc (Debian's own
 * has no probes) are not traced: probes_traced says 0 for them and they
 * have no counters.  The tracer's lines go to the models (procs.h) under
 * a mutex; every second the script's live probe prints the aggregates
 * (lock waits, live heaps, sbrk: protocol.h MW_LINE_LIVE).  The stop
 * (serve's SIGINT/SIGTERM) flushes the tracer and hands it to a watcher
 * that waits for its uprobes to go (tracer.h, mw_tracer_hand_off), as
 * the end of `mallocwatch -p` does.
 */
#ifndef MALLOCWATCH_SERVE_PROBES_H
#define MALLOCWATCH_SERVE_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procs.h"
#include "proclist.h"

struct mw_serve_probes;

/* Appends the processes served now to l: 0, or -1 (not this time).  Called
 * from the session's thread. */
typedef int (*mw_serve_list_fn)(void *ctx, struct mw_pidlist *l);

/* Start the session's thread (list(ctx) names the served processes;
 * verbose: the tracer's messages too).  NULL with a reason in err when
 * the thread cannot be made. */
struct mw_serve_probes *mw_serve_probes_start(mw_serve_list_fn list, void *ctx, int verbose,
					      char *err, size_t errlen);

/* What the session knows of process pid now.  Returns 1 when pid is
 * traced and a live reading of it has come (its counters in
 * c[MW_VK_COUNT], view.h, never lower than those given out before), 0
 * when it is not (c untouched when it is not traced at all). */
int mw_serve_probes_of(struct mw_serve_probes *sp, pid_t pid, uint64_t *c);

/* 1 while the tracer is tracing, else 0 (waiting for a libc with probes,
 * starting, or ended: the reason was said once on stderr). */
int mw_serve_probes_tracing(struct mw_serve_probes *sp);

/* Stop the tracer (flushed, handed off to a watcher that waits for its
 * uprobe definitions to go), join the thread, free everything.  NULL is
 * fine. */
void mw_serve_probes_stop(struct mw_serve_probes *sp);

#endif /* MALLOCWATCH_SERVE_PROBES_H */
