/* trace_tree.h - the texts of a run of several processes (trace_tree.c). */
#ifndef MALLOCWATCH_TRACE_TREE_H
#define MALLOCWATCH_TRACE_TREE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

struct mw_procs;

/* -f: the tree, a line per process of procs (reps[i] the i-th's JSON
 * report; n of them): its pid, parent, how it ended, its arenas, its
 * allocator at exit, its command line (and the title it gave itself);
 * at most 50 rows.  set_failed: some processes could not be added to the
 * tracer's set.  With summaries, a line saying which processes the
 * summaries after it are of, when they are not all
 * (mw_tree_summarized). */
void mw_tree_text(FILE *f, const struct mw_procs *procs, json_t *const *reps, size_t n,
		  unsigned long set_failed, int summaries);

/* -f: is process i of n summarized in full?  All of a small tree; else
 * the program and the 9 that held the most at exit. */
int mw_tree_summarized(const struct mw_procs *procs, size_t i, size_t n);

#endif /* MALLOCWATCH_TRACE_TREE_H */
