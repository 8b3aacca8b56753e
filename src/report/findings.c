/* findings.c - ranked findings from a snapshot and its ledger; see
 * findings.h.  Each maker adds at most one finding and says nothing its
 * figures do not show. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "jsonout.h"
#include "units.h"
#include "xalloc.h"

#define MIB (1024ULL * 1024)
#define DEFAULT_MMAP_THRESHOLD ((uint64_t)128 * 1024)	/* malloc.c */

struct list {
	struct mw_finding *v;
	size_t n, cap;
	const struct mw_snapshot *s;
	const struct mw_ledger *l;
	uint64_t cpus;
	const struct mw_finding_waits *w;
	size_t nw;
};

/* Bytes for people, from a ring of buffers (several in one printf). */
static const char *hb(uint64_t v)
{
	static char ring[16][16];
	static unsigned i;

	return mw_human_bytes(v, ring[i++ % 16], sizeof(ring[0]));
}

static unsigned pct(uint64_t a, uint64_t b)
{
	return b ? (unsigned)((a * 100 + b / 2) / b) : 0;
}

static struct mw_finding *add(struct list *x, const char *id, uint64_t bytes)
{
	struct mw_finding *f;

	if (x->n == x->cap)
		xgrow((void **)&x->v, x->n, &x->cap, sizeof(*x->v));
	f = &x->v[x->n++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->bytes = bytes;
	return f;
}

/* Where the RSS is: always, first. */
static void where(struct list *x)
{
	const struct mw_ledger_part *t = &x->l->total;
	const struct mw_ledger *l = x->l;
	uint64_t fr = t->free_resident + t->top;
	struct mw_finding *f = add(x, "where", t->rss);

	snprintf(f->what, sizeof(f->what), "RSS %s: malloc's memory in use %s (%u%%), free but "
		 "resident %s (%u%%: free chunks %s, top chunks %s), mmapped chunks %s, heap "
		 "slack %s; not malloc's %s (%u%%: stacks %s, shared memory %s, files %s, other "
		 "anonymous %s)",
		 hb(t->rss), hb(t->in_use), pct(t->in_use, t->rss), hb(fr), pct(fr, t->rss),
		 hb(t->free_resident), hb(t->top), hb(t->mmapped), hb(t->heap_slack),
		 hb(t->not_malloc), pct(t->not_malloc, t->rss), hb(l->nm_stack), hb(l->nm_shm),
		 hb(l->nm_file),
		 hb(l->nm_anon + l->nm_kernel));
	snprintf(f->evidence, sizeof(f->evidence), "malloc's pages counted one by one from "
		 "pagemap, split by the arenas' (%zu) free chunks and tops; the sum %s smaps_rollup's "
		 "Rss %s (difference %+" PRId64 " bytes, tolerance %s: one page per mapping)%s%s",
		 l->narenas, l->ok ? "matches" : "does NOT match", hb(l->rollup_rss), l->diff,
		 hb(l->tolerance), l->incomplete ? "; incomplete: " : "",
		 l->incomplete ? l->why : "");
	/* a suggestion that suggests: one reading cannot tell a leak from
	 * memory in use, two can */
	snprintf(f->suggest, sizeof(f->suggest), "to tell a leak from memory in use (which "
		 "includes the chunks held in threads' tcaches), read the process again later "
		 "(mallocwatch snapshot -p PID): in use that keeps growing from one reading to "
		 "the next is a leak");
}

static void trim_now(struct list *x)
{
	const struct mw_ledger *l = x->l;
	uint64_t t = l->frag.trim_now, best = 0;
	size_t bi = 0;
	struct mw_finding *f;

	if (t < MIB)
		return;
	for (size_t i = 0; i < l->narenas; i++)
		if (l->arenas[i].f.trim_now > best)
			best = l->arenas[i].f.trim_now, bi = i;
	f = add(x, "trim_now", t);
	snprintf(f->what, sizeof(f->what), "malloc_trim(0) would return %s of resident pages now "
		 "(%u%% of RSS); the most, %s, from arena 0x%" PRIx64, hb(t), pct(t, l->total.rss),
		 hb(best), x->s->arenas[bi].addr);
	snprintf(f->evidence, sizeof(f->evidence), "measured: resident pages (pagemap) that "
		 "malloc_trim's own rule gives back: whole pages of each run of free chunks past "
		 "its first header, and main_arena's top past MINSIZE (%s of whole free pages are "
		 "resident in all)", hb(l->frag.free_pages_resident));
	snprintf(f->suggest, sizeof(f->suggest), "call malloc_trim(0) where the program is idle: "
		 "RSS would drop by about %s (glibc.malloc.trim_threshold, now %s, only trims the "
		 "tops)", hb(t), hb(x->s->trim_threshold));
}

/* Arenas on glibc's free list: no thread attached, memory kept. */
static void idle_arenas(struct list *x)
{
	uint64_t res = 0, fr = 0, n = 0;
	struct mw_finding *f;

	for (size_t i = 0; i < x->l->narenas; i++) {
		if (!x->s->arenas[i].on_free_list)
			continue;
		n++;
		res += x->l->arenas[i].l.rss;
		fr += x->l->arenas[i].l.free_resident + x->l->arenas[i].l.top;
	}
	if (!n || res < MIB)
		return;
	f = add(x, "idle_arenas", res);
	snprintf(f->what, sizeof(f->what), "%" PRIu64 " arena%s with no thread attached (on "
		 "glibc's free list) hold %s resident, %s of it free", n, n == 1 ? "" : "s",
		 hb(res), hb(fr));
	snprintf(f->evidence, sizeof(f->evidence), "attached_threads 0 and on free_list in the "
		 "snapshot; resident bytes from pagemap");
	snprintf(f->suggest, sizeof(f->suggest), "their free part (%s) is used again only by a "
		 "thread that takes one of them from the free list, and given back to the system "
		 "only by malloc_trim(0); fewer arenas (glibc.malloc.arena_max) leave fewer of "
		 "them", hb(fr));
}

static int by_in_use(const void *a, const void *b)
{
	const struct mw_ledger_arena *x = *(const struct mw_ledger_arena *const *)a,
				     *y = *(const struct mw_ledger_arena *const *)b;

	return x->l.in_use < y->l.in_use ? -1 : x->l.in_use > y->l.in_use;
}

/* More arenas than CPUs: what arena_max = CPUs would leave apart. */
static void arena_max(struct list *x)
{
	const struct mw_ledger *l = x->l;
	uint64_t k = x->cpus ? x->cpus : 1, fr = 0, all = 0;
	const struct mw_ledger_arena **v;
	struct mw_finding *f;

	if (l->narenas <= k || l->narenas < 3)
		return;
	v = xcalloc(l->narenas, sizeof(*v));
	for (size_t i = 0; i < l->narenas; i++) {
		v[i] = &l->arenas[i];
		all += v[i]->l.free_resident + v[i]->l.top;
	}
	qsort(v, l->narenas, sizeof(*v), by_in_use);
	for (size_t i = 0; i < l->narenas - k; i++)
		fr += v[i]->l.free_resident + v[i]->l.top;
	free(v);
	if (all < MIB)
		return;
	f = add(x, "arena_max", all);
	snprintf(f->what, sizeof(f->what), "%zu arenas hold %s free and resident (%u%% of RSS); "
		 "with glibc.malloc.arena_max=%" PRIu64 ", up to about %s of it would not be kept",
		 l->narenas, hb(all), pct(all, l->total.rss), k, hb(fr));
	snprintf(f->evidence, sizeof(f->evidence), "estimate, not measured: the free and "
		 "resident bytes (free chunks and tops, pagemap) of the %zu arena%s with the least "
		 "in use, which %" PRIu64 " arenas (one per CPU the process may run on) would not "
		 "have (their in-use bytes would move to the others; how much free space the shared "
		 "arenas would keep instead is not modelled)",
		 l->narenas - (size_t)k, l->narenas - (size_t)k == 1 ? "" : "s", k);
	snprintf(f->knob, sizeof(f->knob), "glibc.malloc.arena_max=%" PRIu64, k);
	f->estimate = fr;
	snprintf(f->suggest, sizeof(f->suggest), "GLIBC_TUNABLES=glibc.malloc.arena_max=%" PRIu64
		 " costs lock waits on the shared arenas, which a snapshot cannot see: trace "
		 "with mallocwatch -p to count them, or measure both with mallocwatch tune", k);
}

/* The dynamic mmap threshold raised past its default. */
static void mmap_threshold(struct list *x)
{
	const struct mw_snapshot *s = x->s;
	const struct mw_frag *fr = &x->l->frag;
	uint64_t big = 0, nbig = 0;
	struct mw_finding *f;

	if (s->no_dyn_threshold || s->mmap_threshold <= DEFAULT_MMAP_THRESHOLD)
		return;
	for (int b = mw_frag_bucket(DEFAULT_MMAP_THRESHOLD); b < MW_FRAG_BUCKETS; b++) {
		big += fr->bytes[b];
		nbig += fr->count[b];
	}
	f = add(x, "mmap_threshold", big ? big : 1);
	if (nbig)
		snprintf(f->what, sizeof(f->what), "the mmap threshold rose to %s (from %s); "
			 "buffers below it now come from the heaps and stay there when freed: %"
			 PRIu64 " free chunk%s of 128 KiB or more hold %s", hb(s->mmap_threshold),
			 hb(DEFAULT_MMAP_THRESHOLD), nbig, nbig == 1 ? "" : "s", hb(big));
	else	/* "0 free chunks ... hold 0 B" read as a cost */
		snprintf(f->what, sizeof(f->what), "the mmap threshold rose to %s (from %s); "
			 "buffers below it now come from the heaps and stay there when freed: none "
			 "of the free chunks is 128 KiB or more now, so it costs nothing yet",
			 hb(s->mmap_threshold), hb(DEFAULT_MMAP_THRESHOLD));
	snprintf(f->evidence, sizeof(f->evidence), "mp_.mmap_threshold %" PRIu64 " and dynamic "
		 "(no mallopt or tunable fixed it: glibc raised it when an mmapped chunk that size "
		 "was freed); trim threshold %s; the free chunk histogram", s->mmap_threshold,
		 hb(s->trim_threshold));
	snprintf(f->knob, sizeof(f->knob), "glibc.malloc.mmap_threshold=%" PRIu64,
		 DEFAULT_MMAP_THRESHOLD);
	f->estimate = big;
	snprintf(f->suggest, sizeof(f->suggest), "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=%"
		 PRIu64 " fixes it (and stops the adjustment): such buffers are then mmapped and "
		 "unmapped on free, at the cost of a system call each", DEFAULT_MMAP_THRESHOLD);
}

static void pinned(struct list *x)
{
	const struct mw_frag *fr = &x->l->frag;
	uint64_t small = 0, free_res = x->l->total.free_resident;
	struct mw_finding *f;

	if (fr->pinned < MIB)
		return;
	for (int b = 0; b < mw_frag_bucket(x->l->page); b++)
		small += fr->count[b];
	f = add(x, "pinned", fr->pinned);
	snprintf(f->what, sizeof(f->what), "%s of free chunks (%u%% of the free resident %s) "
		 "share pages with chunks in use: no trim can return them", hb(fr->pinned),
		 pct(fr->pinned, free_res), hb(free_res));
	snprintf(f->evidence, sizeof(f->evidence), "free bytes on pages that also hold bytes in "
		 "use, page by page; %" PRIu64 " free chunks, %" PRIu64 " of them smaller than a "
		 "page, the largest %s", fr->nfree, small, hb(fr->largest));
	snprintf(f->suggest, sizeof(f->suggest), "no setting returns them: they come back as "
		 "the chunks in use beside them are freed (allocations of like lifetime together "
		 "leave fewer such pages)");
}

static void returned(struct list *x)
{
	const struct mw_ledger_part *t = &x->l->total;
	uint64_t r = t->free_returned + t->top_returned;
	struct mw_finding *f;

	if (r < MIB)
		return;
	f = add(x, "returned", r);
	snprintf(f->what, sizeof(f->what), "%s of malloc's free memory is not resident (given "
		 "back, or never touched): it counts in the arenas' free bytes, not in RSS", hb(r));
	snprintf(f->evidence, sizeof(f->evidence), "pagemap: free chunks %s, tops %s not present",
		 hb(t->free_returned), hb(t->top_returned));
}

static void mmapped_unfound(struct list *x)
{
	const struct mw_snapshot *s = x->s;
	struct mw_finding *f;

	if (x->l->mmapped_found == s->n_mmaps && x->l->mmapped_found_bytes == s->mmapped_mem)
		return;
	f = add(x, "mmapped_unfound", 0);
	snprintf(f->what, sizeof(f->what), "found %" PRIu64 " mmapped chunks (%s) in the "
		 "mappings, glibc counts %" PRIu64 " (%s): the difference is counted as not "
		 "malloc's", x->l->mmapped_found, hb(x->l->mmapped_found_bytes), s->n_mmaps,
		 hb(s->mmapped_mem));
	snprintf(f->evidence, sizeof(f->evidence), "chunks are found by their headers at the "
		 "start of anonymous mappings; an aligned one (memalign) starts further in, and "
		 "the process may have changed since the snapshot");
}

/* Lock waits while traced: what sharing arenas cost, and what one more
 * arena held here on average. */
static void waits(struct list *x)
{
	const struct mw_ledger *l = x->l;
	uint64_t total = 0, most = 0, at = 0, fr = 0;
	size_t shared = 0;
	struct mw_finding *f;

	for (size_t i = 0; i < x->nw; i++) {
		total += x->w[i].waits;
		shared += x->w[i].waits > 0;
		if (x->w[i].waits > most)
			most = x->w[i].waits, at = x->w[i].arena;
	}
	if (!total || !l->narenas)
		return;
	for (size_t i = 0; i < l->narenas; i++)
		fr += l->arenas[i].l.free_resident + l->arenas[i].l.top;
	fr /= l->narenas;
	f = add(x, "waits", fr * shared);
	snprintf(f->what, sizeof(f->what), "%" PRIu64 " arena lock waits while traced, on %zu "
		 "arena%s; the most, %" PRIu64 ", on arena 0x%" PRIx64, total, shared,
		 shared == 1 ? "" : "s", most, at);
	snprintf(f->evidence, sizeof(f->evidence), "memory_arena_reuse_wait probe hits (a thread "
		 "found the arena it was to share locked and waited); the arenas here hold on "
		 "average %s free and resident (pagemap, at the reading)", hb(fr));
	snprintf(f->suggest, sizeof(f->suggest), "the waits are what sharing %zu arena%s between "
		 "threads costs; more arenas (glibc.malloc.arena_max above %zu) would take them "
		 "away at about %s of free and resident memory each (estimate: this reading's "
		 "average per arena; mallocwatch tune measures both)", l->narenas,
		 l->narenas == 1 ? "" : "s", l->narenas, hb(fr));
}

static int by_bytes(const void *a, const void *b)
{
	const struct mw_finding *x = a, *y = b;
	int wx = strcmp(x->id, "where") == 0, wy = strcmp(y->id, "where") == 0;

	if (wx != wy)
		return wy - wx;	/* the summary first */
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

void mw_findings_make(const struct mw_snapshot *s, const struct mw_ledger *l, uint64_t cpus,
		      const struct mw_finding_waits *w, size_t nw, struct mw_finding **out,
		      size_t *n)
{
	struct list x = { .s = s, .l = l, .cpus = cpus, .w = w, .nw = nw };

	where(&x);
	trim_now(&x);
	idle_arenas(&x);
	arena_max(&x);
	mmap_threshold(&x);
	pinned(&x);
	returned(&x);
	mmapped_unfound(&x);
	waits(&x);
	qsort(x.v, x.n, sizeof(*x.v), by_bytes);
	*out = x.v;
	*n = x.n;
}

void mw_findings_text(FILE *f, const struct mw_finding *v, size_t n)
{
	fprintf(f, "\nFindings (largest first):\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%2zu. %s\n    evidence: %s\n", i + 1, v[i].what, v[i].evidence);
		if (v[i].suggest[0])
			fprintf(f, "    suggestion: %s\n", v[i].suggest);
	}
}

json_t *mw_findings_json(const struct mw_finding *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&a, json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "id", v[i].id,
			"rank", (json_int_t)(i + 1),
			"bytes", json_integer((json_int_t)v[i].bytes),
			"finding", mw_json_str(v[i].what), "evidence", mw_json_str(v[i].evidence),
			"suggestion", v[i].suggest[0] ? mw_json_str(v[i].suggest) : json_null(),
			"tunable", v[i].knob[0] ? json_string(v[i].knob) : json_null(),
			"estimate_bytes", v[i].knob[0] ? json_integer((json_int_t)v[i].estimate) :
						      json_null()));
	return a;
}
