/* allocator-knobs.c - fire glibc's mallopt, retry and tcache probes.
 *
 * Usage: allocator-knobs mallopt | retry | double-free | lifecycle | contend
 *
 * mallopt      calls mallopt() twice on every parameter, A then B, so the
 *              second call's previous value is A; prints per call
 *                  mallopt M_ARENA_MAX -8 4 previous 8
 *              ("previous ?" on first calls: glibc's default; "previous -"
 *              for M_CHECK_ACTION, which has no probe of its own since 2.34)
 * retry        in a second thread (glibc retries only when multi-threaded),
 *              asks malloc, calloc, realloc and posix_memalign for 1 TiB,
 *              which no arena can give; prints
 *                  retry memory_malloc_retry 1099511627776
 * double-free  frees a 32-byte block twice; glibc's tcache check catches it
 *              and aborts (SIGABRT).  Prints first
 *                  double_free entry 0x55f4c2a012a0 tc_idx 1
 *
 * lifecycle    a thread allocates 100 MiB in 64 KiB blocks (its arena needs
 *              a second heap), frees it all (glibc unmaps the second heap:
 *              memory_heap_free, and shrinks the first: memory_heap_less),
 *              exits; a new thread then gets that arena from the free list
 *              (memory_arena_reuse_free_list).  Prints
 *                  lifecycle arena_reuse_free_list 1
 * contend      M_ARENA_MAX=1: busy threads keep main_arena's lock taken
 *              while 64 more threads start, each must reuse main_arena and
 *              some find it locked (memory_arena_reuse_wait).  How many wait
 *              is up to the scheduler; prints nothing to compare.
 *
 * Run it with GLIBC_TUNABLES to fire the tunable probes (tests/t-e2e-knobs.sh).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIB ((size_t)1 << 40)

static const struct {
	const char *name;
	int param, a, b;
} knobs[] = {
	{ "M_MXFAST", M_MXFAST, 64, 32 },
	{ "M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, 256 * 1024, 512 * 1024 },
	{ "M_TOP_PAD", M_TOP_PAD, 64 * 1024, 32 * 1024 },
	{ "M_MMAP_THRESHOLD", M_MMAP_THRESHOLD, 256 * 1024, 1024 * 1024 },
	{ "M_MMAP_MAX", M_MMAP_MAX, 100, 200 },
	{ "M_CHECK_ACTION", M_CHECK_ACTION, 3, 1 },
	{ "M_PERTURB", M_PERTURB, 0x55, 0 },
	{ "M_ARENA_TEST", M_ARENA_TEST, 4, 2 },
	{ "M_ARENA_MAX", M_ARENA_MAX, 8, 4 },
};

static int do_mallopt(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		int none = knobs[i].param == M_CHECK_ACTION;

		if (!mallopt(knobs[i].param, knobs[i].a) && !none)
			return 1;
		printf("mallopt %s %d %d previous %s\n", knobs[i].name, knobs[i].param,
		       knobs[i].a, none ? "-" : "?");
		if (!mallopt(knobs[i].param, knobs[i].b) && !none)
			return 1;
		if (none)
			printf("mallopt %s %d %d previous -\n", knobs[i].name, knobs[i].param,
			       knobs[i].b);
		else
			printf("mallopt %s %d %d previous %d\n", knobs[i].name, knobs[i].param,
			       knobs[i].b, knobs[i].a);
	}
	return 0;
}

static void *retry_thread(void *arg)
{
	void *small = malloc(64), *p = NULL;

	(void)arg;
	if (malloc(TIB) || calloc(1, TIB) || realloc(small, TIB) ||
	    posix_memalign(&p, 4096, TIB) == 0)
		return "an allocation of 1 TiB succeeded";
	printf("retry memory_malloc_retry %zu\n", TIB);
	printf("retry memory_calloc_retry %zu\n", TIB);
	printf("retry memory_realloc_retry %zu\n", TIB);
	printf("retry memory_memalign_retry %zu\n", TIB);
	free(small);
	return NULL;
}

static int do_retry(void)
{
	pthread_t t;
	void *err;

	if (pthread_create(&t, NULL, retry_thread, NULL) || pthread_join(t, &err))
		return 1;
	if (err) {
		fprintf(stderr, "allocator-knobs: %s\n", (char *)err);
		return 1;
	}
	return 0;
}

static int do_double_free(void)
{
	char *p = malloc(32), *volatile again = p;	/* volatile: a deliberate bug */
	size_t chunk = (32 + sizeof(size_t) + 15) & ~(size_t)15;	/* request2size */

	printf("double_free entry %p tc_idx %zu\n", (void *)p, (chunk - 17) / 16);
	fflush(stdout);
	free(p);
	free(again);	/* glibc: "free(): double free detected in tcache 2", abort */
	return 1;
}

static void *hog(void *arg)
{
	size_t n = 1600;	/* x 64 KiB = 100 MiB, more than one 64 MiB heap */
	char **p = malloc(n * sizeof(*p));

	(void)arg;
	for (size_t i = 0; i < n; i++) {
		p[i] = malloc(64 * 1024 - 64);
		memset(p[i], 1, 64);
	}
	for (size_t i = n; i-- > 0;)	/* from the top: heaps go back */
		free(p[i]);
	free(p);
	return NULL;
}

/* A volatile pointer: gcc drops a plain free(malloc(n)) altogether. */
static void *volatile sink;

static void *one_malloc(void *arg)
{
	sink = malloc(100);
	free(sink);
	return arg;
}

static int do_lifecycle(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, hog, NULL) || pthread_join(t, NULL))
		return 1;
	if (pthread_create(&t, NULL, one_malloc, NULL) || pthread_join(t, NULL))
		return 1;
	printf("lifecycle arena_reuse_free_list 1\n");
	return 0;
}

static volatile int stop;

static void *busy(void *arg)
{
	void *volatile p;

	while (!stop) {
		p = malloc(2000 + (size_t)(uintptr_t)arg);	/* past the tcache */
		free(p);
	}
	return NULL;
}

static int do_contend(void)
{
	pthread_t b[4], t[64];

	mallopt(M_ARENA_MAX, 1);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&b[i], NULL, busy, (void *)(uintptr_t)i))
			return 1;
	for (int i = 0; i < 64; i++)
		if (pthread_create(&t[i], NULL, one_malloc, NULL))
			return 1;
	for (int i = 0; i < 64; i++)
		pthread_join(t[i], NULL);
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(b[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "mallopt") == 0)
		return do_mallopt();
	if (strcmp(mode, "retry") == 0)
		return do_retry();
	if (strcmp(mode, "double-free") == 0)
		return do_double_free();
	if (strcmp(mode, "lifecycle") == 0)
		return do_lifecycle();
	if (strcmp(mode, "contend") == 0)
		return do_contend();
	fprintf(stderr, "usage: allocator-knobs mallopt | retry | double-free | lifecycle | contend\n");
	return 2;
}
