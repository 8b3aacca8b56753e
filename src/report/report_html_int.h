/* report_html_int.h - what report_html.c's page shares with
 * report_html_lanes.c (the drawing primitives, the threads' lanes and the
 * lock-wait strip) and report_html_events.c: the page, drawn from a
 * run's view (view.h) alone.  Not a public interface: report.h is. */
#ifndef MALLOCWATCH_REPORT_HTML_INT_H
#define MALLOCWATCH_REPORT_HTML_INT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "report.h"
#include "report_stacks.h"
#include "view.h"

#define W 1000			/* drawing width, px */
#define LEFT 70			/* room for the axis labels */
#define PLOT (W - LEFT - 10)	/* the time axis's length */
#define AREA_H 260
#define LANE_H 18
#define WAITS_H 50

/* The rows the page draws, from the view's tables (view.def): an arena
 * (with its threads attached, from the view's timeline), a thread, a
 * heap. */
struct page_arena {
	uint64_t addr;
	int is_main, at_attach, created_by_tid;
	uint64_t create_size, waits;
	const struct mw_view_attach *att;
	size_t natt;
};

struct page_thread {
	int tid;
	uint64_t arena, waits, hits;
	uint64_t first_ns, last_ns, gone_ns;	/* 0: none, unknown */
};

struct page_heap {
	uint64_t addr, arena;
	int freed;
	uint64_t new_ns, free_ns;	/* 0: untimed */
};

struct page {
	FILE *f;
	uint64_t t0, t1;	/* the time axis, CLOCK_MONOTONIC ns */
	int timed;		/* whether t1 is a time seen, not t0 + 1 s */
	const struct page_arena *ar;
	size_t nar;
	const struct page_thread *t;
	size_t nt;
	const struct page_heap *h;
	size_t nh;
	const struct mw_view_timeline *tl;	/* the view's (view.h) */
	int pid;
	const char *sfx;	/* the ids' suffix: "" on a page of one process,
				 * "-N" for the N-th of several */
	const struct mw_stack_tips *tips;	/* --stacks; NULL without */
	const struct mw_view *v;	/* the run's figures (view.h) */
};

/* report_html_lanes.c.  html_tip: "\nLABEL STACK" escaped into a title,
 * when there is a stack.  html_x_of: the x of time ns on the axis (px);
 * html_secs: ns as seconds from the axis's start.  html_colour: arena
 * i's colour (#rrggbb).
 * html_ticks: the time axis's ticks and labels over a strip of height h
 * from y0.  html_lanes: one lane per thread.  html_waits_strip: lock
 * waits per interval. */
void html_tip(FILE *f, const char *label, const char *stack);
double html_x_of(const struct page *pg, uint64_t ns);
double html_secs(const struct page *pg, uint64_t ns);
const char *html_colour(int i);
void html_ticks(const struct page *pg, int y0, int h);
void html_lanes(struct page *pg);
void html_waits_strip(struct page *pg);
/* report_html.c: a vertical line at each timeline marker. */
void html_mark_lines(const struct page *pg);
/* report_html_events.c: the arenas and heaps over time from the probe
 * events, for a page without samples (its data into data: "t" empty,
 * "ev" the steps); html_js_events its hover script. */
void html_events_section(struct page *pg, json_t *data);
extern const char html_js_events[];

#endif /* MALLOCWATCH_REPORT_HTML_INT_H */
