/* report_stacks.h - the user call stacks of --stacks (stacks.h) in the
 * reports: a text section, a "stacks" JSON member, and the folded-stack
 * lines flame graph tools read (Brendan Gregg's FlameGraph
 * stackcollapse format, one stack per line, root first, ';' between
 * frames, a space and the weight at the end):
 *
 *	_start;__libc_start_main;main;grow_a;grow_b;grow_c;malloc;sysmalloc;memory_sbrk_more 4325376
 */
#ifndef MALLOCWATCH_REPORT_STACKS_H
#define MALLOCWATCH_REPORT_STACKS_H

#include <stdio.h>
#include <jansson.h>

struct mw_stacks;

/* The text section: per arena "created by thread T at: f <- g <- main";
 * the stacks that grew the break (memory_sbrk_more) and made heaps
 * (memory_heap_new), by bytes; each tcache double free; the other
 * probes' stacks by count.  Frames of the libc (those of the probe
 * site's module) are left out; up to 8 frames of the caller's code.
 * Returns 0, or -1 on a write error. */
int mw_report_stacks_text(FILE *f, struct mw_stacks *s);

/* The folded lines of the stacks that took memory from the kernel:
 * memory_sbrk_more weighted by the bytes the break grew, memory_heap_new
 * by the heap's size; every frame, the probe's name as the leaf.  0, or
 * -1 on a write error. */
int mw_report_stacks_folded(FILE *f, struct mw_stacks *s);

/* {"stats": {...}, "events": [{"probe", "pid", "tid", "time_ns", "args":
 * [...], "frames": [{"address", "module", "build_id", "function",
 * "offset", "file", "line"}]}]}: a new reference, NULL when out of
 * memory.  Unknown strings are null, an unknown line 0. */
json_t *mw_report_stacks_json(struct mw_stacks *s);

#endif /* MALLOCWATCH_REPORT_STACKS_H */
