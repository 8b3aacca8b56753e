/* metrics_diff.c - `mallocwatch diff`: two reports' metrics and arenas
 * side by side, of one process (metrics_int.h; the document, with every
 * process of two trees, is metrics_diff_write.c's).  The text form:
 *
 *	METRIC                         BASE            NEW         CHANGE   PERCENT
 *	arenas                            1             16            +15  +1500.0%
 *	...
 *
 *	Arenas (main_arena, then in the order they were made): 15 appeared, ...
 *	  + arena 1
 */
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "metrics_int.h"
#include "jsonout.h"
#include "units.h"

/* The arenas of report r as name -> {heaps, heap_bytes} (null when the
 * report lacks them).  Addresses differ from run to run (ASLR), so an
 * arena is named by its place: "main_arena", then "arena N" in the
 * report's order (the order they were made).  NULL: out of memory. */
static json_t *arenas_by_place(const json_t *r)
{
	json_t *out = json_object(), *a;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(r, "arenas"), i, a) {
		char name[32];

		if (json_is_true(json_object_get(a, "main")))
			snprintf(name, sizeof(name), "main_arena");
		else
			snprintf(name, sizeof(name), "arena %d", ++n);
		mw_json_set(&out, name, json_pack("{s:O?, s:O?}", "heaps",
			    json_object_get(a, "heaps"), "heap_bytes",
			    json_object_get(a, "heap_bytes")));
	}
	return out;
}

/* The arenas in both whose heaps or heap bytes differ:
 * [{arena, base_heaps, new_heaps, base_heap_bytes, new_heap_bytes}]. */
static json_t *changed(const json_t *x, const json_t *y)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach((json_t *)x, k, v) {
		json_t *w = json_object_get(y, k);

		if (w && !json_equal(v, w))
			mw_json_append(&out, json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}", "arena", k,
				"base_heaps", json_object_get(v, "heaps"),
				"new_heaps", json_object_get(w, "heaps"),
				"base_heap_bytes", json_object_get(v, "heap_bytes"),
				"new_heap_bytes", json_object_get(w, "heap_bytes")));
	}
	return out;
}

/* The arenas in x but not in y, as an array of names. */
static json_t *only_in(const json_t *x, const json_t *y)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach((json_t *)x, k, v)
		if (!json_object_get(y, k))
			mw_json_append(&out, json_string(k));
	return out;
}

/* One metric of both: {metric, base, new, change, percent}, or JSON null
 * when neither has it (NULL: out of memory). */
static json_t *diff_metric(const json_t *a, const json_t *b, enum mw_metric m)
{
	int64_t va, vb;
	int ha = mw_metric_value(a, m, &va) == 0, hb = mw_metric_value(b, m, &vb) == 0;

	if (!ha && !hb)
		return json_null();
	/* change saturates (a file's figures may be anything); percent
	 * is computed in double from the two */
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "metric", mw_metric_info(m)->name,
		"base", ha ? json_integer(va) : json_null(),
		"new", hb ? json_integer(vb) : json_null(),
		"change", ha && hb ? json_integer(mw_sat_sub(vb, va)) : json_null(),
		"percent", ha && hb && va ?
		json_real(100.0 * ((double)vb - (double)va) / (double)va) : json_null());
}

json_t *mw_diff_one(const json_t *a, const json_t *b)
{
	json_t *metrics = json_array(), *aa = arenas_by_place(a), *ba = arenas_by_place(b), *root;

	if (!aa || !ba) {	/* an empty list would say "no arena appeared" */
		json_decref(metrics);
		json_decref(aa);
		json_decref(ba);
		return NULL;
	}
	for (int m = 0; m < MW_M_COUNT; m++) {
		json_t *o = diff_metric(a, b, (enum mw_metric)m);

		if (!json_is_null(o))
			mw_json_append(&metrics, o);
	}
	root = json_pack("{s:o, s:{s:o, s:o, s:o}}", "metrics", metrics, "arenas",
			 "appeared", only_in(ba, aa), "vanished", only_in(aa, ba),
			 "changed", changed(aa, ba));
	json_decref(aa);
	json_decref(ba);
	return root;
}

/* An integer member ("%+" with sign), a real one as a percentage, or
 * "-" when it is null. */
static const char *mw_diff_num(const json_t *o, const char *key, char *buf, size_t len, int sign)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		snprintf(buf, len, sign ? "%+" JSON_INTEGER_FORMAT : "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%+.1f%%", json_real_value(v));
	else
		snprintf(buf, len, "-");
	return buf;
}

/* The unit of the metric a row of "metrics" is of ("bytes", "count"). */
static const char *mw_diff_unit(const json_t *row)
{
	const char *name = json_string_value(json_object_get(row, "metric"));

	for (int m = 0; name && m < MW_M_COUNT; m++)
		if (strcmp(mw_metric_info((enum mw_metric)m)->name, name) == 0)
			return mw_metric_info((enum mw_metric)m)->unit;
	return "";
}

void mw_diff_md_cells(FILE *f, const json_t *row)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f, " `%s` | %s | %s | %s | %s | %s |\n",
		json_string_value(json_object_get(row, "metric")),
		mw_diff_num(row, "base", a, sizeof(a), 0), mw_diff_num(row, "new", b, sizeof(b), 0),
		mw_diff_num(row, "change", c, sizeof(c), 1),
		mw_diff_num(row, "percent", d, sizeof(d), 1), mw_diff_unit(row));
}

/* " (1.5 MiB -> 2.0 MiB)": a changed arena's heap bytes in binary units,
 * or "" when either is unknown. */
static const char *human_pair(const json_t *row, char *buf, size_t len)
{
	const json_t *x = json_object_get(row, "base_heap_bytes");
	const json_t *y = json_object_get(row, "new_heap_bytes");
	char hx[16], hy[16];

	if (!json_is_integer(x) || !json_is_integer(y) || json_integer_value(x) < 0 ||
	    json_integer_value(y) < 0)
		return "";
	snprintf(buf, len, " (%s -> %s)",
		 mw_human_bytes((uint64_t)json_integer_value(x), hx, sizeof(hx)),
		 mw_human_bytes((uint64_t)json_integer_value(y), hy, sizeof(hy)));
	return buf;
}

/* The arenas of a list (at most 32) with sign before each: a line each,
 * or with one_line all on one line (a process of several). */
static void arena_names(FILE *f, const json_t *list, char sign, int one_line)
{
	size_t i;
	json_t *x;

	if (one_line && json_array_size(list))
		fprintf(f, "  %c", sign);
	json_array_foreach(list, i, x)
		if (i < 32)
			fprintf(f, one_line ? "%s %s" : "  %s %s\n", one_line ? (i ? "," : "") :
				(char[2]){ sign, 0 }, json_string_value(x));
	if (one_line && json_array_size(list))
		fprintf(f, "%s\n", json_array_size(list) > 32 ? ", ..." : "");
}

void mw_diff_text_one(FILE *f, const json_t *d, int changed_only)
{
	const json_t *ar = json_object_get(d, "arenas"), *x;
	const json_t *appeared = json_object_get(ar, "appeared"), *chg = json_object_get(ar, "changed");
	const json_t *vanished = json_object_get(ar, "vanished");
	size_t i;
	char a[32], b[32], c[32], e[32], h[48];

	fprintf(f, "%-20s %14s %14s %14s %9s  %s\n", "METRIC", "BASE", "NEW", "CHANGE", "PERCENT",
		"UNIT");
	json_array_foreach(json_object_get(d, "metrics"), i, x) {
		const json_t *ch = json_object_get(x, "change");

		if (changed_only && json_is_integer(ch) && !json_integer_value(ch))
			continue;
		fprintf(f, "%-20s %14s %14s %14s %9s  %s\n",
			json_string_value(json_object_get(x, "metric")),
			mw_diff_num(x, "base", a, sizeof(a), 0), mw_diff_num(x, "new", b, sizeof(b), 0),
			mw_diff_num(x, "change", c, sizeof(c), 1),
			mw_diff_num(x, "percent", e, sizeof(e), 1), mw_diff_unit(x));
	}
	if (changed_only && !json_array_size(appeared) && !json_array_size(vanished) &&
	    !json_array_size(chg))
		return;
	fprintf(f, "%sArenas (main_arena, then in the order they were made): %zu appeared, "
		"%zu vanished, %zu changed\n", changed_only ? "" : "\n", json_array_size(appeared),
		json_array_size(vanished), json_array_size(chg));
	arena_names(f, appeared, '+', changed_only);
	arena_names(f, vanished, '-', changed_only);
	json_array_foreach(chg, i, x)
		if (i < 32)
			fprintf(f, "  ~ %s: heaps %s -> %s, heap bytes %s -> %s%s\n",
				json_string_value(json_object_get(x, "arena")),
				mw_diff_num(x, "base_heaps", a, sizeof(a), 0),
				mw_diff_num(x, "new_heaps", b, sizeof(b), 0),
				mw_diff_num(x, "base_heap_bytes", c, sizeof(c), 0),
				mw_diff_num(x, "new_heap_bytes", e, sizeof(e), 0),
				human_pair(x, h, sizeof(h)));
}
