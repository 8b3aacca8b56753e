/* view.c - one view of a run (view.h): the figures of view.def computed
 * from the model once (their tables' names in view_table.c, their rows
 * in view_rows.c, what every report renders of them the same way in
 * view_out.c); and serve's counters of a process.  E.g. of
 * tests/streams/storm24.mw: events 2236, arenas 16, threads 70, sbrk_net
 * 20799488, mmap_threshold 131072.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "probetab.h"
#include "procs.h"
#include "report.h"
#include "report_cost.h"
#include "run_info.h"
#include "snapshot.h"
#include "view.h"
#include "units.h"
#include "view_int.h"
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

#define SET(f, val) (v->fig[MW_VF_##f] = (struct mw_view_val){ .v = (int64_t)(val), .known = 1 })

/* The run's own figures: the images it replaced (exec), what was
 * counted but not kept, why the allocator at attach is unknown, why its
 * figures are refused and when that was found (since the run's start). */
static void run_figures(struct mw_view *v)
{
	const struct mw_state *st = v->st;
	const struct mw_state_omitted *o = mw_state_omitted_get(st);
	uint64_t before, ns, origin = mw_state_origin(st);
	const char *mixed = mw_state_images_refused(st, &ns);

	SET(execs, mw_state_execs(st, &before));
	SET(hits_before, before);
	v->fig[MW_VF_hits_before].known = mw_count_known(before);	/* else unknown */
	SET(omitted_events, o->events);
	SET(omitted_settings, o->settings);
	SET(omitted_retries, o->retries);
	SET(omitted_thresholds, o->thresholds);
	SET(omitted_marks, o->marks);
	SET(keep, MW_STATE_KEEP);
	SET(attach_unknown, mw_state_attach_refused(st) != NULL);
	v->fig[MW_VF_attach_unknown].s = mw_state_attach_refused(st);
	SET(images_refused, mixed != NULL);
	v->fig[MW_VF_images_refused].s = mixed;
	SET(images_refused_ns, mixed && ns >= origin ? ns - origin : 0);
	v->fig[MW_VF_images_refused_ns].known = mixed && ns && origin && ns >= origin;
}

/* Did the stream declare a probe of family fam (traced, hit or not)? */
static int family_traced(const struct mw_probe_count *p, size_t n, enum mw_family fam)
{
	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);

		if (info && info->family == fam)
			return 1;
	}
	return 0;
}

/* The probes of the setjmp family traced (hit or not) and their hits,
 * whether a heap and an sbrk probe were; the libm traced and its
 * slow-math probe sites. */
static void probe_figures(struct mw_view *v)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(v->st, &n);
	int sites, traced = 0;
	const char *libm = mw_state_libm(v->st, &sites);
	uint64_t hits = 0;

	for (size_t i = 0; i < n; i++)
		if (p[i].known == MW_P_setjmp || p[i].known == MW_P_longjmp ||
		    p[i].known == MW_P_longjmp_target) {
			traced = 1;
			hits += p[i].hits;
		}
	SET(setjmp_traced, traced);
	SET(setjmp_hits, hits);
	SET(heap_traced, family_traced(p, n, MW_FAM_HEAP));
	SET(sbrk_traced, family_traced(p, n, MW_FAM_SBRK));
	v->fig[MW_VF_math_libm] = (struct mw_view_val){ .v = libm != NULL, .known = libm != NULL,
							.s = libm };
	SET(math_sites, libm ? sites : 0);
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
	mw_view_list_counts(v);
	probe_figures(v);
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	SET(events, total);
	SET(lost, lost);
	v->fig[MW_VF_lost].known = mw_count_known(lost);	/* else unknown (units.h) */
	v->fig[MW_VF_events].known = mw_count_known(total);
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
	SET(thresholds_seeded, mw_state_seeded(st));
	SET(pid, mw_state_pid(st));
	SET(origin_ns, mw_state_origin(st));
	if (mw_state_attach_refused(st))	/* those there before tracing */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (figs[f].flags & MW_VF_ATTACH && figs[f].unit != MW_VU_ROWS)
				v->fig[f].known = 0;
}

int mw_view_fig_refused(enum mw_view_fig f)
{
	/* what went wrong in the stream is the run's, and right; so are
	 * the images it replaced, drained (the hits before the last) */
	return f != MW_VF_keep && f != MW_VF_pid && f != MW_VF_origin_ns && f != MW_VF_lost && f != MW_VF_garbled && f != MW_VF_complete &&
	       f != MW_VF_full_tables && f != MW_VF_attach_unknown && f != MW_VF_execs &&
	       f != MW_VF_hits_before && f != MW_VF_images_refused &&
	       f != MW_VF_images_refused_ns;
}

/* Each table's columns, in view.def's order: their places in a row. */
static void layout(struct mw_view *v)
{
	for (int c = 0; c < MW_VC_COUNT; c++)
		v->idx[c] = v->ncol[cols[c].table]++;
}

/* What tracing cost the run: the model's hits by family, ri's time
 * traced (report_cost.h). */
static void cost_of(const struct mw_state *st, const struct mw_run_info *ri,
		    struct mw_report_cost *c)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(st, &n);

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);

		c->by_family[info ? info->family : MW_FAM_UNKNOWN] += p[i].hits;
		c->total += p[i].hits;
	}
	c->traced_ns = ri->traced_ns;
	mw_report_cost_decide(c);
}

/* The findings of the last reading (the exit's with -c, the end's with
 * -p: its snapshot and ledger), with the lock waits of the arenas' rows
 * (none when the figures are refused: they mix its images), and their
 * text. */
static void findings(struct mw_view *v, const struct mw_run_info *ri)
{
	const struct mw_snapshot *s = ri->ledger_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;
	size_t na = v->fig[MW_VF_images_refused].v ? 0 : (size_t)v->fig[MW_VF_arenas].v;
	struct mw_finding_waits *w;
	size_t len = 0;
	FILE *f;

	if (!s || !l)
		return;
	w = xcalloc(na + 1, sizeof(*w));
	for (size_t i = 0; i < na; i++)
		w[i] = (struct mw_finding_waits){
			.arena = (uint64_t)mw_view_cell(v, i, MW_VC_arenas_address)->v,
			.waits = (uint64_t)mw_view_cell(v, i, MW_VC_arenas_waits)->v };
	mw_findings_make_cmd(s, l, ri->env && ri->env->cpus > 0 ? (uint64_t)ri->env->cpus : 1,
			     w, na, ri->argv, &v->findings, &v->nfindings);
	free(w);
	if (v->nfindings && (f = open_memstream(&v->findings_text, &len))) {
		mw_findings_text(f, v->findings, v->nfindings);
		if (fclose(f) != 0) {
			free(v->findings_text);
			v->findings_text = NULL;
		}
	}
}

struct mw_view *mw_view_make(const struct mw_state *st, const struct mw_run_info *ri)
{
	struct mw_view *v = xcalloc(1, sizeof(*v));

	v->st = st;
	v->ri = ri;
	layout(v);
	figures(v, ri);
	run_figures(v);
	if (mw_state_images_refused(st, NULL))	/* they mix two programs */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (mw_view_fig_refused((enum mw_view_fig)f))
				v->fig[f].known = 0;
	mw_view_rows(v);
	cost_of(st, ri, &v->cost);
	findings(v, ri);
	mw_view_timeline_make(v);
	return v;
}

void mw_view_free(struct mw_view *v)
{
	if (!v)
		return;
	for (int t = 0; t < MW_VT_COUNT; t++) {
		free(v->cell[t]);
		free(v->args[t]);
		free(v->argat[t]);
	}
	free(v->findings);
	free(v->findings_text);
	mw_view_timeline_free(&v->tl);
	free(v);
}

const struct mw_view_val *mw_view_get(const struct mw_view *v, enum mw_view_fig f)
{
	return &v->fig[f];
}

const struct mw_view_val *mw_view_cell(const struct mw_view *v, size_t i, enum mw_view_col c)
{
	enum mw_view_table t = cols[c].table;

	return &v->cell[t][i * v->ncol[t] + v->idx[c]];
}

const struct mw_view_arg *mw_view_args(const struct mw_view *v, size_t i, enum mw_view_col c)
{
	enum mw_view_table t = cols[c].table;	/* one ARGS column at most */

	return &v->args[t][v->argat[t][i]];
}

const struct mw_report_cost *mw_view_cost(const struct mw_view *v)
{
	return &v->cost;
}

const struct mw_run_info *mw_view_run_info(const struct mw_view *v)
{
	return v->ri;
}

const struct mw_view_timeline *mw_view_timeline(const struct mw_view *v)
{
	return &v->tl;
}

const struct mw_finding *mw_view_findings(const struct mw_view *v, size_t *n)
{
	*n = v->nfindings;
	return v->findings;
}

const char *mw_view_findings_text(const struct mw_view *v)
{
	return v->ri->findings_text ? v->ri->findings_text : v->findings_text;
}

/* serve keeps the highest given out of each (procs.h) */
_Static_assert(MW_VK_COUNT <= MW_PROCS_SHOWN, "MW_PROCS_SHOWN is too small for the counters");

/* The counter of serve --probes a probe (MW_P_*) adds its hits to, the
 * hits received (*all 0) or, the heaps' grows and shrinks, all its hits
 * (*all 1: the freed heaps' counts, their G record at memory_heap_free);
 * -1 none. */
static int counter_of(int known, int *all)
{
	*all = known == MW_P_memory_heap_more || known == MW_P_memory_heap_less;
	switch (known) {
	case MW_P_memory_arena_new: return MW_VK_arenas_created;
	case MW_P_memory_arena_reuse: return MW_VK_arenas_reused;
	case MW_P_memory_arena_reuse_free_list: return MW_VK_arenas_reused_free_list;
	case MW_P_memory_arena_retry: case MW_P_memory_malloc_retry:
	case MW_P_memory_realloc_retry: case MW_P_memory_memalign_retry:
	case MW_P_memory_calloc_retry:
		return MW_VK_retries;
	case MW_P_memory_heap_new: return MW_VK_heaps_created;
	case MW_P_memory_heap_free: return MW_VK_heaps_freed;
	case MW_P_memory_heap_more: return MW_VK_heap_grows;
	case MW_P_memory_heap_less: return MW_VK_heap_shrinks;
	default: return -1;
	}
}

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
		int all, k = counter_of(pc[i].known, &all);

		if (k >= 0)	/* held at UINT64_MAX: serve leaves it out then */
			c[k] = mw_count_add(c[k], all ? pc[i].hits : pc[i].received);
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

