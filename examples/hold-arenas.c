/* hold-arenas.c - build a known allocator state in several threads, print
 * glibc's own account of it, and hold it until told to go.
 *
 * Usage: hold-arenas [NTHREADS [TAG [EXTRA]]]	(default 4 threads)
 *
 * Every thread, the main one included, attaches to an arena (the others
 * wait at a barrier until all have, so each gets one of its own up to
 * glibc's limit), then leaves a known mix behind: small chunks in
 * fastbins (past what the tcache holds), medium chunks in the unsorted,
 * small and large bins, large free chunks with whole free pages in them
 * (what malloc_trim could give back), and mmapped chunks.  Then the
 * threads wait at a barrier, the main thread prints malloc_info(0,
 * stdout) - the ground truth the tests compare `mallocwatch snapshot`
 * with - and every thread blocks until stdin gives a byte or closes.
 * Nothing touches the allocator after malloc_info, not even at exit:
 * stdout has a static buffer, the threads block in a barrier, the main
 * thread in read(2) and then _exit(2).
 *
 * TAG is ignored: it lets a test find its own process by command line.
 * EXTRA more small chunks are left in main_arena's fastbins (a state that
 * takes long to read).  On stderr: how long malloc_info() took, in ns
 * ("malloc_info_ns N"), a baseline for bench/run.
 *
 * With HOLD_TOP_EDGE=1 in the environment, each thread then leaves its
 * arena's top chunk at MINSIZE (32 bytes), ending where the heap's
 * readable pages end (a thread heap's mprotect'ed part, the main heap's
 * break): a reader that reads a whole struct malloc_chunk at the top
 * reads past the mapping.  A glibc state any program can reach.
 *
 * With HOLD_TICK=1, one more thread, made first, wakes every 200 us for
 * good (nanosleep) and touches nothing of the allocator: asleep whenever
 * it is looked at, yet it runs while a snapshot is read (quiet.h must
 * not call that process idle).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t attached, built, done;
static __thread void *volatile guard[128];	/* kept, never read */
static char outbuf[1 << 16];

#define NSMALL 48
#define NMEDIUM 40
#define NLARGE 10

/* Everything is allocated first, each chunk followed by a small guard so
 * that freed neighbours cannot coalesce; then every other chunk is
 * freed, large first, small last, so that nothing allocated later takes
 * the free chunks back. */
static void build(unsigned seed)
{
	static __thread void *small[NSMALL], *medium[NMEDIUM], *large[NLARGE], *big[2];
	void *volatile sorter;
	int g = 0;

	for (int i = 0; i < 2; i++)	/* past the mmap threshold: mmapped, kept */
		big[i] = malloc(300000);
	for (int i = 0; i < NLARGE; i++) {
		large[i] = malloc(20000 + 4096 * (seed % 2));
		guard[g++] = malloc(24);
	}
	for (int i = 0; i < NMEDIUM; i++) {
		medium[i] = malloc(1500 + 64 * (seed % 4));
		guard[g++] = malloc(24);
	}
	for (int i = 0; i < NSMALL; i++) {
		small[i] = malloc(40 + 16 * (seed % 3));
		guard[g++] = malloc(24);
	}
	for (int i = 0; i < NLARGE; i += 2)	/* unsorted: whole free pages in them */
		free(large[i]);
	for (int i = 0; i < NMEDIUM; i += 2)	/* 7 to the tcache, the rest unsorted */
		free(medium[i]);
	sorter = malloc(60000);		/* sorts the unsorted into small and large bins */
	(void)sorter;
	for (int i = 0; i < NSMALL; i += 2)	/* 7 to the tcache, the rest to a fastbin */
		free(small[i]);
	memset(big[0], 1, 64);
}

/* The word at address a in this process's heap, outside any object the
 * compiler knows of (the asm hides where a points from it). */
static size_t word_at(uintptr_t a)
{
	__asm__("" : "+r"(a));
	return *(const volatile size_t *)a;
}

/* The size of the chunk at c (malloc.c's chunksize()); flags off. */
static size_t chunk_size(uintptr_t c)
{
	return word_at(c + sizeof(size_t)) & ~(size_t)7;
}

/* Leave this thread's arena's top at MINSIZE (4 * SIZE_SZ bytes), by
 * chunks of at least 64 KiB (larger than any free chunk build() left;
 * under the mmap threshold) carved from the top, the last one leaving
 * MINSIZE (malloc.c, _int_malloc's use_top: a top of at least nb +
 * MINSIZE is split, its remainder the new top).  A top of less than 64
 * KiB is first grown by a request of 64 KiB more than it has: a
 * thread's heap grows by exactly that (sysmalloc's grow_heap, by
 * MINSIZE + nb - top, page-aligned, no pad), which leaves MINSIZE at
 * once; the main heap grows by M_TOP_PAD more, carved next.  The top
 * follows the last chunk carved from it; mem2chunk(m) is m less
 * 2 * SIZE_SZ.  Their large requests consolidate the fastbins first
 * (malloc_consolidate): the small chunks build() freed past the tcache
 * are in the bins instead. */
static void top_edge(void)
{
	const size_t minsize = 4 * sizeof(size_t), hdr = 2 * sizeof(size_t);
	uintptr_t c = (uintptr_t)malloc(100000) - hdr;

	for (int i = 0; i < 64; i++) {
		size_t ts = chunk_size(c + chunk_size(c)), nb;

		if (ts == minsize)
			return;
		if (ts >= minsize + 65536)
			nb = ts - minsize <= 120000 ? ts - minsize : 65536;
		else
			nb = 65536 + ts - minsize;
		guard[127] = (void *)(c = (uintptr_t)malloc(nb - sizeof(size_t)));	/* request2size(): nb */
		c -= hdr;
	}
	fprintf(stderr, "hold-arenas: the top was never left at MINSIZE\n");
	exit(1);
}

static void *worker(void *arg)
{
	void *volatile first;

	pthread_barrier_wait(&attached);	/* all started */
	first = malloc(32);			/* attach to an arena */
	(void)first;
	pthread_barrier_wait(&attached);	/* all attached */
	build((unsigned)(uintptr_t)arg);
	if (getenv("HOLD_TOP_EDGE"))
		top_edge();
	pthread_barrier_wait(&built);
	pthread_barrier_wait(&done);
	return NULL;
}

static void *ticker(void *arg)
{
	struct timespec ts = { .tv_nsec = 200000 };

	(void)arg;
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

/* extra small chunks: allocated in pairs, one of each pair freed past
 * the tcache into a fastbin */
static void extra_fast(long n)
{
	void **keep = malloc((size_t)n * 2 * sizeof(*keep));

	for (long i = 0; i < 2 * n; i++)
		keep[i] = malloc(24);
	for (long i = 0; i < 2 * n; i += 2)
		free(keep[i]);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	long extra = argc > 3 ? atol(argv[3]) : 0;
	struct timespec t0, t1;
	pthread_t t[256];
	char c;

	if (n < 0 || n > 256) {
		fprintf(stderr, "usage: hold-arenas [NTHREADS(0-256) [TAG]]\n");
		return 2;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (getenv("HOLD_TICK") && pthread_create(&t[0], NULL, ticker, NULL))
		return 1;
	pthread_barrier_init(&attached, NULL, (unsigned)n + 1);
	pthread_barrier_init(&built, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	pthread_barrier_wait(&attached);
	pthread_barrier_wait(&attached);
	build(0);
	if (extra > 0)
		extra_fast(extra);
	if (getenv("HOLD_TOP_EDGE"))
		top_edge();
	pthread_barrier_wait(&built);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	malloc_info(0, stdout);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fflush(stdout);
	fprintf(stderr, "malloc_info_ns %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		(t1.tv_nsec - t0.tv_nsec));
	if (read(0, &c, 1) < 0)
		return 1;
	/* _exit while the threads still wait: no thread exits on its own,
	 * so no tcache is flushed back into the arenas after malloc_info() */
	_exit(0);
}
