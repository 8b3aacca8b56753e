/* clock.h - CLOCK_MONOTONIC for deadlines, waits and the timeline.
 *
 * The same clock as the kernel's ktime_get_ns(), which the script's
 * timed records (protocol.h: T, O, Y) carry, so times from both sides
 * compare.  Small enough for every module to include.
 */
#ifndef MALLOCWATCH_CLOCK_H
#define MALLOCWATCH_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mw_now_ns(void);

/* CLOCK_MONOTONIC in milliseconds: deadlines and waits. */
long long mw_now_ms(void);

#endif /* MALLOCWATCH_CLOCK_H */
