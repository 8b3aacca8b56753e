/* report.h - the end-of-run summary (text) and report (JSON).
 *
 * The text summary is for people: human units ("1.5 MiB (1572864 bytes)"),
 * one section per part of the allocator.  It covers what SystemTap's
 * example glibc-malloc.stp printed (lock contention per thread, arenas
 * per thread, heaps with sizes, total sbrk, final mmap threshold) and
 * more.  The JSON is for scripts; its keys are documented in docs/json.md.
 */
#ifndef MALLOCWATCH_REPORT_H
#define MALLOCWATCH_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "findings.h"
#include "ledger.h"
#include "report_snap.h"
#include "snapshot.h"
#include "units.h"

struct mw_stacks;	/* stacks.h */
struct mw_view;		/* view.h */

#include "run_info.h"

/* The machine and settings a run had: arena limits follow from them
 * (glibc: 8 x cores unless M_ARENA_MAX / glibc.malloc.arena_max). */
struct mw_environment {
	int glibc_minor;		/* 2.N of the traced libc; 0 unknown */
	long nproc;			/* online CPUs */
	long cpus;			/* CPUs the target may run on (affinity) */
	char tunables[1024];		/* GLIBC_TUNABLES of the target; "" none */
	char malloc_vars[1024];		/* its MALLOC_* variables, "K=V" space-separated */
	const char *runtime;		/* "kernel" or "bpf" */
	const char *version;		/* mallocwatch's */
};

/* Each renders one view of a run (view.h: mw_view_make, made once where
 * the run's reports are written), its run info mw_view_run_info's. */

/* Write the summary.  Returns 0, or -1 if writing failed. */
int mw_report_text(FILE *out, const struct mw_view *v);

/* Write the HTML report (--html; report_html.c): one self-contained page,
 * made from the stream alone, so that a replay writes the same bytes.
 * Returns 0, or -1 if writing failed. */
int mw_report_html(FILE *out, const struct mw_view *v);

/* One page of several processes' reports (-f's tree, -p PID,PID,...):
 * title as its heading, intro (the tree's table; NULL none) under it,
 * then for each process's view v[i] what mw_report_html shows of one,
 * under a heading of its own (anchor "process-PID").  Self-contained as
 * that page is.  0, or -1 with errno set. */
int mw_report_html_procs(FILE *out, const struct mw_view *const *v, size_t n,
			 const char *title, const char *intro);

/* Write the JSON report (docs/json.md), through jansson.  Returns 0, or
 * -1 with errno set if writing failed (ENOMEM: it could not be built). */
int mw_report_json(FILE *out, const struct mw_view *v);

/* The same report as a jansson object (a new reference), for rules;
 * NULL when out of memory. */
json_t *mw_report_json_value(const struct mw_view *v);

#endif /* MALLOCWATCH_REPORT_H */
