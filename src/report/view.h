/* view.h - one view of a run: its figures, tables and findings computed
 * once from the model (state.h) and the run info (run_info.h), each
 * figure and column with one name, unit and label (view.def).  It is
 * made once a run, where the run's reports are written (trace_end.c's
 * mw_run_finish; a process of a run of several each its own, kept for
 * the page and the totals), and every format renders that one view: the
 * text summary (report.c, report_head.c, report_events.c), the JSON
 * report (report_json.c; --check judges it), the HTML page (report_html.c,
 * whose summary is the text's) and the totals of a run of several
 * processes.  No renderer includes state.h (t-layout checks): a figure
 * is added once, in view.def and mw_view_make.  The run over time, which
 * the page alone draws, is the view's timeline (view_timeline.c).
 * The JSON writes every figure of a section in the table's order and
 * every column of a table (the arenas, heaps, threads, double frees,
 * setjmp threads, slow-math probes, settings, threshold changes,
 * retries), the text's tables every column with a place in it, its
 * sentences the figures they name, the totals every MW_VF_TOTAL figure.
 * The lists a report prints whole or in part are tables of the view too:
 * the events kept (the JSON's events_log, the text's Other events), the
 * setjmp probes' jmp_bufs, code addresses and longjmp values, the
 * slow-math probes' samples, the probes whose hits no thread's count
 * holds; and so are why the figures are refused and when (the JSON's
 * unknown and its nulls, the text's and the page's REFUSED), and the
 * findings of the run's last reading (the text's, the JSON's, the page's
 * and the saved stream's).
 * The counters serve --probes shows of a process (view.def's
 * MW_VIEW_CTR: its model's and its live readings' figures, computed in
 * mw_view_counters) are the view's too; report_metrics.c writes each
 * one as its entry names it.
 * E.g. of tests/streams/storm24.mw: events 2236, arenas 16, the first
 * arena row { address 0x7fefd9c42c60, main 1, created_by_tid unknown,
 * threads 5, heaps 0, heap_bytes 20799488, waits 3, ... }.
 */
#ifndef MALLOCWATCH_VIEW_H
#define MALLOCWATCH_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "probetab.h"
#include "report_cost.h"

struct mw_state;	/* state.h: the view's files alone read it */
struct mw_finding;	/* findings.h */
struct mw_run_info;	/* run_info.h */
struct mw_counters;	/* procs.h */
struct mw_snapshot;	/* snapshot.h */
struct mw_snap_arena;

enum mw_view_unit {
	MW_VU_COUNT, MW_VU_BYTES, MW_VU_SBYTES, MW_VU_BOOL, MW_VU_STR, MW_VU_ROWS,
	MW_VU_PROBES, MW_VU_ADDR, MW_VU_TID, MW_VU_ATTACH, MW_VU_OPT, MW_VU_ARGS
};

#define MW_VF_ATTACH 1u		/* unknown when the allocator at attach is */
#define MW_VF_QUIET 2u		/* the text says it only when not 0 */
#define MW_VF_TOTAL 4u		/* summed in a run of several processes */
#define MW_VF_NOJSON 8u		/* not in the JSON report */

enum mw_view_fig {
#define MW_VIEW_FIG(id, section, key, unit, flags, text, label) MW_VF_##id,
#define MW_VIEW_COL(...)
#define MW_VIEW_CTR(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
	MW_VF_COUNT
};

enum mw_view_table {
	MW_VT_arenas, MW_VT_heaps, MW_VT_threads, MW_VT_frees, MW_VT_jumps, MW_VT_math,
	MW_VT_settings, MW_VT_changes, MW_VT_retries, MW_VT_jmp_bufs, MW_VT_code_addresses,
	MW_VT_longjmp_values, MW_VT_samples, MW_VT_unthreaded, MW_VT_events, MW_VT_COUNT
};

enum mw_view_col {
#define MW_VIEW_COL(table, id, key, unit, width, tpos, head, label) MW_VC_##table##_##id,
#define MW_VIEW_FIG(...)
#define MW_VIEW_CTR(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
	MW_VC_COUNT
};

/* The counters of a process serve --probes traces (view.def's
 * MW_VIEW_CTR). */
enum mw_view_ctr {
#define MW_VIEW_CTR(id, family, unit, label, help) MW_VK_##id,
#define MW_VIEW_FIG(...)
#define MW_VIEW_COL(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
	MW_VK_COUNT
};

struct mw_view_ctr_info {
	const char *name;	/* the id: "lock_waits" */
	const char *family;	/* its Prometheus family, without unit and _total */
	const char *unit;	/* "bytes" or "" */
	const char *label;	/* "how=\"limit\""; "" none */
	const char *help;	/* the family's # HELP; NULL: not its first */
};

struct mw_view_fig_info {
	const char *name;	/* the id: "events", "sbrk_net" */
	const char *section;	/* JSON object it is in; "" the root */
	const char *key;	/* its key there */
	enum mw_view_unit unit;
	unsigned flags;		/* MW_VF_* */
	const char *text;	/* the words the text summary prints; NULL none */
	const char *label;	/* what it is */
};

struct mw_view_col_info {
	enum mw_view_table table;
	const char *name, *key;
	enum mw_view_unit unit;
	int width;		/* printf width in the text table; 0 the rest */
	int tpos;		/* place in the text table, 1...; 0 not there */
	const char *head;	/* its heading there; NULL */
	const char *label;
};

const struct mw_view_fig_info *mw_view_fig_info(enum mw_view_fig f);
/* Is f refused when the process's images mix (state.h
 * mw_state_images_mixed): every figure but what went wrong in the
 * stream (lost, garbled, complete, full tables, the attach snapshot
 * refused) and the images it replaced, drained (execs, the hits before
 * the last). */
int mw_view_fig_refused(enum mw_view_fig f);
const struct mw_view_col_info *mw_view_col_info(enum mw_view_col c);
/* A table's name: where the JSON has it ("arenas"; "thresholds.changes":
 * changes in the object thresholds; NULL: no array of its own, the
 * slow-math samples), and the figure counting its rows (MW_VF_arenas). */
const char *mw_view_table_name(enum mw_view_table t);
enum mw_view_fig mw_view_table_rows(enum mw_view_table t);

const struct mw_view_ctr_info *mw_view_ctr_info(enum mw_view_ctr k);

/* One figure's value: known 0 when it is not known (JSON null, text
 * "?"); s for STR figures (owned by the model), and for a cell not known
 * that says why (settings' previous). */
struct mw_view_val {
	int64_t v;
	int known;
	const char *s;
};

struct mw_view;

/* The view of st (finished: mw_state_finish) and ri; st and ri must
 * outlive it (the view points into them).  Never NULL (xalloc.h). */
struct mw_view *mw_view_make(const struct mw_state *st, const struct mw_run_info *ri);
void mw_view_free(struct mw_view *v);
/* The run info it was made with. */
const struct mw_run_info *mw_view_run_info(const struct mw_view *v);

/* The run over time, which the HTML page draws (its charts, the threads'
 * lanes, the lock-wait strip, the markers) and no other format shows:
 * the allocator's readings (Y records, every --interval and at the exit:
 * CLOCK_MONOTONIC ns, the main heap's extent, the mmapped chunks, the
 * RSS, the lock waits so far) and their arenas' system bytes, the
 * timeline's markers (T records: mallopt, settings, retries, tcache,
 * thresholds, slow math) and each arena row's threads attached, in
 * order, with when and how.  Copies of the model's, owned by the view.
 * The times of the rows (the threads' first, last and gone, the heaps'
 * made and freed) are columns of their tables (view.def). */
enum mw_view_attach_how {
	MW_VIEW_ATTACH_NEW, MW_VIEW_ATTACH_REUSE, MW_VIEW_ATTACH_FREE_LIST,
	MW_VIEW_ATTACH_IMPLICIT
};

struct mw_view_attach {
	int tid;
	enum mw_view_attach_how how;
	uint64_t seq;		/* stream order */
	uint64_t ns;		/* when (0: untimed stream) */
};

struct mw_view_reading {
	uint64_t ns;
	uint64_t sbrk_base, main_end;	/* the main heap's extent (addresses) */
	size_t first, n;	/* its arenas: arenas[first..first+n) */
	uint64_t waits;		/* arena lock waits so far, */
	int have_waits;		/* when the tracer answered */
	int have_mem;		/* the three below were read (older streams: not) */
	uint64_t mmapped, n_mmaps, rss;	/* mmapped chunks' bytes and count; RSS, 0
					 * unknown */
};

struct mw_view_reading_arena {
	uint64_t arena, system;	/* malloc_state address, system_mem */
};

struct mw_view_mark {
	uint64_t ns;
	int known;		/* MW_P_* */
	const char *name;	/* the probe's */
	int tid;
	int64_t arg[3];		/* its first three arguments */
};

struct mw_view_timeline {
	struct mw_view_reading *r;
	size_t nr;
	struct mw_view_reading_arena *arenas;
	size_t narenas;
	struct mw_view_mark *m;
	size_t nm;
	/* arena row a's attachments: att[a][0..mw_view_cell(v, a,
	 * MW_VC_arenas_threads)->v) */
	struct mw_view_attach **att;
	size_t natt_rows;	/* the arena rows att has */
};

const struct mw_view_timeline *mw_view_timeline(const struct mw_view *v);
/* The findings (findings.h) of the run's last reading (the exit's with
 * -c, the end's with -p: its snapshot and ledger, with the lock waits of
 * the arenas' rows, none when the figures are refused), *n of them; 0
 * when there is no ledger. */
const struct mw_finding *mw_view_findings(const struct mw_view *v, size_t *n);
/* Them as the text report writes them (mw_findings_text), for the page
 * and the saved stream: the run info's findings_text when it has one (a
 * replay's, from the saved stream), else its own; NULL none. */
const char *mw_view_findings_text(const struct mw_view *v);

const struct mw_view_val *mw_view_get(const struct mw_view *v, enum mw_view_fig f);
/* Row i's cell of column c (i < mw_view_get(v, mw_view_table_rows(its
 * table))->v). */
const struct mw_view_val *mw_view_cell(const struct mw_view *v, size_t i, enum mw_view_col c);

/* An argument of an event (a row of the events or the samples table):
 * its value (known 0: it could not be read), its name in probes.def
 * ("bytes"; "_" past the probe's; "result": a slow-math probe's 4th and
 * later; NULL: a probe not in probes.def, or past the three it names),
 * and its unit there (MW_UNIT_NONE: past the probe's arguments). */
struct mw_view_arg {
	struct mw_view_val val;
	const char *name;
	enum mw_unit unit;
};

/* Row i's arguments in its ARGS column c, mw_view_cell(v, i, c)->v of
 * them. */
const struct mw_view_arg *mw_view_args(const struct mw_view *v, size_t i, enum mw_view_col c);

/* The figures of section, in view.def's order, set into *obj
 * (jsonout.h's mw_json_set: a failure leaves *obj NULL). */
void mw_view_json_section(const struct mw_view *v, const char *section, json_t **obj);
/* Are all the figures of section 0 (its JSON object left out)? */
int mw_view_section_zero(const struct mw_view *v, const char *section);
/* Table t as the JSON's array: every column of every row (but those
 * with no key). */
json_t *mw_view_table_json(const struct mw_view *v, enum mw_view_table t);
/* When v's figures are refused (MW_VF_images_refused): each member of
 * the JSON report *root whose figures all are (the arenas, sbrk, setjmp,
 * ...; view.def's sections and root tables) set to null, when it is
 * there. */
void mw_view_json_refused(const struct mw_view *v, json_t **root);
/* Table t as the text's: its heading line and the rows i that show is
 * NULL or show[i] for, at most max of them ("  ADDRESS ..."); fork: the
 * process was created traced (-f), its arenas from before made in its
 * parent; at most max_threads threads an arena row.  Returns how many
 * rows it wrote. */
size_t mw_view_table_text(FILE *f, const struct mw_view *v, enum mw_view_table t,
			  const unsigned char *show, size_t max, int fork, size_t max_threads);

/* serve --probes: the counters of a process whose model is st (not
 * finished: it is still traced), live the aggregates of its newest
 * complete live reading (procs.h; NULL: none yet), into c[MW_VK_COUNT]:
 * the probes' hits its model received (memory_heap_more and _less: the
 * freed heaps' hits, their live ones in live), the lock waits and the
 * sbrk figures live's. */
void mw_view_counters(const struct mw_state *st, const struct mw_counters *live, uint64_t *c);

const struct mw_report_cost *mw_view_cost(const struct mw_view *v);

/* A snapshot's figures that its report (report_snap.c: text and JSON)
 * and serve's metrics (report_metrics.c) share: an arena's bytes in use,
 * system bytes less free bytes (0 when free is more), and the main
 * heap's extent, sbrk_base to the end of main_arena's top (0 when that
 * is below it). */
uint64_t mw_view_arena_in_use(const struct mw_snap_arena *a);
uint64_t mw_view_main_heap(const struct mw_snapshot *s);

/* The totals of several processes' views (-f's tree, -p PID,PID,...,
 * --cgroup): n, the MW_VF_TOTAL figures summed (arenas and heaps unknown
 * when a process's are, with how many; every figure a process's refused
 * figures would be in unknown when one's are), and what tracing cost: the
 * hits by family summed, the time traced the first's. */
struct mw_view_totals {
	size_t processes, unknown;
	size_t mixed;		/* processes whose figures are refused
				 * (state.h mw_state_images_mixed) */
	struct mw_view_val fig[MW_VF_COUNT];
	struct mw_report_cost cost;
};

void mw_view_totals(struct mw_view *const *v, size_t n, struct mw_view_totals *t);
/* docs/json.md's "totals" (cost included); new reference, NULL out of
 * memory. */
json_t *mw_view_totals_json(const struct mw_view_totals *t);
/* Its line of text, and with cost the cost's lines when it matters. */
void mw_view_totals_text(FILE *f, const struct mw_view_totals *t, int cost);

#endif /* MALLOCWATCH_VIEW_H */
