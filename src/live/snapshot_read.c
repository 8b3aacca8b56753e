/* snapshot_read.c - the walk's checked reads, shared by snapshot.c,
 * snapshot_lists.c, snapshot_consolidate.c and snapshot_record.c
 * (snapshot_int.h): a word of the process, a structure's member, the
 * step against the budget and the deadline, the walk marked inconsistent
 * or halted with its reason, and Brent's cycle finder with the copies
 * forgotten before a looping list is walked again (the step's usual
 * part, a chunk's checks, the pages malloc_trim(0) could give back in a
 * free chunk and Brent's test are inline in snapshot_int.h).  They sit
 * below the walk so that the files that use them do not call back into
 * it. */
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

/* The step counted (snapshot_int.h, mw_snap_step): within the step budget
 * and, every 32 steps, the deadline?  0 or -1 (halted). */
int mw_snap_step_due(struct walk *w)
{
	if (w->steps > w->max_steps)
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

void mw_snap_brent_init(struct brent *b, uint64_t first)
{
	*b = (struct brent){ .saved = first, .power = 1, .lam = 1 };
}

/* Before a list that looped is walked again to prove it: forget the
 * copies (procmem.h), so that the second walk reads the process again -
 * a running process may have moved the list between the two, and a walk
 * of the same copy would find the same loop whatever the process did. */
void mw_snap_reread(struct walk *w)
{
	mw_proc_copy_drop(w->p);
	w->rec_lost = 1;	/* the words of two copies: record neither */
}

/* A member of the structure at base, of at most 8 bytes. */
int mw_snap_field(struct walk *w, uint64_t base, struct mw_member m, uint64_t *v)
{
	uint64_t x = 0;

	*v = 0;
	if (m.off < 0 || m.size <= 0 || m.size > 8)
		return 0;	/* absent in this glibc: 0 */
	if (mw_proc_read(w->p, base + (uint64_t)m.off, &x, (size_t)m.size) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			w->fatal = errno;
		return mw_snap_bad(w, "cannot read a field at 0x%llx", base + (uint64_t)m.off);
	}
	*v = m.size == 4 ? (uint64_t)(uint32_t)x : x;	/* little-endian x86_64 */
	return 0;
}

