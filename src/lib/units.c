/* units.c - see units.h. */
#include <inttypes.h>
#include <stdio.h>

#include "units.h"

const char *mw_human_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = -1;

	if (b < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", b);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}
