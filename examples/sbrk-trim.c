/* sbrk-trim.c - grow the main heap with sbrk, then let glibc trim it.
 *
 * Usage: sbrk-trim [MIB]   (default 8)
 *
 * The main thread allocates MIB MiB in 4 KiB blocks (below the mmap
 * threshold, so main_arena extends the break), frees the last three
 * quarters (the top chunk then exceeds the trim threshold and free()
 * calls systrim, which shrinks the break), and prints malloc_info() as the
 * end state before leaving with _exit().
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int mib = argc > 1 ? atoi(argv[1]) : 8;
	size_t n;
	char **p;

	if (mib < 1 || mib > 1024) {
		fprintf(stderr, "usage: sbrk-trim [MIB(1-1024)]\n");
		return 2;
	}
	n = (size_t)mib * 256;
	p = calloc(n, sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		p[i] = malloc(4096 - 16);
		memset(p[i], 1, 64);
	}
	for (size_t i = n; i-- > n / 4;)	/* free from the top down */
		free(p[i]);
	malloc_info(0, stdout);
	fflush(stdout);
	_exit(0);
}
