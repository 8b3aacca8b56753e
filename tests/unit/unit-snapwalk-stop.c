/* unit-snapwalk-stop.c - a walk (mw_snap_walk, src/live/snapshot.c)
 * stopped before its first arena - its deadline passed at its first
 * step, as when a serve budget ends just as a process's read begins -
 * ends with no arena, no figures and its reason; it does not read the
 * first arena of an empty table (before: a SIGSEGV at address 0x28, in
 * totals(), seen in bench/servebudget.sh under load).  This process's
 * own allocator, Debian's libc read with libc6-dbg's DWARF, else 77. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glibcinfo.h"
#include "procmem.h"
#include "snapshot_int.h"
#include "unit.h"

int main(void)
{
	struct mw_glibc g;
	struct mw_proc p;
	char err[4096];
	void *keep = malloc(100);	/* an allocator in use */

	if (mw_glibc_load(getpid(), &g, err, sizeof(err)) < 0) {
		printf("SKIP: this process's libc cannot be read: %s\n", err);
		return 77;
	}
	CHECK(mw_proc_open(&p, getpid(), err, sizeof(err)) == 0, "%s", err);
	for (int first = 0; first < 2; first++) {
		struct mw_snapshot *s = calloc(1, sizeof(*s));
		struct walk w = { .p = &p, .g = &g, .s = s, .page = (uint64_t)sysconf(_SC_PAGESIZE),
				  .max_steps = 1u << 20, .readable = 1u << 30 };

		s->consistent = 1;
		/* first: a walk in time reads the main arena; then one whose
		 * first step (the 32nd of the read) finds its deadline passed */
		w.deadline = first ? 1 : UINT64_MAX;
		w.steps = first ? 31 : 0;
		mw_snap_walk(&w);
		if (!first) {
			CHECK(s->narenas >= 1 && s->system_bytes > 0, "in time: %zu arenas, %llu bytes",
			      s->narenas, (unsigned long long)s->system_bytes);
		} else {
			CHECK(w.stop == MW_SNAP_TIMEOUT, "stop %d", w.stop);
			CHECK(s->narenas == 0 && s->system_bytes == 0 && s->free_bytes == 0 &&
			      s->trimmable == 0 && s->in_use_bytes == 0,
			      "out of time: %zu arenas, %llu bytes", s->narenas,
			      (unsigned long long)s->system_bytes);
		}
		mw_snap_recs_free(&w);
		free(w.fast);
		mw_snapshot_free(s);
	}
	mw_proc_copy_free(&p);
	mw_proc_close(&p);
	free(keep);
	return failed ? 1 : 0;
}
