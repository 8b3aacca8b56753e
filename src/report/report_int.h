/* report_int.h - what the text summary's files (report.c, report_head.c)
 * share.  Only report/ includes it; everyone else goes through report.h
 * and view.h.
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

/* The summary's head (report_head.c): the command, the libc and runtime,
 * the exit, the probe hits and lost events, and what tracing cost when
 * it matters, each on its lines: ri's, and v's figures. */
void mw_report_head_text(FILE *f, const struct mw_run_info *ri, const struct mw_view *v);

#endif /* MALLOCWATCH_REPORT_INT_H */
