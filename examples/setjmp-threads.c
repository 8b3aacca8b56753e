/* setjmp-threads.c - T threads doing N setjmp/longjmp round trips each.
 *
 * Usage: setjmp-threads N T
 *
 * Every thread has its own jmp_buf; all start their loops at a barrier.
 * Prints the hits a tracer must count (3 per round trip: setjmp, longjmp,
 * longjmp_target) and loop_ns, the wall time from the barrier to the last
 * thread's end: bench/run's per-hit cost by thread count.
 *
 *	threads 4 round_trips 4000000 hits 12000000
 *	loop_ns 812345678
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long n;
static pthread_barrier_t start;

static void *loop(void *arg)
{
	jmp_buf buf;
	volatile long i;

	(void)arg;
	pthread_barrier_wait(&start);
	for (i = 0; i < n; i++)
		if (setjmp(buf) == 0)
			longjmp(buf, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	long t = argc > 2 ? atol(argv[2]) : 0;
	pthread_t th[256];
	struct timespec t0, t1;

	n = argc > 1 ? atol(argv[1]) : -1;
	if (argc != 3 || n < 0 || t < 1 || t > 256) {
		fprintf(stderr, "usage: setjmp-threads N T(1-256)\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, (unsigned)t + 1);
	for (long k = 0; k < t; k++)
		if (pthread_create(&th[k], NULL, loop, NULL) != 0) {
			fprintf(stderr, "setjmp-threads: cannot create thread %ld\n", k);
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);	/* no loop starts before this */
	pthread_barrier_wait(&start);
	for (long k = 0; k < t; k++)
		pthread_join(th[k], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("threads %ld round_trips %ld hits %ld\n", t, n * t, 3 * n * t);
	printf("loop_ns %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
	       (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
