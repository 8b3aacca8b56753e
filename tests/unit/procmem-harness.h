/* procmem-harness.h - what the unit tests that read this very process
 * through procmem.h share (unit-proccopy, unit-procahead, unit-procpool,
 * unit-snaplists): a region of its memory, aligned, and the process
 * opened with copies on.  #included after unit.h. */
#ifndef MALLOCWATCH_TESTS_PROCMEM_HARNESS_H
#define MALLOCWATCH_TESTS_PROCMEM_HARNESS_H

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmem.h"

/* len bytes of fresh anonymous memory (zeroes), read and write, at an
 * address aligned to align (a power of two); NULL when it cannot be
 * mapped. */
static inline unsigned char *aligned_region(size_t len, size_t align)
{
	unsigned char *m = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	return (unsigned char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
}

/* This process opened into p, copies on, once its region r is there:
 * 0; -1 when r is NULL (counted failed). */
static inline int open_self(struct mw_proc *p, const void *r)
{
	char err[256];

	CHECK(r != NULL, "no region");
	if (!r)
		return -1;
	CHECK(mw_proc_open(p, getpid(), err, sizeof(err)) == 0, "%s", err);
	mw_proc_copy(p, 1);
	return 0;
}

#endif /* MALLOCWATCH_TESTS_PROCMEM_HARNESS_H */
