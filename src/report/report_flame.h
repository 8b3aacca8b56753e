/* report_flame.h - flame graphs of --stacks for the --html page, drawn
 * by mallocwatch itself (Debian 12 packages no flame graph tool:
 * neither flamegraph.pl nor inferno), from the folded lines of
 * report_stacks.h.
 */
#ifndef MALLOCWATCH_REPORT_FLAME_H
#define MALLOCWATCH_REPORT_FLAME_H

#include <stdio.h>
#include <sys/types.h>

struct mw_stacks;

/* One flame graph as inline SVG, an icicle (the root frame on top, each
 * frame's callees below it), of folded (lines "a;b;c WEIGHT", root
 * first, as mw_report_stacks_folded writes them).  Each frame is a
 *
 *	<g class="fl" data-depth="D" data-frame="NAME" data-weight="W">
 *	<title>NAME: 3.9 MiB, 97.25%</title><rect x= y= width= .../>...</g>
 *
 * its width width * W / the total (px, two decimals), x where its
 * parent's starts plus its elder siblings' widths (siblings by weight,
 * the heaviest first, then by name), y D rows down.  unit: what a
 * weight counts ("heap growths", "samples"), printed after the number in
 * each title; NULL: the weights are bytes (printed as "3.9 MiB").  The
 * <svg> carries the SVG namespace, so that it also stands alone as a
 * file (mallocwatch flame).  Returns the frames drawn (0: no line with a
 * weight); a line that does not parse is skipped. */
int mw_flame_svg(FILE *f, const char *folded, const char *unit, int width);

/* The --html page's flame graphs of process pid's stacks (0: all):
 * memory_sbrk_more and memory_heap_new by bytes, memory_heap_more by
 * heap growths, each with its heading, those with stacks only. */
void mw_flame_html(FILE *f, struct mw_stacks *s, pid_t pid, int width);

#endif /* MALLOCWATCH_REPORT_FLAME_H */
