/* view_out.c - what every report renders of a view (view.h) the same
 * way: a section of figures and a table as JSON, the JSON's nulls when
 * the figures are refused, a table as the text's, and the totals of
 * several processes' views, summed, as JSON and as text.  E.g. the
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
#include "report_cost.h"
#include "units.h"
#include "view.h"
#include "view_int.h"

#define FIG(f) (mw_view_fig_info((enum mw_view_fig)(f)))
#define COL(c) (mw_view_col_info((enum mw_view_col)(c)))

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

/* Row i's arguments in ARGS column c as a JSON array: each a number,
 * null when it could not be read. */
static json_t *args_json(const struct mw_view *v, size_t i, enum mw_view_col c)
{
	const struct mw_view_arg *a = mw_view_args(v, i, c);
	json_t *o = json_array();

	for (int64_t j = 0; j < mw_view_cell(v, i, c)->v; j++)
		mw_json_append(&o, a[j].val.known ? json_integer((json_int_t)a[j].val.v) :
				   json_null());
	return o;
}

/* A value of unit u as JSON (PROBES, ATTACH: from the model; a: the
 * arena of an arena row's ATTACH cell). */
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
		if (strcmp(FIG(f)->section, section) == 0 && FIG(f)->unit != MW_VU_ROWS &&
		    !(FIG(f)->flags & MW_VF_NOJSON))
			mw_json_set(obj, FIG(f)->key, json_of(v, FIG(f)->unit, &v->fig[f], NULL));
}

int mw_view_section_zero(const struct mw_view *v, const char *section)
{
	for (int f = 0; f < MW_VF_COUNT; f++)
		if (strcmp(FIG(f)->section, section) == 0 && v->fig[f].v)
			return 0;
	return 1;
}

json_t *mw_view_table_json(const struct mw_view *v, enum mw_view_table t)
{
	json_t *arr = json_array();

	for (int64_t i = 0; i < v->fig[mw_view_table_rows(t)].v; i++) {
		json_t *o = json_object();

		for (int c = 0; c < MW_VC_COUNT; c++) {
			const struct mw_view_val *x;

			if (COL(c)->table != t || !COL(c)->key)
				continue;
			x = mw_view_cell(v, (size_t)i, (enum mw_view_col)c);
			if (COL(c)->unit == MW_VU_ARGS)
				mw_json_set(&o, COL(c)->key, args_json(v, (size_t)i,
								       (enum mw_view_col)c));
			else if (COL(c)->unit != MW_VU_OPT || x->known)
				mw_json_set(&o, COL(c)->key, json_of(v, COL(c)->unit, x,
					t == MW_VT_arenas ? &v->ar[i] : NULL));
		}
		mw_json_append(&arr, o);
	}
	return arr;
}

/* The member of the JSON report's root that figure f is in: its key in
 * the root, else the first name of its section (into buf). */
static const char *root_key(int f, char *buf, size_t len)
{
	if (!*FIG(f)->section)
		return FIG(f)->key;
	snprintf(buf, len, "%.*s", (int)strcspn(FIG(f)->section, "."), FIG(f)->section);
	return buf;
}

/* Are all the JSON's figures in the root's member key refused? */
static int key_refused(const char *key)
{
	char buf[64];

	for (int f = 0; f < MW_VF_COUNT; f++)
		if (!(FIG(f)->flags & MW_VF_NOJSON) && !strcmp(root_key(f, buf, sizeof(buf)), key) &&
		    !mw_view_fig_refused((enum mw_view_fig)f))
			return 0;
	return 1;
}

void mw_view_json_refused(const struct mw_view *v, json_t **root)
{
	char buf[64];

	if (!v->fig[MW_VF_images_refused].v)
		return;
	for (int f = 0; f < MW_VF_COUNT; f++) {
		const char *key = root_key(f, buf, sizeof(buf));

		if (!(FIG(f)->flags & MW_VF_NOJSON) && *root && json_object_get(*root, key) &&
		    key_refused(key))
			mw_json_set(root, key, json_null());
	}
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
	if (COL(c)->unit == MW_VU_BYTES)
		return mw_human_bytes((uint64_t)x->v, buf, len);
	if (COL(c)->unit == MW_VU_ADDR)
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
			if (COL(c)->table != t || COL(c)->tpos != p)
				continue;
			fputs(p == 1 ? "  " : COL(c)->width ? " " : "  ", f);
			if (i < 0)
				fprintf(f, "%*s", COL(c)->width, COL(c)->head);
			else if (COL(c)->unit == MW_VU_ATTACH)
				attach_text(f, a, fork, max);
			else
				fprintf(f, "%*s", COL(c)->width, cell_text(mw_view_cell(v,
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
	for (int64_t i = 0; i < v->fig[mw_view_table_rows(t)].v && shown < max; i++)
		if (!show || show[i]) {
			row_line(f, v, t, i, fork, max_threads);
			shown++;
		}
	return shown;
}

/* x's figure f added to the total t: unknown when x's is (a process's
 * lost past INT64_MAX) or the sum would pass int64_t (hostile streams'
 * processes of INT64_MAX hits each), as a total the reports give. */
static void total_add(struct mw_view_val *t, const struct mw_view_val *x, int f)
{
	if (!(FIG(f)->flags & MW_VF_TOTAL) || !t->known)
		return;	/* (a figure that is no total is not summed) */
	if (!x->known || __builtin_add_overflow(t->v, x->v, &t->v))
		*t = (struct mw_view_val){ 0 };
}

void mw_view_totals(struct mw_view *const *v, size_t n, struct mw_view_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->processes = n;
	for (int f = 0; f < MW_VF_COUNT; f++)
		t->fig[f].known = 1;
	for (size_t i = 0; i < n; i++) {
		t->unknown += v[i]->fig[MW_VF_attach_unknown].v != 0;
		t->mixed += v[i]->fig[MW_VF_images_refused].v != 0;
		for (int f = 0; f < MW_VF_COUNT; f++)
			total_add(&t->fig[f], &v[i]->fig[f], f);
		for (int fam = 0; fam <= MW_FAM_UNKNOWN; fam++) {
			t->cost.by_family[fam] = mw_count_add(t->cost.by_family[fam],
							      v[i]->cost.by_family[fam]);
			t->cost.total = mw_count_add(t->cost.total, v[i]->cost.by_family[fam]);
		}
	}
	if (n)
		t->cost.traced_ns = v[0]->cost.traced_ns;
	mw_report_cost_decide(&t->cost);
	if (t->unknown)	/* not a sum of what is known */
		for (int f = 0; f < MW_VF_COUNT; f++)
			if (FIG(f)->flags & MW_VF_ATTACH)
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
		if (FIG(f)->flags & MW_VF_TOTAL)
			mw_json_set(&o, FIG(f)->name, t->fig[f].known ?
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

/* Total f as the text gives it, into buf: the number, or "more than can
 * be counted" when it is not known (past INT64_MAX, mw_view_totals). */
static const char *count_text(const struct mw_view_totals *t, enum mw_view_fig f, char *buf,
			      size_t len)
{
	if (!t->fig[f].known)
		return "more than can be counted";
	snprintf(buf, len, "%" PRId64, t->fig[f].v);
	return buf;
}

void mw_view_totals_text(FILE *f, const struct mw_view_totals *t, int cost)
{
	char a[32], e[24], l[24];
	int64_t net = t->fig[MW_VF_sbrk_net].v, r = t->fig[MW_VF_retries].v;

	fprintf(f, "\nmallocwatch: %zu process%s in all: ", t->processes,
		t->processes == 1 ? "" : "es");
	if (t->mixed) {	/* a process's figures mix its images: no sum */
		fprintf(f, "? arenas, ? heaps, ? threads, sbrk net ?, ? retries; ? events (%zu "
			"process%s figures from the tracer REFUSED), %s lost\n", t->mixed,
			t->mixed == 1 ? "'s" : "es'", count_text(t, MW_VF_lost, l, sizeof(l)));
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
	if (!t->fig[MW_VF_sbrk_net].known)	/* hostile streams' (sbrk_net is no sum) */
		snprintf(a, sizeof(a), "?");
	else
		mw_human_bytes(net < 0 ? -(uint64_t)net : (uint64_t)net, a, sizeof(a));
	fprintf(f, "%" PRId64 " thread%s, sbrk net %s%s, %" PRId64 " retr%s; %s event%s, %s "
		"lost\n", t->fig[MW_VF_threads].v, s1(t, MW_VF_threads),
		net < 0 ? "-" : "", a, r, r == 1 ? "y" : "ies",
		count_text(t, MW_VF_events, e, sizeof(e)), s1(t, MW_VF_events),
		count_text(t, MW_VF_lost, l, sizeof(l)));
	if (cost)
		mw_report_cost_lines(f, &t->cost, " in all processes");
}
