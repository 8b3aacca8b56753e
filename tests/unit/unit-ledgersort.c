/* unit-ledgersort.c - the RSS ledger's sort of free intervals
 * (ledger.c: lg_sort_ivals), which every trim prediction and free-page
 * count sweeps in address order: intervals at user addresses in a few
 * regions (the main heap near 0x55..., arenas' heaps near 0x7f...), most
 * in one of them so that one digit of the upper passes is shared by most
 * keys but not all, a radix pass that must not be skipped; small arrays
 * (qsort) and the sizes around the radix sort's threshold; each sorted
 * by start, the same intervals (a permutation of the input), and stable
 * (equal starts keep their order). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_int.h"
#include "unit.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* n intervals: 3 in 4 in the region at 0x7f0000000000, the others at
 * 0x55d004000000 or 0x7f1234000000, 16-byte aligned in 64 MiB, some
 * starts repeated; arena = the input's index.  The first keys by their
 * low 36 bits are of the 3 in 4, whose digit of bits 36-47 most keys
 * share, not all: that pass must still be made. */
static struct lg_ival *make(size_t n)
{
	static const uint64_t base[] = { 0x7f0000000000ULL, 0x55d004000000ULL, 0x7f1234000000ULL };
	struct lg_ival *v = calloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		uint64_t r = next(), b = base[r % 4 == 3 ? 1 + (r >> 8) % 2 : 0];

		v[i].s = i && r % 97 == 0 ? v[i - 1].s : b + ((r >> 16) % (64U << 20) & ~15ULL);
		v[i].e = v[i].s + 32;
		v[i].arena = (int)i;
	}
	return v;
}

/* 0 when v[0..n) is sorted by start, stable, and a permutation of make's */
static int bad(const struct lg_ival *v, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	int wrong = !seen;

	for (size_t i = 0; !wrong && i < n; i++) {
		size_t k = (size_t)v[i].arena;

		if (k >= n || seen[k]++ || v[i].e != v[i].s + 32)
			wrong = 1;
		else if (i && (v[i].s < v[i - 1].s ||
			       (v[i].s == v[i - 1].s && n >= 4096 && v[i].arena < v[i - 1].arena)))
			wrong = 2;
	}
	free(seen);
	return wrong;
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 100, 4095, 4096, 4097, 65536, 1000003 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct lg_ival *v = make(sizes[k]);
		int b;

		lg_sort_ivals(v, sizes[k]);
		b = bad(v, sizes[k]);
		CHECK(b == 0, "%zu intervals: %s", sizes[k],
		      b == 1 ? "not the same intervals" : "not sorted by start, stably");
		free(v);
	}
	return failed ? 1 : 0;
}
