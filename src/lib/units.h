/* units.h - byte counts for people, shared by every report; and counts
 * summed from a stream held at UINT64_MAX instead of wrapping. */
#ifndef MALLOCWATCH_UNITS_H
#define MALLOCWATCH_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Format bytes as "1.5 MiB" into buf (binary units, one decimal; plain
 * "123 B" below 1 KiB; TiB is the largest unit).  Returns buf. */
const char *mw_human_bytes(uint64_t bytes, char *buf, size_t len);

/* a + b, held at UINT64_MAX: a sum of counts a stream gave (a hostile
 * one may give any) that would wrap.  Past INT64_MAX the reports call it
 * unknown ("more than can be counted", JSON null): no tracer counts that
 * many. */
static inline uint64_t mw_count_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Is a sum of counts one the reports can give (at most INT64_MAX)? */
static inline int mw_count_known(uint64_t n)
{
	return n <= (uint64_t)INT64_MAX;
}

#endif /* MALLOCWATCH_UNITS_H */
