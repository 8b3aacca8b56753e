/* procmarks.c - the marks of the words a walk read from the copies of a
 * process's memory, and the later check that the process still holds
 * them (procmem.h: mw_proc_mark, mw_proc_marks_take, mw_proc_marks_same);
 * the copies themselves, and the words marked as they are read, are
 * procmem.c's (procmem_int.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>

#include "procmem.h"
#include "procmem_int.h"
#include "xalloc.h"

/* The marks taken (procmem.h): each marked block's base and bits. */
struct mw_proc_marks {
	uint64_t key;
	size_t n;
	struct marked {	/* in the order they were copied: the walk's */
		uint64_t base, hash;
		uint64_t bits[MARK_WORDS];
	} *v;
};

void mw_proc_mark(struct mw_proc *p, int on)
{
	struct mw_proc_copy *c = p->copy;

	if (!c)
		return;
	if (on && !c->key)
		while (getrandom(&c->key, sizeof(c->key), 0) != sizeof(c->key) || !c->key)
			;
	c->marking = on;
}

struct mw_proc_marks *mw_proc_marks_take(struct mw_proc *p)
{
	struct mw_proc_copy *c = p->copy;
	struct mw_proc_marks *m = NULL;
	size_t n = 0;

	if (!c)
		return NULL;
	for (size_t i = 0; i < c->used; i++)
		n += (size_t)c->blocks[i].marked;
	if (!c->lost) {
		m = xcalloc(1, sizeof(*m));
		m->v = xcalloc(n ? n : 1, sizeof(*m->v));
		m->key = c->key;
	}
	for (size_t i = 0; i < c->used; i++) {
		struct block *b = &c->blocks[i];

		if (!b->marked)
			continue;
		if (m) {
			m->v[m->n].base = b->base;
			m->v[m->n].hash = b->hash;
			memcpy(m->v[m->n++].bits, b->bits, MARK_WORDS * 8);
		}
		memset(b->bits, 0, MARK_WORDS * 8);
		b->marked = 0;
		b->hash = 0;
	}
	c->lost = 0;
	c->marking = 0;
	return m;
}

/* Block e's marked words span [*lo, *hi) of it (bytes from its base): 0,
 * or -1 when none is marked. */
static int marks_span(const struct marked *e, uint64_t *lo, uint64_t *hi)
{
	size_t first = MARK_WORDS, last = 0;

	for (size_t k = 0; k < MARK_WORDS; k++)
		if (e->bits[k]) {
			first = first < k ? first : k;
			last = k;
		}
	*lo = *hi = 0;
	if (first == MARK_WORDS)
		return -1;
	*lo = (first * 64 + (uint64_t)__builtin_ctzll(e->bits[first])) * 8;
	*hi = (last * 64 + 64 - (uint64_t)__builtin_clzll(e->bits[last])) * 8;
	return 0;
}

/* Do the marked words of block e, read again into buf (MW_PROC_BLOCK
 * bytes, at their offsets), hold what they held?  1 or 0. */
static int marks_match(uint64_t key, const struct marked *e, const unsigned char *buf)
{
	uint64_t h = 0;

	for (size_t k = 0; k < MARK_WORDS; k++)
		for (uint64_t bits = e->bits[k]; bits; bits &= bits - 1) {
			uint64_t i = k * 64 + (uint64_t)__builtin_ctzll(bits), v;

			memcpy(&v, buf + i * 8, 8);
			h ^= mark_hash(key, e->base + i * 8, v);
		}
	return h == e->hash;
}

/* The marked words of block e read again from the process into buf
 * (MW_PROC_BLOCK bytes): 1 the same, 0 not (or they cannot be read:
 * unmapped), -1 when the process is gone or refuses (errno). */
static int marks_read(struct mw_proc *p, uint64_t key, const struct marked *e,
		      unsigned char *buf)
{
	uint64_t lo, hi;
	ssize_t n;

	if (marks_span(e, &lo, &hi) < 0)
		return 1;
	if (!mw_proc_mapped(p, e->base + lo, hi - lo))
		return 0;
	if ((n = mw_proc_raw(p, e->base + lo, buf + lo, (size_t)(hi - lo))) != (ssize_t)(hi - lo))
		return n < 0 && (errno == ESRCH || errno == EPERM || errno == EACCES) ? -1 : 0;
	return marks_match(key, e, buf);
}

/* Blocks verified in one process_vm_readv (one iovec each): a snapshot of
 * 443 MiB of heaps makes 440 calls instead of 7,000. */
#define MARKS_BATCH 16

/* Blocks [i, i + n) of m, n <= MARKS_BATCH, marked and mapped, read again
 * in one process_vm_readv into buf (MARKS_BATCH blocks): 1 when every one
 * holds what it held, 0 not, -1 as marks_read; a read short (a block
 * unmapped meanwhile) or refused is done block by block instead. */
static int marks_batch(struct mw_proc *p, const struct mw_proc_marks *m, size_t i, size_t n,
		       unsigned char *buf)
{
	struct iovec local[MARKS_BATCH] = { 0 }, remote[MARKS_BATCH] = { 0 };
	ssize_t want = 0;
	int r = 1;

	for (size_t k = 0; k < n; k++) {
		uint64_t lo, hi;

		marks_span(&m->v[i + k], &lo, &hi);
		local[k] = (struct iovec){ buf + k * MW_PROC_BLOCK + lo, (size_t)(hi - lo) };
		remote[k] = (struct iovec){ (void *)(uintptr_t)(m->v[i + k].base + lo),
					    (size_t)(hi - lo) };
		want += (ssize_t)(hi - lo);
	}
	if (p->use_mem || process_vm_readv(p->pid, local, n, remote, n, 0) != want) {
		for (size_t k = 0; k < n && r == 1; k++)
			r = marks_read(p, m->key, &m->v[i + k], buf);
		return r;
	}
	for (size_t k = 0; k < n && r == 1; k++)
		r = marks_match(m->key, &m->v[i + k], buf + k * MW_PROC_BLOCK);
	return r;
}

int mw_proc_marks_same(struct mw_proc *p, const struct mw_proc_marks *m)
{
	struct mw_proc_copy *c = p->copy;
	unsigned char *buf;
	int r = 1, unmapped = 0;

	/* the copy's, kept with it: 1 MiB fresh each time costs its pages */
	if (c && !c->vbuf)
		c->vbuf = xmalloc(MARKS_BATCH * MW_PROC_BLOCK);
	buf = c ? c->vbuf : xmalloc(MARKS_BATCH * MW_PROC_BLOCK);

	/* in the walk's order, MARKS_BATCH blocks at a time: a running
	 * process changes its lists' heads first, and the first batch that
	 * differs ends it; a block not mapped now differs (the blocks
	 * before it are read first: one of them may say the process is gone) */
	for (size_t i = 0; i < m->n && r == 1 && !unmapped;) {
		size_t n = 0;
		uint64_t lo, hi;

		for (; i + n < m->n && n < MARKS_BATCH; n++) {
			marks_span(&m->v[i + n], &lo, &hi);
			if (hi > lo && !mw_proc_mapped(p, m->v[i + n].base + lo, hi - lo)) {
				unmapped = 1;
				break;
			}
		}
		if (n)
			r = marks_batch(p, m, i, n, buf);
		i += n;
	}
	if (!c)
		free(buf);
	return r == 1 && unmapped ? 0 : r;
}

void mw_proc_marks_free(struct mw_proc_marks *m)
{
	if (m)
		free(m->v);
	free(m);
}
