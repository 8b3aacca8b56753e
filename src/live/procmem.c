/* procmem.c - checked reads of another process's memory; see procmem.h.
 * The words a walk reads from the copies are marked here (mw_proc_mark);
 * the marks are taken and checked in procmarks.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmem.h"
#include "procmem_int.h"
#include "xalloc.h"

int mw_proc_refresh(struct mw_proc *p, char *err, size_t errlen)
{
	char path[64], line[4096 + 256];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			snprintf(err, errlen, "no process %d", (int)p->pid);
		else
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	mw_proc_copy_drop(p);	/* copied under the old mappings */
	p->nmaps = 0;
	p->hint = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, inode = 0;
		char perms[8];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %" SCNu64, &start, &end, perms,
			   &inode) < 3 || end <= start)
			continue;
		if (p->nmaps == cap)
			xgrow((void **)&p->maps, p->nmaps, &cap, sizeof(*p->maps));
		p->maps[p->nmaps++] = (struct mw_map){ .start = start, .end = end,
						       .readable = perms[0] == 'r',
						       .exec = perms[2] == 'x', .inode = inode };
	}
	fclose(f);
	if (!p->nmaps) {	/* a zombie or a kernel thread has none */
		mw_proc_no_memory(p->pid, err, errlen);
		return -1;
	}
	return 0;
}

int mw_proc_open(struct mw_proc *p, pid_t pid, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->memfd = -1;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(err, errlen, "no process %d", (int)pid);
		return -1;
	}
	return mw_proc_refresh(p, err, errlen);
}

/* Is [addr, addr+len) inside readable mappings, from mapping i on? */
static int mapped_from(const struct mw_proc *p, size_t i, uint64_t addr, uint64_t len)
{
	for (; i < p->nmaps; i++) {	/* the range may span adjacent mappings */
		const struct mw_map *m = &p->maps[i];

		if (addr < m->start || addr >= m->end || !m->readable)
			return 0;
		if (addr + len <= m->end)
			return 1;
		len -= m->end - addr;
		addr = m->end;
	}
	return 0;
}

/* The mapping holding addr (its index in p->maps) or -1. */
static ssize_t map_index(const struct mw_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps, h = p->hint;

	if (h < p->nmaps && addr >= p->maps[h].start && addr < p->maps[h].end)
		return (ssize_t)h;
	while (lo < hi) {	/* the last mapping starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->maps[lo - 1].end)
		return -1;
	((struct mw_proc *)p)->hint = lo - 1;	/* a cache, not the state */
	return (ssize_t)(lo - 1);
}

int mw_proc_mapped_any(const struct mw_proc *p, uint64_t addr, uint64_t len)
{
	ssize_t i;

	if (!len || addr + len < addr || (i = map_index(p, addr)) < 0)
		return 0;
	return mapped_from(p, (size_t)i, addr, len);
}

/* len bytes at addr straight from the process (no mapping check): the
 * bytes read (fewer: unmapped there) or -1 with errno. */
ssize_t mw_proc_raw(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	if (!p->use_mem) {
		struct iovec local = { .iov_base = buf, .iov_len = len };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
		ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

		if (n >= 0 || (errno != ENOSYS && errno != EPERM))
			return n;
		p->use_mem = 1;	/* e.g. seccomp or an old kernel: try /proc */
	}
	if (p->memfd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
		if ((p->memfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
	}
	return pread(p->memfd, buf, len, (off_t)addr);
}

/* Do block b's marked words, copied again, hold what they held when
 * they were marked (a word not copied now does not)?  1 or 0. */
static int marks_hold(const struct mw_proc_copy *c, const struct block *b)
{
	uint64_t h = 0;

	for (size_t k = 0; k < MARK_WORDS; k++)
		for (uint64_t bits = b->bits[k]; bits; bits &= bits - 1) {
			uint64_t i = k * 64 + (uint64_t)__builtin_ctzll(bits), v;

			if (b->base + i * 8 < b->lo || b->base + i * 8 + 8 > b->hi)
				return 0;
			memcpy(&v, b->buf + i * 8, 8);
			h ^= mark_hash(c->key, b->base + i * 8, v);
		}
	return h == b->hash;
}

/* Copy the block at base, where addr is, clipped to addr's mapping: into
 * *out, a block known whose buffer went to another (copied again: what
 * its marked words held then they must hold now, or the marks are lost:
 * a walk that read a word twice may have seen two values), else a new
 * one.  0; 1 when it cannot be copied (not mapped readable, no place or
 * buffer left: read the process); -1 when the process is gone or refuses
 * (errno). */
static int fill(struct mw_proc *p, uint64_t base, uint64_t addr, struct block **out)
{
	struct mw_proc_copy *c = p->copy;
	struct block *b = *out;
	ssize_t i, n;

	if (b ? mw_proc_block_buffer(c, b) < 0 :
	    (i = map_index(p, addr)) < 0 || !p->maps[i].readable ||
	    !(b = mw_proc_block_add(c, base, &p->maps[i])))
		return 1;
	if ((n = mw_proc_raw(p, b->lo, b->buf + (b->lo - base), (size_t)(b->want - b->lo))) < 0) {
		if (errno == ESRCH || errno == EPERM || errno == EACCES)
			return -1;	/* (its place stays, empty: read the process) */
		n = 0;	/* unmapped meanwhile: nothing copied, read the process */
	}
	b->hi = b->lo + (uint64_t)n;
	c->copied += (uint64_t)n;
	c->nblocks++;
	*out = b;
	c->pin = (uint32_t)(b - c->blocks) + 1;
	if (b->marked && !marks_hold(c, b)) {
		c->lost = 1;
		p->changed++;
	}
	if (!p->use_mem)
		mw_ahead_missed(p, b);
	return 0;
}

/* Mark the words of [addr, addr+len), served from block b (mw_proc_mark):
 * each 8-byte word it touches, with its value in the copy, once.  The
 * usual read (a chunk's size and fd, a word: 8-byte aligned, in one
 * 64-bit word of marks) tests and sets its bits at once. */
static void mw_proc_mark_words(struct mw_proc_copy *c, struct block *b, uint64_t addr, size_t len)
{
	uint64_t w0 = (addr - b->base) / 8, w1 = (addr + len - 1 - b->base) / 8, h = 0, *bits = b->bits;
	const unsigned char *buf = b->buf;

	if (w0 * 8 < b->lo - b->base || (w1 + 1) * 8 > b->hi - b->base) {
		c->lost = 1;	/* a word only partly copied (not at a page's end) */
		return;
	}
	if (w0 / 64 == w1 / 64) {	/* (w1 - w0 < 64 then) */
		uint64_t span = ~0ULL >> (63 - (w1 - w0)) << (w0 % 64), *m = &bits[w0 / 64];
		uint64_t fresh = span & ~*m;

		if (!fresh)
			return;	/* every word marked already */
		*m |= span;
		b->marked = 1;
		for (; fresh; fresh &= fresh - 1) {
			uint64_t i = w0 / 64 * 64 + (uint64_t)__builtin_ctzll(fresh), v;

			memcpy(&v, buf + i * 8, 8);
			h ^= mark_hash(c->key, b->base + i * 8, v);
		}
		b->hash ^= h;
		return;
	}
	for (uint64_t i = w0; i <= w1; i++) {
		uint64_t bit = 1ULL << (i % 64), v;

		if (bits[i / 64] & bit)
			continue;
		bits[i / 64] |= bit;
		memcpy(&v, buf + i * 8, 8);
		h ^= mark_hash(c->key, b->base + i * 8, v);
		b->marked = 1;
	}
	b->hash ^= h;
}

/* Block b, found for a read at base: waited for when it is being copied
 * ahead, its marks checked when it was copied again ahead of the walk,
 * reading ahead kept on when the walk moved to it. */
static void copy_arrive(struct mw_proc *p, struct mw_proc_copy *c, struct block *b, uint64_t base)
{
	if (atomic_load_explicit(&b->pending, memory_order_acquire))
		mw_ahead_wait(c, b);
	if (b->verify) {	/* copied again ahead of the walk */
		b->verify = 0;
		if (!marks_hold(c, b)) {
			c->lost = 1;
			p->changed++;
		}
	}
	if (c->dir && base != c->last_base)
		mw_ahead_more(p, base);
	c->last_base = base;
}

/* A read from the copies: 0 served, 1 not copied (read the process), -1
 * when the process is gone or refuses (errno).  A read across a block's
 * end is served from the two blocks.  A read from the block read last,
 * copied and checked then, goes straight to its bytes. */
static int copy_read(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	struct mw_proc_copy *c = p->copy;
	uint64_t base = addr & ~(uint64_t)(MW_PROC_BLOCK - 1);
	struct block *b;
	int r;

	if (len - 1 >= MW_PROC_BLOCK - (addr - base)) {	/* none, or across the end */
		size_t first = (size_t)(base + MW_PROC_BLOCK - addr);

		if (!len || len > MW_PROC_BLOCK || addr + len < addr)
			return 1;
		if ((r = copy_read(p, addr, buf, first)) != 0)
			return r;
		return copy_read(p, addr + first, (unsigned char *)buf + first, len - first);
	}
	b = mw_proc_block_near(c, base);
	if ((!b || !b->buf) && (r = fill(p, base, addr, &b)) != 0)
		return r;
	c->pin = (uint32_t)(b - c->blocks) + 1;	/* its buffer stays its own */
	if (base != c->last_base || atomic_load_explicit(&b->pending, memory_order_acquire) ||
	    b->verify)
		copy_arrive(p, c, b, base);
	if (addr < b->lo || addr + len > b->hi)
		return 1;
	if (len == 8)	/* a word, or a chunk's size and fd: no call to memcpy */
		memcpy(buf, b->buf + (addr - base), 8);
	else if (len == 16)
		memcpy(buf, b->buf + (addr - base), 16);
	else
		memcpy(buf, b->buf + (addr - base), len);
	if (c->marking)
		mw_proc_mark_words(c, b, addr, len);
	return 0;
}

/* mw_proc_prefetch's work, copying on. */
static inline void prefetch_one(struct mw_proc_copy *c, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(MW_PROC_BLOCK - 1);
	struct block *b = mw_proc_block_near(c, base);

	if (!b || !b->buf || atomic_load_explicit(&b->pending, memory_order_acquire) || addr < b->lo ||
	    addr >= b->hi)
		return;
	__builtin_prefetch(b->buf + (addr - base));
	if (c->marking)	/* its mark, set when it is read */
		__builtin_prefetch(&b->bits[(addr - base) / 8 / 64], 1);
}

void mw_proc_prefetch(struct mw_proc *p, uint64_t addr)
{
	if (p->copying)
		prefetch_one(p->copy, addr);
}

uint64_t mw_proc_copy_order(struct mw_proc *p, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(MW_PROC_BLOCK - 1);
	struct block *b;

	return p->copying && (b = mw_proc_block_near(p->copy, base)) && b->buf &&
	       !atomic_load_explicit(&b->pending, memory_order_acquire) && addr >= b->lo &&
	       addr + 16 <= b->hi ? b->order : 0;
}

/* mw_proc_mark_words for copy_read_near()'s reads: one word, or two
 * whose marks lie in one 64-bit word of marks (else as that does). */
static inline void mark_near(struct mw_proc_copy *c, struct block *b, uint64_t addr, size_t len)
{
	uint64_t i = (addr - b->base) / 8, bit = 1ULL << (i % 64), *m = &b->bits[i / 64];
	uint64_t span = len == 8 ? bit : bit | bit << 1, fresh = span & ~*m, v[2] = { 0 }, h = 0;

	if (len == 16 && i % 64 == 63) {
		mw_proc_mark_words(c, b, addr, len);
		return;
	}
	if (!fresh)
		return;	/* marked already */
	*m |= span;
	b->marked = 1;
	if (len == 8)
		memcpy(v, b->buf + i * 8, 8);
	else
		memcpy(v, b->buf + i * 8, 16);
	if (fresh & bit)
		h = mark_hash(c->key, addr, v[0]);
	if (fresh & bit << 1)
		h ^= mark_hash(c->key, addr + 8, v[1]);
	b->hash ^= h;
}

/* The usual read from the copies, as copy_read() serves it, without its
 * other cases: a word or a chunk's size and fd (8-byte aligned, 8 or 16
 * bytes) in a block found last, copied, neither being copied nor to be
 * checked.  1 served; 0 not such a read (nothing done). */
static int copy_read_near(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	struct mw_proc_copy *c = p->copy;
	uint64_t base = addr & ~(uint64_t)(MW_PROC_BLOCK - 1);
	const struct near *e = &c->near[(base / MW_PROC_BLOCK) % NEAR];
	struct block *b = e->b;

	if ((len != 8 && len != 16) || addr % 8 || !b || e->base != base || !b->buf ||
	    addr < b->lo || addr + len > b->hi || b->verify ||
	    atomic_load_explicit(&b->pending, memory_order_acquire))
		return 0;
	c->pin = (uint32_t)(b - c->blocks) + 1;	/* its buffer stays its own */
	if (base != c->last_base) {
		if (c->dir)
			mw_ahead_more(p, base);
		c->last_base = base;
	}
	if (len == 8)	/* no call to memcpy */
		memcpy(buf, b->buf + (addr - base), 8);
	else
		memcpy(buf, b->buf + (addr - base), 16);
	if (c->marking)
		mark_near(c, b, addr, len);
	return 1;
}

/* mw_proc_read's other reads: from the copies when copying (not
 * copy_read_near's), else or then from the process.  Apart, so that the
 * usual read's path stays short. */
static __attribute__((noinline)) int read_other(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (p->copy && p->copying) {
		int r = copy_read(p, addr, buf, len);

		if (r <= 0)
			return r;	/* served, or the process is gone */
		p->copy->lost |= p->copy->marking;	/* a read not marked */
	}
	if (!mw_proc_mapped(p, addr, len)) {
		errno = EFAULT;
		return -1;
	}
	if ((n = mw_proc_raw(p, addr, buf, len)) == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;	/* a part only: unmapped meanwhile */
	return -1;
}

int mw_proc_read(struct mw_proc *p, uint64_t addr, void *buf, size_t len)
{
	if (p->copy && p->copying && copy_read_near(p, addr, buf, len))
		return 0;
	return read_other(p, addr, buf, len);
}

/* A copy given back, kept for this thread's next process with its first
 * slab (procmem.h: mw_proc_copy_spare_free): `snapshot --all` reads
 * hundreds of idle processes a few blocks each, and fresh buffers cost a
 * page fault and the kernel's zeroing a page. */
static _Thread_local struct mw_proc_copy *spare;

void mw_proc_copy(struct mw_proc *p, int on)
{
	if (on && !p->copy) {
		p->copy = spare ? spare : calloc(1, sizeof(*p->copy));	/* none: read the process */
		spare = NULL;
	}
	p->copying = on && p->copy;
}

/* Forget c's blocks: their marks and the table (the slots in use only,
 * while they are few: the table is 128 KiB). */
static void forget(struct mw_proc_copy *c)
{
	mw_ahead_drain(c);	/* the reader is done with every buffer */
	c->dir = 0;
	c->last_base = 0;
	for (size_t i = 0; i < c->used; i++)
		if (c->blocks[i].marked) {
			memset(c->blocks[i].bits, 0, MARK_WORDS * 8);
			c->blocks[i].marked = 0;
			c->blocks[i].hash = 0;
			c->lost |= c->marking;	/* its marks are gone */
		}
	mw_proc_blocks_forget(c);
}

void mw_proc_copy_drop(struct mw_proc *p)
{
	if (p->copy && p->copy->used)
		forget(p->copy);
}

uint64_t mw_proc_copied(const struct mw_proc *p, uint64_t *blocks)
{
	if (blocks)
		*blocks = p->copy ? p->copy->nblocks : 0;
	return p->copy ? p->copy->copied : 0;
}

/* Give back c's slabs from slab `from` on, and c itself when from is 0. */
static void release(struct mw_proc_copy *c, size_t from)
{
	mw_ahead_stop(c);
	mw_proc_blocks_release(c, from);
	if (from)
		return;
	free(c->vbuf);
	free(c);
}

void mw_proc_copy_free(struct mw_proc *p)
{
	struct mw_proc_copy *c = p->copy;

	p->copy = NULL;
	p->copying = 0;
	if (!c)
		return;
	mw_ahead_stop(c);	/* its thread reads this process: joined */
	if (spare) {
		release(c, 0);
		return;
	}
	/* kept for the next process: its first slab, emptied, a new key */
	c->marking = 0;
	forget(c);
	release(c, 1);
	c->lost = 0;
	c->key = 0;
	c->copied = c->nblocks = 0;
	c->no_ahead = 0;	/* another process: try again */
	c->grow = 0;
	c->once = c->again = 0;
	spare = c;
}

void mw_proc_copy_spare_free(void)
{
	if (spare)
		release(spare, 0);
	spare = NULL;
}

int mw_proc_word(struct mw_proc *p, uint64_t addr, uint64_t *v)
{
	return mw_proc_read(p, addr, v, sizeof(*v));
}

void mw_proc_close(struct mw_proc *p)
{
	mw_proc_copy_free(p);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->maps);
	memset(p, 0, sizeof(*p));
	p->memfd = -1;
}
