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

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>

struct mw_stacks;

/* The text section: per arena "created by thread T at: f <- g <- main";
 * the stacks that grew the break (memory_sbrk_more) and made heaps
 * (memory_heap_new), by bytes; each tcache double free; the other
 * probes' stacks by count.  Frames of the libc (those of the probe
 * site's module) are left out; up to 8 frames of the caller's code.
 * pid: that process's stacks alone (a run of several processes gives
 * each its report), 0 every process's.  Returns 0, or -1 on a write
 * error. */
int mw_report_stacks_text(FILE *f, struct mw_stacks *s, pid_t pid);

/* The folded lines of the stacks that took memory from the kernel:
 * memory_sbrk_more weighted by the bytes the break grew, memory_heap_new
 * by the heap's size, memory_heap_more (sampled) by the heap growths its
 * samples stand for (glibc's probe gives the new size, not the growth:
 * not bytes; its leaf tells them apart); every frame, the probe's name as
 * the leaf.  Events of more than one process (-f, -p A,B): each line's
 * root is pid_PID.  0, or -1 on a write error. */
int mw_report_stacks_folded(FILE *f, struct mw_stacks *s);

/* The folded lines of probe's stacks (enum mw_probe_id) of process pid
 * (0: all; no pid_PID root), weighted as above: a new string (free() it),
 * "" when none, NULL when out of memory. */
char *mw_report_stacks_folded_of(struct mw_stacks *s, pid_t pid, int probe);

/* {"stats": {...}, "events": [{"probe", "pid", "tid", "time_ns", "args":
 * [...], "hits", "frames": [{"address", "module", "build_id", "function",
 * "offset", "file", "line"}]}]} of process pid (0: all): a new reference,
 * NULL when out of memory.  Unknown strings are null, an unknown line 0.
 * "hits": the probe hits the event stands for (memory_heap_more's
 * sample period, else 1). */
json_t *mw_report_stacks_json(struct mw_stacks *s, pid_t pid);

/* The HTML page's tooltips: the stacks of process pid (0: all)
 * symbolized once (NULL tips: none). */
struct mw_stack_tips;
struct mw_stack_tips *mw_stack_tips_new(struct mw_stacks *s, pid_t pid);
void mw_stack_tips_free(struct mw_stack_tips *t);	/* NULL allowed */

/* The stack ("f <- g <- main", libc frames left out) that created arena
 * (memory_arena_new's first argument), or NULL.  Owned by t. */
const char *mw_stack_tip_arena(const struct mw_stack_tips *t, uint64_t arena);

/* The stack that made heap (memory_heap_new's first argument), or NULL. */
const char *mw_stack_tip_heap(const struct mw_stack_tips *t, uint64_t heap);

/* The stack of the hit of probe (glibc's name) by thread tid nearest to
 * ns (CLOCK_MONOTONIC: the tracer's clock and the perf samples'), at
 * most MW_STACK_TIP_NS away, or NULL.  Owned by t. */
#define MW_STACK_TIP_NS 50000000ULL
const char *mw_stack_tip_event(const struct mw_stack_tips *t, const char *probe, int tid,
			       uint64_t ns);

/* The top stacks that grew the break (heaps 0: memory_sbrk_more) or
 * made and grew heaps (1: memory_heap_new by bytes, memory_heap_more by
 * growths), as the text section's lines
 * ("  memory_sbrk_more: 22 hits, 4.1 MiB; ..."), or NULL.  Owned by t. */
const char *mw_stack_tip_grow(const struct mw_stack_tips *t, int heaps);

#endif /* MALLOCWATCH_REPORT_STACKS_H */
