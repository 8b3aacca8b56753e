/* arena-storm.c - N threads each allocate in their own arena at once.
 *
 * Usage: arena-storm [NTHREADS [ROUNDS [DELAY_MS | -]]]
 *        (default 4 threads, 200 rounds, no delay)
 *
 * DELAY_MS: sleep that long before the first allocation, so that a tracer
 * can attach (mallocwatch -p) and still see everything.
 *
 * DELAY_MS "-": instead, read one byte from stdin first (a test writes it
 * once the tracer is attached: no guessing how long attaching takes).
 *
 * Every thread makes its first allocation, then waits at a barrier until
 * all have made theirs, then does ROUNDS rounds of 64 allocations between
 * 1 and 96 KiB (below the mmap threshold, so they come from the thread's
 * arena and its heaps grow), freeing half of them each round.  Because no
 * thread exits before every thread has an arena, none can take an arena
 * from the free list: glibc gives them arenas of their own up to its
 * limit (8 x cores, main_arena included) and makes the rest reuse one
 * (arena.c, arena_get2), whatever the scheduler does.
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

static pthread_barrier_t start, attached;
static int rounds = 200;
static void *volatile first[257];

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	pthread_barrier_wait(&start);
	first[seed] = malloc(64);	/* attaches this thread to an arena */
	pthread_barrier_wait(&attached);
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
	if (argc > 3 && strcmp(argv[3], "-") == 0) {
		char c;

		if (read(0, &c, 1) != 1)
			return 2;
	} else if (argc > 3) {
		usleep((useconds_t)atoi(argv[3]) * 1000);
	}
	t = calloc((size_t)n, sizeof(*t));
	pthread_barrier_init(&start, NULL, (unsigned)n);
	pthread_barrier_init(&attached, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	malloc_info(0, stdout);
	fflush(stdout);
	_exit(0);
}
