/* clock.h - CLOCK_MONOTONIC for deadlines, waits and the timeline (and
 * CLOCK_REALTIME for the time a report was taken).
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

/* CLOCK_MONOTONIC in seconds: how long something took. */
double mw_now_s(void);

/* CLOCK_REALTIME in nanoseconds since the epoch: when something was
 * taken, for reports. */
uint64_t mw_realtime_ns(void);

#endif /* MALLOCWATCH_CLOCK_H */
