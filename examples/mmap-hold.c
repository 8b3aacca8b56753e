/* mmap-hold.c - keep large allocations, each past the mmap threshold (so
 * glibc gives each a mapping of its own, an mmapped chunk, in no arena),
 * and print glibc's own account of them at the end.
 *
 * Usage: mmap-hold [N [KIB [MS]]]	(default 12 chunks of 8192 KiB, 50 ms)
 *
 * Allocates N chunks of KIB KiB one after another, writes every page of
 * each (so they count in the process's RSS), waits MS ms after each (so
 * periodic samples see the total grow), then prints malloc_info(0,
 * stdout) - its <total type="mmap" count=... size=...> is the ground
 * truth tests compare mallocwatch's mmapped bytes with - and exits
 * without freeing them: stdout has a static buffer and the program ends
 * with _exit(2), so nothing touches the allocator after malloc_info.
 * Nothing is freed, so glibc's dynamic mmap threshold stays where it is.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char outbuf[1 << 16];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 12, kib = argc > 2 ? atol(argv[2]) : 8192;
	long ms = argc > 3 ? atol(argv[3]) : 50;
	struct timespec pause = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	static void *keep[1024];

	if (n < 0 || n > 1024 || kib < 256 || kib > (1L << 22) || ms < 0) {
		fprintf(stderr, "usage: mmap-hold [N(0-1024) [KIB(256-4194304) [MS]]]\n");
		return 2;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	for (long i = 0; i < n; i++) {
		keep[i] = malloc((size_t)kib * 1024);
		if (!keep[i]) {
			perror("mmap-hold: malloc");
			return 1;
		}
		memset(keep[i], (int)i + 1, (size_t)kib * 1024);
		nanosleep(&pause, NULL);
	}
	malloc_info(0, stdout);
	fflush(stdout);
	_exit(0);
}
