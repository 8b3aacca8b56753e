/* clock.c - CLOCK_MONOTONIC and CLOCK_REALTIME; see clock.h. */
#include <time.h>

#include "clock.h"

uint64_t mw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

long long mw_now_ms(void)
{
	return (long long)(mw_now_ns() / 1000000);
}

double mw_now_s(void)
{
	return (double)mw_now_ns() / 1e9;
}

uint64_t mw_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
