/* snapmulti.c - many processes' snapshots, each with its reason when it
 * could not be read (snapmulti.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "glibcinfo.h"
#include "procmem.h"
#include "proclist.h"
#include "snapmulti.h"
#include "xalloc.h"

static const char *const fail_names[] = {
	[MW_PSNAP_EXITED] = "exited",
	[MW_PSNAP_UNREADABLE] = "unreadable",
	[MW_PSNAP_NO_GLIBC] = "no_glibc",
	[MW_PSNAP_NO_SYMBOLS] = "no_symbols",
	[MW_PSNAP_TIMEOUT] = "timeout",
	[MW_PSNAP_CORRUPT] = "corrupt",
	[MW_PSNAP_INCONSISTENT] = "inconsistent",
};

const char *mw_psnap_fail_name(enum mw_psnap_fail fail)
{
	return fail > MW_PSNAP_READ && fail <= MW_PSNAP_INCONSISTENT ? fail_names[fail] : NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Has the process exited?  Also while it is exiting: its memory (and so
 * its maps) goes before it becomes a zombie.  had_glibc: its maps were
 * read and named a glibc before. */
static int gone(pid_t pid, int had_glibc)
{
	return !mw_process_alive(pid) || (had_glibc && mw_maps_glibc(pid) != 1);
}

static int failed(struct mw_psnap *ps, enum mw_psnap_fail why, int had_glibc)
{
	/* whatever the step said, a process that is gone now has exited */
	if (why != MW_PSNAP_EXITED && gone(ps->pid, had_glibc)) {
		why = MW_PSNAP_EXITED;
		snprintf(ps->err, sizeof(ps->err), "process %d exited while it was read",
			 (int)ps->pid);
	}
	ps->fail = why;
	return -1;
}

/* Before loading its libc: is there a glibc in it we may read? */
static int check_maps(struct mw_psnap *ps)
{
	int r;

	errno = 0;
	r = mw_maps_glibc(ps->pid);
	if (r == 1)
		return 0;
	if (r == 0) {
		snprintf(ps->err, sizeof(ps->err), "process %d maps no glibc (a static binary, or "
			 "another libc)", (int)ps->pid);
		return failed(ps, MW_PSNAP_NO_GLIBC, 0);
	}
	snprintf(ps->err, sizeof(ps->err), "cannot read process %d's maps: %s", (int)ps->pid,
		 strerror(errno ? errno : EIO));
	return failed(ps, errno == ENOENT || errno == ESRCH ? MW_PSNAP_EXITED :
		      MW_PSNAP_UNREADABLE, 0);
}

static int take(struct mw_psnap *ps, long timeout_ms)
{
	struct mw_glibc g;
	int r;

	if (check_maps(ps) < 0)
		return -1;
	if (mw_glibc_load(ps->pid, &g, ps->err, sizeof(ps->err)) < 0)
		return failed(ps, MW_PSNAP_NO_SYMBOLS, 1);
	r = mw_snapshot_read(ps->pid, &g, timeout_ms, &ps->snap, ps->err, sizeof(ps->err));
	if (r == MW_SNAP_OK)
		return 0;
	ps->snap = NULL;
	return failed(ps, r == MW_SNAP_TIMEOUT ? MW_PSNAP_TIMEOUT :
		      r == MW_SNAP_CORRUPT ? MW_PSNAP_CORRUPT :
		      r == MW_SNAP_INCONSISTENT ? MW_PSNAP_INCONSISTENT : MW_PSNAP_UNREADABLE, 1);
}

/* Read process pid into *ps (which is overwritten): where it lives, its
 * name, its libc (mw_glibc_load) and its allocator (mw_snapshot_read,
 * within timeout_ms milliseconds).  0 when read, -1 when not (ps->fail
 * and ps->err say why).  Release with mw_psnap_release. */
static int mw_psnap_read(struct mw_psnap *ps, pid_t pid, long timeout_ms)
{
	double start = now_s();
	int r;

	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	mw_process_comm(pid, ps->comm, sizeof(ps->comm));
	if (mw_proc_where(pid, &ps->where, ps->err, sizeof(ps->err)) < 0) {
		ps->fail = MW_PSNAP_EXITED;
		r = -1;
	} else {
		ps->have_where = 1;
		r = take(ps, timeout_ms);
	}
	if (!ps->comm[0])
		snprintf(ps->comm, sizeof(ps->comm), "?");
	if (r == 0)
		ps->err[0] = '\0';
	ps->seconds = now_s() - start;
	return r;
}

/* What the threads of one mw_psnap_read_all share. */
struct pool {
	const pid_t *pids;
	struct mw_psnap *v;
	size_t n;
	atomic_size_t next;	/* the next process to take */
	atomic_int cancelled;
	const struct mw_psnap_opts *o;
	double deadline;	/* of the budget, now_s(); 0 none */
};

/* Process i not begun within the budget. */
static void not_begun(struct pool *pl, size_t i)
{
	struct mw_psnap *ps = &pl->v[i];

	ps->pid = pl->pids[i];
	mw_process_comm(ps->pid, ps->comm, sizeof(ps->comm));
	if (!ps->comm[0])
		snprintf(ps->comm, sizeof(ps->comm), "?");
	ps->fail = MW_PSNAP_TIMEOUT;
	snprintf(ps->err, sizeof(ps->err), "process %d not read: the snapshot's budget of "
		 "%.3g s was spent", (int)ps->pid, (double)pl->o->budget_ms / 1e3);
}

/* Take processes from pl until none is left (or a stop). */
static void take_all(struct pool *pl)
{
	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		long t = pl->o->timeout_ms;

		if (i >= pl->n)
			return;
		if (atomic_load(&pl->cancelled) || (pl->o->cancelled && pl->o->cancelled())) {
			atomic_store(&pl->cancelled, 1);
			return;
		}
		if (pl->deadline) {
			double left = (pl->deadline - now_s()) * 1e3;

			if (left < 1) {
				not_begun(pl, i);
				continue;
			}
			if (left < t)
				t = (long)left;
		}
		mw_psnap_read(&pl->v[i], pl->pids[i], t);
	}
}

static void *worker(void *arg)
{
	sigset_t all;

	/* a stop signal is the main thread's to take (it waits in
	 * pthread_join; the flag it sets is polled here) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	take_all(arg);
	mw_proc_copy_spare_free();	/* the buffers this thread kept */
	return NULL;
}

static int pool_threads(const struct mw_psnap_opts *o, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long t = o->threads > 0 ? o->threads : 2 * (cpus > 0 ? cpus : 1);

	if (t > MW_PSNAP_MAX_THREADS)
		t = MW_PSNAP_MAX_THREADS;
	return (int)((size_t)t < n ? (size_t)t : n);
}

struct mw_psnap *mw_psnap_read_all(const pid_t *pids, size_t n, const struct mw_psnap_opts *o)
{
	struct pool pl = { .pids = pids, .n = n, .o = o,
			   .v = xcalloc(n ? n : 1, sizeof(struct mw_psnap)) };
	pthread_t th[MW_PSNAP_MAX_THREADS];
	int nt = pool_threads(o, n), started = 0;

	atomic_init(&pl.next, 0);
	atomic_init(&pl.cancelled, 0);
	if (o->budget_ms > 0)
		pl.deadline = now_s() + (double)o->budget_ms / 1e3;
	for (int i = 0; i < nt; i++)
		if (pthread_create(&th[started], NULL, worker, &pl) == 0)
			started++;
	if (!started)	/* no thread to be had: this one */
		take_all(&pl);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&pl.cancelled)) {
		for (size_t i = 0; i < n; i++)
			mw_psnap_release(&pl.v[i]);
		free(pl.v);
		return NULL;
	}
	return pl.v;
}

void mw_psnap_release(struct mw_psnap *ps)
{
	if (ps->snap)
		mw_snapshot_free(ps->snap);
	ps->snap = NULL;
}

/* 0 read consistently, 1 no consistent read, 2 not read */
static int rank(const struct mw_psnap *p)
{
	return p->snap && p->snap->consistent ? 0 : p->fail == MW_PSNAP_INCONSISTENT ? 1 : 2;
}

static int cmp_free(const void *a, const void *b)
{
	const struct mw_psnap *x = a, *y = b;

	if (rank(x) != rank(y))
		return rank(x) - rank(y);
	if (rank(x) == 0 && x->snap->free_bytes != y->snap->free_bytes)
		return x->snap->free_bytes > y->snap->free_bytes ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

void mw_psnap_sort_by_free(struct mw_psnap *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_free);
}

void mw_psnap_drop_vanished(struct mw_psnap *v, size_t *n)
{
	size_t out = 0;

	for (size_t i = 0; i < *n; i++) {
		if (v[i].fail == MW_PSNAP_EXITED && !v[i].have_where) {
			mw_psnap_release(&v[i]);
			continue;
		}
		if (out != i)
			v[out] = v[i];
		out++;
	}
	*n = out;
}

void mw_psnap_totals(const struct mw_psnap *v, size_t n, struct mw_psnap_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		const struct mw_snapshot *s = v[i].snap;

		if (!s) {
			if (v[i].fail == MW_PSNAP_INCONSISTENT)
				t->inconsistent++;
			else
				t->failed++;
			continue;
		}
		if (!s->consistent) {
			t->inconsistent++;
			continue;
		}
		t->read++;
		t->arenas += s->narenas;
		t->system_bytes += s->system_bytes;
		t->in_use_bytes += s->in_use_bytes;
		t->free_bytes += s->free_bytes;
		t->trimmable += s->trimmable;
		t->mmapped_bytes += s->mmapped_mem;
	}
}
