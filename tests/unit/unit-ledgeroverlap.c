/* unit-ledgeroverlap.c - the RSS ledger of a heap whose free lists
 * overlap: a fastbin led (its fd rewritten, safe-linking's mangling
 * and all, as a hostile process may) into three fake 0x50 chunks inside a
 * free 20 KiB chunk, on its first page, shared with chunks in use.  The walk
 * takes them (glibc's own malloc would hand them out); the ledger counted
 * each, so their 240 bytes twice on that page: "free, resident" up and
 * "in use, resident" down by 240 bytes against the same heap read before
 * the fd was rewritten.  Each byte must be counted once, and the ledger
 * say it is incomplete, and why.
 *
 * The heap is a child's, exec'd afresh (this program, "child"): its
 * mallocs from the top, in order.  It waits on stdin: the first byte
 * plants the fakes, the second ends it. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glibcinfo.h"
#include "ledger.h"
#include "procmem.h"
#include "snapshot.h"
#include "unit.h"

/* the child writes into its free chunks, as a hostile program does */
#pragma GCC diagnostic ignored "-Wuse-after-free"

#define FAKES 3

static int child(void)
{
	void *t[7];
	char *big, *a, c;
	uintptr_t *fd, pos, bigp, ap;	/* (their chunks are free: written as a hostile program does) */

	for (int i = 0; i < 7; i++)	/* the tcache's 7 for 0x50 chunks */
		t[i] = malloc(0x48);
	big = malloc(0x5000 - 16);
	bigp = (uintptr_t)big;
	if (!malloc(0x18) || !(a = malloc(0x48)) || !malloc(0x18))	/* in use */
		return 1;
	ap = (uintptr_t)a;
	for (int i = 0; i < 7; i++)
		free(t[i]);
	free(big);	/* unsorted bin */
	free(a);	/* fastbin: a, fd NULL */
	/* the fakes' place, 0x100 into big (its first page, shared with
	 * the chunks in use before it), written now: as resident before as
	 * after */
	memset((char *)bigp + 0x100, 0, 0x100);
	if (write(1, "r", 1) != 1 || read(0, &c, 1) != 1)
		return 1;
	fd = (uintptr_t *)ap;
	pos = (uintptr_t)fd;
	for (int k = 0; k < FAKES; k++) {
		uintptr_t *f = (uintptr_t *)(bigp + 0x100 + k * 0x50);

		f[0] = 0;
		f[1] = 0x51;
		*fd = (pos >> 12) ^ (uintptr_t)f;	/* PROTECT_PTR */
		fd = &f[2];
		pos = (uintptr_t)fd;
		*fd = pos >> 12;	/* (NULL) */
	}
	if (write(1, "r", 1) != 1 || read(0, &c, 1) != 1)
		return 1;
	return 0;
}

/* The ledger of pid's main arena: its in-use and free resident bytes;
 * incomplete's reason into why ("" when complete).  0 or -1. */
static int ledger(pid_t pid, const struct mw_glibc *g, uint64_t *in_use, uint64_t *free_res,
		  char *why, size_t len)
{
	struct mw_snapshot *s = NULL;
	struct mw_ledger *l = NULL;
	struct mw_proc p;
	char err[1024];
	int r = -1;

	if (mw_proc_open(&p, pid, err, sizeof(err)) < 0) {
		printf("open: %s\n", err);
		return -1;
	}
	if (mw_snapshot_take_chunks(&p, g, 2000, &s, err, sizeof(err)) != MW_SNAP_OK)
		printf("snapshot: %s\n", err);
	else if (mw_ledger_read(&p, s, &l, err, sizeof(err)) < 0)
		printf("ledger: %s\n", err);
	else {
		*in_use = l->arenas[0].l.in_use;
		*free_res = l->arenas[0].l.free_resident;
		snprintf(why, len, "%s", l->incomplete ? l->why : "");
		r = 0;
	}
	mw_ledger_free(l);
	mw_snapshot_free(s);
	mw_proc_close(&p);
	return r;
}

int main(int argc, char **argv)
{
	int in[2], out[2];
	uint64_t use0 = 0, free0 = 0, use1 = 0, free1 = 0;
	char err[8192], why0[512] = "", why1[512] = "", c;
	struct mw_glibc *g = calloc(1, sizeof(*g));
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	if (geteuid() != 0) {
		printf("needs root (pagemap's frames, ptrace)\n");
		return 77;
	}
	if (!g || pipe(in) < 0 || pipe(out) < 0)
		return 99;
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0 || read(out[0], &c, 1) != 1)
		return 99;
	if (mw_glibc_load(pid, g, err, sizeof(err)) < 0) {
		printf("its libc cannot be read: %s\n", err);
		kill(pid, SIGKILL);
		return 77;
	}
	CHECK(ledger(pid, g, &use0, &free0, why0, sizeof(why0)) == 0, "clean heap: no ledger");
	CHECK(!why0[0], "clean heap: incomplete: %s", why0);
	if (write(in[1], "x", 1) != 1 || read(out[0], &c, 1) != 1)
		return 99;
	CHECK(ledger(pid, g, &use1, &free1, why1, sizeof(why1)) == 0, "overlapping: no ledger");
	CHECK(use1 == use0, "in use, resident: %llu bytes, %llu before the fakes",
	      (unsigned long long)use1, (unsigned long long)use0);
	CHECK(free1 == free0, "free, resident: %llu bytes, %llu before the fakes",
	      (unsigned long long)free1, (unsigned long long)free0);
	CHECK(strstr(why1, "overlap") != NULL, "not said incomplete: '%s'", why1);
	printf("in use %llu -> %llu, free %llu -> %llu; %s\n", (unsigned long long)use0,
	       (unsigned long long)use1, (unsigned long long)free0, (unsigned long long)free1,
	       why1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(g);
	return failed ? 1 : 0;
}
