/* view_int.h - what the view's files share: the view itself, its figures
 * made in view.c, its tables' rows in view_rows.c, its timeline in
 * view_timeline.c, its JSON, text and totals in view_out.c.  Not a public interface: view.h is. */
#ifndef MALLOCWATCH_VIEW_INT_H
#define MALLOCWATCH_VIEW_INT_H

#include <stddef.h>

#include "findings.h"
#include "report_cost.h"
#include "state.h"
#include "view.h"

struct mw_view {
	const struct mw_state *st;
	const struct mw_run_info *ri;
	struct mw_view_val fig[MW_VF_COUNT];
	const struct mw_arena *ar;
	/* each table's rows, ncol[t] cells a row: column c at idx[c] */
	struct mw_view_val *cell[MW_VT_COUNT];
	size_t ncol[MW_VT_COUNT];
	size_t idx[MW_VC_COUNT];
	/* the arguments of a table with an ARGS column: row i's from
	 * args[t][argat[t][i]], the cell's v of them */
	struct mw_view_arg *args[MW_VT_COUNT];
	size_t *argat[MW_VT_COUNT];
	struct mw_report_cost cost;
	/* the findings of the last reading (mw_view_findings) and their
	 * text; NULL none */
	struct mw_finding *findings;
	size_t nfindings;
	char *findings_text;
	struct mw_view_timeline tl;	/* view_timeline.c */
};

/* view_rows.c: the ROWS figures of the lists (the double frees, the
 * setjmp threads, jmp_bufs, code addresses and longjmp values, the
 * slow-math probes hit and their samples, the events kept and those
 * with no section of their own), then every table's rows. */
void mw_view_list_counts(struct mw_view *v);
void mw_view_rows(struct mw_view *v);

/* view_timeline.c: v->tl from the model (after the rows), and freed. */
void mw_view_timeline_make(struct mw_view *v);
void mw_view_timeline_free(struct mw_view_timeline *tl);

#endif /* MALLOCWATCH_VIEW_INT_H */
