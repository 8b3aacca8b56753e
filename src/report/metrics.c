/* metrics.c - the metrics of a JSON report (metrics.def), the loading of
 * a report, and the comparison of two reports' environments; see
 * metrics.h.  A metric is read from the report's own keys (docs/json.md):
 * "arenas" is the length of the report's "arenas" array,
 *
 *	$ mallocwatch check --metrics tests/streams/storm24.json
 *	arenas 16
 *	arenas_created 15
 *	threads 25
 *	...
 *
 * Rules on them are in metrics_rules.c, how their verdicts are written in
 * metrics_verdicts.c, `mallocwatch diff` in metrics_diff.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "metrics.h"
#include "msg.h"
#include "view.h"

static const struct mw_metric_info metrics[MW_M_COUNT] = {
#define MW_METRIC(n, u, a, d) [MW_M_##n] = { .name = #n, .unit = u, .doc = d, .attach = a },
#include "metrics.def"
#undef MW_METRIC
};

const struct mw_metric_info *mw_metric_info(enum mw_metric m)
{
	return m < MW_M_COUNT ? &metrics[m] : NULL;
}

int mw_metric_lookup(const char *name)
{
	for (int m = 0; m < MW_M_COUNT; m++)
		if (strcmp(metrics[m].name, name) == 0)
			return m;
	return -1;
}

/* Levenshtein distance of a and b (names of metrics: short). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (lb >= sizeof(row) / sizeof(row[0]))
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *mw_metric_closest(const char *name)
{
	size_t best = 3;	/* at most two edits away, or a prefix */
	const char *found = NULL;

	for (int m = 0; m < MW_M_COUNT; m++) {
		size_t d = strncmp(metrics[m].name, name, strlen(name)) == 0 && name[0] ?
			   1 : edit_distance(name, metrics[m].name);

		if (d < best) {
			best = d;
			found = metrics[m].name;
		}
	}
	return found;
}

/* A -p report of a libc without SDT probes: snapshots alone
 * (trace_snaps.c, "mode": "snapshots"). */
static int snapshots_mode(const json_t *doc)
{
	const char *mode = json_string_value(json_object_get(doc, "mode"));

	return mode && strcmp(mode, "snapshots") == 0 &&
	       json_is_object(json_object_get(doc, "snapshots"));
}

/* Is doc a mallocwatch report (an object with "version" 1 and "events")? */
static int mw_is_report(const json_t *doc)
{
	return json_is_object(doc) && json_integer_value(json_object_get(doc, "version")) == 1 &&
	       (json_is_object(json_object_get(doc, "events")) || snapshots_mode(doc));
}

int64_t mw_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t mw_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t mw_sat_percent(int64_t a, int64_t pct)
{
	__int128 p = (__int128)a * pct / 100;	/* |a * pct| < 2^126: exact */

	return p > INT64_MAX ? INT64_MAX : p < INT64_MIN ? INT64_MIN : (int64_t)p;
}

static int64_t count_where(const json_t *arr, const char *key, int want_null)
{
	size_t i;
	json_t *x;
	int64_t n = 0;

	json_array_foreach(arr, i, x)
		n += json_is_null(json_object_get(x, key)) == want_null;
	return n;
}

/* obj.key as an integer; -1 when it is not one. */
static int get_int(const json_t *obj, const char *key, int64_t *v)
{
	json_t *x = json_object_get(obj, key);

	if (!json_is_integer(x))
		return -1;
	*v = (int64_t)json_integer_value(x);
	return 0;
}

/* The snapshot read last: at exit (-c), else at the end (-p). */
static const json_t *last_snapshot(const json_t *r)
{
	const json_t *s = json_object_get(r, "snapshots");
	const json_t *x = json_object_get(s, "exit");

	if (!json_is_object(x))
		x = json_object_get(s, "end");
	return json_is_object(x) ? x : NULL;
}

/* The length of array x into *v; -1 when x is not an array. */
static int length_of(const json_t *x, int64_t *v)
{
	return json_is_array(x) ? (*v = (int64_t)json_array_size(x), 0) : -1;
}

/* The metrics that are figures of the view. */
static const struct {
	enum mw_metric m;
	enum mw_view_fig f;
} of_view[] = {
	{ MW_M_arenas, MW_VF_arenas }, { MW_M_threads, MW_VF_threads },
	{ MW_M_sbrk_net, MW_VF_sbrk_net }, { MW_M_sbrk_peak, MW_VF_sbrk_peak },
	{ MW_M_retries, MW_VF_retries }, { MW_M_tcache_double_free, MW_VF_double_frees },
	{ MW_M_mmap_threshold, MW_VF_mmap_threshold },
	{ MW_M_trim_threshold, MW_VF_trim_threshold }, { MW_M_events_lost, MW_VF_lost },
};

int mw_metric_view_fig(enum mw_metric m)
{
	for (size_t i = 0; i < sizeof(of_view) / sizeof(of_view[0]); i++)
		if (of_view[i].m == m)
			return (int)of_view[i].f;
	return -1;
}

/* View figure f of report r, where view.def says the JSON has it. */
/* The object of report r that holds figure f (view.def's section). */
static const json_t *view_section(const json_t *r, enum mw_view_fig f)
{
	char sec[64], *save = NULL;

	snprintf(sec, sizeof(sec), "%s", mw_view_fig_info(f)->section);
	for (char *k = strtok_r(sec, ".", &save); k; k = strtok_r(NULL, ".", &save))
		r = json_object_get(r, k);
	return r;
}

static int view_metric(const json_t *r, enum mw_view_fig f, int64_t *v)
{
	const struct mw_view_fig_info *fi = mw_view_fig_info(f);

	r = view_section(r, f);
	if (fi->unit == MW_VU_ROWS)
		return length_of(json_object_get(r, fi->key), v);
	return get_int(r, fi->key, v);
}

/* A count of view.def's that report r has as null where no "unknown"
 * says why: a sum past INT64_MAX (units.h, a hostile stream's: events.lost
 * of images of 2^62 hits never received); NULL when it is not. */
static const char *past_int64(const json_t *r, enum mw_metric m)
{
	int f = mw_metric_view_fig(m);

	if (f < 0 || mw_view_fig_info((enum mw_view_fig)f)->unit != MW_VU_COUNT)
		return NULL;
	return json_is_null(json_object_get(view_section(r, (enum mw_view_fig)f),
					    mw_view_fig_info((enum mw_view_fig)f)->key)) ?
	       "more than can be counted (past 2^63 - 1)" : NULL;
}

/* The sum of the integer members key of the objects in arr into *v,
 * saturating (a file's figures may be anything), 0; with skip_main, the
 * one of main_arena is left out.  Members that are not integers count
 * 0; -1 (unknown) when arr is no array or a member is null (a cell the
 * report does not know, e.g. an arena's heap bytes summed past
 * INT64_MAX: not 0). */
static int sum_of(const json_t *arr, const char *key, int skip_main, int64_t *v)
{
	int64_t b;
	const json_t *x;
	size_t i;

	*v = 0;
	json_array_foreach(arr, i, x)
		if (!(skip_main && json_is_true(json_object_get(x, "main")))) {
			if (json_is_null(json_object_get(x, key)))
				return -1;
			if (get_int(x, key, &b) == 0)
				*v = mw_sat_add(*v, b);
		}
	return json_is_array(arr) ? 0 : -1;
}

/* system_bytes, free_bytes or in_use_bytes of the snapshot read last. */
static int snapshot_total(const json_t *r, enum mw_metric m, int64_t *v)
{
	const json_t *s = last_snapshot(r);
	const char *key = m == MW_M_system_bytes ? "system_bytes" :
			  m == MW_M_free_bytes ? "free_bytes" : "in_use_bytes";

	return s ? get_int(json_object_get(s, "totals"), key, v) : -1;
}

/* The metrics a snapshots-only report has: what the last snapshot read
 * (arenas, heaps and their bytes, thresholds, the totals); the others
 * need probes and are missing (-1). */
static int snapshot_metric(const json_t *r, enum mw_metric m, int64_t *v)
{
	const json_t *s = last_snapshot(r), *arenas = json_object_get(s, "arenas"), *x;
	size_t i;

	if (!s)
		return -1;
	switch (m) {
	case MW_M_arenas:
		return length_of(arenas, v);
	case MW_M_heaps:
		json_array_foreach(arenas, i, x)
			*v = mw_sat_add(*v, json_array_size(json_object_get(x, "heaps")));
		return json_is_array(arenas) ? 0 : -1;
	case MW_M_heap_bytes:
		return sum_of(arenas, "heap_bytes", 1, v);
	case MW_M_mmap_threshold:
		return get_int(json_object_get(s, "thresholds"), "mmap", v);
	case MW_M_trim_threshold:
		return get_int(json_object_get(s, "thresholds"), "trim", v);
	case MW_M_system_bytes:
	case MW_M_free_bytes:
	case MW_M_in_use_bytes:
		return snapshot_total(r, m, v);
	default:
		return -1;
	}
}

/* The figures read from the last snapshot's ledger (and mmapped_bytes
 * from the snapshot itself): why one is missing, or NULL when it is
 * there.  A replay of a stream has no snapshot; a snapshot whose ledger
 * could not be made (the run's note says why) has none. */
static const char *ledger_unknown(const json_t *r, enum mw_metric m)
{
	const json_t *s = last_snapshot(r), *l;

	if (m != MW_M_mmapped_bytes && m != MW_M_rss_exit && m != MW_M_peak_rss &&
	    m != MW_M_free_resident_bytes && m != MW_M_trim_now_bytes)
		return NULL;
	if (!s)
		return "no snapshot at exit (-c) or at the end (-p) in this report";
	if (m == MW_M_mmapped_bytes)
		return json_is_integer(json_object_get(json_object_get(s, "totals"),
						       "mmapped_bytes")) ? NULL :
		       "the last snapshot has no mmapped_bytes";
	l = json_object_get(s, "ledger");
	if (!json_is_object(l))
		return "the last snapshot has no RSS ledger (the run's notes say why)";
	if (m == MW_M_peak_rss && !json_is_integer(json_object_get(l, "peak_rss")))
		return "VmHWM of /proc/PID/status could not be read";
	return NULL;
}

/* A figure of ledger_unknown()'s, known, into *v. */
static int ledger_metric(const json_t *r, enum mw_metric m, int64_t *v)
{
	const json_t *s = last_snapshot(r), *l = json_object_get(s, "ledger");

	switch (m) {
	case MW_M_mmapped_bytes:
		return get_int(json_object_get(s, "totals"), "mmapped_bytes", v);
	case MW_M_rss_exit:
		return get_int(l, "rss", v);
	case MW_M_peak_rss:
		return get_int(l, "peak_rss", v);
	case MW_M_free_resident_bytes:
		return get_int(l, "free_resident", v);
	case MW_M_trim_now_bytes:
		return get_int(json_object_get(s, "fragmentation"), "trim_now", v);
	default:
		return -1;
	}
}

int mw_metric_traced(enum mw_metric m)
{
	return m <= MW_M_trim_threshold;	/* metrics.def's order */
}

const char *mw_metric_unknown(const json_t *r, enum mw_metric m)
{
	const json_t *u = json_object_get(r, "unknown"), *x;
	const char *why = json_string_value(json_object_get(u, "reason"));
	size_t i;

	if (m >= MW_M_COUNT)
		return NULL;
	json_array_foreach(json_object_get(u, "figures"), i, x)	/* none: no "unknown" */
		if (json_is_string(x) && strcmp(json_string_value(x), metrics[m].name) == 0)
			return why ? why : "unknown";
	why = ledger_unknown(r, m);
	return why ? why : past_int64(r, m);
}

int mw_metric_value(const json_t *r, enum mw_metric m, int64_t *v)
{
	const json_t *arenas = json_object_get(r, "arenas"), *heaps = json_object_get(r, "heaps");
	const json_t *events = json_object_get(r, "events"), *x;
	size_t i;

	*v = 0;
	if (mw_metric_unknown(r, m))	/* a figure the report does not have */
		return -1;
	if (ledger_metric(r, m, v) == 0)
		return 0;
	if (snapshots_mode(r))
		return snapshot_metric(r, m, v);
	if (mw_metric_view_fig(m) >= 0)
		return view_metric(r, (enum mw_view_fig)mw_metric_view_fig(m), v);
	switch (m) {
	case MW_M_arenas_created:
		*v = count_where(arenas, "created_by_tid", 0);
		return json_is_array(arenas) ? 0 : -1;
	case MW_M_heaps:
		json_array_foreach(heaps, i, x)
			*v += !json_is_true(json_object_get(x, "freed"));
		return json_is_array(heaps) ? 0 : -1;
	case MW_M_heap_bytes:
		return sum_of(arenas, "heap_bytes", 1, v);
	case MW_M_heap_bytes_peak:
		return sum_of(heaps, "peak_size", 0, v);
	case MW_M_reuse_waits:
		if (get_int(json_object_get(events, "by_probe"), "memory_arena_reuse_wait", v) < 0)
			*v = 0;	/* not hit, or not in this libc */
		return json_is_object(events) ? 0 : -1;
	case MW_M_system_bytes:
	case MW_M_free_bytes:
	case MW_M_in_use_bytes:
		return snapshot_total(r, m, v);
	default:
		break;
	}
	return -1;
}

/* doc (loaded from path, NULL: failed with e) if it is a report; see
 * mw_report_load(). */
static json_t *report_checked(json_t *doc, const json_error_t *e, const char *path, char *err,
			      size_t errlen, int *status)
{
	*status = MW_EXIT_USAGE;
	if (!doc && strstr(e->text, "unable to open")) {
		*status = MW_EXIT_RUNTIME;
		snprintf(err, errlen, "cannot read '%s': %s", path, e->text);
	} else if (!doc) {
		snprintf(err, errlen, "'%s' is not JSON: %s (line %d)", path, e->text, e->line);
	} else if (!mw_is_report(doc)) {
		snprintf(err, errlen, "'%s' is not a mallocwatch report (written with --json)", path);
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

json_t *mw_report_load(const char *path, char *err, size_t errlen, int *status)
{
	json_error_t e;
	FILE *f = mw_fopen_input(path);	/* never a FIFO that would hold us */
	json_t *doc;

	if (!f) {
		*status = MW_EXIT_RUNTIME;
		snprintf(err, errlen, "cannot read '%s': %s", path, mw_input_strerror(errno));
		return NULL;
	}
	doc = json_loadf(f, 0, &e);
	fclose(f);
	return report_checked(doc, &e, path, err, errlen, status);
}

json_t *mw_report_loadb(const char *buf, size_t len, const char *name, char *err, size_t errlen,
			int *status)
{
	json_error_t e;

	return report_checked(json_loadb(buf, len, 0, &e), &e, name, err, errlen, status);
}

int mw_env_differs(const json_t *baseline, const json_t *report, char *why, size_t len)
{
	static const char *const keys[] = { "glibc", "nproc", "glibc_tunables", "malloc_env" };
	const json_t *b = json_object_get(baseline, "environment");
	const json_t *r = json_object_get(report, "environment");
	size_t n = 0;

	why[0] = '\0';
	if (!json_is_object(b) || !json_is_object(r))
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *x = json_object_get(b, keys[i]), *y = json_object_get(r, keys[i]);
		char *xs, *ys;

		if (json_equal(x, y) || (!x && !y))
			continue;
		/* the files' strings as JSON, non-ASCII as \uXXXX: nothing
		 * of them reaches a terminal raw */
		xs = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
		ys = y ? json_dumps(y, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
		if (n < len)
			n += (size_t)snprintf(why + n, len - n, "%s%s %s -> %s", n ? "; " : "",
					      keys[i], x && !xs ? "?" : xs ? xs : "none",
					      y && !ys ? "?" : ys ? ys : "none");
		free(xs);
		free(ys);
	}
	return n > 0;
}

int mw_check_env(const json_t *baseline, const json_t *report, int strict)
{
	char why[1024];
	int d = mw_env_differs(baseline, report, why, sizeof(why));

	if (d == 0)
		return 0;
	if (d < 0)
		snprintf(why, sizeof(why), "one of them records no environment");
	if (strict) {
		mw_error("the baseline was made where arena counts are decided differently: %s "
			 "(--strict-env)", why);
		return -1;
	}
	mw_warn("the baseline was made where arena counts are decided differently: %s", why);
	return 0;
}
