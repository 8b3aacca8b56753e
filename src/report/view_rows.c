/* view_rows.c - the view's tables (view.def's MW_VIEW_COL), a row each
 * from the model: the arenas, heaps, threads, tcache double frees,
 * setjmp threads, slow-math probes hit, settings, threshold changes and
 * retries; and the lists the reports print whole or in part: the setjmp
 * probes' jmp_bufs, code addresses and longjmp values (busiest first),
 * the slow-math probes' samples and the events kept, with their
 * arguments.  E.g. the events table of tests/streams/edge-signal.mw has
 * the row { probe memory_mallopt_free_dyn_thresholds, tid 11016, args
 * [ 135168, 1 ], own 1 }.
 */
#include <stdlib.h>
#include <string.h>

#include "probetab.h"
#include "view.h"
#include "units.h"
#include "view_int.h"
#include "xalloc.h"

#define SET(f, val) (v->fig[MW_VF_##f] = (struct mw_view_val){ .v = (int64_t)(val), .known = 1 })
#define CELL(t, c, val, k) (row[v->idx[MW_VC_##t##_##c]] = \
	(struct mw_view_val){ .v = (int64_t)(val), .known = (k) })

_Static_assert(sizeof(((struct mw_event *)0)->arg) / sizeof(int64_t) == MW_MAX_ARGS,
	       "an event holds MW_MAX_ARGS arguments");

/* Table t's rows, n of them (its ROWS figure's), ncol[t] cells each. */
static struct mw_view_val *rows_of(struct mw_view *v, enum mw_view_table t, size_t *n)
{
	*n = (size_t)v->fig[mw_view_table_rows(t)].v;
	return v->cell[t] = xcalloc((*n + 1) * v->ncol[t], sizeof(*v->cell[t]));
}

/* Is p a slow-math probe that was hit (a row of the math table)? */
static int math_hit(const struct mw_probe_count *p)
{
	const struct mw_probe_info *info = mw_probe_info(p->known);

	return info && info->family == MW_FAM_MATH && p->hits;
}

/* The slow-math probes hit, into their rows when fill; how many. */
static size_t math_rows(struct mw_view *v, int fill)
{
	size_t n, k = 0;
	const struct mw_probe_count *p = mw_state_probes(v->st, &n);
	struct mw_view_val *cells = fill ? rows_of(v, MW_VT_math, &(size_t){ 0 }) : NULL;

	for (size_t i = 0; i < n; i++) {
		struct mw_view_val *row;

		if (!math_hit(&p[i]))
			continue;
		row = cells ? cells + k * v->ncol[MW_VT_math] : NULL;
		k++;
		if (!row)
			continue;
		CELL(math, probe, p[i].known, 1);
		row[v->idx[MW_VC_math_probe]].s = p[i].name;
		CELL(math, hits, p[i].hits, 1);
		CELL(math, samples_missing, mw_probe_samples_due(&p[i]) > p[i].samples ?
		     mw_probe_samples_due(&p[i]) - p[i].samples : 0, 1);
	}
	return k;
}

/* Argument j's name: probes.def's ("_" past the probe's), "result" for a
 * slow-math probe's 4th and later (atan2's z); NULL past the three the
 * table names, or for a probe not in it. */
static const char *arg_name(const struct mw_probe_info *info, int j)
{
	if (!info)
		return NULL;
	if (j < 3)
		return info->arg_name[j];
	return info->family == MW_FAM_MATH ? "result" : NULL;
}

/* Room for table t's n rows' arguments, total of them. */
static void args_room(struct mw_view *v, enum mw_view_table t, size_t n, size_t total)
{
	v->argat[t] = xcalloc(n + 1, sizeof(*v->argat[t]));
	v->args[t] = xcalloc(total + 1, sizeof(*v->args[t]));
}

/* Event e's arguments as row i's of table t, from *at on (which they
 * advance). */
static void put_args(struct mw_view *v, enum mw_view_table t, size_t i,
		     const struct mw_event *e, size_t *at)
{
	const struct mw_probe_info *info = mw_probe_info(e->known);
	struct mw_view_arg *a = v->args[t] + *at;

	v->argat[t][i] = *at;
	for (int j = 0; j < e->nargs; j++)
		a[j] = (struct mw_view_arg){
			.val = { .v = e->arg[j], .known = !(e->unavail & (1u << j)) },
			.name = arg_name(info, j), .unit = mw_probe_arg_unit(info, j) };
	*at += (size_t)e->nargs;
}

/* The slow-math samples: each slow-math probe hit's events kept (by
 * name), into their rows when fill (function: the probe's row); how
 * many, and their arguments in *nargs. */
static size_t sample_rows(struct mw_view *v, int fill, size_t *nargs)
{
	size_t np, ne, k = 0, fn = 0, at = 0;
	const struct mw_probe_count *p = mw_state_probes(v->st, &np);
	const struct mw_event *e = mw_state_events(v->st, &ne);
	struct mw_view_val *cells = NULL, *row;

	if (fill) {
		cells = rows_of(v, MW_VT_samples, &(size_t){ 0 });
		args_room(v, MW_VT_samples, (size_t)v->fig[MW_VF_math_samples].v, *nargs);
	}
	*nargs = 0;
	for (size_t i = 0; i < np; i++) {
		if (!math_hit(&p[i]))
			continue;
		for (size_t j = 0; j < ne; j++) {
			if (strcmp(e[j].name, p[i].name) != 0)
				continue;
			*nargs += (size_t)e[j].nargs;
			if (fill) {
				row = cells + k * v->ncol[MW_VT_samples];
				CELL(samples, function, fn, 1);
				CELL(samples, tid, e[j].tid, 1);
				CELL(samples, args, e[j].nargs, 1);
				put_args(v, MW_VT_samples, k, &e[j], &at);
			}
			k++;
		}
		fn++;
	}
	return k;
}

/* Is event e shown in a section of its own (a setting, a retry, a
 * tcache check, a threshold change, a slow-math sample)? */
static int own_section(const struct mw_event *e)
{
	const struct mw_probe_info *info = mw_probe_info(e->known);

	if (!info)
		return 0;
	switch (info->family) {
	case MW_FAM_MALLOPT: case MW_FAM_TUNABLE: case MW_FAM_RETRY:
	case MW_FAM_TCACHE: case MW_FAM_THRESHOLD: case MW_FAM_MATH:
		return 1;
	default:
		return 0;
	}
}

/* The probes whose hits no thread's count holds (the heaps' and
 * main_arena's), into their rows when fill; how many. */
static size_t unthreaded_rows(struct mw_view *v, int fill)
{
	size_t n, k = 0;
	const struct mw_probe_count *p = mw_state_probes(v->st, &n);
	struct mw_view_val *cells = fill ? rows_of(v, MW_VT_unthreaded, &(size_t){ 0 }) : NULL;

	for (size_t i = 0; i < n; i++) {
		uint64_t u = mw_state_probe_unthreaded(v->st, p[i].known);
		struct mw_view_val *row;

		if (!u)
			continue;
		row = cells ? cells + k * v->ncol[MW_VT_unthreaded] : NULL;
		k++;
		if (!row)
			continue;
		CELL(unthreaded, probe, p[i].known, 1);
		row[v->idx[MW_VC_unthreaded_probe]].s = p[i].name;
		CELL(unthreaded, hits, u, 1);
	}
	return k;
}

/* The events kept, a row each, with their arguments. */
static void log_rows(struct mw_view *v)
{
	size_t n, total = 0, at = 0;
	const struct mw_event *e = mw_state_events(v->st, &n);
	struct mw_view_val *cells = rows_of(v, MW_VT_events, &n), *row;

	for (size_t i = 0; i < n; i++)
		total += (size_t)e[i].nargs;
	args_room(v, MW_VT_events, n, total);
	for (size_t i = 0; i < n; i++) {
		row = cells + i * v->ncol[MW_VT_events];
		CELL(events, probe, e[i].known, 1);
		row[v->idx[MW_VC_events_probe]].s = e[i].name;
		CELL(events, tid, e[i].tid, 1);
		CELL(events, args, e[i].nargs, 1);
		CELL(events, own, own_section(&e[i]), 1);
		put_args(v, MW_VT_events, i, &e[i], &at);
	}
}

/* How many J records of kind the model holds. */
static size_t jumps_of(const struct mw_view *v, enum mw_jump_kind kind)
{
	size_t n, k = 0;
	const struct mw_jump *j = mw_state_jumps(v->st, &n);

	for (size_t i = 0; i < n; i++)
		k += j[i].kind == kind;
	return k;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct mw_jump *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Table t: the J records of kind, busiest first (ties by key, ascending),
 * into its columns probe, key and count. */
static void jump_rows(struct mw_view *v, enum mw_view_table t, enum mw_jump_kind kind,
		      enum mw_view_col probe, enum mw_view_col key, enum mw_view_col count)
{
	size_t all, n, k = 0;
	const struct mw_jump *j = mw_state_jumps(v->st, &all);
	struct mw_jump *s = xcalloc(all + 1, sizeof(*s));
	struct mw_view_val *cells = rows_of(v, t, &n);

	for (size_t i = 0; i < all; i++)
		if (j[i].kind == kind)
			s[k++] = j[i];
	qsort(s, k, sizeof(*s), by_count_desc);
	for (size_t i = 0; i < k && i < n; i++) {
		struct mw_view_val *row = cells + i * v->ncol[t];

		row[v->idx[probe]] = (struct mw_view_val){ .known = 1, .s = s[i].name };
		row[v->idx[key]] = (struct mw_view_val){ .v = s[i].key,
			.known = kind == MW_JUMP_VALUE || s[i].key != 0 };
		row[v->idx[count]] = (struct mw_view_val){ .v = (int64_t)s[i].count, .known = 1 };
	}
	free(s);
}

void mw_view_list_counts(struct mw_view *v)
{
	size_t n, k = 0, nargs;
	const struct mw_event *e = mw_state_events(v->st, &n);
	const struct mw_thread *t;

	for (size_t i = 0; i < n; i++)
		k += e[i].known == MW_P_memory_tcache_double_free;
	SET(double_frees, k);
	SET(events_log, n);
	k = 0;
	for (size_t i = 0; i < n; i++)
		k += !own_section(&e[i]);
	SET(other_events, k);
	t = mw_state_threads(v->st, &n);
	k = 0;
	for (size_t i = 0; i < n; i++)
		k += t[i].jumps[0] || t[i].jumps[1] || t[i].jumps[2];
	SET(jump_threads, k);
	SET(jmp_bufs, jumps_of(v, MW_JUMP_BUF));
	SET(code_addresses, jumps_of(v, MW_JUMP_ADDR));
	SET(longjmp_values, jumps_of(v, MW_JUMP_VALUE));
	SET(math_functions, math_rows(v, 0));
	SET(math_samples, sample_rows(v, 0, &nargs));
	SET(unthreaded_probes, unthreaded_rows(v, 0));
}

/* The arenas' rows. */
static void arena_rows(struct mw_view *v)
{
	size_t n;
	struct mw_view_val *cells = rows_of(v, MW_VT_arenas, &n);
	int unknown = mw_state_attach_refused(v->st) != NULL;

	for (size_t i = 0; i < n; i++) {
		const struct mw_arena *a = &v->ar[i];
		struct mw_view_val *row = cells + i * v->ncol[MW_VT_arenas];
		/* no attach snapshot: an arena not made while traced may have
		 * had heaps before (main: bytes before), which events never saw */
		int known = !unknown || (!a->is_main && a->created_by_tid);

		CELL(arenas, address, a->addr, a->addr != 0);
		CELL(arenas, main, a->is_main, 1);
		CELL(arenas, created_by_tid, a->created_by_tid, a->created_by_tid != 0);
		CELL(arenas, threads, a->natt, 1);
		CELL(arenas, heaps, a->nheaps, known || a->is_main);
		CELL(arenas, heap_bytes, a->heap_bytes, known && mw_count_known(a->heap_bytes));
		CELL(arenas, waits, a->waits, mw_count_known(a->waits));	/* summed */
		CELL(arenas, at_attach, a->at_attach, 1);
		CELL(arenas, threads_at_attach, a->threads_at_attach, 1);
		CELL(arenas, create_size, a->create_size, 1);
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
		row = cells + i * v->ncol[MW_VT_heaps];
		CELL(heaps, address, h[i].addr, h[i].addr != 0);
		CELL(heaps, arena, h[i].arena, h[i].arena != 0);
		CELL(heaps, size, h[i].size, 1);
		CELL(heaps, peak_size, h[i].peak, 1);
		CELL(heaps, grew, h[i].grew, mw_count_known(h[i].grew));
		CELL(heaps, shrank, h[i].shrank, mw_count_known(h[i].shrank));
		CELL(heaps, created_by_tid, h[i].created_by_tid, 1);
		CELL(heaps, freed, h[i].freed, 1);
		CELL(heaps, at_attach, h[i].at_attach, 1);
		CELL(heaps, new_ns, h[i].new_ns, 1);
		CELL(heaps, free_ns, h[i].free_ns, 1);
	}
	cells = rows_of(v, MW_VT_threads, &n);
	t = mw_state_threads(v->st, &n);
	for (size_t i = 0; i < n; i++) {
		row = cells + i * v->ncol[MW_VT_threads];
		CELL(threads, tid, t[i].tid, 1);
		CELL(threads, arena, t[i].arena, t[i].arena != 0);
		CELL(threads, waits, t[i].waits, mw_count_known(t[i].waits));
		CELL(threads, retries, t[i].retries, 1);
		CELL(threads, hits, t[i].hits, 1);
		CELL(threads, first_ns, t[i].first_ns, 1);
		CELL(threads, last_ns, t[i].last_ns, 1);
		CELL(threads, gone_ns, t[i].gone_ns, 1);
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
		row = cells + k++ * v->ncol[MW_VT_frees];
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
		row = cells + k++ * v->ncol[MW_VT_jumps];
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
		row = cells + i * v->ncol[MW_VT_settings];
		CELL(settings, tid, s[i].tid, 1);
		CELL(settings, source, 0, 1);
		row[v->idx[MW_VC_settings_source]].s = s[i].from_mallopt ? "mallopt" : "tunable";
		CELL(settings, name, 0, 1);
		row[v->idx[MW_VC_settings_name]].s = s[i].name;
		CELL(settings, param, s[i].param, s[i].from_mallopt);
		CELL(settings, value, s[i].value, 1);
		CELL(settings, previous, s[i].previous,
		     s[i].has_previous && !s[i].previous_unavailable);
		row[v->idx[MW_VC_settings_previous]].s = !s[i].has_previous ?
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
		row = cells + i * v->ncol[MW_VT_changes];
		CELL(changes, tid, c[i].tid, 1);
		CELL(changes, source, 0, 1);
		row[v->idx[MW_VC_changes_source]].s = c[i].source;
		CELL(changes, mmap, c[i].mmap, 1);
		CELL(changes, trim, c[i].trim, 1);
	}
	cells = rows_of(v, MW_VT_retries, &n);
	r = mw_state_retries(v->st, &n);
	for (size_t i = 0; i < n; i++) {
		row = cells + i * v->ncol[MW_VT_retries];
		CELL(retries, tid, r[i].tid, 1);
		CELL(retries, probe, 0, 1);
		row[v->idx[MW_VC_retries_probe]].s = r[i].probe;
		CELL(retries, bytes, r[i].bytes, 1);
		CELL(retries, arena, r[i].arena, r[i].arena != 0);
	}
}


void mw_view_rows(struct mw_view *v)
{
	size_t nargs;

	arena_rows(v);
	heap_thread_rows(v);
	event_rows(v);
	math_rows(v, 1);
	setting_rows(v);
	list_rows(v);
	jump_rows(v, MW_VT_jmp_bufs, MW_JUMP_BUF, MW_VC_jmp_bufs_probe, MW_VC_jmp_bufs_address,
		  MW_VC_jmp_bufs_count);
	jump_rows(v, MW_VT_code_addresses, MW_JUMP_ADDR, MW_VC_code_addresses_probe,
		  MW_VC_code_addresses_address, MW_VC_code_addresses_count);
	jump_rows(v, MW_VT_longjmp_values, MW_JUMP_VALUE, MW_VC_longjmp_values_probe,
		  MW_VC_longjmp_values_value, MW_VC_longjmp_values_count);
	sample_rows(v, 0, &nargs);	/* their arguments' count, then them */
	sample_rows(v, 1, &nargs);
	unthreaded_rows(v, 1);
	log_rows(v);
}
