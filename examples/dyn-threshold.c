/* dyn-threshold.c - move glibc's dynamic mmap threshold with a large free.
 *
 * Usage: dyn-threshold [KIB...]   (default 1024 3072)
 *
 * Each size, in KiB, is allocated (above the 128 KiB mmap threshold, so
 * glibc mmaps it) and freed.  Freeing an mmapped chunk larger than the
 * current threshold raises it to the chunk's size and the trim threshold
 * to twice that (malloc.c, __libc_free; probe
 * memory_mallopt_free_dyn_thresholds).  For each free that must move the
 * threshold the program prints what glibc should set:
 *
 *	expect mmap_threshold=1052672 trim_threshold=2105344
 *
 * The chunk size is malloc_usable_size() + 2 * sizeof(size_t): an mmapped
 * chunk's header and footer.  Sizes at or above 32 MiB
 * (DEFAULT_MMAP_THRESHOLD_MAX) do not move it.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MMAP_THRESHOLD_MAX (4 * 1024 * 1024 * sizeof(long))

int main(int argc, char **argv)
{
	static const char *const def[] = { "1024", "3072" };
	const char *const *sizes = argc > 1 ? (const char *const *)argv + 1 : def;
	int n = argc > 1 ? argc - 1 : 2;
	size_t threshold = 128 * 1024;

	for (int i = 0; i < n; i++) {
		size_t bytes = (size_t)atol(sizes[i]) * 1024, chunk;
		char *p = malloc(bytes);

		if (!p) {
			perror("malloc");
			return 1;
		}
		memset(p, 1, 64);
		chunk = malloc_usable_size(p) + 2 * sizeof(size_t);
		free(p);
		if (bytes >= threshold && chunk > threshold && chunk <= MMAP_THRESHOLD_MAX) {
			threshold = chunk;
			printf("expect mmap_threshold=%zu trim_threshold=%zu\n", chunk, 2 * chunk);
		}
	}
	fflush(stdout);
	_exit(0);
}
