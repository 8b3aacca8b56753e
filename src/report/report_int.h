/* report_int.h - what the text summary's files (report.c, report_head.c,
 * report_events.c) share.  Only report/ includes it; everyone else goes through report.h
 * and view.h.
 */
#ifndef MALLOCWATCH_REPORT_INT_H
#define MALLOCWATCH_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "probetab.h"
#include "report.h"
#include "view.h"

/* The summary's head (report_head.c): the command, the libc and runtime,
 * the exit, the probe hits and lost events, and what tracing cost when
 * it matters (cost), each on its lines: ri's, and v's figures. */
void mw_report_head_text(FILE *f, const struct mw_run_info *ri, const struct mw_view *v,
			 const struct mw_report_cost *cost);

/* mw_report_text of v with run info ri and cost in place of v's: the
 * HTML page's summary, of the stream-side facts alone (report_html.c). */
int mw_report_text_as(FILE *f, const struct mw_view *v, const struct mw_run_info *ri,
		      const struct mw_report_cost *cost);

/* Room for a probe name (at most 127 bytes in a stream) quoted. */
#define MW_NAME_Q (4 * 128 + 8)

/* The text summary prints at most this many rows per table and threads
 * per arena; the JSON report has every one. */
#define TOP_ROWS 32
#define TOP_ATTACH 8

/* "  ... and K more WHAT (all in --json)" when a list was cut
 * (report_events.c; report.c uses it too). */
void mw_report_more_line(FILE *f, size_t shown, size_t total, const char *what);

/* The summary's sections of what the program did (report_events.c), each
 * of v's, each nothing when there is nothing to say: the settings made,
 * the retries, the slow-math calls, a tcache double free, the events kept
 * without a section of their own, the setjmp family's keys. */
void mw_report_settings_text(FILE *f, const struct mw_view *v);
void mw_report_retries_text(FILE *f, const struct mw_view *v);
void mw_report_math_text(FILE *f, const struct mw_view *v);
void mw_report_double_free_text(FILE *f, const struct mw_view *v);
void mw_report_events_text(FILE *f, const struct mw_view *v);
void mw_report_setjmp_text(FILE *f, const struct mw_view *v);

#endif /* MALLOCWATCH_REPORT_INT_H */
