/* xalloc.h - allocation that never returns NULL (git's wrapper.c style).
 *
 * mallocwatch's data structures are small next to the machine; when an
 * allocation fails anyway there is nothing useful left to do, so these
 * print one line, "mallocwatch: out of memory (allocating N bytes)", and
 * exit with MW_EXIT_RUNTIME (msg.h) instead of returning NULL.  Every
 * allocation in src/ goes through them: out-of-memory is handled one
 * way, never ignored.
 */
#ifndef MALLOCWATCH_XALLOC_H
#define MALLOCWATCH_XALLOC_H

#include <stddef.h>

/* malloc/calloc/realloc/strdup that exit on failure.  xcalloc(0, x) and
 * xmalloc(0) return a valid pointer to free(). */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

/* n elements of size bytes for a big array filled at once (millions of
 * a walk's free chunks): asked to be backed by huge pages (madvise
 * MADV_HUGEPAGE, 2 MiB on x86_64) when it is that big, so filling it
 * takes 1/512 of the page faults; freed with free(). */
void *xmalloc_big(size_t n, size_t size);

/* Make room for one more element in the array *arr of *n used and *cap
 * allocated elements of size elem: doubles the capacity (16 at first)
 * and zeroes the new part.  A no-op while *n < *cap. */
void xgrow(void **arr, size_t n, size_t *cap, size_t elem);

#define XGROW(arr, n, cap) xgrow((void **)&(arr), (n), &(cap), sizeof(*(arr)))

#endif /* MALLOCWATCH_XALLOC_H */
