/* allocator-knobs.c - fire glibc's mallopt, retry and tcache probes.
 *
 * Usage: allocator-knobs mallopt | retry | double-free | lifecycle | contend [N]
 *
 * mallopt      calls mallopt() twice on every parameter, A then B, so the
 *              second call's previous value is A; prints per call
 *                  mallopt M_ARENA_MAX -8 4 previous 8
 *              ("previous ?" on first calls: glibc's default; "previous -"
 *              for M_CHECK_ACTION, which has no probe of its own since 2.34)
 * retry        in a second thread (glibc retries only when multi-threaded),
 *              asks malloc, calloc, realloc and posix_memalign for 1 TiB,
 *              which no arena can give; prints
 *                  retry memory_malloc_retry 1099511627776
 * double-free  frees a 32-byte block twice; glibc's tcache check catches it
 *              and aborts (SIGABRT).  Prints first
 *                  double_free entry 0x55f4c2a012a0 tc_idx 1
 *
 * lifecycle    a thread allocates 100 MiB in 64 KiB blocks (its arena needs
 *              a second heap), frees it all (glibc unmaps the second heap:
 *              memory_heap_free, and shrinks the first: memory_heap_less),
 *              exits; a new thread then gets that arena from the free list
 *              (memory_arena_reuse_free_list).  Prints
 *                  lifecycle arena_reuse_free_list 1
 * contend      M_ARENA_MAX=1: a thread holds main_arena's lock (inside
 *              malloc_stats, writing to a full pipe) while N (default 8,
 *              at most 256) new threads
 *              make their first allocation: each must reuse main_arena and
 *              wait for its lock, exactly once (see do_contend).  Prints
 *                  contend memory_arena_reuse_wait N
 *
 * Run it with GLIBC_TUNABLES to fire the tunable probes (tests/e2e/t-e2e-knobs.sh).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TIB ((size_t)1 << 40)

static const struct {
	const char *name;
	int param, a, b;
} knobs[] = {
	{ "M_MXFAST", M_MXFAST, 64, 32 },
	{ "M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, 256 * 1024, 512 * 1024 },
	{ "M_TOP_PAD", M_TOP_PAD, 64 * 1024, 32 * 1024 },
	{ "M_MMAP_THRESHOLD", M_MMAP_THRESHOLD, 256 * 1024, 1024 * 1024 },
	{ "M_MMAP_MAX", M_MMAP_MAX, 100, 200 },
	{ "M_CHECK_ACTION", M_CHECK_ACTION, 3, 1 },
	{ "M_PERTURB", M_PERTURB, 0x55, 0 },
	{ "M_ARENA_TEST", M_ARENA_TEST, 4, 2 },
	{ "M_ARENA_MAX", M_ARENA_MAX, 8, 4 },
};

static int do_mallopt(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		int none = knobs[i].param == M_CHECK_ACTION;

		if (!mallopt(knobs[i].param, knobs[i].a) && !none)
			return 1;
		printf("mallopt %s %d %d previous %s\n", knobs[i].name, knobs[i].param,
		       knobs[i].a, none ? "-" : "?");
		if (!mallopt(knobs[i].param, knobs[i].b) && !none)
			return 1;
		if (none)
			printf("mallopt %s %d %d previous -\n", knobs[i].name, knobs[i].param,
			       knobs[i].b);
		else
			printf("mallopt %s %d %d previous %d\n", knobs[i].name, knobs[i].param,
			       knobs[i].b, knobs[i].a);
	}
	return 0;
}

static void *retry_thread(void *arg)
{
	void *small = malloc(64), *p = NULL;

	(void)arg;
	if (malloc(TIB) || calloc(1, TIB) || realloc(small, TIB) ||
	    posix_memalign(&p, 4096, TIB) == 0)
		return "an allocation of 1 TiB succeeded";
	printf("retry memory_malloc_retry %zu\n", TIB);
	printf("retry memory_calloc_retry %zu\n", TIB);
	printf("retry memory_realloc_retry %zu\n", TIB);
	printf("retry memory_memalign_retry %zu\n", TIB);
	free(small);
	return NULL;
}

static int do_retry(void)
{
	pthread_t t;
	void *err;

	if (pthread_create(&t, NULL, retry_thread, NULL) || pthread_join(t, &err))
		return 1;
	if (err) {
		fprintf(stderr, "allocator-knobs: %s\n", (char *)err);
		return 1;
	}
	return 0;
}

static int do_double_free(void)
{
	char *p = malloc(32), *volatile again = p;	/* volatile: a deliberate bug */
	size_t chunk = (32 + sizeof(size_t) + 15) & ~(size_t)15;	/* request2size */

	printf("double_free entry %p tc_idx %zu\n", (void *)p, (chunk - 17) / 16);
	fflush(stdout);
	free(p);
	free(again);	/* glibc: "free(): double free detected in tcache 2", abort */
	return 1;
}

static void *hog(void *arg)
{
	size_t n = 1600;	/* x 64 KiB = 100 MiB, more than one 64 MiB heap */
	char **p = malloc(n * sizeof(*p));

	(void)arg;
	for (size_t i = 0; i < n; i++) {
		p[i] = malloc(64 * 1024 - 64);
		memset(p[i], 1, 64);
	}
	for (size_t i = n; i-- > 0;)	/* from the top: heaps go back */
		free(p[i]);
	free(p);
	return NULL;
}

/* A volatile pointer: gcc drops a plain free(malloc(n)) altogether. */
static void *volatile sink;

static void *one_malloc(void *arg)
{
	sink = malloc(100);
	free(sink);
	return arg;
}

static int do_lifecycle(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, hog, NULL) || pthread_join(t, NULL))
		return 1;
	if (pthread_create(&t, NULL, one_malloc, NULL) || pthread_join(t, NULL))
		return 1;
	printf("lifecycle arena_reuse_free_list 1\n");
	return 0;
}

/* contend: exactly `waiters` lock waits, whatever the scheduler does.
 *
 * glibc's malloc_stats() holds main_arena's lock while it writes to
 * stderr (malloc.c, __malloc_stats).  With stderr a pipe that is full, a
 * "holder" thread calling it blocks in write(2) with the lock held, for
 * as long as we keep the pipe full.  With M_ARENA_MAX=1 every new thread
 * must reuse main_arena (arena.c, reused_arena): its trylock fails, it
 * fires memory_arena_reuse_wait and blocks on the lock.  Each step is
 * checked in /proc/self/task/TID/syscall (write on fd 2; futex) before
 * the next, and only then is the pipe drained.  Nothing here may call
 * malloc while the lock is held: no stdio, no pthread_create. */
#define MAX_WAITERS 256

static int waiters = 8;

static pthread_barrier_t go;
static int waiter_tid[MAX_WAITERS], holder_tid, passed[MAX_WAITERS], holder_done;

static void *waiter(void *arg)
{
	int i = (int)(uintptr_t)arg;
	void *volatile p;

	__atomic_store_n(&waiter_tid[i], (int)gettid(), __ATOMIC_SEQ_CST);
	pthread_barrier_wait(&go);
	__atomic_store_n(&passed[i], 1, __ATOMIC_SEQ_CST);
	p = malloc(100);	/* this thread's first: it must reuse main_arena */
	free(p);
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	__atomic_store_n(&holder_tid, (int)gettid(), __ATOMIC_SEQ_CST);
	malloc_stats();		/* blocks writing "Arena 0:" with the lock held */
	__atomic_store_n(&holder_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Wait until thread tid is blocked in system call nr (first argument
 * arg0, or any when arg0 < 0), reading /proc with plain syscalls. */
static int wait_in_syscall(int tid, long nr, long arg0)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	for (int tries = 0; tries < 60000; tries++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		long got, a0;

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (sscanf(buf, "%ld %lx", &got, &a0) == 2 && got == nr &&
			    (arg0 < 0 || a0 == arg0))
				return 0;
		}
		usleep(1000);
	}
	return -1;
}

static int do_contend(void)
{
	pthread_t t[MAX_WAITERS + 1];
	int pfd[2], saved = dup(2), fl;
	char buf[4096] = { 0 };

	mallopt(M_ARENA_MAX, 1);
	pthread_barrier_init(&go, NULL, waiters + 1);
	for (int i = 0; i < waiters; i++)
		if (pthread_create(&t[i], NULL, waiter, (void *)(uintptr_t)i))
			return 1;
	/* stderr: a pipe, filled to the last byte */
	if (saved < 0 || pipe(pfd) < 0 || dup2(pfd[1], 2) < 0)
		return 1;
	fl = fcntl(2, F_GETFL);
	fcntl(2, F_SETFL, fl | O_NONBLOCK);
	while (write(2, buf, sizeof(buf)) > 0)
		;
	while (write(2, buf, 1) > 0)
		;
	fcntl(2, F_SETFL, fl);
	/* the holder takes the lock first; the last allocation by this
	 * thread is pthread_create's, before that */
	if (pthread_create(&t[waiters], NULL, holder, NULL))
		return 1;
	while (!__atomic_load_n(&holder_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (wait_in_syscall(holder_tid, SYS_write, 2) < 0)
		goto stuck;
	pthread_barrier_wait(&go);	/* now the waiters run */
	for (int i = 0; i < waiters; i++) {
		while (!__atomic_load_n(&passed[i], __ATOMIC_SEQ_CST))
			usleep(1000);
		if (wait_in_syscall(waiter_tid[i], SYS_futex, -1) < 0)
			goto stuck;
	}
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);	/* drain until the holder is done */
	while (!__atomic_load_n(&holder_done, __ATOMIC_SEQ_CST))
		if (read(pfd[0], buf, sizeof(buf)) <= 0)
			usleep(1000);
	dup2(saved, 2);
	for (int i = 0; i <= waiters; i++)
		pthread_join(t[i], NULL);
	printf("contend memory_arena_reuse_wait %d\n", waiters);
	return 0;
stuck:
	dup2(saved, 2);
	fprintf(stderr, "allocator-knobs: a thread never blocked where glibc must block it\n");
	return 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "mallopt") == 0)
		return do_mallopt();
	if (strcmp(mode, "retry") == 0)
		return do_retry();
	if (strcmp(mode, "double-free") == 0)
		return do_double_free();
	if (strcmp(mode, "lifecycle") == 0)
		return do_lifecycle();
	if (strcmp(mode, "contend") == 0) {
		if (argc > 2)
			waiters = atoi(argv[2]);
		if (waiters < 1 || waiters > MAX_WAITERS) {
			fprintf(stderr, "allocator-knobs: contend takes 1 to %d waiters\n", MAX_WAITERS);
			return 2;
		}
		return do_contend();
	}
	fprintf(stderr, "usage: allocator-knobs mallopt | retry | double-free | lifecycle | contend [N]\n");
	return 2;
}
