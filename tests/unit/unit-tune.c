/* unit-tune.c - mw_tune_not_applied() (src/run/tune_run.c): a tune row
 * whose threshold tunable glibc did not apply (glibc 2.31's mallopt and
 * tunable refuse an mmap threshold above 32 MiB, silently) is refused,
 * not shown as that setting's; where it cannot tell, it says nothing. */
#include <stdint.h>
#include <string.h>

#include "tune_run.h"
#include "unit.h"

int main(void)
{
	static const struct { const char *t; int known; uint64_t nodyn; int want; } c[] = {
		{ "glibc.malloc.mmap_threshold=67108864", 1, 0, 1 },	/* 2.31: refused */
		{ "glibc.malloc.mmap_threshold=67108864", 1, 1, 0 },	/* applied */
		{ "glibc.malloc.mmap_threshold=67108864", 0, 0, 0 },	/* no member */
		{ "glibc.malloc.trim_threshold=0", 1, 0, 1 },
		{ "glibc.malloc.top_pad=0", 1, 0, 1 },
		{ "glibc.malloc.mmap_max=0", 1, 0, 1 },
		{ "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=67108864", 1, 0, 1 },
		{ "glibc.malloc.arena_max=2", 1, 0, 0 },		/* fixes nothing */
		{ "glibc.malloc.tcache_count=0", 1, 0, 0 },
		{ "glibc.malloc.mmap_threshold_x=1", 1, 0, 0 },	/* another name */
		{ "glibc.malloc.mmap_threshol=1", 1, 0, 0 },
		{ "glibc.malloc.mmap_threshold", 1, 0, 0 },		/* no value */
		{ "", 1, 0, 0 },
		{ NULL, 1, 0, 0 },
	};
	char why[1024];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int r;

		why[0] = '\0';
		r = mw_tune_not_applied(c[i].t, c[i].known, c[i].nodyn, 131072, why, sizeof(why));
		CHECK(r == c[i].want, "case %zu '%s': %d", i, c[i].t ? c[i].t : "(null)", r);
		CHECK(!r || (strstr(why, "glibc did not apply glibc.malloc.") &&
			     strstr(why, "mp_.mmap_threshold 131072")), "case %zu: '%s'", i, why);
	}
	mw_tune_not_applied("glibc.malloc.arena_max=2:glibc.malloc.top_pad=1:glibc.malloc.x=1", 1, 0,
			    131072, why, sizeof(why));
	CHECK(strstr(why, "apply glibc.malloc.top_pad=1:") != NULL, "the named one: '%s'", why);
	return failed ? 1 : 0;
}
