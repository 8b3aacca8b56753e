/* report_int.h - the few helpers the text summary (report.c), the JSON
 * report (report_json.c) and the view (view.c) share.  Only report/
 * includes it; everyone else goes through report.h and view.h.  All are defined in report.c.
 */
#ifndef MALLOCWATCH_REPORT_INT_H
#define MALLOCWATCH_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "probetab.h"
#include "report.h"
#include "state.h"
#include "view.h"

/* How a thread came to use an arena, as both reports name it: "new",
 * "reuse", "free_list" or "initial" ("?" for a value out of the enum).
 * A static string. */

/* 1 when the stream has any probe of the setjmp family (setjmp, longjmp,
 * longjmp_target), hit or not; else 0.  The reports print their setjmp
 * section only then. */
int mw_report_has_setjmp(const struct mw_state *st);

/* The J records (mw_state_jumps) of one kind, and of the probe named
 * probe unless it is NULL, busiest first (ties by key, ascending): a
 * malloc'ed array the caller frees, never NULL (xalloc.h: out of memory
 * exits), of *n entries (0 possible).  The names point into st. */
struct mw_jump *mw_report_jumps_of(const struct mw_state *st, enum mw_jump_kind kind,
				   const char *probe, size_t *n);

/* The summary's head (report_head.c): the command, the libc and runtime,
 * the exit, the probe hits and lost events, and what tracing cost when
 * it matters, each on its lines: ri's, and v's figures. */
void mw_report_head_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri,
			 const struct mw_view *v);

#endif /* MALLOCWATCH_REPORT_INT_H */
