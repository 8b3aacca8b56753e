/* view.c - one view of a run (view.h): the figures and tables of
 * view.def computed from the model once, and what every report renders
 * of them the same way: a JSON section, a table (JSON and the text's),
 * the totals of several; and serve's counters of a process.  E.g. the
 * text's arenas table of tests/streams/storm24.mw:
 *
 *	  ADDRESS          KIND  CREATOR  HEAPS HEAP BYTES   WAITS  THREADS (how attached)
 *	  0x7fefd9c42c60   main  -            0 19.8 MiB         3  10960(initial) 10969(reuse) ...
 *	  0x7fefc4000030   arena 10980        1 5.6 MiB          0  10980(new)
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "probetab.h"
#include "procs.h"
#include "report_cost.h"
#include "run_info.h"
#include "snapshot.h"
#include "units.h"
#include "view.h"
#include "xalloc.h"

static const struct mw_view_fig_info figs[] = {
#define MW_VIEW_FIG(id, sec, k, u, fl, tx, lb) \
	{ .name = #id, .section = sec, .key = k, .unit = MW_VU_##u, .flags = fl, .text = tx, \
	  .label = lb },
#define MW_VIEW_COL(...)
#define MW_VIEW_CTR(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
};

static const struct mw_view_col_info cols[] = {
#define MW_VIEW_COL(tab, id, k, u, w, tp, hd, lb) \
	{ .table = MW_VT_##tab, .name = #id, .key = k, .unit = MW_VU_##u, .width = w, \
	  .tpos = tp, .head = hd, .label = lb },
#define MW_VIEW_FIG(...)
#define MW_VIEW_CTR(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
};

static const struct mw_view_ctr_info ctrs[] = {
#define MW_VIEW_CTR(id, fam, u, lb, hl) \
	{ .name = #id, .family = fam, .unit = u, .label = lb, .help = hl },
#define MW_VIEW_FIG(...)
#define MW_VIEW_COL(...)
#include "view.def"
#undef MW_VIEW_FIG
#undef MW_VIEW_COL
#undef MW_VIEW_CTR
};

struct mw_view {
	const struct mw_state *st;
	struct mw_view_val fig[MW_VF_COUNT];
	const struct mw_arena *ar;
	/* each table's rows, MW_VC_COUNT cells a row (its own columns used) */
	struct mw_view_val *cell[MW_VT_COUNT];
	struct mw_report_cost cost;
};

/* How a thread came to an arena, as the JSON names it. */
static const char *mw_report_attach_name(enum mw_attach how)
{
	switch (how) {
	case MW_ATTACH_NEW: return "new";
	case MW_ATTACH_REUSE: return "reuse";
	case MW_ATTACH_FREE_LIST: return "free_list";
	case MW_ATTACH_IMPLICIT: return "initial";
	}
	return "?";
}

const struct mw_view_fig_info *mw_view_fig_info(enum mw_view_fig f)
{
	return (unsigned)f < MW_VF_COUNT ? &figs[f] : NULL;
}

const struct mw_view_col_info *mw_view_col_info(enum mw_view_col c)
{
	return (unsigned)c < MW_VC_COUNT ? &cols[c] : NULL;
}

const struct mw_view_ctr_info *mw_view_ctr_info(enum mw_view_ctr k)
{
	return (unsigned)k < MW_VK_COUNT ? &ctrs[k] : NULL;
}

static const char *const table_names[] = {
	"arenas", "heaps", "threads", "tcache_double_free", "setjmp.threads", "math.functions",
	"settings", "thresholds.changes", "retries"
};
static const enum mw_view_fig table_rows[] = {
	MW_VF_arenas, MW_VF_heaps, MW_VF_threads, MW_VF_double_frees, MW_VF_jump_threads,
	MW_VF_math_functions, MW_VF_settings, MW_VF_threshold_changes, MW_VF_retries
};

const char *mw_view_table_name(enum mw_view_table t)
{
	return table_names[t];
}

enum mw_view_fig mw_view_table_rows(enum mw_view_table t)
{
	return table_rows[t];
}

#define SET(f, val) (v->fig[MW_VF_##f] = (struct mw_view_val){ .v = (int64_t)(val), .known = 1 })
#define CELL(t, c, val, k) (row[MW_VC_##t##_##c] = \
	(struct mw_view_val){ .v = (int64_t)(val), .known = (k) })

/* The run's own figures: the images it replaced (exec), what was
 * counted but not kept, why the allocator at attach is unknown. */
static void run_figures(struct mw_view *v)
{
	const struct mw_state *st = v->st;
	const struct mw_state_omitted *o = mw_state_omitted_get(st);
	uint64_t before;

	SET(execs, mw_state_execs(st, &before));
	SET(hits_before, before);
	SET(omitted_events, o->events);
	SET(omitted_settings, o->settings);
	SET(omitted_retries, o->retries);
	SET(omitted_thresholds, o->thresholds);
	SET(omitted_marks, o->marks);
	SET(attach_unknown, mw_state_attach_refused(st) != NULL);
	v->fig[MW_VF_attach_unknown].s = mw_state_attach_refused(st);
}

/* The slow-math probes hit, into cells (NULL: only counted); how many. */
static size_t math_rows(struct mw_view *v, struct mw_view_val *cells)
{
	size_t n, k = 0;
	const struct mw_probe_count *p = mw_state_probes(v->st, &n);

	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);
		struct mw_view_val *row;

		if (!info || info->family != MW_FAM_MATH || !p[i].hits)
			continue;
		row = cells ? cells + k * MW_VC_COUNT : NULL;
		k++;
		if (!row)
			continue;
		CELL(math, probe, p[i].known, 1);
		row[MW_VC_math_probe].s = p[i].name;
		CELL(math, hits, p[i].hits, 1);
	}
	return k;
}

/* The tcache double frees among the events kept, and the threads that
 * hit a setjmp probe. */
static void event_counts(struct mw_view *v)
{
	size_t n, k = 0;
	const struct mw_event *e = mw_state_events(v->st, &n);
	const struct mw_thread *t;

	for (size_t i = 0; i < n; i++)
		k += e[i].known == MW_P_memory_tcache_double_free;
	SET(double_frees, k);
	t = mw_state_threads(v->st, &n);
	k = 0;
	for (size_t i = 0; i < n; i++)
		k += t[i].jumps[0] || t[i].jumps[1] || t[i].jumps[2];
	SET(jump_threads, k);
	SET(math_functions, math_rows(v, NULL));
}

/* The counts, events and sbrk figures. */
static void figures(struct mw_view *v, const struct mw_run_info *ri)
{
	const struct mw_state *st = v->st;
	const struct mw_sbrk *s = mw_state_sbrk_get(st);
	uint64_t total, lost, garbled, mm, tr;
	size_t n;
	int ended;

	v->ar = mw_state_arenas(st, &n);
	SET(arenas, n);
	SET(heaps, (mw_state_heaps(st, &n), n));
	SET(threads, (mw_state_threads(st, &n), n));
	SET(retries, (mw_state_retries(st, &n), n));
	SET(settings, (mw_state_settings(st, &n), n));
	event_counts(v);
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	SET(events, total);
	SET(lost, lost);
	SET(garbled, garbled);
	SET(complete, ended && !ri->tracer_died && !mw_state_full_tables(st)[0]);
	SET(by_probe, (mw_state_probes(st, &n), n));
	SET(full_tables, mw_state_full_tables(st)[0] != '\0');
	v->fig[MW_VF_full_tables].s = mw_state_full_tables(st);
	SET(unthreaded, mw_state_hits_unthreaded(st));
	SET(ended, ended);
	SET(sbrk_grown, s->grown);
	SET(sbrk_trimmed, s->trimmed);
	SET(sbrk_net, s->grown - s->trimmed);
	SET(sbrk_peak, s->peak);
	SET(sbrk_grow_calls, s->nmore);
	SET(sbrk_trim_calls, s->nless);
	SET(sbrk_failed, s->failed);
	SET(sbrk_failed_less, s->failed_less);
	SET(sbrk_first_brk, s->first_brk);
	SET(sbrk_last_brk, s->last_brk);
	mw_state_thresholds(st, &n, &mm, &tr);
	SET(threshold_changes, n);
	SET(mmap_threshold, mm);
	SET(trim_threshold, tr);
	if (mw_state_attach_refused(st))	/* those there before tracing */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (figs[f].flags & MW_VF_ATTACH && figs[f].unit != MW_VU_ROWS)
				v->fig[f].known = 0;
}

int mw_view_fig_refused(enum mw_view_fig f)
{
	/* what went wrong in the stream is the run's, and right; so are
	 * the images it replaced, drained (the hits before the last) */
	return f != MW_VF_lost && f != MW_VF_garbled && f != MW_VF_complete &&
	       f != MW_VF_full_tables && f != MW_VF_attach_unknown && f != MW_VF_execs &&
	       f != MW_VF_hits_before;
}

/* Table t's rows, n of them, MW_VC_COUNT cells each. */
static struct mw_view_val *rows_of(struct mw_view *v, enum mw_view_table t, size_t *n)
{
	*n = (size_t)v->fig[table_rows[t]].v;
	return v->cell[t] = xcalloc((*n + 1) * MW_VC_COUNT, sizeof(*v->cell[t]));
}

/* The arenas' rows. */
static void arena_rows(struct mw_view *v)
{
	size_t n;
	struct mw_view_val *cells = rows_of(v, MW_VT_arenas, &n);
	int unknown = mw_state_attach_refused(v->st) != NULL;

	for (size_t i = 0; i < n; i++) {
		const struct mw_arena *a = &v->ar[i];
		struct mw_view_val *row = cells + i * MW_VC_COUNT;
		/* no attach snapshot: an arena not made while traced may have
		 * had heaps before (main: bytes before), which events never saw */
		int known = !unknown || (!a->is_main && a->created_by_tid);

		CELL(arenas, address, a->addr, a->addr != 0);
		CELL(arenas, main, a->is_main, 1);
		CELL(arenas, created_by_tid, a->created_by_tid, a->created_by_tid != 0);
		CELL(arenas, threads, a->natt, 1);
		CELL(arenas, heaps, a->nheaps, known || a->is_main);
		CELL(arenas, heap_bytes, a->heap_bytes, known);
		CELL(arenas, waits, a->waits, 1);
		CELL(arenas, at_attach, a->at_attach, 1);
		CELL(arenas, threads_at_attach, a->threads_at_attach, 1);
	}
}

/* The heaps' and the threads' rows. */
static void heap_thread_rows(struct mw_view *v)
{
	size_t n;
	struct mw_view_val *cells = rows_of(v, MW_VT_heaps, &n), *row;
	const struct mw_heap *h = mw_state_heaps(v->st, &n);
	const struct mw_thread *t;

	for (size_t i = 0; i < n; i++) {
		row = cells + i * MW_VC_COUNT;
		CELL(heaps, address, h[i].addr, h[i].addr != 0);
		CELL(heaps, arena, h[i].arena, h[i].arena != 0);
		CELL(heaps, size, h[i].size, 1);
		CELL(heaps, peak_size, h[i].peak, 1);
		CELL(heaps, grew, h[i].grew, 1);
		CELL(heaps, shrank, h[i].shrank, 1);
		CELL(heaps, created_by_tid, h[i].created_by_tid, 1);
		CELL(heaps, freed, h[i].freed, 1);
		CELL(heaps, at_attach, h[i].at_attach, 1);
	}
	cells = rows_of(v, MW_VT_threads, &n);
	t = mw_state_threads(v->st, &n);
	for (size_t i = 0; i < n; i++) {
		row = cells + i * MW_VC_COUNT;
		CELL(threads, tid, t[i].tid, 1);
		CELL(threads, arena, t[i].arena, t[i].arena != 0);
		CELL(threads, waits, t[i].waits, 1);
		CELL(threads, retries, t[i].retries, 1);
		CELL(threads, hits, t[i].hits, 1);
	}
}

/* The double frees' rows, and the rows of the threads that hit a setjmp
 * probe (their hits of each). */
static void event_rows(struct mw_view *v)
{
	size_t n, k = 0;
	struct mw_view_val *cells = rows_of(v, MW_VT_frees, &n), *row;
	const struct mw_event *e = mw_state_events(v->st, &n);
	const struct mw_thread *t;

	for (size_t i = 0; i < n; i++) {
		if (e[i].known != MW_P_memory_tcache_double_free)
			continue;
		row = cells + k++ * MW_VC_COUNT;
		CELL(frees, tid, e[i].tid, 1);
		CELL(frees, entry, e[i].arg[0], e[i].arg[0] != 0);
		CELL(frees, tc_idx, e[i].arg[1], 1);
	}
	cells = rows_of(v, MW_VT_jumps, &n);
	t = mw_state_threads(v->st, &n);
	k = 0;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *c = t[i].jumps;

		if (!c[0] && !c[1] && !c[2])
			continue;
		row = cells + k++ * MW_VC_COUNT;
		CELL(jumps, tid, t[i].tid, 1);
		CELL(jumps, setjmp, c[0], 1);
		CELL(jumps, longjmp, c[1], 1);
		CELL(jumps, longjmp_target, c[2], 1);
	}
}

/* The settings' rows: mallopt calls and tunables. */
static void setting_rows(struct mw_view *v)
{
	size_t n;
	struct mw_view_val *cells = rows_of(v, MW_VT_settings, &n), *row;
	const struct mw_setting *s = mw_state_settings(v->st, &n);

	for (size_t i = 0; i < n; i++) {
		row = cells + i * MW_VC_COUNT;
		CELL(settings, tid, s[i].tid, 1);
		CELL(settings, source, 0, 1);
		row[MW_VC_settings_source].s = s[i].from_mallopt ? "mallopt" : "tunable";
		CELL(settings, name, 0, 1);
		row[MW_VC_settings_name].s = s[i].name;
		CELL(settings, param, s[i].param, s[i].from_mallopt);
		CELL(settings, value, s[i].value, 1);
		CELL(settings, previous, s[i].previous,
		     s[i].has_previous && !s[i].previous_unavailable);
		row[MW_VC_settings_previous].s = !s[i].has_previous ?
			"no do_set probe (ignored or not traced)" : s[i].previous_unavailable ?
			"previous unavailable (its symbol did not resolve)" : NULL;
	}
}

/* The lists' rows: the threshold changes, the retried allocations. */
static void list_rows(struct mw_view *v)
{
	size_t n;
	struct mw_view_val *cells = rows_of(v, MW_VT_changes, &n), *row;
	const struct mw_threshold_change *c = mw_state_thresholds(v->st, &n, &(uint64_t){ 0 },
								  &(uint64_t){ 0 });
	const struct mw_retry *r;

	for (size_t i = 0; i < n; i++) {
		row = cells + i * MW_VC_COUNT;
		CELL(changes, tid, c[i].tid, 1);
		CELL(changes, source, 0, 1);
		row[MW_VC_changes_source].s = c[i].source;
		CELL(changes, mmap, c[i].mmap, 1);
		CELL(changes, trim, c[i].trim, 1);
	}
	cells = rows_of(v, MW_VT_retries, &n);
	r = mw_state_retries(v->st, &n);
	for (size_t i = 0; i < n; i++) {
		row = cells + i * MW_VC_COUNT;
		CELL(retries, tid, r[i].tid, 1);
		CELL(retries, probe, 0, 1);
		row[MW_VC_retries_probe].s = r[i].probe;
		CELL(retries, bytes, r[i].bytes, 1);
		CELL(retries, arena, r[i].arena, r[i].arena != 0);
	}
}

struct mw_view *mw_view_make(const struct mw_state *st, const struct mw_run_info *ri)
{
	struct mw_view *v = xcalloc(1, sizeof(*v));

	v->st = st;
	figures(v, ri);
	run_figures(v);
	if (mw_state_images_refused(st, NULL))	/* they mix two programs */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (mw_view_fig_refused((enum mw_view_fig)f))
				v->fig[f].known = 0;
	arena_rows(v);
	heap_thread_rows(v);
	event_rows(v);
	math_rows(v, rows_of(v, MW_VT_math, &(size_t){ 0 }));
	setting_rows(v);
	list_rows(v);
	mw_report_cost_of(st, ri, &v->cost);
	return v;
}

void mw_view_free(struct mw_view *v)
{
	if (!v)
		return;
	for (int t = 0; t < MW_VT_COUNT; t++)
		free(v->cell[t]);
	free(v);
}

const struct mw_view_val *mw_view_get(const struct mw_view *v, enum mw_view_fig f)
{
	return &v->fig[f];
}

const struct mw_view_val *mw_view_cell(const struct mw_view *v, size_t i, enum mw_view_col c)
{
	return &v->cell[cols[c].table][i * MW_VC_COUNT + c];
}

const struct mw_arena *mw_view_arena(const struct mw_view *v, size_t i)
{
	return &v->ar[i];
}

const struct mw_report_cost *mw_view_cost(const struct mw_view *v)
{
	return &v->cost;
}

/* serve keeps the highest given out of each (procs.h) */
_Static_assert(MW_VK_COUNT <= MW_PROCS_SHOWN, "MW_PROCS_SHOWN is too small for the counters");

void mw_view_counters(const struct mw_state *st, const struct mw_counters *live, uint64_t *c)
{
	static const struct mw_counters none;
	const struct mw_counters *l = live ? live : &none;
	const struct mw_probe_count *pc;
	size_t n;

	memset(c, 0, MW_VK_COUNT * sizeof(*c));
	c[MW_VK_lock_waits] = l->lock_waits;
	c[MW_VK_heap_grows] = l->heap_grows;
	c[MW_VK_heap_shrinks] = l->heap_shrinks;
	c[MW_VK_sbrk_more] = l->sbrk_more;
	c[MW_VK_sbrk_less] = l->sbrk_less;
	c[MW_VK_sbrk_grown] = l->sbrk_grown;
	c[MW_VK_sbrk_trimmed] = l->sbrk_trimmed;
	pc = mw_state_probes(st, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = pc[i].received;

		switch (pc[i].known) {
		case MW_P_memory_arena_new: c[MW_VK_arenas_created] += r; break;
		case MW_P_memory_arena_reuse: c[MW_VK_arenas_reused] += r; break;
		case MW_P_memory_arena_reuse_free_list: c[MW_VK_arenas_reused_free_list] += r; break;
		case MW_P_memory_arena_retry: case MW_P_memory_malloc_retry:
		case MW_P_memory_realloc_retry: case MW_P_memory_memalign_retry:
		case MW_P_memory_calloc_retry:
			c[MW_VK_retries] += r;
			break;
		case MW_P_memory_heap_new: c[MW_VK_heaps_created] += r; break;
		case MW_P_memory_heap_free: c[MW_VK_heaps_freed] += r; break;
		/* the freed heaps' counts (their G record at memory_heap_free) */
		case MW_P_memory_heap_more: c[MW_VK_heap_grows] += pc[i].hits; break;
		case MW_P_memory_heap_less: c[MW_VK_heap_shrinks] += pc[i].hits; break;
		default: break;
		}
	}
}

uint64_t mw_view_arena_in_use(const struct mw_snap_arena *a)
{
	return a->system_mem > a->free_bytes ? a->system_mem - a->free_bytes : 0;
}

uint64_t mw_view_main_heap(const struct mw_snapshot *s)
{
	return s->main_end > s->sbrk_base ? s->main_end - s->sbrk_base : 0;
}

/* A value of unit u as JSON (PROBES, ATTACH: from the model). */
static json_t *json_of(const struct mw_view *v, enum mw_view_unit u, const struct mw_view_val *x,
		       const struct mw_arena *a)
{
	json_t *o;
	size_t n;
	const struct mw_probe_count *p;

	if (!x->known && u != MW_VU_ADDR && u != MW_VU_BOOL)
		return json_null();
	switch (u) {
	case MW_VU_BOOL: return json_boolean(x->v);
	case MW_VU_STR: return mw_json_str(x->s);
	case MW_VU_ADDR: return mw_json_addr_known((uint64_t)x->v);
	case MW_VU_PROBES:
		o = json_object();
		p = mw_state_probes(v->st, &n);
		for (size_t i = 0; i < n; i++)
			mw_json_set(&o, p[i].name, json_integer((json_int_t)p[i].hits));
		return o;
	case MW_VU_ATTACH:
		o = json_array();	/* a: NULL for a figure (none is ATTACH) */
		for (size_t j = 0; a && j < a->natt; j++)
			mw_json_append(&o, json_pack("{s:i, s:s}", "tid", a->att[j].tid,
				"how", mw_report_attach_name(a->att[j].how)));
		return o;
	default: return json_integer((json_int_t)x->v);
	}
}

void mw_view_json_section(const struct mw_view *v, const char *section, json_t **obj)
{
	for (int f = 0; f < MW_VF_COUNT; f++)
		if (strcmp(figs[f].section, section) == 0 && figs[f].unit != MW_VU_ROWS &&
		    !(figs[f].flags & MW_VF_NOJSON))
			mw_json_set(obj, figs[f].key, json_of(v, figs[f].unit, &v->fig[f], NULL));
}

int mw_view_section_zero(const struct mw_view *v, const char *section)
{
	for (int f = 0; f < MW_VF_COUNT; f++)
		if (strcmp(figs[f].section, section) == 0 && v->fig[f].v)
			return 0;
	return 1;
}

json_t *mw_view_table_json(const struct mw_view *v, enum mw_view_table t)
{
	json_t *arr = json_array();

	for (int64_t i = 0; i < v->fig[table_rows[t]].v; i++) {
		json_t *o = json_object();

		for (int c = 0; c < MW_VC_COUNT; c++) {
			const struct mw_view_val *x = mw_view_cell(v, (size_t)i, (enum mw_view_col)c);

			if (cols[c].table == t && (cols[c].unit != MW_VU_OPT || x->known))
				mw_json_set(&o, cols[c].key, json_of(v, cols[c].unit, x,
					t == MW_VT_arenas ? &v->ar[i] : NULL));
		}
		mw_json_append(&arr, o);
	}
	return arr;
}

/* Arena a's threads as the text's last column: "101(new) 102(reuse)",
 * " and 3 more", " 4 attached before tracing"; "-" when none. */
static void attach_text(FILE *f, const struct mw_arena *a, int fork, size_t max)
{
	if (!a)		/* not an arena row: no ATTACH column has another table */
		return;
	for (size_t j = 0; j < a->natt && j < max; j++)
		fprintf(f, "%s%d(%s)", j ? " " : "", a->att[j].tid,
			mw_report_attach_name(a->att[j].how));
	if (a->natt > max)
		fprintf(f, " and %zu more", a->natt - max);
	if (a->threads_at_attach)	/* a forked child: its parent's count */
		fprintf(f, "%s%" PRIu64 " attached %s", a->natt ? " " : "", a->threads_at_attach,
			fork ? "in its parent at fork" : "before tracing");
	fprintf(f, "%s", a->natt || a->threads_at_attach ? "" : "-");
}

/* Cell x of column c (of arena a, for an arena row) as the text shows
 * it, into buf. */
static const char *cell_text(const struct mw_view_val *x, enum mw_view_col c,
			     const struct mw_arena *a, int fork, char *buf, size_t len)
{
	if (c == MW_VC_arenas_main)
		return x->v ? "main" : "arena";
	if (c == MW_VC_heaps_freed)
		return x->v ? "freed" : "live";
	if (c == MW_VC_arenas_created_by_tid && !x->known && a)	/* none: made before */
		return a->at_attach && !a->is_main ? fork ? "(parent)" : "(before)" : "-";
	if (!x->known)
		return "?";
	if (cols[c].unit == MW_VU_BYTES)
		return mw_human_bytes((uint64_t)x->v, buf, len);
	if (cols[c].unit == MW_VU_ADDR)
		snprintf(buf, len, "0x%" PRIx64, (uint64_t)x->v);
	else
		snprintf(buf, len, "%" PRId64, x->v);
	return buf;
}

/* Row i of table t (-1: the headings), each column in its text place. */
static void row_line(FILE *f, const struct mw_view *v, enum mw_view_table t, int64_t i,
		     int fork, size_t max)
{
	const struct mw_arena *a = t == MW_VT_arenas && i >= 0 ? &v->ar[i] : NULL;
	char buf[32];

	for (int p = 1; p <= MW_VC_COUNT; p++)
		for (int c = 0; c < MW_VC_COUNT; c++) {
			if (cols[c].table != t || cols[c].tpos != p)
				continue;
			fputs(p == 1 ? "  " : cols[c].width ? " " : "  ", f);
			if (i < 0)
				fprintf(f, "%*s", cols[c].width, cols[c].head);
			else if (cols[c].unit == MW_VU_ATTACH)
				attach_text(f, a, fork, max);
			else
				fprintf(f, "%*s", cols[c].width, cell_text(mw_view_cell(v,
					(size_t)i, (enum mw_view_col)c), (enum mw_view_col)c, a,
					fork, buf, sizeof(buf)));
		}
	fputc('\n', f);
}

size_t mw_view_table_text(FILE *f, const struct mw_view *v, enum mw_view_table t,
			  const unsigned char *show, size_t max, int fork, size_t max_threads)
{
	size_t shown = 0;

	row_line(f, v, t, -1, fork, max_threads);
	for (int64_t i = 0; i < v->fig[table_rows[t]].v && shown < max; i++)
		if (!show || show[i]) {
			row_line(f, v, t, i, fork, max_threads);
			shown++;
		}
	return shown;
}

void mw_view_totals(struct mw_view *const *v, size_t n, struct mw_view_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->processes = n;
	for (int f = 0; f < MW_VF_COUNT; f++)
		t->fig[f].known = 1;
	for (size_t i = 0; i < n; i++) {
		t->unknown += mw_state_attach_refused(v[i]->st) != NULL;
		t->mixed += mw_state_images_refused(v[i]->st, NULL) != NULL;
		for (int f = 0; f < MW_VF_COUNT; f++)
			t->fig[f].v += v[i]->fig[f].v;
		for (int fam = 0; fam <= MW_FAM_UNKNOWN; fam++) {
			t->cost.by_family[fam] += v[i]->cost.by_family[fam];
			t->cost.total += v[i]->cost.by_family[fam];
		}
	}
	if (n)
		t->cost.traced_ns = v[0]->cost.traced_ns;
	mw_report_cost_decide(&t->cost);
	if (t->unknown)	/* not a sum of what is known */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (figs[f].flags & MW_VF_ATTACH)
				t->fig[f].known = 0;
	if (t->mixed)	/* nor with a process's refused */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (mw_view_fig_refused((enum mw_view_fig)f))
				t->fig[f].known = 0;
}

json_t *mw_view_totals_json(const struct mw_view_totals *t)
{
	json_t *o = json_pack("{s:I}", "processes", (json_int_t)t->processes);

	for (int f = 0; f < MW_VF_COUNT; f++)
		if (figs[f].flags & MW_VF_TOTAL)
			mw_json_set(&o, figs[f].name, t->fig[f].known ?
				    json_integer((json_int_t)t->fig[f].v) : json_null());
	if (t->unknown)
		mw_json_set(&o, "unknown_processes", json_integer((json_int_t)t->unknown));
	if (t->mixed)
		mw_json_set(&o, "refused_processes", json_integer((json_int_t)t->mixed));
	mw_json_set(&o, "cost", mw_report_cost_json_of(&t->cost));
	return o;
}

/* "" for a count of 1, "s" for any other: "1 thread", "2 threads" */
static const char *s1(const struct mw_view_totals *t, enum mw_view_fig f)
{
	return t->fig[f].v == 1 ? "" : "s";
}

void mw_view_totals_text(FILE *f, const struct mw_view_totals *t, int cost)
{
	char a[32];
	int64_t net = t->fig[MW_VF_sbrk_net].v, r = t->fig[MW_VF_retries].v;

	fprintf(f, "\nmallocwatch: %zu process%s in all: ", t->processes,
		t->processes == 1 ? "" : "es");
	if (t->mixed) {	/* a process's figures mix its images: no sum */
		fprintf(f, "? arenas, ? heaps, ? threads, sbrk net ?, ? retries; ? events (%zu "
			"process%s figures from the tracer REFUSED), %" PRId64
			" lost\n", t->mixed, t->mixed == 1 ? "'s" : "es'", t->fig[MW_VF_lost].v);
		if (cost)
			mw_report_cost_lines(f, &t->cost, " in all processes");
		return;
	}
	if (t->unknown)	/* their allocators at attach are unknown */
		fprintf(f, "? arenas, ? heaps (%zu process%s allocator at attach unknown), ",
			t->unknown, t->unknown == 1 ? "'s" : "es'");
	else
		fprintf(f, "%" PRId64 " arena%s, %" PRId64 " heap%s, ", t->fig[MW_VF_arenas].v,
			s1(t, MW_VF_arenas), t->fig[MW_VF_heaps].v, s1(t, MW_VF_heaps));
	fprintf(f, "%" PRId64 " thread%s, sbrk net %s%s, %" PRId64 " retr%s; %" PRId64
		" event%s, %" PRId64 " lost\n", t->fig[MW_VF_threads].v, s1(t, MW_VF_threads),
		net < 0 ? "-" : "", mw_human_bytes((uint64_t)(net < 0 ? -net : net), a, sizeof(a)),
		r, r == 1 ? "y" : "ies", t->fig[MW_VF_events].v, s1(t, MW_VF_events),
		t->fig[MW_VF_lost].v);
	if (cost)
		mw_report_cost_lines(f, &t->cost, " in all processes");
}
