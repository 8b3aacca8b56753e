/* unit-idmap.c - the key -> index map (src/lib/idmap.c) against a plain
 * array searched linearly: random keys, keys that differ in few bits
 * (thread ids, page-aligned addresses), 0 and UINT64_MAX, replacement,
 * growth past many rehashes, clear. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "idmap.h"

#define N 20000

static uint64_t keys[N];
static size_t vals[N];
static size_t nkeys;
static int failed;

static size_t ref_get(uint64_t k)
{
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i] == k)
			return vals[i];
	return MW_IDMAP_NONE;
}

static void ref_put(uint64_t k, size_t v)
{
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i] == k) {
			vals[i] = v;
			return;
		}
	keys[nkeys] = k;
	vals[nkeys++] = v;
}

static void check(const struct mw_idmap *m, uint64_t k, const char *what)
{
	size_t want = ref_get(k), got = mw_idmap_get(m, k);

	if (want != got && failed++ < 10)
		printf("FAIL %s: key 0x%" PRIx64 ": got %zu, expected %zu\n", what, k, got, want);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(void)
{
	struct mw_idmap m = { 0 };
	uint64_t s = 88172645463325252ULL;

	check(&m, 0, "empty map");
	for (size_t i = 0; nkeys < N - 10; i++) {
		uint64_t k;

		switch (i % 4) {
		case 0: k = rnd(&s); break;
		case 1: k = 100000 + i; break;				/* tids */
		case 2: k = 0x7f0000000000ULL + (i << 12); break;	/* pages */
		default: k = keys[rnd(&s) % (nkeys ? nkeys : 1)];	/* replace */
		}
		ref_put(k, i);
		mw_idmap_put(&m, k, i);
	}
	ref_put(0, 1);
	mw_idmap_put(&m, 0, 1);
	ref_put(UINT64_MAX, 2);
	mw_idmap_put(&m, UINT64_MAX, 2);
	if (m.n != nkeys)
		printf("FAIL count %zu, expected %zu\n", m.n, nkeys), failed++;
	for (size_t i = 0; i < nkeys; i++)
		check(&m, keys[i], "present");
	for (int i = 0; i < 1000; i++)
		check(&m, rnd(&s) | 1, "absent");
	mw_idmap_clear(&m);
	if (mw_idmap_get(&m, keys[0]) != MW_IDMAP_NONE || m.n)
		printf("FAIL clear\n"), failed++;
	mw_idmap_put(&m, 42, 7);
	if (mw_idmap_get(&m, 42) != 7)
		printf("FAIL put after clear\n"), failed++;
	mw_idmap_free(&m);
	printf("%zu keys: %d failed\n", nkeys, failed);
	return failed ? 1 : 0;
}
