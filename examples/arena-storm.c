/* arena-storm.c - N threads each allocate in their own arena at once.
 *
 * Usage: arena-storm [NTHREADS [ROUNDS [DELAY_MS]]]
 *        (default 4 threads, 200 rounds, no delay)
 *
 * DELAY_MS: sleep that long before the first allocation, so that a tracer
 * can attach (mallocwatch -p) and still see everything.
 *
 * Every thread does ROUNDS rounds of 64 allocations between 1 and 96 KiB
 * (below the mmap threshold, so they come from the thread's arena and its
 * heaps grow), freeing half of them each round.  A barrier makes the
 * threads allocate together, so glibc gives them separate arenas up to
 * its limit (8 x cores) and they contend for locks beyond it.
 *
 * The threads exit keeping what they did not free.  Then the main thread
 * prints glibc's own account, malloc_info(0, stdout), and leaves with
 * _exit() so that nothing touches the allocator after it: the printed
 * account is the end state, the ground truth the tests compare
 * mallocwatch's report with.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t start;
static int rounds = 200;

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	pthread_barrier_wait(&start);
	for (int r = 0; r < rounds; r++) {
		void *p[64];

		for (int i = 0; i < 64; i++) {
			p[i] = malloc(1 + rand_r(&seed) % (96 * 1024));
			memset(p[i], 1, 16);
		}
		for (int i = 0; i < 64; i += 2)	/* the odd ones are kept */
			free(p[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t *t;

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (n < 1 || n > 256 || rounds < 1) {
		fprintf(stderr, "usage: arena-storm [NTHREADS(1-256) [ROUNDS [DELAY_MS]]]\n");
		return 2;
	}
	if (argc > 3)
		usleep((useconds_t)atoi(argv[3]) * 1000);
	t = calloc((size_t)n, sizeof(*t));
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	malloc_info(0, stdout);
	fflush(stdout);
	_exit(0);
}
