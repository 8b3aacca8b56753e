/* setjmp-loop.c - N setjmp/longjmp round trips on one jmp_buf.
 *
 * Usage: setjmp-loop [N [neg]]   (default 1000000)
 *
 * Iteration i calls setjmp(buf) and longjmp(buf, i % 7 + 1); with neg,
 * longjmp(buf, -(i % 7 + 1)), INT_MIN for 7 (every bit of the int: a
 * tracer that keeps fewer than 32 bits of it, or loses its sign, shows
 * other values).  Prints what
 * a tracer must count on that jmp_buf (libc itself calls setjmp on other
 * buffers, e.g. once at start-up for thread cancellation):
 *
 *	jmp_buf 0x55d0c3a04060 setjmp 1000000 longjmp 1000000
 *	longjmp_value 1 142858
 *	...
 *	loop_ns 51234567
 *
 * loop_ns is the loop's own duration (a tracer's start and stop are not
 * in it): bench/run takes per-hit costs from it.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static jmp_buf buf;
static int neg;

/* the value iteration i's longjmp passes, k = i % 7 + 1 */
static int value(int k)
{
	return !neg ? k : k == 7 ? INT_MIN : -k;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long values[8] = { 0 };
	volatile long i;
	struct timespec t0, t1;

	neg = argc > 2 && strcmp(argv[2], "neg") == 0;
	if (n < 0 || (argc > 2 && !neg)) {
		fprintf(stderr, "usage: setjmp-loop [N [neg]]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		int v = setjmp(buf);

		if (v == 0) {
			values[i % 7 + 1]++;
			longjmp(buf, value((int)(i % 7 + 1)));
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("jmp_buf %p setjmp %ld longjmp %ld\n", (void *)buf, n, n);
	for (int v = 1; v <= 7; v++)
		if (values[v])
			printf("longjmp_value %d %ld\n", value(v), values[v]);
	printf("loop_ns %lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
	       (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
