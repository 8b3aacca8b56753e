/* report_ledger.c - the RSS ledger and fragmentation as text and JSON;
 * see report_ledger.h. */
#include <inttypes.h>
#include <stdio.h>

#include "jsonout.h"
#include "msg.h"
#include "output.h"
#include "report_snap.h"
#include "report_ledger.h"
#include "units.h"

#define LEDGER_ARENA_ROWS 64

static const char *hb(uint64_t v)
{
	static char ring[16][16];
	static unsigned i;

	return mw_human_bytes(v, ring[i++ % 16], sizeof(ring[0]));
}

/* The smallest size in bucket b (mw_frag_bucket) */
static uint64_t bucket_min(int b)
{
	return b ? 64ULL << (b - 1) : 0;
}

static void process_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l)
{
	const struct mw_ledger_part *t = &l->total;

	fprintf(f, "\nRSS ledger (pagemap, smaps): %s; smaps_rollup's Rss %s (difference %+"
		PRId64 " bytes, tolerance %s: %s)\n", hb(t->rss), hb(l->rollup_rss), l->diff,
		hb(l->tolerance), l->ok ? "adds up" : "DOES NOT ADD UP");
	if (l->held_ns)
		fprintf(f, "  read with the process held: %.1f ms (its snapshot's stop and the "
			"ledger's read%s)%s\n", (double)l->held_ns / 1e6,
			l->readings > 1 ? ", after a reading that did not add up" : "",
			l->max_stop_ns && l->held_ns > l->max_stop_ns ? "; more than one stop may "
			"last (--max-stop): the ledger's read took longer than foreseen" : "");
	if (!l->ok)
		fprintf(f, "  the process changed while it was read (its pages, or its mappings, "
			"between the reads of smaps, pagemap and smaps_rollup): %d reading%s, none "
			"added up%s%s\n", l->readings, l->readings == 1 ? "" : "s",
			l->not_held[0] ? "; not read held: " : "", l->not_held);
	if (l->incomplete)
		fprintf(f, "  INCOMPLETE: %s\n", l->why);
	fprintf(f, "  %-24s %12s\n", "in use, resident", hb(t->in_use));
	fprintf(f, "  %-24s %12s\n", "free, resident", hb(t->free_resident));
	fprintf(f, "  %-24s %12s\n", "top chunks, resident", hb(t->top));
	fprintf(f, "  %-24s %12s  (%" PRIu64 " found, %s; glibc counts %" PRIu64 ", %s)\n",
		"mmapped chunks", hb(t->mmapped), l->mmapped_found, hb(l->mmapped_found_bytes),
		s->n_mmaps, hb(s->mmapped_mem));
	fprintf(f, "  %-24s %12s\n", "heap slack", hb(t->heap_slack));
	fprintf(f, "  %-24s %12s  (stacks %s: [stack] and %zu thread stacks; shared memory %s; "
		"files %s, other anonymous %s, kernel %s)\n", "not malloc's", hb(t->not_malloc),
		hb(l->nm_stack), l->nstacks, hb(l->nm_shm), hb(l->nm_file), hb(l->nm_anon),
		hb(l->nm_kernel));
	fprintf(f, "  not resident: free chunks %s, top chunks %s; in use %s, in mmapped chunks "
		"%s (never written, or in swap); malloc's pages in swap %s\n",
		hb(t->free_returned), hb(t->top_returned), hb(t->in_use_gone), hb(t->mmapped_gone),
		hb(t->swapped));
	/* VmHWM, read in the same stop as the ledger: the peak of the
	 * address space the ledger counts (after the program's exec), not
	 * the child's rusage, whose ru_maxrss also counts the forked
	 * mallocwatch before the exec */
	if (l->peak_rss)
		fprintf(f, "  peak RSS %s (the highest so far, not a part; VmHWM of "
			"/proc/PID/status, read with the ledger)\n", hb(l->peak_rss));
	else
		fprintf(f, "  peak RSS unknown (VmHWM of /proc/PID/status could not be read)\n");
}

static void arenas_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l)
{
	fprintf(f, "\n  %-16s %10s %10s %10s %10s %10s %10s\n", "ARENA", "RSS", "IN USE RES",
		"FREE RES", "FREE GONE", "TOP RES", "SLACK");
	for (size_t i = 0; i < l->narenas && i < LEDGER_ARENA_ROWS; i++) {
		const struct mw_ledger_part *a = &l->arenas[i].l;
		char ad[24];

		snprintf(ad, sizeof(ad), "0x%" PRIx64, s->arenas[i].addr);
		fprintf(f, "  %-16s %10s %10s %10s %10s %10s %10s\n", ad, hb(a->rss),
			hb(a->in_use), hb(a->free_resident), hb(a->free_returned), hb(a->top),
			hb(a->heap_slack));
	}
	fprintf(f, "\nFragmentation:\n  %-16s %7s %10s %10s %10s %12s %10s\n", "ARENA", "CHUNKS",
		"LARGEST", "FREE", "PINNED", "FREE PAGES", "TRIM NOW");
	for (size_t i = 0; i < l->narenas && i < LEDGER_ARENA_ROWS; i++) {
		const struct mw_frag *g = &l->arenas[i].f;
		uint64_t free_bytes = 0;
		char ad[24];

		for (int b = 0; b < MW_FRAG_BUCKETS; b++)
			free_bytes += g->bytes[b];
		snprintf(ad, sizeof(ad), "0x%" PRIx64, s->arenas[i].addr);
		fprintf(f, "  %-16s %7" PRIu64 " %10s %10s %10s %12s %10s\n", ad, g->nfree,
			hb(g->largest), hb(free_bytes), hb(g->pinned), hb(g->free_pages_resident),
			hb(g->trim_now));
	}
	if (l->narenas > LEDGER_ARENA_ROWS)
		fprintf(f, "  ... and %zu more arenas (all of them in the JSON report)\n",
			l->narenas - LEDGER_ARENA_ROWS);
	fprintf(f, "  (PINNED: free bytes on pages that hold bytes in use; FREE PAGES: whole "
		"free pages, resident; TRIM NOW: resident bytes malloc_trim(0) would give back)\n");
}

static void histogram_text(FILE *f, const struct mw_frag *g)
{
	int any = 0;

	fprintf(f, "\nFree chunk sizes, all arenas (top chunks not included):\n");
	for (int b = 0; b < MW_FRAG_BUCKETS; b++) {
		if (!g->count[b])
			continue;
		any = 1;
		if (b == MW_FRAG_BUCKETS - 1)
			fprintf(f, "  %10s and up  ", hb(bucket_min(b)));
		else
			fprintf(f, "  %10s .. %-8s", hb(bucket_min(b)), hb(bucket_min(b + 1)));
		fprintf(f, " %9" PRIu64 " chunk%s %12s\n", g->count[b], g->count[b] == 1 ? " " : "s",
			hb(g->bytes[b]));
	}
	if (!any)	/* not a heading left without its table */
		fprintf(f, "  none\n");
}

void mw_ledger_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l)
{
	process_text(f, s, l);
	arenas_text(f, s, l);
	histogram_text(f, &l->frag);
}

static json_t *part_json(const struct mw_ledger_part *p)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"in_use_not_resident", (json_int_t)p->in_use_gone,
		"mmapped_not_resident", (json_int_t)p->mmapped_gone,
		"rss", (json_int_t)p->rss, "in_use", (json_int_t)p->in_use,
		"free_resident", (json_int_t)p->free_resident,
		"free_returned", (json_int_t)p->free_returned, "top", (json_int_t)p->top,
		"top_returned", (json_int_t)p->top_returned, "mmapped", (json_int_t)p->mmapped,
		"heap_slack", (json_int_t)p->heap_slack, "not_malloc", (json_int_t)p->not_malloc,
		"swapped", (json_int_t)p->swapped);
}

/* {"rss", "in_use", "free_resident", "free_returned", "top",
 * "top_returned", "mmapped", "heap_slack", "not_malloc", "swapped",
 * "not_malloc_by_kind", "mmapped_found", "check", "incomplete",
 * "arenas": [{"address", the same parts}]}: a new reference, NULL when
 * out of memory. */
static json_t *ledger_json(const struct mw_snapshot *s, const struct mw_ledger *l)
{
	json_t *o = part_json(&l->total), *arenas = json_array();

	for (size_t i = 0; i < l->narenas; i++) {
		json_t *a = part_json(&l->arenas[i].l);

		mw_json_set(&a, "address", mw_json_addr(s->arenas[i].addr));
		mw_json_append(&arenas, a);
	}
	mw_json_set(&o, "not_malloc_by_kind", json_pack("{s:I, s:I, s:I, s:I, s:I}",
		"stacks", (json_int_t)l->nm_stack, "files", (json_int_t)l->nm_file,
		"anonymous", (json_int_t)l->nm_anon, "kernel", (json_int_t)l->nm_kernel,
		"shared_memory", (json_int_t)l->nm_shm));
	mw_json_set(&o, "mmapped_found", json_pack("{s:I, s:I}", "count",
		(json_int_t)l->mmapped_found, "bytes", (json_int_t)l->mmapped_found_bytes));
	mw_json_set(&o, "check", json_pack("{s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:b}",
		"smaps_rollup_rss", (json_int_t)l->rollup_rss, "difference", (json_int_t)l->diff,
		"tolerance", (json_int_t)l->tolerance, "ok", l->ok,
		"mappings", (json_int_t)l->nvmas, "mappings_paged", (json_int_t)l->npaged,
		"paged_disagreement", (json_int_t)l->paged_disagree,
		"zero_page_known", l->zero_page_known));
	mw_json_set(&o, "peak_rss", l->peak_rss ? json_integer((json_int_t)l->peak_rss) : json_null());
	mw_json_set(&o, "read", json_pack("{s:i, s:f, s:f, s:o}", "readings", l->readings,
		"ledger_ms", (double)l->read_ns / 1e6, "held_ms", (double)l->held_ns / 1e6,
		"not_held", l->not_held[0] ? mw_json_str(l->not_held) : json_null()));
	mw_json_set(&o, "incomplete", l->incomplete ? mw_json_str(l->why) : json_null());
	mw_json_set(&o, "arenas", arenas);
	return o;
}

static json_t *frag_one(const struct mw_frag *g)
{
	json_t *h = json_array();

	for (int b = 0; b < MW_FRAG_BUCKETS; b++)
		if (g->count[b])
			mw_json_append(&h, json_pack("{s:I, s:o, s:I, s:I}",
				"min", (json_int_t)bucket_min(b),
				"max", b == MW_FRAG_BUCKETS - 1 ? json_null() :
				       json_integer((json_int_t)bucket_min(b + 1) - 1),
				"count", (json_int_t)g->count[b], "bytes", (json_int_t)g->bytes[b]));
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "free_chunks", (json_int_t)g->nfree,
		"largest_free", (json_int_t)g->largest, "pinned", (json_int_t)g->pinned,
		"free_pages_resident", (json_int_t)g->free_pages_resident,
		"trim_now", (json_int_t)g->trim_now, "histogram", h);
}

/* {"free_chunks", "largest_free", "pinned", "free_pages_resident",
 * "trim_now", "histogram": [{"min", "max", "count", "bytes"}] (non-empty
 * buckets; max null for the last), "arenas": [{"address", the same}]}:
 * a new reference, NULL when out of memory. */
static json_t *frag_json(const struct mw_snapshot *s, const struct mw_ledger *l)
{
	json_t *o = frag_one(&l->frag), *arenas = json_array();

	for (size_t i = 0; i < l->narenas; i++) {
		json_t *a = frag_one(&l->arenas[i].f);

		mw_json_set(&a, "address", mw_json_addr(s->arenas[i].addr));
		mw_json_append(&arenas, a);
	}
	mw_json_set(&o, "arenas", arenas);
	return o;
}

void mw_ledger_json_add(json_t **snap, const struct mw_snapshot *s, const struct mw_ledger *l,
			const struct mw_finding *v, size_t n)
{
	mw_json_set(snap, "ledger", ledger_json(s, l));
	mw_json_set(snap, "fragmentation", frag_json(s, l));
	mw_json_set(snap, "findings", mw_findings_json(v, n));
}

void mw_explain_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l,
		     const struct mw_finding *v, size_t n, const char *comm)
{
	char q[4 * 64 + 8];

	fprintf(f, "mallocwatch: process %d (%s): %zu arena%s, RSS %s, read in %.1f ms\n",
		(int)s->pid, mw_quote(comm, q, sizeof(q)), s->narenas, s->narenas == 1 ? "" : "s",
		hb(l->total.rss),
		(double)s->duration_ns / 1e6);
	if (!s->consistent)
		fprintf(f, "  INCONSISTENT: %s (the allocator changed while it was read)\n",
			s->why);
	mw_findings_text(f, v, n);
	mw_ledger_text(f, s, l);
}

int mw_snapshot_json_ledger(FILE *f, const struct mw_snapshot *s, const char *comm,
			    const struct mw_where *w, const struct mw_ledger *l,
			    const struct mw_finding *v, size_t n)
{
	json_t *root = json_object(), *snap = mw_snapshot_json_value(s, comm);
	int ret;

	if (w)
		mw_json_set(&snap, "where", mw_where_json(w));
	if (l)
		mw_ledger_json_add(&snap, s, l, v, n);
	mw_json_set(&root, "version", json_integer(1));
	mw_json_set(&root, "snapshot", snap);
	ret = mw_json_write(root, f, JSON_INDENT(2));
	json_decref(root);
	return ret;
}

void mw_findings_html(FILE *f, const char *text)
{
	if (!text)
		return;
	fprintf(f, "<h2>Findings, from the allocator read at the end</h2>\n<pre class=\"summary\">");
	mw_xml_escape(f, text);
	fprintf(f, "</pre>\n");
}
