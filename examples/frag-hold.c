/* frag-hold.c - leave a known fragmentation in glibc's allocator, say
 * what it is, and hold it until stdin gives a byte (or closes).
 *
 * Usage: frag-hold MODE [N]
 *   pinned  N pairs of 2000-byte chunks (default 2000) in main_arena,
 *           every byte written; the first of each pair freed: N free
 *           chunks of 2016 bytes (past the tcache's 1032), each between
 *           chunks in use, so every free byte shares a page with bytes in
 *           use: none is a whole free page, malloc_trim(0) returns none
 *   pages   N pairs of 64 KiB chunks (default 64; below the mmap
 *           threshold) in main_arena, written; the first of each pair
 *           freed: N free chunks of 65552 bytes, each holding 15 or 16
 *           whole resident pages, which malloc_trim(0) would return
 *   arenas  N threads (default 8), each in an arena of its own: 256
 *           chunks of 4 KiB written, one small chunk kept after them, the
 *           256 freed (one free chunk of 1 MiB, resident, short of the
 *           top), then the thread exits: N arenas on glibc's free list
 *           holding 1 MiB free and resident each
 * Every mode also keeps three mmapped chunks of 1 MiB, written.
 *
 * Prints "ready MODE N" on stdout once the state is built, then blocks
 * in read(2); nothing touches the allocator after that.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t attached;
static void *volatile kept[256];	/* never freed; volatile: not optimized away */

static void pairs(long n, size_t size)
{
	char **v = malloc((size_t)n * 2 * sizeof(*v));

	for (long i = 0; i < 2 * n; i++) {
		v[i] = malloc(size);
		memset(v[i], 0x5a, size);
	}
	for (long i = 0; i < 2 * n; i += 2)
		free(v[i]);
	/* v itself stays: the kept halves are in use */
}

static void *idle_worker(void *arg)
{
	char *c[256];
	void *volatile first = malloc(32);	/* attach to an arena */

	(void)first;
	pthread_barrier_wait(&attached);	/* all attached: one arena each */
	for (int i = 0; i < 256; i++) {
		c[i] = malloc(4096 - 16);
		memset(c[i], 0x5a, 4096 - 16);
	}
	kept[(long)arg] = malloc(32);	/* the freed run stays short of the top */
	for (int i = 0; i < 256; i++)
		free(c[i]);
	return NULL;
}

static void arenas(long n)
{
	pthread_t t[256];

	if (n > 256)
		n = 256;
	pthread_barrier_init(&attached, NULL, (unsigned)n);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, idle_worker, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	static char outbuf[4096];	/* stdio's buffer is not one of the free chunks */
	char c;

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	for (int i = 0; i < 3; i++)
		memset(malloc(1 << 20), 0x5a, 1 << 20);
	if (strcmp(mode, "pinned") == 0)
		pairs(n > 0 ? n : (n = 2000), 2000);
	else if (strcmp(mode, "pages") == 0)
		pairs(n > 0 ? n : (n = 64), 64 * 1024);
	else if (strcmp(mode, "arenas") == 0)
		arenas(n > 0 ? n : (n = 8));
	else {
		fprintf(stderr, "usage: frag-hold pinned|pages|arenas [N]\n");
		return 2;
	}
	printf("ready %s %ld\n", mode, n);
	fflush(stdout);
	if (read(0, &c, 1) < 0)
		return 1;
	_exit(0);
}
