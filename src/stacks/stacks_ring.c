/* stacks_ring.c - --stacks's rings read (stacks.c opens them, one per
 * CPU): every record copied out, then taken in time order across the
 * CPUs: a PERF_RECORD_SAMPLE (a stacked probe hit: its site, registers
 * and stack, unwound by stacks_proc.c), PERF_RECORD_MMAP2 and
 * PERF_RECORD_COMM (a process's maps and exec, stacks_live.c), a
 * PERF_RECORD_LOST counted.  A sample (sample_type IDENTIFIER TID TIME
 * REGS_USER STACK_USER) is laid out as
 *
 *	u64 id; u32 pid, tid; u64 time;
 *	u64 abi; u64 regs[17];			(MW_UNWIND_REGMASK's bits)
 *	u64 size; char stack[size]; u64 dyn_size;
 *
 * and its site found by id (PERF_EVENT_IOC_ID).  The ring's layout is
 * perf_event_open(2)'s: a struct perf_event_mmap_page, then the data
 * pages, read from data_tail to data_head.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "clock.h"
#include "stacks_int.h"
#include "xalloc.h"

static const struct stk_site *site_of(const struct mw_stacks *s, uint64_t id)
{
	for (size_t i = 0; i < s->nsites * (size_t)s->ncpus; i++)
		if (s->fds[i] >= 0 && s->ids[i] == id)
			return &s->sites[i % s->nsites];
	return NULL;
}

/* One PERF_RECORD_SAMPLE (rec, size bytes; layout above). */
static void take_sample(struct mw_stacks *s, const unsigned char *rec, size_t size)
{
	const unsigned char *p = rec + sizeof(struct perf_event_header), *end = rec + size;
	uint64_t id, tm, abi, regs[MW_UNWIND_NREGS], len = 0, dyn = 0;
	uint32_t pt[2];
	const unsigned char *stack = NULL;
	const struct stk_site *site;
	struct stk_proc *proc;
	struct mw_stack_event *e;

	if ((size_t)(end - p) < 8 + 8 + 8 + 8)
		return;
	memcpy(&id, p, 8);
	memcpy(pt, p + 8, 8);
	memcpy(&tm, p + 16, 8);
	memcpy(&abi, p + 24, 8);
	p += 32;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || (size_t)(end - p) < sizeof(regs) + 8)
		return;	/* a kernel thread: no user registers */
	memcpy(regs, p, sizeof(regs));
	p += sizeof(regs);
	memcpy(&len, p, 8);
	p += 8;
	if (len > 0 && (size_t)(end - p) >= len + 8) {
		stack = p;
		memcpy(&dyn, p + len, 8);
		if (dyn < len)
			len = dyn;
	} else
		len = 0;
	if (!(site = site_of(s, id)))
		return;
	if (!(proc = stk_proc_get(s, (pid_t)pt[0]))->watched) {
		s->st.foreign++;
		return;
	}
	XGROW(s->ev, s->nev + 1, s->cev);
	e = &s->ev[s->nev++];
	memset(e, 0, sizeof(*e));
	e->probe = site->probe;
	e->pid = (pid_t)pt[0];
	e->tid = (pid_t)pt[1];
	e->time_ns = tm;
	stk_read_args(site, regs, stack, (size_t)len, e);
	stk_proc_unwind(s, proc, site, e->tid, regs, stack, (size_t)len, e);
	s->st.samples++;
}

/* A side-band record's time: its sample_id trailer is pid, tid, time,
 * identifier (sample_type TID TIME IDENTIFIER), the last 24 bytes. */
static uint64_t rec_time(const unsigned char *rec, size_t size)
{
	const struct perf_event_header *eh = (const void *)rec;
	uint64_t t = 0;

	if (eh->type == PERF_RECORD_SAMPLE && size >= 32)
		memcpy(&t, rec + 24, 8);	/* header, id, pid/tid, time */
	else if (size >= sizeof(*eh) + 24)
		memcpy(&t, rec + size - 16, 8);
	return t;
}

/* A record copied out of its ring, to be taken in time order. */
static void pend(struct mw_stacks *s, const unsigned char *rec, size_t size)
{
	while (s->cpbuf < s->npbuf + size)	/* (XGROW doubles once) */
		XGROW(s->pbuf, s->cpbuf, s->cpbuf);
	memcpy(s->pbuf + s->npbuf, rec, size);
	XGROW(s->pend, s->npend + 1, s->cpend);
	/* seq counts from 1, as both compilers made of the unsequenced
	 * s->pend[s->npend++] = { .seq = s->npend } this was */
	s->pend[s->npend] = (struct stk_pend){ .time = rec_time(rec, size), .off = s->npbuf,
					       .size = size, .seq = s->npend + 1 };
	s->npend++;
	s->npbuf += size;
}

static int by_time(const void *a, const void *b)
{
	const struct stk_pend *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* PERF_RECORD_MMAP2 or PERF_RECORD_COMM (stacks_live.c's layouts). */
static void take_sideband(struct mw_stacks *s, const unsigned char *rec, size_t size)
{
	const struct perf_event_header *eh = (const void *)rec;
	uint32_t pt[2];
	uint64_t v[3];
	struct stk_proc *p;
	char id[41] = "", path[PATH_MAX];
	size_t plen;

	if (size < 8 + 8 + 24)
		return;
	memcpy(pt, rec + 8, 8);
	if (!(p = stk_proc_get(s, (pid_t)pt[0]))->watched)
		return;
	if (eh->type == PERF_RECORD_COMM) {
		if ((eh->misc & PERF_RECORD_MISC_COMM_EXEC) && pt[0] == pt[1])
			stk_proc_exec(p);
		return;
	}
	if (size < 72 + 24)
		return;
	memcpy(v, rec + 16, sizeof(v));	/* addr, len, pgoff */
	if ((eh->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && rec[40] <= 20)
		for (int i = 0; i < rec[40]; i++)
			snprintf(id + 2 * i, 3, "%02x", rec[44 + i]);
	plen = strnlen((const char *)rec + 72, size - 72 - 24);
	if (plen == size - 72 - 24 || plen >= sizeof(path))
		return;	/* not terminated inside the record */
	memcpy(path, rec + 72, plen + 1);
	stk_proc_mmap(p, v[0], v[1], v[2], path, id);
}

/* The records pended, in time order, up to cutoff (ns; all when 0): a
 * record of one CPU may still be on its way when another's later one is
 * read; those after cutoff wait for the next drain. */
static void take_pending(struct mw_stacks *s, uint64_t cutoff)
{
	size_t n = 0, keep;

	qsort(s->pend, s->npend, sizeof(*s->pend), by_time);
	while (n < s->npend && (!cutoff || s->pend[n].time <= cutoff)) {
		const unsigned char *rec = s->pbuf + s->pend[n].off;

		if (((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE)
			take_sample(s, rec, s->pend[n].size);
		else
			take_sideband(s, rec, s->pend[n].size);
		n++;
	}
	/* the rest to the front, in a compacted buffer */
	keep = 0;
	for (size_t i = n; i < s->npend; i++) {
		struct stk_pend q = s->pend[i];

		memmove(s->pbuf + keep, s->pbuf + q.off, q.size);
		q.off = keep;
		q.seq = i - n;
		keep += q.size;
		s->pend[i - n] = q;
	}
	s->npend -= n;
	s->npbuf = keep;
}

/* Every record of CPU c's ring. */
static void drain_ring(struct mw_stacks *s, int c)
{
	struct perf_event_mmap_page *h = s->rings[c];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), dsize = pg * RING_PAGES;
	unsigned char *data = (unsigned char *)h + pg;
	uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = h->data_tail;

	while (tail < head) {
		struct perf_event_header eh;
		size_t at = tail % dsize, first;
		const unsigned char *rec;

		memcpy(&eh, data + at, sizeof(eh));	/* (8 bytes, 8-aligned: no wrap) */
		if (eh.size < sizeof(eh))
			break;
		rec = data + at;
		if (at + eh.size > dsize) {	/* wraps: copy it out */
			first = dsize - at;
			memcpy(s->rec, data + at, first);
			memcpy(s->rec + first, data, eh.size - first);
			rec = s->rec;
		}
		if (eh.type == PERF_RECORD_SAMPLE || eh.type == PERF_RECORD_MMAP2 ||
		    eh.type == PERF_RECORD_COMM)
			pend(s, rec, eh.size);
		else if (eh.type == PERF_RECORD_LOST) {
			uint64_t lost[2];

			memcpy(lost, rec + sizeof(eh), sizeof(lost));
			s->st.lost += lost[1];
		}
		tail += eh.size;
	}
	__atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
}

/* Every ring, then what they held in time order: all of it when final,
 * else what was written before this drain began. */
void stk_drain(struct mw_stacks *s, int final)
{
	uint64_t cutoff;

	pthread_mutex_lock(&s->lock);
	cutoff = final ? 0 : mw_now_ns();
	for (int c = 0; c < s->ncpus; c++)
		if (s->rings[c])
			drain_ring(s, c);
	take_pending(s, cutoff);
	pthread_mutex_unlock(&s->lock);
}
