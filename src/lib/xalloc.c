/* xalloc.c - allocation that exits on failure; see xalloc.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "msg.h"
#include "xalloc.h"

static void *check(void *p, size_t size)
{
	if (!p)
		mw_die(MW_EXIT_RUNTIME, "out of memory (allocating %zu bytes)", size);
	return p;
}

void *xmalloc(size_t size)
{
	return check(malloc(size ? size : 1), size);
}

void *xcalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		mw_die(MW_EXIT_RUNTIME, "out of memory (allocating %zu x %zu bytes)", n, size);
	return check(calloc(n ? n : 1, size ? size : 1), n * size);
}

void *xrealloc(void *p, size_t size)
{
	return check(realloc(p, size ? size : 1), size);
}

char *xstrdup(const char *s)
{
	return check(strdup(s), strlen(s) + 1);
}

#define HUGE_PAGE (2U << 20)

void *xmalloc_big(size_t n, size_t size)
{
	void *p = NULL;

	if (size && n > SIZE_MAX / size)
		mw_die(MW_EXIT_RUNTIME, "out of memory (allocating %zu x %zu bytes)", n, size);
	if (n * size < HUGE_PAGE)
		return xmalloc(n * size);
	if (posix_memalign(&p, HUGE_PAGE, n * size) != 0)
		p = NULL;
	check(p, n * size);
	(void)madvise(p, n * size, MADV_HUGEPAGE);	/* a hint: without it, 4 KiB pages */
	return p;
}

void xgrow(void **arr, size_t n, size_t *cap, size_t elem)
{
	size_t ncap;

	if (n < *cap)
		return;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap > SIZE_MAX / elem)
		mw_die(MW_EXIT_RUNTIME, "out of memory (%zu elements of %zu bytes)", ncap, elem);
	*arr = xrealloc(*arr, ncap * elem);
	memset((char *)*arr + *cap * elem, 0, (ncap - *cap) * elem);
	*cap = ncap;
}
