/* rawread.c - the floor under a heap walk (bench/walk.sh): read the same
 * bytes the walk reads, [START, END) ranges of process PID given in hex,
 * with process_vm_readv in 1 MiB pieces into a fresh buffer (the bytes'
 * size, its pages faulted in and zeroed by the kernel as it is filled),
 * or with -r into one 1 MiB buffer used again and again (touched before
 * the clock starts: the copy alone), and print the seconds it took and
 * the bytes.
 *
 *	rawread [-r] PID START-END...
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t lo[256], hi[256], total = 0, off = 0;
	int reuse = argc > 1 && !strcmp(argv[1], "-r"), pid, n = 0;
	unsigned char *buf;
	double t;

	argv += reuse;
	argc -= reuse;
	pid = argc > 1 ? atoi(argv[1]) : 0;
	for (int i = 2; i < argc && n < 256; i++, n++)
		if (sscanf(argv[i], "%lx-%lx", &lo[n], &hi[n]) != 2 || hi[n] <= lo[n])
			return 2;
	for (int i = 0; i < n; i++)
		total += hi[i] - lo[i];
	if (!pid || !(buf = malloc(reuse ? 1 << 20 : total)))
		return 2;
	if (reuse)
		memset(buf, 1, 1 << 20);
	t = now();
	for (int i = 0; i < n; i++)
		for (uint64_t a = lo[i]; a < hi[i]; a += 1 << 20) {
			size_t len = hi[i] - a < (1 << 20) ? hi[i] - a : (1 << 20);
			struct iovec l = { buf + off, len }, r = { (void *)(uintptr_t)a, len };

			if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
				perror("process_vm_readv");
				return 1;
			}
			off += reuse ? 0 : len;
		}
	printf("%.6f %llu\n", now() - t, (unsigned long long)total);
	return 0;
}
