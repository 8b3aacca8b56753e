/* snapshot_read.c - the walk's checked reads, shared by snapshot.c,
 * snapshot_consolidate.c and snapshot_record.c (snapshot_int.h): a word
 * of the process, one more step against the budget and the deadline, the
 * walk marked inconsistent or halted with its reason, and the pages
 * malloc_trim(0) could give back in a free chunk.  They sit below the
 * walk so that the files that use them do not call back into it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "clock.h"
#include "snapshot.h"
#include "snapshot_int.h"

int mw_snap_badf(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	if (w->s->consistent) {
		w->s->consistent = 0;
		va_start(ap, fmt);
		vsnprintf(w->s->why, sizeof(w->s->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

int mw_snap_halt(struct walk *w, int kind, const char *fmt, ...)
{
	va_list ap;

	if (w->stop)
		return -1;
	w->stop = kind;
	va_start(ap, fmt);
	vsnprintf(w->stop_why, sizeof(w->stop_why), fmt, ap);
	va_end(ap);
	return -1;
}

/* One more arena, heap or chunk visited: within the step budget and the
 * deadline?  0 or -1 (halted). */
int mw_snap_step(struct walk *w)
{
	if (w->stop)
		return -1;
	if (++w->steps > w->max_steps)
		return mw_snap_halt(w, MW_SNAP_CORRUPT, "more than %llu arenas, heaps and free chunks in "
			    "%llu readable bytes", (unsigned long long)w->max_steps,
			    (unsigned long long)w->readable);
	if (!(w->steps % 32) && mw_now_ns() >= w->deadline)
		return mw_snap_halt(w, MW_SNAP_TIMEOUT, "out of time");
	return 0;
}

/* One word at addr; a failed read marks the walk (and, when the process
 * is gone or refuses, the whole snapshot). */
int mw_snap_word(struct walk *w, uint64_t addr, uint64_t *v)
{
	if (mw_proc_word(w->p, addr, v) == 0)
		return 0;
	if (errno == ESRCH || errno == EPERM || errno == EACCES)
		w->fatal = errno;
	return mw_snap_badf(w, "cannot read 0x%llx (not mapped, or unmapped meanwhile)",
			    (unsigned long long)addr);
}

/* Whole pages malloc_trim() could release inside free chunk p of size sz
 * (malloc.c, mtrim): past the chunk's header, page-aligned. */
uint64_t mw_snap_chunk_trimmable(const struct walk *w, uint64_t p, uint64_t sz)
{
	uint64_t psm1 = w->page - 1, hdr = (uint64_t)w->g->chunk_struct_size, aligned;

	if (sz <= psm1 + hdr)
		return 0;
	aligned = (p + hdr + psm1) & ~psm1;
	if (p + sz <= aligned)
		return 0;
	sz -= aligned - p;
	return sz > psm1 ? sz & ~psm1 : 0;
}
