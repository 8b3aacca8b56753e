/* explain.c - one process read for `explain`, `snapshot -p` and the
 * reports of traced runs: its snapshot with the free chunks kept, its RSS
 * ledger and the findings; see explain.h. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explain.h"
#include "procmem.h"

/* The CPUs pid may run on; 1 when unknown. */
static uint64_t process_cpus(pid_t pid)
{
	cpu_set_t set;
	long n = -1;

	if (sched_getaffinity(pid, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint64_t)n : 1;
}

int mw_explain_read(pid_t pid, const struct mw_glibc *g, long timeout_ms,
		    struct mw_explained *e, char *err, size_t errlen)
{
	struct mw_proc p;
	int r;

	memset(e, 0, sizeof(*e));
	if (mw_proc_open(&p, pid, err, errlen) < 0)
		return MW_SNAP_ERROR;
	r = mw_snapshot_take_chunks(&p, g, timeout_ms, &e->s, err, errlen);
	if (r == MW_SNAP_OK && mw_ledger_read(&p, e->s, &e->l, e->lerr, sizeof(e->lerr)) == 0)
		mw_findings_make(e->s, e->l, process_cpus(pid), NULL, 0, &e->f, &e->nf);
	mw_proc_close(&p);
	return r;
}

void mw_explained_free(struct mw_explained *e)
{
	mw_snapshot_free(e->s);
	mw_ledger_free(e->l);
	free(e->f);
	memset(e, 0, sizeof(*e));
}

