/* snapshot_stop.c - the snapshot's verdicts (locks held, figures no
 * allocator can have, two reads that agree) and its last resort: a
 * process whose reads while it ran were not consistent is stopped
 * (ptstop.h) and read still; see snapshot.h.
 *
 * A held thread is busy when its stack, unwound from its registers
 * through the libc's .eh_frame with libdwfl (dwfl_linux_proc_attach on
 * the threads we hold, dwfl_getthread_frames), has a frame in malloc.c's
 * code before it leaves libc: malloc, free, realloc, their _int_*
 * helpers, arena_get2, sysmalloc, and what they call (memcpy in realloc,
 * mmap and brk in sysmalloc, a lock's futex wait).  A thread in
 * rand_r() or read() is not.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "mapped.h"
#include "ptstop.h"
#include "snapshot_int.h"
#include "xalloc.h"

/* Unwinding held threads (libdwfl, on the libc module alone): is a
 * frame of a thread in malloc's code (glibcinfo.h, code)?  The unwind
 * goes up from the thread's registers while the frames are in libc and
 * stops at the first frame outside it: a thread in the program's own
 * code, or in another library, is in none of malloc's calls. */
struct mw_snap_unwinder {
	Dwfl *dwfl;
	const struct mw_glibc *g;
	uint64_t lo, hi;	/* the libc module */
	char why[200];		/* why it could not be made; "" */
	pid_t last_tid;		/* the last thread thread_busy judged busy or
				 * could not tell (-1), for the reason */
	int last;
};

struct walk_up {
	const struct mw_snap_unwinder *u;
	int busy, frames;
};

static int in_malloc_code(const struct mw_glibc *g, uint64_t pc)
{
	for (int i = 0; i < g->ncode; i++)
		if (pc >= g->code[i].lo && pc < g->code[i].hi)
			return 1;
	return 0;
}

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	struct walk_up *wu = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(f, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!activation)
		pc--;	/* a return address: the call is the byte before */
	if (pc < wu->u->lo || pc >= wu->u->hi)
		return DWARF_CB_ABORT;	/* out of libc: no malloc call below */
	wu->frames++;
	if (in_malloc_code(wu->u->g, pc)) {
		wu->busy = 1;
		return DWARF_CB_ABORT;
	}
	return wu->frames < 64 ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* mw_ptstop_busy_fn: 1 when a frame is in malloc's code, or when the
 * unwind failed inside libc (let it go on, to be sure), else 0. */
static int thread_busy(void *ctx, pid_t tid)
{
	struct walk_up wu = { .u = ctx };
	struct mw_snap_unwinder *u = ctx;
	int r = dwfl_getthread_frames(u->dwfl, tid, frame_cb, &wu);

	/* frame 0 not read at all: cannot be told; an unwind that broke
	 * off inside libc: taken as busy */
	r = wu.busy ? 1 : r >= 0 ? 0 : wu.frames ? 1 : -1;
	if (r) {	/* the reason, if it is the last */
		u->last_tid = tid;
		u->last = r;
	}
	return r;
}

static int no_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, GElf_Addr base,
			const char *file_name, const char *debuglink, GElf_Word crc,
			char **debuginfo_file_name)
{
	(void)mod; (void)ud; (void)modname; (void)base; (void)file_name; (void)debuglink;
	(void)crc; (void)debuginfo_file_name;
	return -1;	/* .eh_frame of the libc itself is enough to unwind */
}

/* An unwinder for the held process w->p: 0, or -1 (no settling then). */
static int unwinder_open(struct walk *w, struct mw_snap_unwinder *u)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,	/* not used: the fd is given */
		.find_debuginfo = no_debuginfo,
	};
	char path[PATH_MAX], err[PATH_MAX + 256];
	struct mw_mapped m;
	Dwfl_Module *mod;
	Dwarf_Addr start, end;
	int fd;

	memset(u, 0, sizeof(*u));
	u->g = w->g;
	err[0] = '\0';
	if (!w->g->ncode) {
		snprintf(u->why, sizeof(u->why), "the DWARF of '%.140s' gives no code ranges of "
			 "malloc.c", w->g->dwarf_file);
		return -1;
	}
	if (mw_mapped_find(w->p->pid, MW_LIB_LIBC, &m, err, sizeof(err)) != 1 ||
	    (fd = mw_mapped_open(&m, err, sizeof(err))) < 0 ||
	    (fd = mw_elf_vet(fd, m.name, err, sizeof(err))) < 0) {	/* (mapped.h) */
		snprintf(u->why, sizeof(u->why), "%.160s", err[0] ? err : "its libc is not mapped");
		return -1;
	}
	if (!(u->dwfl = dwfl_begin(&cb))) {
		snprintf(u->why, sizeof(u->why), "libdwfl: %s", dwfl_errmsg(-1));
		close(fd);
		return -1;
	}
	mw_mapped_proc_path(&m, path, sizeof(path));
	dwfl_report_begin(u->dwfl);
	mod = dwfl_report_elf(u->dwfl, m.name, path, fd, m.start, false);	/* fd: dwfl's */
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!mod || !dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL) ||
	    dwfl_linux_proc_attach(u->dwfl, w->p->pid, true) != 0) {
		snprintf(u->why, sizeof(u->why), "libdwfl: %s", dwfl_errmsg(-1));
		dwfl_end(u->dwfl);
		u->dwfl = NULL;
		return -1;
	}
	u->lo = start;
	u->hi = end;
	return 0;
}

struct mw_snap_unwinder *mw_snap_unwinder_new(struct walk *w)
{
	struct mw_snap_unwinder *u = xcalloc(1, sizeof(*u));

	unwinder_open(w, u);	/* u->dwfl NULL when it cannot be made */
	return u;
}

int mw_snap_settle(struct walk *w, struct mw_ptstop *st, struct mw_snap_unwinder **up,
		   uint64_t budget_end, uint64_t stop_by, char *why, size_t len)
{
	uint64_t until = budget_end < w->deadline ? budget_end : w->deadline;
	struct mw_snap_unwinder *u;
	int r, rounds_run;

	if (mw_ptstop_job_stopped(st)) {
		snprintf(why, len, "the process is in a job-control stop (SIGSTOP), where no "
			 "thread can be let finish a call into malloc");
		return 0;
	}
	/* past until, the threads are still looked at once: none inside
	 * malloc's code is settled as it is (an idle process on a loaded
	 * machine); only one inside needs the time that is gone */
	if (!*up)
		*up = mw_snap_unwinder_new(w);
	if (!(u = *up)->dwfl) {
		snprintf(why, len, "the threads' stacks cannot be unwound (%s), so a thread "
			 "inside malloc's code cannot be told", u->why);
		return 0;
	}
	u->last = 0;
	rounds_run = mw_now_ns() < until;	/* else: looked at, none let go */
	r = mw_ptstop_settle(st, thread_busy, u, until, stop_by > until ? stop_by : until);
	if (r > 0)
		w->s->settle_rounds += r;
	if (r < 0 && u->last < 0)
		snprintf(why, len, "thread %d's stack could not be unwound, so whether it is "
			 "inside malloc's code is not known", (int)u->last_tid);
	else if (r < 0 && mw_ptstop_job_stopped(st))
		snprintf(why, len, "thread %d is inside malloc's code and the process went into "
			 "a job-control stop (SIGSTOP)", (int)u->last_tid);
	else if (r < 0 && !rounds_run)
		snprintf(why, len, "thread %d is inside malloc's code and the %s spent by the "
			 "stops before", (int)u->last_tid, until == w->deadline ?
			 "read timeout was" : "time the stop may last was (--max-stop, --max-stopped)");
	else if (r < 0)
		snprintf(why, len, "thread %d was still inside malloc's code when the %s ran out",
			 (int)u->last_tid, until == w->deadline ? "read timeout" :
			 "time the stop may last (--max-stop, --max-stopped)");
	return r >= 0;
}

void mw_snap_unwinder_free(struct mw_snap_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

/* Is the 4-byte lock at addr (an arena's mutex, list_lock,
 * free_list_lock) held?  1 yes, 0 no (or unknown in this glibc), -1
 * unreadable (marked). */
int mw_snap_held(struct walk *w, uint64_t addr)
{
	uint32_t v = 0;

	if (!addr)
		return 0;
	if (mw_proc_read(w->p, addr, &v, sizeof(v)) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			w->fatal = errno;
		return mw_snap_badf(w, "cannot read the lock at 0x%llx: %s",
				    (unsigned long long)addr, strerror(errno));
	}
	return v != 0;
}

/* Arena a's lock, before (after 0) or after its walk: a lock held is
 * counted, once per arena, and judged at the walk's end (judge_locks). */
void mw_snap_arena_lock(struct walk *w, const struct mw_snap_arena *a, int after)
{
	const struct mw_glibc *g = w->g;

	if (g->ms_mutex.off < 0 || g->ms_mutex.size != 4 ||
	    (after && w->arena_locked == a->addr) ||
	    mw_snap_held(w, a->addr + (uint64_t)g->ms_mutex.off) != 1)
		return;
	if (!w->arenas_locked++)
		w->first_locked = a->addr;
	w->arena_locked = a->addr;
}

/* A thread may be half-way through what a held lock guards: the walk is
 * inconsistent.  But glibc's fork() holds list_lock and every arena's
 * lock across the fork (arena.c, __malloc_fork_lock_parent) so that the
 * child gets the allocator whole: all of them held is that, and the walk
 * stands (a running process's is checked by a second walk as always). */
void mw_snap_judge_locks(struct walk *w)
{
	if (w->list_locked && w->arenas_locked == w->s->narenas)
		return;
	/* held, with every thread held outside malloc's code: no thread is
	 * about to let it go (a lock left held: deadlocked or corrupt) */
	if (w->list_locked && w->settled)
		mw_snap_badf(w, "glibc's list_lock is held while no thread is inside malloc's "
			     "code (left held: the process is deadlocked or its memory corrupt)");
	else if (w->list_locked && w->unsettled)	/* stopped: why it may be held */
		mw_snap_badf(w, "glibc's list_lock is held, and %s", w->unsettled);
	else if (w->list_locked)
		mw_snap_badf(w, "glibc's list_lock is held (an arena is being made)");
	else if (w->arenas_locked && w->settled)
		mw_snap_badf(w, "arena 0x%llx is locked while no thread is inside malloc's code "
			     "(left held: the process is deadlocked or its memory corrupt)",
			     (unsigned long long)w->first_locked);
	else if (w->arenas_locked && w->unsettled)
		mw_snap_badf(w, "arena 0x%llx is locked, and %s", (unsigned long long)w->first_locked,
			     w->unsettled);
	else if (w->arenas_locked)	/* read while it ran */
		mw_snap_badf(w, "arena 0x%llx is locked (a thread is inside malloc or free)",
		     (unsigned long long)w->first_locked);
}

/* Figures no allocator can have: marked, -1. */
int mw_snap_implausible(struct walk *w, const struct mw_snap_arena *a)
{
	if (a->top && a->top_size && !mw_proc_mapped(w->p, a->top, a->top_size))
		return mw_snap_badf(w, "arena 0x%llx: its top chunk 0x%llx of %llu bytes reaches beyond the "
			    "mappings", (unsigned long long)a->addr, (unsigned long long)a->top,
			    (unsigned long long)a->top_size);
	if (a->free_bytes > a->system_mem)
		return mw_snap_badf(w, "arena 0x%llx: %llu bytes free of %llu from the system",
			    (unsigned long long)a->addr, (unsigned long long)a->free_bytes,
			    (unsigned long long)a->system_mem);
	return 0;
}

/* FNV-1a over n words. */
static uint64_t fnv(uint64_t h, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 64; b += 8)
			h = (h ^ ((v[i] >> b) & 0xff)) * 0x100000001b3ULL;
	return h;
}

void mw_snap_confirm(struct walk *w)
{
	const struct mw_snapshot *s = w->s;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint64_t top[] = { s->narenas, s->brk, s->main_end, s->n_mmaps, s->mmapped_mem,
			   s->mmap_threshold, s->trim_threshold };

	h = fnv(h, top, sizeof(top) / sizeof(top[0]));
	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];
		uint64_t v[] = { a->addr, a->system_mem, a->top, a->top_size, a->fast_count,
				 a->fast_bytes, a->rest_count, a->rest_bytes, a->attached_threads,
				 (uint64_t)a->on_free_list, a->nheaps, a->heap_bytes };

		h = fnv(h, v, sizeof(v) / sizeof(v[0]));
	}
	if (!w->have_figures || h != w->figures) {
		w->s->consistent = 0;
		snprintf(w->s->why, sizeof(w->s->why), "%s", w->have_figures ?
			 "the figures changed between two reads" : "read once");
	}
	w->figures = h;
	w->have_figures = 1;
}
