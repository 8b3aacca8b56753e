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
	int r, k;

	errno = 0;
	r = mw_maps_glibc(ps->pid);
	if (r == 1)
		return 0;
	if (r == 0 && (k = mw_proc_kind(ps->pid)) == MW_PROC_LEADER_GONE) {
		/* alive, its maps empty: not exited (failed() would say so) */
		mw_proc_no_memory(ps->pid, ps->err, sizeof(ps->err));
		ps->fail = MW_PSNAP_UNREADABLE;
		return -1;
	}
	if (r == 0 && (k == MW_PROC_EXITING || k == MW_PROC_EXITED)) {
		mw_proc_no_memory(ps->pid, ps->err, sizeof(ps->err));	/* maps nothing */
		return failed(ps, MW_PSNAP_EXITED, 0);
	}
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

/* The walk's timeout: timeout_ms, cut to what is left before deadline
 * (now_s(); 0 none).  0 when nothing is left. */
static long walk_ms(long timeout_ms, double deadline)
{
	double left;

	if (!deadline)
		return timeout_ms;
	left = (deadline - now_s()) * 1e3;
	if (left < 1)
		return 0;
	return left < (double)timeout_ms ? (long)left : timeout_ms;
}

static int take(struct mw_psnap *ps, long timeout_ms, double deadline)
{
	struct mw_glibc g;
	long t;
	int r;

	if (check_maps(ps) < 0)
		return -1;
	if ((r = mw_glibc_load_by(ps->pid, &g, deadline, ps->err, sizeof(ps->err))) == -2) {
		ps->fail = MW_PSNAP_TIMEOUT;	/* past the deadline: no more waiting */
		return -1;
	}
	if (r < 0)
		return failed(ps, MW_PSNAP_NO_SYMBOLS, 1);
	/* the deadline counts what came before the walk (its libc's
	 * layouts loaded, maybe after another libc's) */
	if (!(t = walk_ms(timeout_ms, deadline))) {
		snprintf(ps->err, sizeof(ps->err), "process %d not read: the budget was spent "
			 "before its walk began (its libc's layouts loaded)", (int)ps->pid);
		ps->fail = MW_PSNAP_TIMEOUT;
		return -1;
	}
	r = mw_snapshot_read(ps->pid, &g, t, &ps->snap, ps->err, sizeof(ps->err));
	if (r == MW_SNAP_OK)
		return 0;
	ps->snap = NULL;
	return failed(ps, r == MW_SNAP_TIMEOUT ? MW_PSNAP_TIMEOUT :
		      r == MW_SNAP_CORRUPT ? MW_PSNAP_CORRUPT :
		      r == MW_SNAP_INCONSISTENT ? MW_PSNAP_INCONSISTENT : MW_PSNAP_UNREADABLE, 1);
}

/* Read process pid into *ps (which is overwritten): where it lives, its
 * name, its libc (mw_glibc_load) and its allocator (mw_snapshot_read,
 * within timeout_ms milliseconds, and by deadline: now_s(), 0 none).
 * 0 when read, -1 when not (ps->fail and ps->err say why).  Release
 * with mw_psnap_release. */
static int mw_psnap_read(struct mw_psnap *ps, pid_t pid, long timeout_ms, double deadline)
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
		r = take(ps, timeout_ms, deadline);
	}
	if (!ps->comm[0])
		snprintf(ps->comm, sizeof(ps->comm), "?");
	if (r == 0)
		ps->err[0] = '\0';
	ps->seconds = now_s() - start;
	return r;
}

/* What the threads of one mw_psnap_read_all share.  Past the deadline
 * the caller leaves (gone): a thread still reading a process then
 * drops what it read, begins no other, and the last one out (refs)
 * frees the pool; v is the caller's from then on. */
struct pool {
	pid_t *pids;		/* a copy */
	struct mw_psnap *v;
	unsigned char *state;	/* each: NOT_BEGUN, READING, DONE */
	size_t n, done;
	atomic_size_t next;	/* the next process to take */
	atomic_int cancelled;
	int (*cancel_fn)(void);
	long timeout_ms, budget_ms;
	double deadline;	/* now_s(); 0 none */
	int gone, refs;
	pthread_mutex_t lock;	/* guards v, state, done, gone, refs */
	pthread_cond_t cond;	/* done == n, or a thread left */
};

enum { NOT_BEGUN, READING, DONE };

/* Process i not read within the budget (pl->lock held; its comm left
 * unknown, "?": past the budget, nothing more is read). */
static void not_read(struct pool *pl, size_t i)
{
	struct mw_psnap *ps = &pl->v[i];

	ps->pid = pl->pids[i];
	ps->fail = MW_PSNAP_TIMEOUT;
	snprintf(ps->err, sizeof(ps->err), "process %d not read: the snapshot's budget of "
		 "%.3g s was spent %s", (int)ps->pid, (double)pl->budget_ms / 1e3,
		 pl->state[i] == READING ? "while it was read" : "before it was begun");
	pl->state[i] = DONE;
}

/* Drop one reference to pl (pl->lock held; released): the last frees it. */
static void pool_unref(struct pool *pl)
{
	int last = --pl->refs == 0;

	pthread_cond_broadcast(&pl->cond);
	pthread_mutex_unlock(&pl->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&pl->lock);
	pthread_cond_destroy(&pl->cond);
	free(pl->pids);
	free(pl->state);
	free(pl);
}

/* May process i be begun?  Marks it READING (or DONE: not read). */
static int begin(struct pool *pl, size_t i)
{
	int ok = 0;

	pthread_mutex_lock(&pl->lock);
	if (pl->gone) {
		/* nothing more to take */
	} else if (pl->deadline && now_s() >= pl->deadline) {
		not_read(pl, i);
		if (++pl->done == pl->n)
			pthread_cond_broadcast(&pl->cond);
		ok = -1;
	} else {
		pl->state[i] = READING;
		ok = 1;
	}
	pthread_mutex_unlock(&pl->lock);
	return ok;
}

/* Take processes from pl until none is left (or a stop, or the caller
 * gone). */
static void take_all(struct pool *pl)
{
	struct mw_psnap *ps = xmalloc(sizeof(*ps));

	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		int b;

		if (i >= pl->n)
			break;
		if (atomic_load(&pl->cancelled) || (pl->cancel_fn && pl->cancel_fn())) {
			atomic_store(&pl->cancelled, 1);
			break;
		}
		if ((b = begin(pl, i)) == 0)
			break;
		if (b < 0)
			continue;
		mw_psnap_read(ps, pl->pids[i], pl->timeout_ms, pl->deadline);
		pthread_mutex_lock(&pl->lock);
		if (pl->gone) {		/* too late: not kept */
			pthread_mutex_unlock(&pl->lock);
			mw_psnap_release(ps);
			break;
		}
		pl->v[i] = *ps;
		pl->state[i] = DONE;
		if (++pl->done == pl->n)
			pthread_cond_broadcast(&pl->cond);
		pthread_mutex_unlock(&pl->lock);
	}
	free(ps);
}

static void *worker(void *arg)
{
	struct pool *pl = arg;
	sigset_t all;

	/* a stop signal is the main thread's to take (it waits on the
	 * pool; the flag it sets is polled here) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	take_all(pl);
	mw_proc_copy_spare_free();	/* the buffers this thread kept */
	pthread_mutex_lock(&pl->lock);
	pool_unref(pl);
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

static struct pool *pool_new(const pid_t *pids, size_t n, const struct mw_psnap_opts *o)
{
	struct pool *pl = xcalloc(1, sizeof(*pl));

	pl->n = n;
	pl->pids = xcalloc(n ? n : 1, sizeof(*pids));
	if (n)
		memcpy(pl->pids, pids, n * sizeof(*pids));
	pl->v = xcalloc(n ? n : 1, sizeof(*pl->v));
	pl->state = xcalloc(n ? n : 1, 1);
	pl->cancel_fn = o->cancelled;
	pl->timeout_ms = o->timeout_ms;
	pl->budget_ms = o->budget_ms;
	pl->deadline = o->deadline;
	if (!pl->deadline && o->budget_ms > 0)
		pl->deadline = now_s() + (double)o->budget_ms / 1e3;
	pl->refs = 1;
	atomic_init(&pl->next, 0);
	atomic_init(&pl->cancelled, 0);
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->cond, NULL);
	return pl;
}

/* Wait (pl->lock held) until every process is done, a stop, or the
 * deadline: 1 when all are done or the deadline passed, 0 on a stop. */
static int wait_pool(struct pool *pl)
{
	while (pl->done < pl->n) {
		double now = now_s(), until = now + 0.05;	/* the stop flag's poll */
		struct timespec ts;

		if (atomic_load(&pl->cancelled) || (pl->cancel_fn && pl->cancel_fn())) {
			atomic_store(&pl->cancelled, 1);
			if (pl->refs == 1)	/* every thread out: a stop, not a hang */
				return 0;
		} else if (pl->deadline && now >= pl->deadline) {
			return 1;
		}
		if (pl->deadline && pl->deadline < until)
			until = pl->deadline;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		until -= now;
		ts.tv_sec += (time_t)until;
		ts.tv_nsec += (long)((until - (double)(time_t)until) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pl->cond, &pl->lock, &ts);
	}
	return !atomic_load(&pl->cancelled);
}

struct mw_psnap *mw_psnap_read_all(const pid_t *pids, size_t n, const struct mw_psnap_opts *o)
{
	struct pool *pl = pool_new(pids, n, o);
	struct mw_psnap *v = pl->v;
	int nt = pool_threads(o, n), started = 0, ok;
	pthread_condattr_t ca;
	pthread_attr_t a;

	/* the waits below count CLOCK_MONOTONIC, as now_s() */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&pl->cond);
	pthread_cond_init(&pl->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&pl->lock);
	for (int i = 0; i < nt; i++) {
		pthread_t th;

		if (pthread_create(&th, &a, worker, pl) == 0) {
			started++;
			pl->refs++;
		}
	}
	pthread_attr_destroy(&a);
	if (!started) {		/* no thread to be had: this one */
		pthread_mutex_unlock(&pl->lock);
		take_all(pl);
		pthread_mutex_lock(&pl->lock);
	}
	ok = wait_pool(pl);
	pl->gone = 1;
	for (size_t i = 0; ok && i < n; i++)
		if (pl->state[i] != DONE)
			not_read(pl, i);
	pool_unref(pl);
	for (size_t i = 0; i < n; i++)	/* not read: no time left to ask */
		if (!v[i].comm[0])
			snprintf(v[i].comm, sizeof(v[i].comm), "?");
	if (!ok) {
		for (size_t i = 0; i < n; i++)
			mw_psnap_release(&v[i]);
		free(v);
		return NULL;
	}
	return v;
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
