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
#define DEFAULT_TRIM_THRESHOLD ((uint64_t)128 * 1024)	/* malloc.c */
#define CMD_MAX 320	/* a command line longer than this is not spelt out */

struct list {
	struct mw_finding *v;
	size_t n, cap;
	const struct mw_snapshot *s;
	const struct mw_ledger *l;
	uint64_t cpus;
	const struct mw_finding_waits *w;
	size_t nw;
	const char *const *argv;	/* the process's command line; NULL unknown */
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

/* word shell-quoted onto buf (at *at, len): 0, or -1 when it has a byte
 * that is not printable ASCII (a name from another process is not put
 * into a command for a terminal) or does not fit. */
static int sh_word(const char *word, char *buf, size_t len, size_t *at)
{
	static const char plain_set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789_-./,:=+@%";
	size_t need = strlen(word), n = *at;
	int plain = *word != '\0';

	for (const unsigned char *c = (const unsigned char *)word; *c; c++) {
		if (*c < 0x20 || *c > 0x7e)
			return -1;
		if (!strchr(plain_set, *c)) {
			plain = 0;
			need += *c == '\'' ? 3 : 0;	/* ' becomes '\'' */
		}
	}
	need += plain ? 0 : 2;
	if (n + need + 1 > len)
		return -1;
	if (!plain)
		buf[n++] = '\'';
	for (const char *c = word; *c; c++) {
		if (*c == '\'' && !plain) {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *c;
		}
	}
	if (!plain)
		buf[n++] = '\'';
	buf[n] = '\0';
	*at = n;
	return 0;
}

/* The program's words for a command line: its argv quoted, or
 * "PROGRAM [ARGS]" when unknown or not to be shown. */
static const char *program_words(const struct list *x, char *buf, size_t len)
{
	size_t at = 0, cap = len < CMD_MAX ? len : CMD_MAX;

	buf[0] = '\0';
	for (size_t i = 0; x->argv && x->argv[i]; i++) {
		if (i && at + 2 < cap) {
			buf[at++] = ' ';
			buf[at] = '\0';
		}
		if (sh_word(x->argv[i], buf, cap, &at) < 0) {
			at = 0;
			break;
		}
	}
	if (!at)
		snprintf(buf, len, "PROGRAM [ARGS]");
	return buf;
}

/* f's measure: the tune command that measures knob against the baseline
 * (with --waits: the lock waits too). */
static void measure_with(struct list *x, struct mw_finding *f, const char *knob, int waits)
{
	char words[CMD_MAX + 8];

	snprintf(f->knob, sizeof(f->knob), "%s", knob);
	snprintf(f->measure, sizeof(f->measure), "mallocwatch tune%s --try %s -c %s",
		 waits ? " --waits" : "", knob, program_words(x, words, sizeof(words)));
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
		 "RSS drops by %s if nothing changed meanwhile (mallocwatch trim -p PID calls it "
		 "in the running process and measures the drop; glibc.malloc.trim_threshold, now "
		 "%s, trims only the tops)", hb(t), hb(x->s->trim_threshold));
}

/* Arenas on glibc's free list: no thread attached, their free memory
 * kept (idle_arenas) and their memory in use (idle_in_use). */
static void idle_arenas(struct list *x)
{
	uint64_t res = 0, fr = 0, used = 0, trim = 0, n = 0;
	struct mw_finding *f;

	for (size_t i = 0; i < x->l->narenas; i++) {
		const struct mw_ledger_arena *a = &x->l->arenas[i];

		if (!x->s->arenas[i].on_free_list)
			continue;
		n++;
		res += a->l.rss;
		fr += a->l.free_resident + a->l.top;
		used += a->l.in_use;
		trim += a->f.trim_now;
	}
	if (n && fr >= MIB) {
		f = add(x, "idle_arenas", fr);
		snprintf(f->what, sizeof(f->what), "%" PRIu64 " arena%s with no thread attached (on "
			 "glibc's free list) keep %s free and resident (of %s resident in them)", n,
			 n == 1 ? "" : "s", hb(fr), hb(res));
		snprintf(f->evidence, sizeof(f->evidence), "attached_threads 0 and on free_list in "
			 "the snapshot; free chunks and tops resident by pagemap");
		snprintf(f->suggest, sizeof(f->suggest), "used again only by a thread that takes one "
			 "of them from the free list; malloc_trim(0) gives back %s of it now (the rest "
			 "shares pages with chunks in use, or is a thread arena's top, which it does not "
			 "trim); fewer arenas (glibc.malloc.arena_max) leave fewer of them", hb(trim));
	}
	if (n && used >= MIB) {
		f = add(x, "idle_in_use", used);
		snprintf(f->what, sizeof(f->what), "%s in use in %" PRIu64 " arena%s with no thread "
			 "attached: blocks allocated by threads that have exited (or moved to another "
			 "arena) and not freed", hb(used), n, n == 1 ? "" : "s");
		snprintf(f->evidence, sizeof(f->evidence), "attached_threads 0 and on free_list in "
			 "the snapshot; in-use bytes of their heaps, resident by pagemap (tcache chunks "
			 "of exited threads were freed into the arena at their exit)");
		snprintf(f->suggest, sizeof(f->suggest), "only the program's free() gives them back: "
			 "no trim or tunable does; a thread-per-request program that keeps no pointer "
			 "to them leaks them (a leak shows as this growing from one reading to the "
			 "next)");
	}
}

static int by_in_use(const void *a, const void *b)
{
	const struct mw_ledger_arena *x = *(const struct mw_ledger_arena *const *)a,
				     *y = *(const struct mw_ledger_arena *const *)b;

	return x->l.in_use < y->l.in_use ? -1 : x->l.in_use > y->l.in_use;
}

/* More arenas than CPUs: what they keep free, and the command that
 * measures arena_max = CPUs (no estimate: what shared arenas would keep
 * instead is not in a snapshot). */
static void arena_max(struct list *x)
{
	const struct mw_ledger *l = x->l;
	uint64_t k = x->cpus ? x->cpus : 1, fr = 0, all = 0;
	const struct mw_ledger_arena **v;
	struct mw_finding *f;
	char knob[64];

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
	snprintf(f->what, sizeof(f->what), "%zu arenas for %" PRIu64 " CPU%s hold %s free and "
		 "resident (%u%% of RSS); the %zu with the least in use hold %s of it", l->narenas,
		 k, k == 1 ? "" : "s", hb(all), pct(all, l->total.rss), l->narenas - (size_t)k,
		 hb(fr));
	snprintf(f->evidence, sizeof(f->evidence), "measured: free chunks and tops resident by "
		 "pagemap, arena by arena.  Not an estimate of what glibc.malloc.arena_max=%" PRIu64
		 " saves: the arenas left would take the others' allocations and keep free space "
		 "of their own, which one reading cannot tell (such estimates were 5 to 100 times "
		 "what tune then measured)", k);
	snprintf(knob, sizeof(knob), "glibc.malloc.arena_max=%" PRIu64, k);
	measure_with(x, f, knob, 1);
	snprintf(f->suggest, sizeof(f->suggest), "measure it: %s (RSS and free memory at exit, "
		 "and the lock waits that sharing arenas costs, against the baseline)", f->measure);
}

/* The dynamic mmap threshold raised past its default. */
static void mmap_threshold(struct list *x)
{
	const struct mw_snapshot *s = x->s;
	const struct mw_frag *fr = &x->l->frag;
	uint64_t big = 0, nbig = 0;
	struct mw_finding *f;
	char knob[64];

	if (s->no_dyn_threshold || s->mmap_threshold <= DEFAULT_MMAP_THRESHOLD)
		return;
	for (int b = mw_frag_bucket(DEFAULT_MMAP_THRESHOLD); b < MW_FRAG_BUCKETS; b++) {
		big += fr->bytes[b];
		nbig += fr->count[b];
	}
	if (big < MIB)	/* the threshold alone holds nothing */
		return;
	f = add(x, "mmap_threshold", big);
	snprintf(f->what, sizeof(f->what), "the mmap threshold rose to %s (from %s) and the "
		 "trim threshold with it (now %s): buffers below it come from the heaps; %" PRIu64
		 " free chunk%s of 128 KiB or more hold %s", hb(s->mmap_threshold),
		 hb(DEFAULT_MMAP_THRESHOLD), hb(s->trim_threshold), nbig, nbig == 1 ? "" : "s",
		 hb(big));
	snprintf(f->evidence, sizeof(f->evidence), "mp_.mmap_threshold %" PRIu64 " and dynamic "
		 "(glibc raised it when an mmapped chunk that size was freed); the free chunk "
		 "histogram.  A free chunk of 128 KiB or more may be a freed buffer or small "
		 "chunks freed side by side and merged: a snapshot cannot tell, so what the "
		 "threshold costs is not estimated (counting them all was 10 times what tune "
		 "measured)", s->mmap_threshold);
	snprintf(knob, sizeof(knob), "glibc.malloc.mmap_threshold=%" PRIu64,
		 DEFAULT_MMAP_THRESHOLD);
	measure_with(x, f, knob, 0);
	snprintf(f->suggest, sizeof(f->suggest), "GLIBC_TUNABLES=%s fixes it (buffers of 128 KiB "
		 "or more are then mmapped and unmapped on free, a system call each); measure it: "
		 "%s", knob, f->measure);
}

/* Thread arenas' tops: malloc_trim(0) does not trim them (malloc.c
 * mtrim: systrim for main_arena only); heap_trim does, at a free in that
 * arena, once the top reaches the trim threshold. */
static void thread_tops(struct list *x)
{
	const struct mw_snapshot *s = x->s;
	uint64_t res = 0, kept = 0, most = 0, at = 0, n = 0;
	struct mw_finding *f;
	char knob[64];

	for (size_t i = 0; i < x->l->narenas; i++) {
		uint64_t t = x->l->arenas[i].l.top;

		if (s->arenas[i].is_main || !t)
			continue;
		n++;
		res += t;
		if (s->arenas[i].top_size < s->trim_threshold)
			kept += t;
		if (t > most)
			most = t, at = s->arenas[i].addr;
	}
	if (res < MIB)
		return;
	f = add(x, "thread_tops", res);
	snprintf(f->what, sizeof(f->what), "the top chunks of %" PRIu64 " thread arena%s hold %s "
		 "resident (%u%% of RSS; the most, %s, in arena 0x%" PRIx64 "); %s of it in tops "
		 "below the trim threshold (%s%s)", n, n == 1 ? "" : "s", hb(res),
		 pct(res, x->l->total.rss), hb(most), at, hb(kept), hb(s->trim_threshold),
		 s->trim_threshold > DEFAULT_TRIM_THRESHOLD ? ", raised from 128 KiB" : "");
	snprintf(f->evidence, sizeof(f->evidence), "measured: each thread arena's top chunk, "
		 "resident by pagemap; mp_.trim_threshold %" PRIu64 "%s.  malloc_trim(0) trims only "
		 "main_arena's top (malloc.c mtrim); a thread heap's top is given back by heap_trim "
		 "at a free in that arena, and only when the top is at least the trim threshold",
		 s->trim_threshold, s->no_dyn_threshold ? " (set by mallopt or a tunable)" :
		 s->trim_threshold > DEFAULT_TRIM_THRESHOLD ? " (raised by glibc with the mmap "
		 "threshold: twice it)" : "");
	if (s->trim_threshold <= DEFAULT_TRIM_THRESHOLD) {
		snprintf(f->suggest, sizeof(f->suggest), "no trim returns them now; the next free "
			 "in each arena that reaches its top gives back all but the top pad");
		return;
	}
	snprintf(knob, sizeof(knob), "glibc.malloc.trim_threshold=%" PRIu64,
		 DEFAULT_TRIM_THRESHOLD);
	measure_with(x, f, knob, 0);
	if (s->no_dyn_threshold)	/* mallopt or the environment: a tunable
					 * loses to a mallopt made later */
		snprintf(f->suggest, sizeof(f->suggest), "no trim returns them; the threshold was "
			 "set (mallopt(M_TRIM_THRESHOLD), glibc.malloc.trim_threshold or "
			 "MALLOC_TRIM_THRESHOLD_): a lower value where it is set lets glibc give "
			 "them back at the next free in each arena (a tunable does not undo a "
			 "mallopt call); for the environment's, measure it: %s", f->measure);
	else
		snprintf(f->suggest, sizeof(f->suggest), "no trim returns them; a fixed trim "
			 "threshold (GLIBC_TUNABLES=%s, which also stops glibc's adjustment) lets "
			 "glibc give them back at the next free in each arena; measure it: %s", knob,
			 f->measure);
}

/* Mmapped chunks: in use until the program frees them. */
static void mmapped(struct list *x)
{
	const struct mw_ledger *l = x->l;
	const struct mw_snapshot *s = x->s;
	struct mw_finding *f;

	if (l->total.mmapped < MIB)
		return;
	f = add(x, "mmapped", l->total.mmapped);
	snprintf(f->what, sizeof(f->what), "%" PRIu64 " mmapped chunk%s %s resident (%u%% of "
		 "RSS; %s mapped): allocations of at least the mmap threshold (%s now), each "
		 "mapped on its own and in use", l->mmapped_found,
		 l->mmapped_found == 1 ? " holds" : "s hold",
		 hb(l->total.mmapped), pct(l->total.mmapped, l->total.rss),
		 hb(l->mmapped_found_bytes), hb(s->mmap_threshold));
	snprintf(f->evidence, sizeof(f->evidence), "chunk headers (IS_MMAPPED) at the start of "
		 "anonymous mappings, resident pages by pagemap; glibc counts %" PRIu64 " chunks, "
		 "%s (mp_.n_mmaps, mp_.mmapped_mem)", s->n_mmaps, hb(s->mmapped_mem));
	snprintf(f->suggest, sizeof(f->suggest), "only the program's free() gives them back (each "
		 "is unmapped at once); no malloc_trim and no tunable returns them: the mmap "
		 "threshold decides only where new allocations go");
}

/* Anonymous memory that is none of malloc's: another allocator's. */
static void other_anonymous(struct list *x)
{
	const struct mw_ledger *l = x->l;
	struct mw_finding *f;

	if (l->nm_anon < MIB)
		return;
	f = add(x, "other_anonymous", l->nm_anon);
	snprintf(f->what, sizeof(f->what), "%s of anonymous memory is not malloc's (%u%% of "
		 "RSS), in %zu mapping%s, the largest %s at 0x%" PRIx64 ": another allocator's "
		 "(python's pymalloc arenas, a garbage-collected heap, a JIT's code) or the "
		 "program's own mmap", hb(l->nm_anon), pct(l->nm_anon, l->total.rss),
		 l->nm_anon_maps, l->nm_anon_maps == 1 ? "" : "s", hb(l->nm_anon_largest),
		 l->nm_anon_largest_at);
	snprintf(f->evidence, sizeof(f->evidence), "private anonymous mappings (smaps' Rss) "
		 "holding no arena heap and no mmapped chunk header, not a thread's stack (no "
		 "thread's stack pointer in them)");
	snprintf(f->suggest, sizeof(f->suggest), "no malloc_trim and no glibc tunable returns "
		 "it: only the code that mapped it (python: PYTHONMALLOC=malloc puts small objects "
		 "in malloc's arenas instead of pymalloc's, where mallocwatch sees them)");
}

/* Bytes in use on pages that are not resident. */
static void in_use_not_resident(struct list *x)
{
	const struct mw_ledger_part *t = &x->l->total;
	uint64_t g = t->in_use_gone + t->mmapped_gone;
	struct mw_finding *f;

	if (g < MIB)
		return;
	f = add(x, "in_use_not_resident", g);
	snprintf(f->what, sizeof(f->what), "%s in use is not resident (in the arenas %s, in "
		 "mmapped chunks %s): allocated and never written, or swapped out (%s of malloc's "
		 "pages in swap); it is in malloc's in-use bytes, not in RSS", hb(g),
		 hb(t->in_use_gone), hb(t->mmapped_gone), hb(t->swapped));
	snprintf(f->evidence, sizeof(f->evidence), "pagemap: pages of chunks in use not present");
	snprintf(f->suggest, sizeof(f->suggest), "costs no RAM until written (or swapped in): "
		 "RSS grows by up to %s if the program touches all of it", hb(g));
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

/* Lock waits while traced: what sharing arenas cost. */
static void waits(struct list *x)
{
	const struct mw_ledger *l = x->l;
	uint64_t total = 0, most = 0, at = 0, fr = 0;
	size_t shared = 0;
	struct mw_finding *f;
	char knob[64];

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
	f = add(x, "waits", fr / l->narenas * shared);
	snprintf(f->what, sizeof(f->what), "%" PRIu64 " arena lock waits while traced, on %zu "
		 "arena%s; the most, %" PRIu64 ", on arena 0x%" PRIx64, total, shared,
		 shared == 1 ? "" : "s", most, at);
	snprintf(f->evidence, sizeof(f->evidence), "memory_arena_reuse_wait probe hits (a thread "
		 "found the arena it was to share locked and waited); the %zu arenas hold %s free "
		 "and resident (pagemap, at the reading)", l->narenas, hb(fr));
	snprintf(knob, sizeof(knob), "glibc.malloc.arena_max=%zu", 2 * l->narenas);
	measure_with(x, f, knob, 1);
	snprintf(f->suggest, sizeof(f->suggest), "the waits are what sharing %zu arena%s between "
		 "threads costs; more arenas would take them away at a cost in free memory that "
		 "one reading cannot tell: measure both with %s", l->narenas,
		 l->narenas == 1 ? "" : "s", f->measure);
}

static int by_bytes(const void *a, const void *b)
{
	const struct mw_finding *x = a, *y = b;
	int wx = strcmp(x->id, "where") == 0, wy = strcmp(y->id, "where") == 0;

	if (wx != wy)
		return wy - wx;	/* the summary first */
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

void mw_findings_make_cmd(const struct mw_snapshot *s, const struct mw_ledger *l, uint64_t cpus,
			  const struct mw_finding_waits *w, size_t nw, const char *const *argv,
			  struct mw_finding **out, size_t *n)
{
	struct list x = { .s = s, .l = l, .cpus = cpus, .w = w, .nw = nw, .argv = argv };

	where(&x);
	trim_now(&x);
	idle_arenas(&x);
	arena_max(&x);
	mmap_threshold(&x);
	thread_tops(&x);
	mmapped(&x);
	other_anonymous(&x);
	pinned(&x);
	returned(&x);
	in_use_not_resident(&x);
	mmapped_unfound(&x);
	waits(&x);
	qsort(x.v, x.n, sizeof(*x.v), by_bytes);
	*out = x.v;
	*n = x.n;
}

void mw_findings_make(const struct mw_snapshot *s, const struct mw_ledger *l, uint64_t cpus,
		      const struct mw_finding_waits *w, size_t nw, struct mw_finding **out,
		      size_t *n)
{
	mw_findings_make_cmd(s, l, cpus, w, nw, NULL, out, n);
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
		mw_json_append(&a, json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:n, s:o}", "id", v[i].id,
			"rank", (json_int_t)(i + 1),
			"bytes", json_integer((json_int_t)v[i].bytes),
			"finding", mw_json_str(v[i].what), "evidence", mw_json_str(v[i].evidence),
			"suggestion", v[i].suggest[0] ? mw_json_str(v[i].suggest) : json_null(),
			"tunable", v[i].knob[0] ? json_string(v[i].knob) : json_null(),
			"estimate_bytes",
			"measure_with", v[i].measure[0] ? json_string(v[i].measure) : json_null()));
	return a;
}
