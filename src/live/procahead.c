/* procahead.c - blocks of a process's memory copied ahead of a walk, by a
 * thread of their own (procmem_int.h: mw_ahead_*).
 *
 * A walk of a big arena's free lists goes through its heap block by
 * block, one way (glibc pushes a freed chunk on its list's head: a list
 * freed in address order runs down through memory), and each block it
 * reaches first is copied then (procmem.c, fill): the kernel's copy and
 * its faults of fresh buffer pages, half the walk's CPU time, waited for
 * in turn.  Once two blocks side by side were copied for reads, the next
 * ones that way, in the same mapping, are queued to the reader thread,
 * MW_AHEAD_WINDOW blocks ahead of the block the walk reads.  A read of a
 * block the reader has not begun (it is behind: fresh buffer pages are
 * slow to fault in here) copies it in the walk's thread, as without it;
 * one of a block the reader is copying copies the blocks queued after it
 * meanwhile (steal), then waits until it is copied: the two threads copy
 * side by side where the walk would have slept and been woken a block at
 * a time (the python3 of bench/walk.sh: 0.26 s to 0.18 s, its walk
 * catching up with the reader 3,500 times in 13,000 blocks; the walk's
 * checks take less time than the kernel's copy).  Nothing else changes: a block
 * read ahead is a copy like another, as old as its read (which the walk's
 * checks allow for: procmem.h), its words marked when the walk reads
 * them; one the walk never reads is never used.
 *
 * The reader only calls process_vm_readv into buffers it is given and
 * claims (pending QUEUED to BUSY, the walk's thread claiming the same
 * way), and gives each back (pending 0, release) with what it copied; the walk's
 * thread owns the table, the buffers and the choice of blocks.  The
 * thread runs with every signal blocked, holds no descriptor, and is
 * joined before its copy is freed or kept for another process
 * (mw_ahead_stop); no buffer is used again while it may still write it
 * (mw_ahead_drain).  Without a thread (it could not be made), nothing is
 * read ahead.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "procmem.h"
#include "procmem_int.h"

/* Blocks copied for reads in this copy before reading ahead is tried: an
 * idle process's few blocks make no thread. */
#define AHEAD_MIN_BLOCKS 16
#define QCAP (2 * MW_AHEAD_WINDOW)
/* A block's pending: 0 copied (or not to be), QUEUED, BUSY being copied. */
#define QUEUED 1
#define BUSY 2

struct mw_proc_ahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pid_t pid;
	uint32_t q[QCAP];	/* block indices queued, [head, tail) */
	uint64_t head, tail;
	int busy, quit;		/* a block being copied; the thread to end */
	struct mw_proc_copy *c;
};

/* Copy block b, claimed (pending BUSY: its buffer is the claimer's until
 * pending is 0). */
static void copy_block(struct mw_proc_ahead *a, struct block *b)
{
	struct iovec local = { b->buf + (b->lo - b->base), (size_t)(b->want - b->lo) };
	struct iovec remote = { (void *)(uintptr_t)b->lo, (size_t)(b->want - b->lo) };
	ssize_t n = process_vm_readv(a->pid, &local, 1, &remote, 1, 0);

	/* any failure (gone, unmapped meanwhile): nothing copied; the walk
	 * then reads the process, which says what is wrong */
	b->hi = b->lo + (uint64_t)(n > 0 ? n : 0);
	a->c->copied += (uint64_t)(n > 0 ? n : 0);
	atomic_store_explicit(&b->pending, 0, memory_order_release);
}

/* Block b, queued, claimed by the caller to copy it (1), or claimed
 * already (0). */
static int claim(struct block *b)
{
	int queued = QUEUED;

	return atomic_compare_exchange_strong(&b->pending, &queued, BUSY);
}

static void *reader(void *arg)
{
	struct mw_proc_ahead *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		uint32_t i;

		while (!a->quit && a->head == a->tail)
			pthread_cond_wait(&a->work, &a->mu);
		if (a->head == a->tail)
			break;	/* quit, nothing queued */
		i = a->q[a->head++ % QCAP];
		if (!claim(&a->c->blocks[i]))
			continue;	/* the walk copied it itself */
		a->busy = 1;
		pthread_mutex_unlock(&a->mu);
		copy_block(a, &a->c->blocks[i]);
		pthread_mutex_lock(&a->mu);
		a->busy = 0;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* c's reader, started for pid when it has none: NULL when it cannot be. */
static struct mw_proc_ahead *ahead_of(struct mw_proc_copy *c, pid_t pid)
{
	struct mw_proc_ahead *a = c->ahead;
	sigset_t all, old;
	int err;

	if (a)
		return a->pid == pid ? a : NULL;
	if (c->no_ahead || !(a = calloc(1, sizeof(*a)))) {
		c->no_ahead = 1;
		return NULL;
	}
	a->pid = pid;
	a->c = c;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals stay the caller's */
	err = pthread_create(&a->thread, NULL, reader, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&a->done);
		pthread_cond_destroy(&a->work);
		pthread_mutex_destroy(&a->mu);
		free(a);
		c->no_ahead = 1;
		return NULL;
	}
	return c->ahead = a;
}

/* Queue the blocks from c->front on, the walk's way, until the window
 * ahead of block base is full, the mapping ends, or no buffer or place
 * in the queue is left (then reading ahead ends). */
static void fill_window(struct mw_proc *p, uint64_t base)
{
	struct mw_proc_copy *c = p->copy;
	struct mw_proc_ahead *a = ahead_of(c, p->pid);
	struct mw_map m = { .readable = 1 };
	int queued = 0;

	if (!a) {
		c->dir = 0;
		return;
	}
	m.start = c->ra_lo;
	m.end = c->ra_hi;
	pthread_mutex_lock(&a->mu);
	while (c->front + MW_PROC_BLOCK > c->ra_lo && c->front < c->ra_hi &&
	       (c->front > base ? c->front - base : base - c->front) <=
	       (uint64_t)MW_AHEAD_WINDOW * MW_PROC_BLOCK) {
		struct block *b = mw_proc_block_find(c, c->front);

		/* a block not copied yet, or whose buffer went to another */
		if (!b || (!b->buf && !atomic_load_explicit(&b->pending, memory_order_relaxed))) {
			if (a->tail - a->head == QCAP ||
			    (b ? mw_proc_block_buffer(c, b) < 0 : !(b = mw_proc_block_add(c, c->front, &m)))) {
				c->dir = 0;
				break;
			}
			b->verify = b->marked;	/* (copied again: checked at its read) */
			atomic_store_explicit(&b->pending, QUEUED, memory_order_relaxed);
			c->nblocks++;	/* (its bytes once copied) */
			a->q[a->tail++ % QCAP] = (uint32_t)(b - c->blocks);
			queued = 1;
		}
		c->front += (uint64_t)(int64_t)c->dir * MW_PROC_BLOCK;
	}
	if (queued)
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->mu);
}

void mw_ahead_missed(struct mw_proc *p, struct block *b)
{
	struct mw_proc_copy *c = p->copy;
	const struct mw_map *m = NULL;
	struct block *o;
	int dir;

	if (c->used < AHEAD_MIN_BLOCKS)
		return;	/* (a block not read ahead: the way starts again here) */
	if (b->base >= MW_PROC_BLOCK && (o = mw_proc_block_find(c, b->base - MW_PROC_BLOCK)) && o->buf)
		dir = 1;	/* up from the block below */
	else if ((o = mw_proc_block_find(c, b->base + MW_PROC_BLOCK)) && o->buf)
		dir = -1;	/* down from the block above */
	else
		return;	/* (a block copied long ago, its buffer gone: not the way) */
	for (size_t i = 0; i < p->nmaps; i++)	/* b's mapping: its part read */
		if (p->maps[i].start <= b->lo && b->lo < p->maps[i].end)
			m = &p->maps[i];
	if (!m || !m->readable)
		return;
	c->dir = dir;
	c->ra_lo = m->start;
	c->ra_hi = m->end;
	c->front = b->base + (uint64_t)(int64_t)dir * MW_PROC_BLOCK;
	fill_window(p, b->base);
}

void mw_ahead_more(struct mw_proc *p, uint64_t base)
{
	struct mw_proc_copy *c = p->copy;
	uint64_t ahead = c->dir > 0 ? c->front - base : base - c->front;

	if (base + MW_PROC_BLOCK <= c->ra_lo || base >= c->ra_hi)
		return;	/* a word elsewhere (a bin's head in its arena) */
	/* the walk left the way (jumped back, or past what was queued) */
	if (ahead > 2ULL * MW_AHEAD_WINDOW * MW_PROC_BLOCK || !ahead) {
		c->dir = 0;
		return;
	}
	if (ahead <= (uint64_t)MW_AHEAD_WINDOW / 2 * MW_PROC_BLOCK)
		fill_window(p, base);
}

/* The first block queued that the reader has not begun, claimed by the
 * caller to copy it; NULL when there is none.  The reader, reaching it,
 * finds it claimed and goes on to the next (reader). */
static struct block *steal(struct mw_proc_ahead *a)
{
	struct block *o = NULL;

	pthread_mutex_lock(&a->mu);
	for (uint64_t t = a->head; t != a->tail && !o; t++)
		if (claim(&a->c->blocks[a->q[t % QCAP]]))
			o = &a->c->blocks[a->q[t % QCAP]];
	pthread_mutex_unlock(&a->mu);
	return o;
}

void mw_ahead_wait(struct mw_proc_copy *c, struct block *b)
{
	struct mw_proc_ahead *a = c->ahead;
	struct block *o;

	if (claim(b)) {	/* not begun (the reader is behind): copied here */
		copy_block(a, b);
		return;
	}
	/* the reader copies b: the walk copies the blocks queued after it
	 * meanwhile, its next ones */
	while (atomic_load_explicit(&b->pending, memory_order_acquire) && (o = steal(a)))
		copy_block(a, o);
	pthread_mutex_lock(&a->mu);
	while (atomic_load_explicit(&b->pending, memory_order_acquire))
		pthread_cond_wait(&a->done, &a->mu);
	pthread_mutex_unlock(&a->mu);
}

void mw_ahead_drain(struct mw_proc_copy *c)
{
	struct mw_proc_ahead *a = c->ahead;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	for (; a->head != a->tail; a->head++) {	/* not begun: left empty */
		int queued = QUEUED;

		atomic_compare_exchange_strong(&c->blocks[a->q[a->head % QCAP]].pending, &queued, 0);
	}
	while (a->busy)
		pthread_cond_wait(&a->done, &a->mu);
	pthread_mutex_unlock(&a->mu);
}

void mw_ahead_stop(struct mw_proc_copy *c)
{
	struct mw_proc_ahead *a = c->ahead;

	if (!a)
		return;
	mw_ahead_drain(c);
	pthread_mutex_lock(&a->mu);
	a->quit = 1;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->mu);
	free(a);
	c->ahead = NULL;
	c->dir = 0;
}
