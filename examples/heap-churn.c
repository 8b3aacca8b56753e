/* heap-churn.c - grow and shrink one heap N times.
 *
 * Usage: heap-churn N main|thread|thread2
 *
 * With the mmap threshold fixed at 4 MiB and the trim threshold and top
 * pad at their smallest (mallopt, so the thresholds stay put), every
 * iteration mallocs 512 KiB and frees it:
 *   main    in main_arena: the break grows (memory_sbrk_more) and free()
 *           trims it back (systrim: memory_sbrk_less);
 *   thread  in a thread's own arena: its heap grows (grow_heap:
 *           memory_heap_more) and free() shrinks it (heap_trim ->
 *           shrink_heap: memory_heap_less);
 *   thread2 the same, two blocks each time, freed in the order made: two
 *           growths, and one shrink (the first free leaves the top as it
 *           was; the second merges both into it): more grows than shrinks,
 *           so one count taken for the other shows.
 * Prints what a tracer must count, and the loop's own duration (the
 * tracer's start and stop are not in it) and the CPU time of the thread
 * that ran it (CLOCK_THREAD_CPUTIME_ID: its uprobe traps and perf samples
 * are taken in its context; the time it waited for a CPU on a loaded
 * machine is not in it):
 *
 *	iterations 1000000 probes memory_heap_more memory_heap_less
 *	loop_ns 812345678
 *	loop_cpu_ns 790123456
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK (512 * 1024)

static long n;
static int twice;	/* thread2: two blocks per iteration */
static long long loop_ns, loop_cpu_ns;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void *churn(void *arg)
{
	long long t0, c0;

	(void)arg;
	free(malloc(64));	/* the thread's arena and heap exist before the loop */
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		char *volatile p = malloc(BLOCK), *volatile q = twice ? malloc(BLOCK) : NULL;

		if (!p || (twice && !q))
			abort();
		free(p);
		free(q);
	}
	loop_ns = now_ns() - t0;
	loop_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

int main(int argc, char **argv)
{
	int thread = argc > 2 && (strcmp(argv[2], "thread") == 0 || strcmp(argv[2], "thread2") == 0);
	pthread_t t;

	n = argc > 1 ? atol(argv[1]) : -1;
	twice = argc > 2 && strcmp(argv[2], "thread2") == 0;
	if (argc != 3 || n < 0 || (!thread && strcmp(argv[2], "main") != 0)) {
		fprintf(stderr, "usage: heap-churn N main|thread|thread2\n");
		return 2;
	}
	if (!mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024) || !mallopt(M_TRIM_THRESHOLD, 0) ||
	    !mallopt(M_TOP_PAD, 0)) {
		fprintf(stderr, "heap-churn: mallopt failed\n");
		return 1;
	}
	if (thread) {
		if (pthread_create(&t, NULL, churn, NULL) != 0 || pthread_join(t, NULL) != 0) {
			fprintf(stderr, "heap-churn: cannot run the thread\n");
			return 1;
		}
	} else {
		churn(NULL);
	}
	printf("iterations %ld probes %s\n", n, thread ? "memory_heap_more memory_heap_less" :
	       "memory_sbrk_more memory_sbrk_less");
	printf("loop_ns %lld\n", loop_ns);
	printf("loop_cpu_ns %lld\n", loop_cpu_ns);
	return 0;
}
