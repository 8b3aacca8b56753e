/* state_model.c - the allocator state model; see state.h.  Here the
 * model is built from the stream's records (struct mw_state in
 * state_int.h); its timeline of samples is kept by state_timeline.c, and
 * read by the reports through state_read.c; it is made, freed and
 * started again at an exec in state_life.c.  (This was state.c; the
 * parts that need struct mw_state are named state_* so that state.h
 * stays the one room everyone else includes.)
 *
 * Heap ownership: memory_heap_new does not say which arena a heap is for
 * (glibc sets heap_info.ar_ptr after the probe).  The owner is taken, in
 * order of trust, from
 *   1. the ar_ptr the script read from the heap itself (H records: at
 *      memory_heap_free, and at the end for heaps that grew or shrank);
 *   2. a memory_arena_new from the same thread whose arena lies inside
 *      the new heap (the arena's first heap: _int_new_arena puts the
 *      malloc_state right after the heap_info);
 *   3. the arena the creating thread was attached to when it made the heap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "probetab.h"
#include "protocol.h"
#include "snapshot.h"
#include "state.h"
#include "state_int.h"
#include "units.h"
#include "xalloc.h"

/* Shared with state_jumps.c and state_finish.c (state_int.h), by their
 * short names here. */
#define probe(st, id) mw_state_probe((st), (id))
#define probe_known(st, k) mw_state_probe_known((st), (k))
#define attach(st, tid, addr, how) mw_state_attach((st), (tid), (addr), (how))
#define jump_slot(k) mw_state_jump_slot(k)

struct mw_probe_count *mw_state_probe(struct mw_state *st, int id)
{
	size_t i = mw_idmap_get(&st->probe_ix, (uint64_t)id);

	return i == MW_IDMAP_NONE ? NULL : &st->probes[i];
}

void mw_state_keep_received(struct mw_state *st, const struct mw_state *old)
{
	for (size_t i = 0; i < old->nprobes; i++) {
		struct mw_probe_count *p = probe(st, old->probes[i].id);

		if (p)
			p->received = mw_count_add(p->received, old->probes[i].received);
	}
}

void mw_state_declare(struct mw_state *st, int id, const char *name, int nargs,
		      unsigned unavail)
{
	struct mw_probe_count *p = probe(st, id);
	const struct mw_probe_info *info;

	if (p)
		return;
	XGROW(st->probes, st->nprobes, st->cprobes);
	mw_idmap_put(&st->probe_ix, (uint64_t)id, st->nprobes);
	p = &st->probes[st->nprobes++];
	p->id = id;
	p->name = xstrdup(name);
	p->nargs = nargs;
	p->unavail = unavail;
	p->known = mw_probe_lookup(name);
	info = mw_probe_info(p->known);
	p->streamed = !info || info->mode == MW_MODE_STREAM;
	p->math = info && info->mode == MW_MODE_MATH;	/* its first hits */
}

static struct mw_thread *thread(struct mw_state *st, int tid)
{
	size_t i = mw_idmap_get(&st->thread_ix, (uint64_t)(uint32_t)tid);

	if (i != MW_IDMAP_NONE)
		return &st->threads[i];
	XGROW(st->threads, st->nthreads, st->cthreads);
	mw_idmap_put(&st->thread_ix, (uint64_t)(uint32_t)tid, st->nthreads);
	st->threads[st->nthreads] = (struct mw_thread){ .tid = tid };
	return &st->threads[st->nthreads++];
}

int mw_state_thread_gone(struct mw_state *st, int tid, uint64_t ns)
{
	size_t i = mw_idmap_get(&st->thread_ix, (uint64_t)(uint32_t)tid);

	if (!ns)
		return -1;
	if (i != MW_IDMAP_NONE && !st->threads[i].gone_ns)
		st->threads[i].gone_ns = ns;
	return 0;
}

/* The arena at addr; address 0 is main_arena while its address is
 * unknown.  With create, a new arena when there is none. */
static struct mw_arena *arena(struct mw_state *st, uint64_t addr, int create)
{
	size_t i = addr ? mw_idmap_get(&st->arena_ix, addr) : MW_IDMAP_NONE;

	if (!addr && !st->arenas[0].addr)
		return &st->arenas[0];
	if (i != MW_IDMAP_NONE)
		return &st->arenas[i];
	if (!create)
		return NULL;
	XGROW(st->arenas, st->narenas, st->carenas);
	if (addr)
		mw_idmap_put(&st->arena_ix, addr, st->narenas);
	st->arenas[st->narenas] = (struct mw_arena){ .addr = addr };
	return &st->arenas[st->narenas++];
}

/* Attachments by the order they came in (their records' sequence). */
static int att_seq_cmp(const void *pa, const void *pb)
{
	const struct mw_attachment *a = pa, *b = pb;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void mw_state_attach(struct mw_state *st, int tid, uint64_t addr, enum mw_attach how)
{
	struct mw_arena *a = arena(st, addr, 1);
	struct mw_thread *t = thread(st, tid);

	t->arena = addr;
	XGROW(a->att, a->natt, a->catt);
	a->att[a->natt++] = (struct mw_attachment){ .tid = tid, .how = how, .seq = st->seq,
						    .ns = st->now_ns };
}

/* The live heap at addr: only the newest heap at an address can be
 * live, and heap_ix points at the newest. */
static struct mw_heap *live_heap(struct mw_state *st, uint64_t addr)
{
	size_t i = mw_idmap_get(&st->heap_ix, addr);

	return i != MW_IDMAP_NONE && !st->heaps[i].freed ? &st->heaps[i] : NULL;
}

/* A heap at addr; tid 0: made before tracing (-p), by no thread the
 * model may show (a thread 0 would be reported). */
static void heap_new(struct mw_state *st, int tid, uint64_t addr, uint64_t size)
{
	struct mw_thread *t = tid ? thread(st, tid) : NULL;
	size_t cg = st->cheaps;

	XGROW(st->heaps, st->nheaps, st->cheaps);
	if (cg != st->cheaps) {	/* keep the side arrays as long */
		st->heap_guess = xrealloc(st->heap_guess, st->cheaps * sizeof(uint64_t));
		st->heap_rule = xrealloc(st->heap_rule, st->cheaps * sizeof(int));
	}
	mw_idmap_put(&st->heap_ix, addr, st->nheaps);
	st->heap_guess[st->nheaps] = t ? t->arena : 0;
	st->heap_rule[st->nheaps] = 0;
	st->heaps[st->nheaps++] = (struct mw_heap){ .addr = addr, .size = size,
		.peak = size, .created_by_tid = tid, .new_ns = st->now_ns };
}

/* A memory_heap_new hit.  Its heap may be live in the model already,
 * made by the G record the end (or its free) printed: stapbpf streams
 * hits through its perf buffer, read by a thread of its own, while its
 * interpreter prints the aggregates straight out, so under load a hit
 * may come after them (docs/protocol.md, "Order").  Only one heap can be
 * live at an address: that one is this one, whose maker and time the
 * hit tells; not a second heap. */
static void heap_new_hit(struct mw_state *st, int tid, uint64_t addr, uint64_t size)
{
	struct mw_heap *h = live_heap(st, addr);

	if (!h || h->created_by_tid || h->at_attach || h->new_ns) {
		heap_new(st, tid, addr, size);
		return;
	}
	h->created_by_tid = tid;
	h->new_ns = st->now_ns;
	st->heap_guess[h - st->heaps] = tid ? thread(st, tid)->arena : 0;
}

static void arena_new(struct mw_state *st, int tid, uint64_t addr, uint64_t size)
{
	struct mw_arena *a = arena(st, addr, 1);

	a->created_by_tid = tid;
	a->create_size = size;
	attach(st, tid, addr, MW_ATTACH_NEW);
	for (size_t i = st->nheaps; i-- > 0;) {
		struct mw_heap *h = &st->heaps[i];

		if (h->created_by_tid == tid && !h->freed && addr >= h->addr &&
		    addr < h->addr + h->size && st->heap_rule[i] != 1) {
			h->arena = addr;
			st->heap_rule[i] = 2;
			break;
		}
	}
}

static void threshold(struct mw_state *st, int tid, const char *src,
		      uint64_t mmap, uint64_t trim)
{
	st->mmap_threshold = mmap;
	st->trim_threshold = trim;
	if (st->nthr >= MW_STATE_KEEP) {
		st->omitted.thresholds++;
		return;
	}
	XGROW(st->thr, st->nthr, st->cthr);
	st->thr[st->nthr++] = (struct mw_threshold_change){ .seq = st->seq, .tid = tid,
		.source = src, .mmap = mmap, .trim = trim };
}

static void keep_event(struct mw_state *st, int id, int tid, const int64_t *args, int n)
{
	struct mw_probe_count *p = probe(st, id);
	struct mw_event *e;

	/* a slow-math sample due is kept past the cap: at most
	 * MW_MATH_SAMPLES a probe, and the reports show each one due */
	if (st->nevents >= MW_STATE_KEEP && !(p && p->math && p->samples < MW_MATH_SAMPLES)) {
		st->omitted.events++;
		return;
	}
	if (p && p->math)
		p->samples++;
	XGROW(st->events, st->nevents, st->cevents);
	e = &st->events[st->nevents++];
	memset(e, 0, sizeof(*e));
	e->seq = st->seq;
	e->id = id;
	e->name = p ? p->name : "?";
	e->known = p ? p->known : MW_P_UNKNOWN;
	e->tid = tid;
	e->nargs = n > 12 ? 12 : n;
	e->unavail = p ? p->unavail : 0;
	if (e->nargs)
		memcpy(e->arg, args, (size_t)e->nargs * sizeof(int64_t));
}

static int event(struct mw_state *st, int id, int tid, const int64_t *args, int nargs);

/* The declared probe glibc names known_id (MW_P_*), or NULL. */
struct mw_probe_count *mw_state_probe_known(struct mw_state *st, int known_id)
{
	for (size_t i = 0; i < st->nprobes; i++)
		if (st->probes[i].known == known_id)
			return &st->probes[i];
	return NULL;
}

/* The unreadable-argument mask of probe id. */
static unsigned p_unavail(struct mw_state *st, int known_id)
{
	struct mw_probe_count *p = probe_known(st, known_id);

	return p ? p->unavail : 0;
}

/* Hits of a probe counted without a thread (G and nine-field S records). */
static void probe_hits(struct mw_state *st, int known_id, uint64_t count)
{
	struct mw_probe_count *p = probe_known(st, known_id);

	if (p) {
		p->hits += count;
		st->hits_unthreaded += count;
		st->unthreaded[known_id] += count;
	}
}

/* The last mallopt() of thread tid not yet paired with its do_set_*. */
static struct mw_setting *pending_mallopt(struct mw_state *st, int tid)
{
	for (size_t i = st->nsettings; i-- > 0;)
		if (st->settings[i].tid == tid)
			return st->settings[i].from_mallopt && !st->settings[i].has_previous ?
			       &st->settings[i] : NULL;
	return NULL;
}

/* "mallopt" when thread tid's pending mallopt() set param, else "tunable". */
static const char *set_by(struct mw_state *st, int tid, int param)
{
	struct mw_setting *s = pending_mallopt(st, tid);

	return s && s->param == param ? "mallopt" : "tunable";
}

static void setting(struct mw_state *st, int id, int tid, const int64_t *a, int n)
{
	const struct mw_setting_info *si = mw_setting_by_probe(id);
	struct mw_setting *s;
	const char *pname;

	if (st->nsettings >= MW_STATE_KEEP) {
		st->omitted.settings += id == MW_P_memory_mallopt || si;
		return;
	}
	if (id == MW_P_memory_mallopt) {
		XGROW(st->settings, st->nsettings, st->csettings);
		pname = mw_mallopt_param_name((int)a[0]);
		st->settings[st->nsettings++] = (struct mw_setting){ .seq = st->seq,
			.tid = tid, .from_mallopt = 1, .param = (int)a[0],
			.name = pname ? pname : "?", .value = n > 1 ? a[1] : 0 };
		return;
	}
	if (!si)
		return;
	s = pending_mallopt(st, tid);
	if (!s || s->param != si->param || !si->param_name) {
		XGROW(st->settings, st->nsettings, st->csettings);
		s = &st->settings[st->nsettings++];
		*s = (struct mw_setting){ .seq = st->seq, .tid = tid, .name = si->tunable,
					  .value = a[0] };
	}
	s->has_previous = n > 1;
	s->previous = n > 1 ? a[1] : 0;
	s->previous_unavailable = p_unavail(st, id) & 2;
}

static void retry(struct mw_state *st, int id, int tid, const uint64_t *a, int n)
{
	struct mw_thread *t = thread(st, tid);
	const struct mw_probe_info *info = mw_probe_info(id);

	t->retries += id != MW_P_memory_arena_retry;
	if (!info)
		return;
	if (st->nretries >= MW_STATE_KEEP) {
		st->omitted.retries++;
		return;
	}
	XGROW(st->retries, st->nretries, st->cretries);
	st->retries[st->nretries++] = (struct mw_retry){ .tid = tid, .probe = info->name,
		.bytes = a[0], .arena = id == MW_P_memory_arena_retry && n > 1 ? a[1] : 0 };
}

/* The state changes a known streamed probe makes. */
static void apply(struct mw_state *st, int pid_id, int tid, const uint64_t *a, int n)
{
	struct mw_heap *h;

	switch (pid_id) {
	case MW_P_memory_arena_new:
		arena_new(st, tid, a[0], n > 1 ? a[1] : 0);
		break;
	case MW_P_memory_arena_reuse:
		attach(st, tid, a[0], MW_ATTACH_REUSE);
		break;
	case MW_P_memory_arena_reuse_free_list:
		attach(st, tid, a[0], MW_ATTACH_FREE_LIST);
		break;
	case MW_P_memory_heap_new:
		heap_new_hit(st, tid, a[0], n > 1 ? a[1] : 0);
		break;
	case MW_P_memory_heap_free:
		if ((h = live_heap(st, a[0]))) {
			h->size = n > 1 ? a[1] : h->size;
			h->freed = 1;
			h->free_ns = st->now_ns;
		}
		break;
	case MW_P_memory_mallopt_free_dyn_thresholds:
		threshold(st, tid, "dynamic", a[0], n > 1 ? a[1] : 0);
		break;
	case MW_P_memory_mallopt_mmap_threshold:
		threshold(st, tid, set_by(st, tid, -3), a[0], st->trim_threshold);
		break;
	case MW_P_memory_mallopt_trim_threshold:
		threshold(st, tid, set_by(st, tid, -1), st->mmap_threshold, a[0]);
		break;
	case MW_P_memory_arena_retry:
	case MW_P_memory_malloc_retry:
	case MW_P_memory_realloc_retry:
	case MW_P_memory_memalign_retry:
	case MW_P_memory_calloc_retry:
		retry(st, pid_id, tid, a, n);
		break;
	}
}

int mw_state_event(struct mw_state *st, int id, int tid, const int64_t *args, int nargs)
{
	return mw_state_event_at(st, id, tid, 0, args, nargs);
}

/* An arena or heap event: the model holds it (arenas, attachments, heaps),
 * so it is neither kept in the events log nor a timeline marker. */
static int arena_or_heap(int known)
{
	switch (known) {
	case MW_P_memory_arena_new: case MW_P_memory_arena_reuse:
	case MW_P_memory_arena_reuse_free_list: case MW_P_memory_heap_new:
	case MW_P_memory_heap_free:
		return 1;
	default:
		return 0;
	}
}

/* Keep a timed event as a timeline marker (at most MW_STATE_KEEP). */
static void mark(struct mw_state *st, const struct mw_probe_count *p, int tid,
		 const int64_t *args, int nargs)
{
	if (arena_or_heap(p->known))	/* drawn as lanes and areas */
		return;
	if (st->nmarks >= MW_STATE_KEEP) {
		st->omitted.marks++;
		return;
	}
	XGROW(st->marks, st->nmarks, st->cmarks);
	st->marks[st->nmarks] = (struct mw_mark){ .ns = st->now_ns, .known = p->known,
		.name = p->name, .tid = tid };
	for (int i = 0; i < nargs && i < 3; i++)
		st->marks[st->nmarks].arg[i] = args[i];
	st->nmarks++;
}

int mw_state_event_at(struct mw_state *st, int id, int tid, uint64_t ns, const int64_t *args,
		      int nargs)
{
	int ret;

	st->now_ns = ns;
	ret = event(st, id, tid, args, nargs);
	if (ret == 0 && ns) {
		struct mw_thread *t = thread(st, tid);

		if (!t->first_ns || ns < t->first_ns)
			t->first_ns = ns;
		if (ns > t->last_ns)
			t->last_ns = ns;
		mark(st, probe(st, id), tid, args, nargs);
	}
	st->now_ns = 0;
	return ret;
}

static int event(struct mw_state *st, int id, int tid, const int64_t *args, int nargs)
{
	struct mw_probe_count *p = probe(st, id);
	uint64_t a[MW_MAX_ARGS] = { 0 };
	int64_t sa[MW_MAX_ARGS] = { 0 };
	int known;

	if (!p || nargs != p->nargs || nargs > MW_MAX_ARGS)	/* undeclared, or cut short */
		return -1;
	known = p->known;
	/* a known probe must come with the arguments the table gives it:
	 * the models below read them */
	if (known != MW_P_UNKNOWN && nargs < mw_probe_info(known)->nargs)
		return -1;
	st->seq++;
	p->received++;
	for (int i = 0; i < nargs; i++)
		sa[i] = args[i], a[i] = (uint64_t)args[i];
	thread(st, tid);
	apply(st, known, tid, a, nargs);
	setting(st, known, tid, sa, nargs);
	if (!arena_or_heap(known))	/* kept for the reports: mallopt, retries, ... */
		keep_event(st, id, tid, args, nargs);
	return 0;
}

/* The index of a setjmp-family probe in mw_thread.jumps, or -1. */
int mw_state_jump_slot(int known)
{
	switch (known) {
	case MW_P_setjmp: return 0;
	case MW_P_longjmp: return 1;
	case MW_P_longjmp_target: return 2;
	default: return -1;
	}
}

/* Do count more hits keep the image's total of hits (and so a probe's)
 * within INT64_MAX, as the JSON and the view's cells hold them?  A tracer
 * counts far fewer; a stream that says more is garbled
 * (t-hostile-stream). */
static int total_fits(const struct mw_state *st, uint64_t count)
{
	uint64_t sum = 0;

	if (count > (uint64_t)INT64_MAX)
		return 0;
	for (size_t k = 0; k < st->nprobes; k++)
		sum = mw_count_add(sum, st->probes[k].hits);
	return sum <= (uint64_t)INT64_MAX - count;
}

/* The same, and the hits of thread tid too. */
static int hits_fit(const struct mw_state *st, int tid, uint64_t count)
{
	size_t i = mw_idmap_get(&st->thread_ix, (uint64_t)(uint32_t)tid);

	return total_fits(st, count) &&
	       (i == MW_IDMAP_NONE || st->threads[i].hits <= (uint64_t)INT64_MAX - count);
}

/* The hits of a G record (grew, shrank) or an S record (a, b), added
 * up, when they fit (total_fits); else UINT64_MAX (garbled). */
static uint64_t pair_fits(const struct mw_state *st, uint64_t a, uint64_t b)
{
	if (a > (uint64_t)INT64_MAX || b > (uint64_t)INT64_MAX || !total_fits(st, a + b))
		return UINT64_MAX;
	return a + b;
}

int mw_state_hits(struct mw_state *st, int id, int tid, uint64_t count)
{
	struct mw_probe_count *p;
	struct mw_thread *t;

	if (!hits_fit(st, tid, count))
		return -1;
	p = probe(st, id);
	t = thread(st, tid);
	if (p)
		p->hits += count;
	if (p && p->known == MW_P_memory_arena_reuse_wait)
		t->wait_hits = mw_count_add(t->wait_hits, count);
	t->hits += count;
	st->n_hits++;
	if (p && jump_slot(p->known) >= 0)
		t->jumps[jump_slot(p->known)] += count;
	return 0;
}

int mw_state_heap(struct mw_state *st, uint64_t addr, uint64_t ar, uint64_t size,
		  uint64_t peak, uint64_t grew, uint64_t shrank, int hits)
{
	struct mw_heap *h = live_heap(st, addr);

	if (hits && pair_fits(st, grew, shrank) == UINT64_MAX)
		return -1;	/* past INT64_MAX hits: a hostile stream's */
	st->n_heap_records++;	/* one per memory_heap_free, the rest at the end */
	if (hits) {
		probe_hits(st, MW_P_memory_heap_more, grew);
		probe_hits(st, MW_P_memory_heap_less, shrank);
	}
	if (!h) {	/* made before tracing started (-p) */
		heap_new(st, 0, addr, size);
		h = live_heap(st, addr);
		if (!h)
			return 0;
	}
	h->size = size;
	if (peak > h->peak)
		h->peak = peak;
	if (size > h->peak)
		h->peak = size;
	h->grew = mw_count_add(h->grew, grew);	/* H records: no hits, not checked */
	h->shrank = mw_count_add(h->shrank, shrank);
	if (ar) {
		h->arena = ar;
		st->heap_rule[h - st->heaps] = 1;
	}
	return 0;
}

int mw_state_wait(struct mw_state *st, int tid, uint64_t addr, uint64_t count)
{
	size_t i = mw_idmap_get(&st->thread_ix, (uint64_t)(uint32_t)tid);
	struct mw_thread *t = i == MW_IDMAP_NONE ? NULL : &st->threads[i];
	struct mw_arena *a;

	/* waits <= wait_hits holds: every wait is taken here */
	if (!t || count > t->wait_hits - t->waits) {
		st->why = "lock waits past the thread's memory_arena_reuse_wait hits";
		return -1;
	}
	a = arena(st, addr, 1);
	st->n_waits++;
	t->waits = mw_count_add(t->waits, count);
	if (a)
		a->waits = mw_count_add(a->waits, count);
	return 0;
}

int mw_state_wait_hits(struct mw_state *st, int id, int tid, uint64_t addr, uint64_t count)
{
	struct mw_probe_count *p = probe(st, id);

	if (!p || p->known != MW_P_memory_arena_reuse_wait) {
		st->why = "an A record of another probe than memory_arena_reuse_wait";
		return -1;
	}
	if (mw_state_hits(st, id, tid, count) < 0)
		return -1;
	return mw_state_wait(st, tid, addr, count);	/* its hits just taken */
}

int mw_state_sbrk(struct mw_state *st, const struct mw_sbrk *s, int hits)
{
	uint64_t more = pair_fits(st, s->nmore, s->failed);
	uint64_t less = pair_fits(st, s->nless, s->failed_less);

	if (hits && (more == UINT64_MAX || less == UINT64_MAX ||
		     pair_fits(st, more, less) == UINT64_MAX))
		return -1;	/* past INT64_MAX hits: a hostile stream's */
	st->sbrk = *s;
	if (hits) {
		probe_hits(st, MW_P_memory_sbrk_more, more);
		probe_hits(st, MW_P_memory_sbrk_less, less);
	}
	return 0;
}

void mw_state_bias(struct mw_state *st, uint64_t bias)
{
	struct mw_arena *m = &st->arenas[0];

	if (!bias)
		return;
	st->bias = bias;
	st->have_bias = 1;
	if (st->main_sym && !m->addr) {
		struct mw_arena *dup = arena(st, bias + st->main_sym, 0);

		m->addr = bias + st->main_sym;
		mw_idmap_put(&st->arena_ix, m->addr, 0);
		if (dup && dup != m) {	/* threads that reused main_arena: their
					 * attachments as they came (seq, time),
					 * merged in order */
			for (size_t i = 0; i < dup->natt; i++) {
				XGROW(m->att, m->natt, m->catt);
				m->att[m->natt++] = dup->att[i];
			}
			if (m->natt > 1)
				qsort(m->att, m->natt, sizeof(*m->att), att_seq_cmp);
			m->waits = mw_count_add(m->waits, dup->waits);
			dup->addr = UINT64_MAX;	/* dropped in finish */
		}
	}
}

void mw_state_seed(struct mw_state *st, const struct mw_snapshot *s)
{
	st->seeded = 1;
	free(st->attach_refused);
	st->attach_refused = NULL;
	st->mmap_threshold = s->mmap_threshold;
	st->trim_threshold = s->trim_threshold;
	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *sa = &s->arenas[i];
		struct mw_arena *a;

		if (sa->is_main) {
			a = &st->arenas[0];
			a->addr = sa->addr;
			mw_idmap_put(&st->arena_ix, sa->addr, 0);
			a->bytes_at_attach = sa->system_mem;
		} else {
			a = arena(st, sa->addr, 1);	/* events may have named it */
		}
		a->at_attach = 1;
		a->threads_at_attach = sa->attached_threads;
		for (size_t j = 0; j < sa->nheaps; j++) {
			size_t k = st->nheaps;

			if (live_heap(st, sa->heaps[j].addr))
				continue;	/* an event came first */
			heap_new(st, 0, sa->heaps[j].addr, sa->heaps[j].size);
			st->heaps[k].arena = sa->addr;
			st->heaps[k].at_attach = 1;
			st->heap_rule[k] = 1;
		}
	}
}

int mw_state_seeded(const struct mw_state *st)
{
	return st->seeded;
}

void mw_state_ready(struct mw_state *st)
{
	st->ready = 1;
}

void mw_state_end(struct mw_state *st)
{
	st->ended = 1;
}

void mw_state_garbled(struct mw_state *st)
{
	st->garbled++;
}

const char *mw_state_why(struct mw_state *st)
{
	const char *why = st->why;

	st->why = NULL;
	return why;
}

void mw_state_tracer_lost(struct mw_state *st, uint64_t n)
{
	st->tracer_lost = mw_count_add(st->tracer_lost, n);
}
