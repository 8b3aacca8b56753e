/* unit-view.c - every figure of the view (src/report/view.def) in every
 * report of a run: recorded streams (tests/streams/) replayed into the
 * model as `mallocwatch replay` does, then for each figure of the table,
 * its value in the JSON report (at its section and key; a ROWS figure the
 * length of its array), its words in the text summary and in the HTML
 * page whenever the text says it (a MW_VF_QUIET figure only when it is
 * not 0), and each column of the arenas, heaps and threads tables in
 * every row of the JSON's array and its heading in the text and HTML; a
 * renderer that skips a figure fails here (a table of a section the
 * JSON leaves out, setjmp's, has no rows).  Each figure the text shows must be shown by one
 * of the streams at least (else the check above never ran for it).
 * Then the totals of the streams' views (mw_view_totals) against the sums
 * of their JSON reports, as the totals of a run of several processes
 * were read back before.  Then serve's counters (mw_view_counters) of a
 * stream whose every counter has its own value, against the values
 * counted by hand, and their Prometheus lines (report_metrics.c).  And a
 * process whose figures from the tracer are refused (images mixed):
 * unknown everywhere, the totals too; and with its allocator at attach
 * unknown as well.  And the lists (the events kept, the setjmp probes'
 * keys, the slow-math samples) row by row in the view, the JSON and the
 * text. */
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "output.h"
#include "procs.h"
#include "report_metrics.h"
#include "report.h"
#include "snapshot.h"
#include "stream.h"
#include "view.h"
#include "unit.h"

static const char *const streams[] = {
	"storm24", "trim", "thresholds", "edge-garbled", "edge-lost", "cost-setjmp",
	"edge-died", "edge-signal", "synthetic", "lists", "settings", "run",
};

/* The lists (check_lists), each row its own: events of four kinds (an
 * arena lock wait with its second argument unreadable, a probe not in
 * probes.def with four arguments, a mallopt call, slow-math samples),
 * two jmp_bufs and two return addresses of setjmp with 5 and 2 hits and
 * longjmp's 7 (a value, -3), two slow-math probes hit 1 and 2 times with
 * 1 and 2 samples (atan2's 4th argument, result, a nan). */
static const char lists_stream[] =
	"# mallocwatch-stream 1\nP 1 memory_arena_reuse_wait 3 2\nP 2 my_probe 4\n"
	"P 3 memory_mallopt 2\nP 4 setjmp 3\nP 5 longjmp 3\n# libm 2 /lib/libm.so.6\n"
	"P 6 slowatan2 4\nP 7 slowexp_p6 2\nMW 1 ready\nE 1 201 4096 0 8192\nE 3 202 1 64\n"
	"E 2 203 -5 6 7 8\n"
	"E 6 204 6 4609434218613702656 4611686018427387904 9221120237041090560\nN 6 204 1\n"
	"E 7 205 4609434218613702656 4616731951734179137\n"
	"E 7 206 4611686018427387904 4602678819172646912\nN 7 205 2\n"
	"K 4 210 4096 0 8192 2\nK 4 210 12288 0 8200 5\nK 5 211 12288 -3 16384 7\nMW 1 end\n";

/* mallopt and tunables: a tunable, a mallopt call with its do_set probe's
 * previous value, two without (one of a parameter glibc has no name for);
 * a tcache double free; setjmp, longjmp and longjmp_target hits of two
 * threads (K records: their tuples' counts); two slow-math probes hit 4 + 1
 * and 1 times (a sample each: slowexp_p6's other 3 of its first 4 hits
 * missing, counted lost), a third declared, not hit. */
static const char settings_stream[] =
	"# mallocwatch-stream 1\nP 1 memory_mallopt 2\nP 2 memory_mallopt_mxfast 2\n"
	"P 3 memory_tunable_tcache_count 2\nP 4 memory_mallopt_arena_max 2\n"
	"P 5 memory_tcache_double_free 2\nP 6 setjmp 3\nP 7 longjmp 3\nP 8 longjmp_target 3\n"
	"# libm 3 /lib/x86_64-linux-gnu/libm.so.6\nP 9 slowexp_p6 2\nP 10 slowpow_p10 3\n"
	"P 11 slowlog 3\nMW 1 ready\n"
	"E 9 101 4609434218613702656 4616731951734179137\nN 9 101 4\nN 9 102 1\n"
	"E 10 101 4611686018427387904 4602678819172646912 4609047870845172685\nN 10 101 1\n"
	"E 3 100 7 0\nE 1 101 1 64\nE 2 101 64 128\nE 1 102 -8 2\nE 1 103 99 5\n"
	"E 5 104 139830511960064 3\n"
	"K 6 105 4096 0 8192 2\nK 7 105 4096 1 8192 3\nK 8 106 4096 1 8192 4\nMW 1 end\n";
#define NSTREAMS (sizeof(streams) / sizeof(streams[0]))

struct run {
	struct mw_state *st;
	struct mw_stream_meta m;
	struct mw_run_info ri;
	struct mw_view *v;
	json_t *json;
	char *text, *html;
};

/* A stream of what the recorded ones do not show: a retried malloc, a
 * failed sbrk, a table the script filled (t-replay's), into a temporary
 * file. */
static FILE *synthetic(void)
{
	FILE *f = tmpfile();

	if (!f)
		return NULL;
	fputs("# mallocwatch-stream 1\nP 12 memory_malloc_retry 1\nP 7 memory_heap_more 2\n"
	      "MW 1 ready\nE 12 0:101 0:4096\nN 12 101 1\n", f);
	for (int i = 0; i < 16384; i++)
		fprintf(f, "N 7 %d 1\n", 1000 + i);
	for (int i = 0; i < 16384; i++)
		fprintf(f, "H %d 0 4096 4096 1 0\n", 4096 * (i + 1));
	fputs("S 0:135168 0:0 0:1 0:0 0:135168 0:4096 0:139264 0:3\nMW 1 end\n", f);
	rewind(f);
	return f;
}

/* A stream of the run's own figures, each with its own value: two images
 * replaced (exec) after 7 and 5 hits, the allocator at attach unknown, the
 * lists past MW_STATE_KEEP (mallopt K + 2, retries 1 + K + 2, threshold
 * changes K + 4, all but the mallopt calls and the first retry timed), a
 * nine-field sbrk account; into a temporary file.  check_run_figures has
 * its figures counted by hand. */
static FILE *run_stream(void)
{
	FILE *f = tmpfile();

	if (!f)
		return NULL;
	fputs("# mallocwatch-stream 1\nP 1 memory_mallopt 2\nP 2 memory_malloc_retry 1\n"
	      "P 3 memory_mallopt_free_dyn_thresholds 2\nP 4 memory_arena_retry 2\nMW 1 ready\n", f);
	/* each old image's streamed records before its exec line: none owed
	 * after it (state.h mw_state_owed), so every later record is the
	 * last image's */
	for (int i = 0; i < 7; i++)
		fprintf(f, "E 1 101 1 %d\n", i);
	fputs("N 1 101 7\nMW 1 exec\n", f);
	for (int i = 0; i < 5; i++)
		fprintf(f, "T 2 101 %d 64\n", i);
	fputs("N 2 101 5\nMW 1 exec\n"
	      "# attach_refused busy: the test's\nE 4 104 128 139830511960064\n", f);
	for (int i = 0; i < MW_STATE_KEEP + 2; i++)
		fprintf(f, "E 1 101 1 %d\n", 1000 + i);
	for (int i = 0; i < MW_STATE_KEEP + 2; i++)
		fprintf(f, "T 2 102 %d 64\n", 1000 + i);
	for (int i = 0; i < MW_STATE_KEEP + 4; i++)
		fprintf(f, "T 3 103 %d %d 262144\n", 100000 + i, 131072 + i);
	fputs("S 135168 4096 5 6 139264 4194304 4333568 7 8\nMW 1 end\n", f);
	rewind(f);
	return f;
}

static int load(struct run *r, const char *name)
{
	char path[256], err[512];
	FILE *f;

	snprintf(path, sizeof(path), "tests/streams/%s.mw", name);
	if (!strcmp(name, "settings"))
		f = fmemopen((void *)settings_stream, sizeof(settings_stream) - 1, "r");
	else if (!strcmp(name, "lists"))
		f = fmemopen((void *)lists_stream, sizeof(lists_stream) - 1, "r");
	else
		f = !strcmp(name, "synthetic") ? synthetic() : !strcmp(name, "run") ? run_stream() :
		    fopen(path, "r");
	if (!f)
		return -1;
	r->st = mw_state_new(0);
	if (mw_stream_replay(f, r->st, &r->m, err, sizeof(err)) < 0) {
		fclose(f);
		printf("FAIL %s: %s\n", path, err);
		return -1;
	}
	fclose(f);
	mw_state_set_pid(r->st, r->m.pid);
	mw_state_tracer_lost(r->st, r->m.tracer_lost);
	mw_state_finish(r->st);
	r->ri = (struct mw_run_info){ .argv = (const char *const *)r->m.argv, .pid = r->m.pid,
		.libc = r->m.libc, .runtime = r->m.runtime, .tracer_died = r->m.tracer_died,
		.stopped = r->m.stopped, .traced_ns = r->m.traced_ns };
	return 0;
}

/* text and HTML of r, and its JSON report, and its view */
static void render(struct run *r)
{
	size_t len;
	FILE *f;

	r->v = mw_view_make(r->st, &r->ri);	/* the one view every format renders */
	f = open_memstream(&r->text, &len);
	mw_report_text(f, r->v);
	fclose(f);
	f = open_memstream(&r->html, &len);
	mw_report_html(f, r->v);
	fclose(f);
	r->json = mw_report_json_value(r->v);
}

/* s as the HTML page writes text, in a new string. */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	mw_xml_escape(f, s);
	fclose(f);
	return buf;
}

/* Are a and b the same string (neither NULL)? */
static int streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Is the JSON value j the figure x of unit u? */
static int json_is(json_t *j, enum mw_view_unit u, const struct mw_view_val *x)
{
	if (u == MW_VU_ROWS)
		return json_is_array(j) && (int64_t)json_array_size(j) == x->v;
	if (u == MW_VU_PROBES)
		return json_is_object(j) && (int64_t)json_object_size(j) == x->v;
	if (u == MW_VU_BOOL)
		return json_is_boolean(j) && json_is_true(j) == !!x->v;
	if (!x->known)
		return json_is_null(j);
	if (u == MW_VU_STR)
		return json_is_string(j) && strcmp(json_string_value(j), x->s) == 0;
	return json_is_integer(j) && json_integer_value(j) == x->v;
}

/* The object of section ("events.execs": execs in events) in root;
 * NULL when it is not there. */
static json_t *section_of(json_t *root, const char *section)
{
	char buf[64], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", section);
	for (char *k = strtok_r(buf, ".", &save); k && root; k = strtok_r(NULL, ".", &save))
		root = json_object_get(root, k);
	return root;
}

static void check_figures(const struct run *r, const char *name, int *shown)
{
	for (int f = 0; f < MW_VF_COUNT; f++) {
		const struct mw_view_fig_info *fi = mw_view_fig_info((enum mw_view_fig)f);
		const struct mw_view_val *x = mw_view_get(r->v, (enum mw_view_fig)f);
		json_t *sec = section_of(r->json, fi->section);
		char *h;

		if (fi->flags & MW_VF_NOJSON)	/* the text's alone: check_run_figures */
			CHECK(!json_object_get(sec, fi->key), "%s: figure %s: in the JSON", name,
			      fi->name);
		else if (!sec)	/* a section left out: all its figures 0 */
			CHECK(!x->v, "%s: figure %s: %lld, but no JSON %s", name, fi->name,
			      (long long)x->v, fi->section);
		else
			CHECK(json_is(json_object_get(sec, fi->key), fi->unit, x),
			      "%s: figure %s: JSON %s.%s is not %lld", name, fi->name,
			      fi->section, fi->key, (long long)x->v);
		if (!fi->text || (fi->flags & MW_VF_QUIET && !x->v))
			continue;
		shown[f]++;
		CHECK(strstr(r->text, fi->text) != NULL, "%s: figure %s: the text has no '%s'",
		      name, fi->name, fi->text);
		h = escaped(fi->text);
		CHECK(strstr(r->html, h) != NULL, "%s: figure %s: the HTML has no '%s'", name,
		      fi->name, h);
		free(h);
	}
}

/* Row i's arguments in ARGS column c against the JSON array j: each a
 * number, null when it could not be read. */
static int args_are(const struct run *r, size_t i, enum mw_view_col c, json_t *j)
{
	const struct mw_view_arg *a = mw_view_args(r->v, i, c);
	int64_t n = mw_view_cell(r->v, i, c)->v;

	if (!json_is_array(j) || (int64_t)json_array_size(j) != n)
		return 0;
	for (int64_t k = 0; k < n; k++) {
		json_t *x = json_array_get(j, (size_t)k);

		if (a[k].val.known ? !json_is_integer(x) || json_integer_value(x) != a[k].val.v :
		    !json_is_null(x))
			return 0;
	}
	return 1;
}

/* Each column of each table (the arenas, heaps, threads, ...) in every
 * row of the JSON's array (but a column with no key, and a table with no
 * array of its own: check_lists), and its heading in the text and the
 * page when the text has the table (any row). */
static void check_tables(const struct run *r, const char *name)
{
	for (int c = 0; c < MW_VC_COUNT; c++) {
		const struct mw_view_col_info *ci = mw_view_col_info((enum mw_view_col)c);
		const char *tab = mw_view_table_name(ci->table);
		json_t *arr = tab ? section_of(r->json, tab) : NULL;
		char *h;

		if (!tab || !ci->key)
			continue;
		if (!arr && strchr(tab, '.'))	/* its section left out: no rows */
			CHECK(!mw_view_get(r->v, mw_view_table_rows(ci->table))->v, "%s: JSON %s",
			      name, tab);
		else
			CHECK(json_is_array(arr) && (int64_t)json_array_size(arr) ==
			      mw_view_get(r->v, mw_view_table_rows(ci->table))->v, "%s: JSON %s",
			      name, tab);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const struct mw_view_val *x = mw_view_cell(r->v, i, (enum mw_view_col)c);
			json_t *j = json_object_get(json_array_get(arr, i), ci->key);

			if (ci->unit == MW_VU_ARGS)
				CHECK(args_are(r, i, (enum mw_view_col)c, j), "%s: %s %zu: JSON %s",
				      name, tab, i, ci->key);
			else if (ci->unit == MW_VU_OPT)
				CHECK(x->known ? json_is_integer(j) && json_integer_value(j) == x->v :
					  j == NULL, "%s: %s %zu: JSON %s", name, tab, i, ci->key);
			else if (ci->unit == MW_VU_ATTACH)
				CHECK(json_is_array(j) && (int64_t)json_array_size(j) == x->v,
				      "%s: %s %zu: JSON %s", name, tab, i, ci->key);
			else if (ci->unit == MW_VU_ADDR || ci->unit == MW_VU_TID)
				CHECK(x->known ? !json_is_null(j) : json_is_null(j),
				      "%s: %s %zu: JSON %s", name, tab, i, ci->key);
			else
				CHECK(json_is(j, ci->unit, x), "%s: %s %zu: JSON %s", name, tab, i,
				      ci->key);
		}
		if (!ci->tpos || !json_array_size(arr))
			continue;
		CHECK(strstr(r->text, ci->head) != NULL, "%s: %s column %s: the text has no '%s'",
		      name, tab, ci->name, ci->head);
		h = escaped(ci->head);
		CHECK(strstr(r->html, h) != NULL, "%s: %s column %s: the HTML has no '%s'", name,
		      tab, ci->name, h);
		free(h);
	}
}

/* The check metrics that are view figures (mw_metric_view_fig), read
 * back from the JSON report: the figure's value, or none when the report
 * lists it as unknown. */
static void check_metrics(const struct run *r, const char *name)
{
	for (int m = 0; m < MW_M_COUNT; m++) {
		int f = mw_metric_view_fig((enum mw_metric)m);
		int64_t got = 0;
		int ret;

		if (f < 0)
			continue;
		ret = mw_metric_value(r->json, (enum mw_metric)m, &got);
		if (mw_metric_unknown(r->json, (enum mw_metric)m))
			CHECK(ret < 0, "%s: metric %s: unknown, yet %lld", name,
			      mw_metric_info((enum mw_metric)m)->name, (long long)got);
		else
			CHECK(ret == 0 && got == mw_view_get(r->v, (enum mw_view_fig)f)->v,
			      "%s: metric %s: %lld, not the view's %lld", name,
			      mw_metric_info((enum mw_metric)m)->name, (long long)got,
			      (long long)mw_view_get(r->v, (enum mw_view_fig)f)->v);
	}
}

static json_int_t jsum(struct run *r, size_t n, const char *a, const char *b)
{
	json_int_t s = 0;

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object_get(r[i].json, a);

		s += b ? json_integer_value(json_object_get(o, b)) :
			 (json_int_t)json_array_size(o);
	}
	return s;
}

/* The totals of the n runs' views, as JSON (mw_view_totals_json). */
static json_t *totals_json(const struct run *r, size_t n)
{
	struct mw_view **v = calloc(n, sizeof(*v));
	struct mw_view_totals t;

	for (size_t i = 0; i < n; i++)
		v[i] = r[i].v;
	mw_view_totals(v, n, &t);
	free(v);
	return mw_view_totals_json(&t);
}

/* The totals from the views against the sums of the JSON reports. */
static void check_totals(struct run *r, size_t n)
{
	json_t *j = totals_json(r, n);

	CHECK(json_integer_value(json_object_get(j, "processes")) == (json_int_t)n, "processes");
	CHECK(json_integer_value(json_object_get(j, "arenas")) == jsum(r, n, "arenas", NULL), "arenas");
	CHECK(json_integer_value(json_object_get(j, "heaps")) == jsum(r, n, "heaps", NULL), "heaps");
	CHECK(json_integer_value(json_object_get(j, "threads")) == jsum(r, n, "threads", NULL),
	      "threads");
	CHECK(json_integer_value(json_object_get(j, "retries")) == jsum(r, n, "retries", NULL),
	      "retries");
	CHECK(json_integer_value(json_object_get(j, "events")) == jsum(r, n, "events", "total"),
	      "events");
	CHECK(json_integer_value(json_object_get(j, "lost")) == jsum(r, n, "events", "lost"), "lost");
	CHECK(json_integer_value(json_object_get(j, "sbrk_net")) == jsum(r, n, "sbrk", "net"),
	      "sbrk_net");
	CHECK(json_is_object(json_object_get(j, "cost")), "cost");
	json_decref(j);
}

/* The JSON of r, refused: each member whose figures all are null (every
 * one of them there: setjmp and math too), those with a figure that is
 * not (the events: lost) there, with their refused figures null. */
static void check_refused_nulls(const struct run *r)
{
	static const char *const nulls[] = { "arenas", "heaps", "sbrk", "thresholds", "threads",
		"events_log", "settings", "retries", "tcache_double_free", "setjmp", "math" };
	json_t *ev = json_object_get(r->json, "events");

	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		CHECK(json_object_get(r->json, nulls[i]) && json_is_null(json_object_get(r->json,
			nulls[i])), "refused: %s not null", nulls[i]);
	CHECK(json_is_object(ev) && json_is_null(json_object_get(ev, "total")) &&
	      json_integer_value(json_object_get(ev, "lost")) == 0 &&
	      json_is_object(json_object_get(r->json, "unknown")) &&
	      json_is_object(json_object_get(r->json, "target")), "refused: events, unknown, target");
}

/* A process whose figures from the tracer are refused (state.h
 * mw_state_images_mixed), from a saved stream's images_mixed line:
 * every figure but what went wrong in the stream unknown, in the view,
 * the JSON (nulls, "unknown"), the text and the HTML, and in the totals
 * with another process; a drained exec after it starts anew. */
static void check_refused(struct run *known)
{
	struct run r;
	struct mw_view *v[2];
	struct mw_view_totals t;
	json_t *u, *tj;
	FILE *f = tmpfile();
	char err[256];
	uint64_t ns;

	memset(&r, 0, sizeof(r));
	fputs("# mallocwatch-stream 1\nP 7 memory_heap_more 2\nP 8 setjmp 3\n"
	      "# libm 1 /lib/libm.so.6\nP 9 slowexp_p6 2\nMW 1 ready\nO 1000000000\n"
	      "N 7 100 3\nE 9 101 1 2\nN 9 101 1\nK 8 102 4096 0 8192 2\n"
	      "# images_mixed 1500000000 it replaced its image \\x41\nMW 1 end\n", f);
	rewind(f);
	r.st = mw_state_new(9);
	CHECK(mw_stream_replay(f, r.st, &r.m, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	mw_state_finish(r.st);
	CHECK(mw_state_images_refused(r.st, &ns) && ns == 1500000000 &&
	      strcmp(mw_state_images_refused(r.st, NULL), "it replaced its image A") == 0,
	      "the reason: %s", mw_state_images_refused(r.st, NULL));
	r.ri = (struct mw_run_info){ .pid = 9, .libc = "libc.so.6", .runtime = "bpf" };
	render(&r);
	for (int i = 0; i < MW_VF_COUNT; i++)
		CHECK(mw_view_get(r.v, (enum mw_view_fig)i)->known ==
		      !mw_view_fig_refused((enum mw_view_fig)i), "figure %s",
		      mw_view_fig_info((enum mw_view_fig)i)->name);
	u = json_object_get(r.json, "unknown");
	CHECK(streq(json_string_value(json_object_get(u, "reason")), "it replaced its image A") &&
	      json_array_size(json_object_get(u, "figures")) == 13 &&
	      json_real_value(json_object_get(u, "at_s")) == 0.5, "unknown");
	check_refused_nulls(&r);
	CHECK(strstr(r.text, "are REFUSED (found at 0.500 s): it replaced its image A;") &&
	      !strstr(r.text, "Arenas: ") && !strstr(r.text, "Threads: "), "text: %s", r.text);
	CHECK(strstr(r.html, "REFUSED</strong>: it replaced its image A.") &&
	      !strstr(r.html, "Arena lock waits"), "html");
	v[0] = known->v;
	v[1] = r.v;
	mw_view_totals(v, 2, &t);
	tj = mw_view_totals_json(&t);
	CHECK(json_is_null(json_object_get(tj, "arenas")) &&
	      json_is_null(json_object_get(tj, "events")) &&
	      json_is_integer(json_object_get(tj, "lost")) &&
	      json_integer_value(json_object_get(tj, "refused_processes")) == 1, "totals");
	json_decref(tj);
	mw_state_exec(r.st);	/* drained: its next image is known */
	CHECK(!mw_state_images_refused(r.st, NULL), "after an exec");
	mw_view_free(r.v);
	json_decref(r.json);
	free(r.text);
	free(r.html);
	mw_stream_meta_free(&r.m);
	mw_state_free(r.st);
}

/* A process whose figures are refused (images mixed, found at a time
 * with no start to count it from: no O record) and whose allocator at
 * attach is unknown: both reasons, the refusal's first, in the view, the
 * JSON's unknown (at_s null) and the text (no "found at"). */
static void check_refused_both(void)
{
	static const char stream[] =
		"# mallocwatch-stream 1\nP 7 memory_heap_more 2\nMW 1 ready\n"
		"# attach_refused busy: the test's\nN 7 100 3\n"
		"# images_mixed 1500000000 it replaced its image B\nMW 1 end\n";
	struct run r;
	json_t *u;
	char err[256];
	FILE *f = fmemopen((void *)stream, sizeof(stream) - 1, "r");

	memset(&r, 0, sizeof(r));
	r.st = mw_state_new(9);
	CHECK(f && mw_stream_replay(f, r.st, &r.m, err, sizeof(err)) == 0, "both: %s", err);
	if (f)
		fclose(f);
	mw_state_finish(r.st);
	r.ri = (struct mw_run_info){ .pid = 9, .libc = "libc.so.6", .runtime = "bpf" };
	render(&r);
	CHECK(streq(mw_view_get(r.v, MW_VF_images_refused)->s, "it replaced its image B") &&
	      !mw_view_get(r.v, MW_VF_images_refused_ns)->known &&
	      streq(mw_view_get(r.v, MW_VF_attach_unknown)->s, "busy: the test's"),
	      "both: the view's reasons");
	u = json_object_get(r.json, "unknown");
	CHECK(streq(json_string_value(json_object_get(u, "reason")),
		    "it replaced its image B; busy: the test's") &&
	      json_is_null(json_object_get(u, "at_s")), "both: the JSON's unknown");
	CHECK(strstr(r.text, "are REFUSED: it replaced its image B;") &&
	      strstr(r.text, "UNKNOWN (busy: the test's)"), "both: the text");
	mw_view_free(r.v);
	json_decref(r.json);
	free(r.text);
	free(r.html);
	mw_stream_meta_free(&r.m);
	mw_state_free(r.st);
}

/* With a process whose allocator at attach is unknown (the run stream,
 * the last), the totals' arenas and heaps are unknown, and say so. */
static void check_unknown_totals(struct run *r, size_t n)
{
	json_t *j = totals_json(r, n);

	CHECK(json_is_null(json_object_get(j, "arenas")) && json_is_null(json_object_get(j, "heaps")),
	      "unknown totals: arenas, heaps");
	CHECK(json_integer_value(json_object_get(j, "unknown_processes")) == 1, "unknown_processes");
	CHECK(json_integer_value(json_object_get(j, "threads")) == jsum(r, n, "threads", NULL),
	      "unknown totals: threads");
	json_decref(j);
}

static int cell_is(const struct run *r, size_t i, enum mw_view_col c, int64_t v, const char *s)
{
	const struct mw_view_val *x = mw_view_cell(r->v, i, c);

	return s ? x->s && !strcmp(x->s, s) : x->known && x->v == v;
}

/* The run stream's lists, by hand: the first and the last threshold
 * change kept (tid 103, dynamic, mmap 131072 + i, trim 256 KiB), the
 * retries (memory_arena_retry's with its arena first, then malloc's with
 * none), and the lines the text makes of them. */
static void check_run_rows(const struct run *r)
{
	size_t last = MW_STATE_KEEP - 1;

	CHECK(cell_is(r, 0, MW_VC_changes_tid, 103, NULL) &&
	      cell_is(r, 0, MW_VC_changes_source, 0, "dynamic") &&
	      cell_is(r, 0, MW_VC_changes_mmap, 131072, NULL) &&
	      cell_is(r, 0, MW_VC_changes_trim, 262144, NULL) &&
	      cell_is(r, last, MW_VC_changes_mmap, 131072 + (int64_t)last, NULL), "run: changes");
	CHECK(cell_is(r, 0, MW_VC_retries_tid, 104, NULL) &&
	      cell_is(r, 0, MW_VC_retries_probe, 0, "memory_arena_retry") &&
	      cell_is(r, 0, MW_VC_retries_bytes, 128, NULL) &&
	      cell_is(r, 0, MW_VC_retries_arena, 139830511960064, NULL) &&
	      cell_is(r, 1, MW_VC_retries_tid, 102, NULL) &&
	      cell_is(r, 1, MW_VC_retries_probe, 0, "memory_malloc_retry") &&
	      cell_is(r, 1, MW_VC_retries_bytes, 64, NULL) &&
	      !mw_view_cell(r->v, 1, MW_VC_retries_arena)->known, "run: retries");
	CHECK(strstr(r->text, "  change 1: thread 103, dynamic: mmap 128.0 KiB, trim 256.0 KiB\n"),
	      "run: the text's first change");
	CHECK(strstr(r->text, "  thread 104 memory_arena_retry: 128 B (128 bytes) failed in arena "
		      "0x7f2cd3fe8000\n  thread 102 memory_malloc_retry: 64 B (64 bytes)\n"),
	      "run: the text's retries");
}

/* The settings stream's rows (settings_stream), by hand, and the text's
 * lines. */
static void check_settings_rows(const struct run *r)
{
	CHECK(mw_view_get(r->v, MW_VF_settings)->v == 4, "settings: 4 rows");
	CHECK(cell_is(r, 0, MW_VC_settings_tid, 100, NULL) &&
	      cell_is(r, 0, MW_VC_settings_source, 0, "tunable") &&
	      cell_is(r, 0, MW_VC_settings_name, 0, "glibc.malloc.tcache_count") &&
	      !mw_view_cell(r->v, 0, MW_VC_settings_param)->known &&
	      cell_is(r, 0, MW_VC_settings_value, 7, NULL) &&
	      cell_is(r, 0, MW_VC_settings_previous, 0, NULL), "settings: the tunable");
	CHECK(cell_is(r, 1, MW_VC_settings_source, 0, "mallopt") &&
	      cell_is(r, 1, MW_VC_settings_param, 1, NULL) &&
	      cell_is(r, 1, MW_VC_settings_value, 64, NULL) &&
	      cell_is(r, 1, MW_VC_settings_previous, 128, NULL), "settings: M_MXFAST");
	CHECK(cell_is(r, 2, MW_VC_settings_param, -8, NULL) &&
	      !mw_view_cell(r->v, 2, MW_VC_settings_previous)->known &&
	      cell_is(r, 3, MW_VC_settings_name, 0, "?"), "settings: no do_set probe");
	CHECK(strstr(r->text, "  thread 100 tunable glibc.malloc.tcache_count=7, previous 0\n"
		      "  thread 101 mallopt(M_MXFAST (1), 64), previous 128\n"
		      "  thread 102 mallopt(M_ARENA_MAX (-8), 2), no do_set probe (ignored or not "
		      "traced)\n"), "settings: the text's lines");
	CHECK(mw_view_get(r->v, MW_VF_double_frees)->v == 1 &&
	      cell_is(r, 0, MW_VC_frees_tid, 104, NULL) &&
	      cell_is(r, 0, MW_VC_frees_entry, 139830511960064, NULL) &&
	      cell_is(r, 0, MW_VC_frees_tc_idx, 3, NULL), "settings: the double free");
	CHECK(strstr(r->text, "*** tcache double free detected: thread 104 freed chunk "
		      "0x7f2cd3fe8000 (tcache bin 3) twice ***\n"), "settings: the double free's text");
	CHECK(mw_view_get(r->v, MW_VF_jump_threads)->v == 2 &&
	      cell_is(r, 0, MW_VC_jumps_tid, 105, NULL) &&
	      cell_is(r, 0, MW_VC_jumps_setjmp, 2, NULL) &&
	      cell_is(r, 0, MW_VC_jumps_longjmp, 3, NULL) &&
	      cell_is(r, 0, MW_VC_jumps_longjmp_target, 0, NULL) &&
	      cell_is(r, 1, MW_VC_jumps_tid, 106, NULL) &&
	      cell_is(r, 1, MW_VC_jumps_longjmp_target, 4, NULL), "settings: the setjmp threads");
	CHECK(strstr(r->text, "  105                 2            3               0\n"
		      "  106                 0            0               4\n"),
	      "settings: the setjmp threads' text");
	CHECK(mw_view_get(r->v, MW_VF_math_functions)->v == 2 &&
	      cell_is(r, 0, MW_VC_math_probe, 0, "slowexp_p6") &&
	      cell_is(r, 0, MW_VC_math_hits, 5, NULL) &&
	      cell_is(r, 0, MW_VC_math_samples_missing, 3, NULL) &&
	      cell_is(r, 1, MW_VC_math_probe, 0, "slowpow_p10") &&
	      cell_is(r, 1, MW_VC_math_hits, 1, NULL) &&
	      cell_is(r, 1, MW_VC_math_samples_missing, 0, NULL), "settings: the slow-math probes");
	CHECK(strstr(r->text, "  slowexp_p6: 5 hits (exp(x) needed multi-precision, precision 6)\n"
		      "    thread 101: x=1.5 result=4.4816890703380645\n"
		      "    3 samples MISSING: their records never came from the tracer (counted "
		      "lost)\n  slowpow_p10: 1 hit (") != NULL, "settings: the slow-math text");
	CHECK(mw_view_get(r->v, MW_VF_lost)->v == 3, "settings: the 3 samples missing are lost");
}

/* Row i's arguments in ARGS column c: n of them, each with values v
 * (unknown where known is 0) and the names in names (NULL: none). */
static int args_is(const struct run *r, size_t i, enum mw_view_col c, int64_t n,
		   const int64_t *v, const char *const *names, unsigned unknown)
{
	const struct mw_view_arg *a = mw_view_args(r->v, i, c);

	if (mw_view_cell(r->v, i, c)->v != n)
		return 0;
	for (int64_t k = 0; k < n; k++)
		if (a[k].val.v != v[k] || a[k].val.known != !(unknown & (1u << k)) ||
		    (names[k] ? !streq(a[k].name, names[k]) : a[k].name != NULL))
			return 0;
	return 1;
}

/* The lists stream's events (lists_stream), by hand: each row's probe,
 * thread, arguments (their names, one unreadable) and whether it has a
 * section of its own; the JSON's events_log and the text's Other events. */
static void check_events(const struct run *r)
{
	static const int64_t wait[] = { 4096, 0, 8192 }, mine[] = { -5, 6, 7, 8 };
	static const char *const wait_names[] = { "mutex", "arena", "avoid" };
	static const char *const no_names[] = { NULL, NULL, NULL, NULL };
	json_t *log = json_object_get(r->json, "events_log");

	CHECK(mw_view_get(r->v, MW_VF_events_log)->v == 6 &&
	      mw_view_get(r->v, MW_VF_other_events)->v == 2, "lists: 6 events, 2 others");
	CHECK(cell_is(r, 0, MW_VC_events_probe, 0, "memory_arena_reuse_wait") &&
	      cell_is(r, 0, MW_VC_events_tid, 201, NULL) && cell_is(r, 0, MW_VC_events_own, 0, NULL) &&
	      args_is(r, 0, MW_VC_events_args, 3, wait, wait_names, 2), "lists: the lock wait");
	CHECK(cell_is(r, 1, MW_VC_events_probe, 0, "memory_mallopt") &&
	      cell_is(r, 1, MW_VC_events_tid, 202, NULL) && cell_is(r, 1, MW_VC_events_own, 1, NULL),
	      "lists: the mallopt call");
	CHECK(cell_is(r, 2, MW_VC_events_probe, 0, "my_probe") &&
	      cell_is(r, 2, MW_VC_events_tid, 203, NULL) && cell_is(r, 2, MW_VC_events_own, 0, NULL) &&
	      args_is(r, 2, MW_VC_events_args, 4, mine, no_names, 0), "lists: my_probe");
	CHECK(cell_is(r, 3, MW_VC_events_own, 1, NULL) &&
	      streq(mw_view_args(r->v, 3, MW_VC_events_args)[3].name, "result"),
	      "lists: slowatan2's result");
	CHECK(json_array_size(log) == 6 &&
	      json_is_null(json_array_get(json_object_get(json_array_get(log, 0), "args"), 1)) &&
	      json_integer_value(json_array_get(json_object_get(json_array_get(log, 2), "args"),
						0)) == -5, "lists: the JSON's events_log");
	CHECK(strstr(r->text, "\nOther events: 2\n  thread 201 memory_arena_reuse_wait mutex=0x1000 "
		      "arena=unavailable avoid=0x2000\n  thread 203 my_probe arg1=-5 arg2=6 arg3=7 "
		      "arg4=8 (not in mallocwatch's probe table)\n") != NULL,
	      "lists: the text's Other events");
}

/* Row i of a setjmp table: probe, key, count. */
static int jump_is(const struct run *r, size_t i, enum mw_view_col probe, const char *p,
		   int64_t key, int64_t count)
{
	return cell_is(r, i, probe, 0, p) && cell_is(r, i, probe + 1, key, NULL) &&
	       cell_is(r, i, probe + 2, count, NULL);
}

/* The lists stream's setjmp keys and slow-math samples (lists_stream),
 * by hand: busiest first whatever the probe, in the view, the JSON and
 * the text (each probe's own line). */
static void check_lists(const struct run *r)
{
	json_t *sj = json_object_get(r->json, "setjmp");
	json_t *fn = json_object_get(json_object_get(r->json, "math"), "functions");
	json_t *s0 = json_array_get(json_object_get(json_array_get(fn, 0), "samples"), 0);
	json_t *s1 = json_array_get(json_object_get(json_array_get(fn, 1), "samples"), 1);
	static const int64_t atan2[] = { 6, 4609434218613702656, 4611686018427387904,
					 9221120237041090560 };
	static const char *const atan2_names[] = { "precision", "x", "y", "result" };

	check_events(r);
	CHECK(mw_view_get(r->v, MW_VF_jmp_bufs)->v == 3 &&
	      jump_is(r, 0, MW_VC_jmp_bufs_probe, "longjmp", 0x3000, 7) &&
	      jump_is(r, 1, MW_VC_jmp_bufs_probe, "setjmp", 0x3000, 5) &&
	      jump_is(r, 2, MW_VC_jmp_bufs_probe, "setjmp", 0x1000, 2), "lists: jmp_bufs");
	CHECK(mw_view_get(r->v, MW_VF_code_addresses)->v == 3 &&
	      jump_is(r, 0, MW_VC_code_addresses_probe, "longjmp", 0x4000, 7) &&
	      jump_is(r, 1, MW_VC_code_addresses_probe, "setjmp", 0x2008, 5) &&
	      jump_is(r, 2, MW_VC_code_addresses_probe, "setjmp", 0x2000, 2), "lists: code addresses");
	CHECK(mw_view_get(r->v, MW_VF_longjmp_values)->v == 1 &&
	      jump_is(r, 0, MW_VC_longjmp_values_probe, "longjmp", -3, 7), "lists: longjmp values");
	CHECK(streq(json_string_value(json_object_get(json_array_get(json_object_get(sj,
		"jmp_bufs"), 1), "address")), "0x3000") &&
	      json_integer_value(json_object_get(json_array_get(json_object_get(sj, "jmp_bufs"), 2),
						 "count")) == 2, "lists: the JSON's jmp_bufs");
	CHECK(strstr(r->text, "  jmp_bufs (setjmp): 0x3000 (5), 0x1000 (2)\n"
		      "  return addresses (setjmp): 0x2008 (5), 0x2000 (2)\n"
		      "  jmp_bufs (longjmp): 0x3000 (7)\n  targets (longjmp): 0x4000 (7)\n"
		      "  values (longjmp): -3 (7)\n") != NULL, "lists: the text's setjmp keys");
	CHECK(mw_view_get(r->v, MW_VF_math_samples)->v == 3 &&
	      cell_is(r, 0, MW_VC_samples_function, 0, NULL) &&
	      cell_is(r, 0, MW_VC_samples_tid, 204, NULL) &&
	      args_is(r, 0, MW_VC_samples_args, 4, atan2, atan2_names, 0) &&
	      cell_is(r, 1, MW_VC_samples_function, 1, NULL) &&
	      cell_is(r, 1, MW_VC_samples_tid, 205, NULL) &&
	      cell_is(r, 2, MW_VC_samples_function, 1, NULL) &&
	      cell_is(r, 2, MW_VC_samples_tid, 206, NULL), "lists: the slow-math samples");
	CHECK(json_integer_value(json_object_get(s0, "tid")) == 204 &&
	      json_integer_value(json_object_get(s0, "precision")) == 6 &&
	      streq(json_string_value(json_object_get(s0, "result")), "nan") &&
	      json_integer_value(json_object_get(s1, "tid")) == 206 &&
	      json_real_value(json_object_get(s1, "result")) == 0.5,
	      "lists: the JSON's samples");
	CHECK(strstr(r->text, "2 probe sites):\n  slowatan2: 1 hit (") &&
	      strstr(r->text, "))\n    thread 204: precision=6 x=1.5 y=2 result=nan\n"
		     "  slowexp_p6: 2 hits (") &&
	      strstr(r->text, "6)\n    thread 205: x=1.5 result=4.4816890703380645\n"
		     "    thread 206: x=2 result=0.5\n"), "lists: the text's samples");
}

/* The run stream's figures (run_stream), counted by hand: the images
 * replaced and the hits before them (7 + 5), what the lists did not keep
 * (the events log: all 3K + 9 but K; mallopt 2, retries 3, threshold
 * changes 4; the timeline markers: the 2K + 6 timed but K), why the
 * allocator at attach is unknown, the sbrk account's break and failed
 * trims, and the tracer's end. */
static void check_run_figures(const struct run *r)
{
	static const struct { enum mw_view_fig f; int64_t v; } counted[] = {
		{ MW_VF_execs, 2 }, { MW_VF_hits_before, 12 },
		{ MW_VF_omitted_events, 2 * MW_STATE_KEEP + 9 }, { MW_VF_omitted_settings, 2 },
		{ MW_VF_omitted_retries, 3 }, { MW_VF_omitted_thresholds, 4 },
		{ MW_VF_omitted_marks, MW_STATE_KEEP + 6 }, { MW_VF_attach_unknown, 1 },
		{ MW_VF_threshold_changes, MW_STATE_KEEP }, { MW_VF_retries, MW_STATE_KEEP },
		{ MW_VF_sbrk_grow_calls, 5 }, { MW_VF_sbrk_trim_calls, 6 },
		{ MW_VF_sbrk_failed, 7 }, { MW_VF_sbrk_failed_less, 8 },
		{ MW_VF_sbrk_first_brk, 4194304 }, { MW_VF_sbrk_last_brk, 4333568 },
		{ MW_VF_ended, 1 },
	};
	char line[256];

	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		CHECK(mw_view_get(r->v, counted[i].f)->v == counted[i].v, "run: figure %s: %lld, not %lld",
		      mw_view_fig_info(counted[i].f)->name, (long long)mw_view_get(r->v, counted[i].f)->v,
		      (long long)counted[i].v);
	CHECK(mw_view_get(r->v, MW_VF_attach_unknown)->s &&
	      !strcmp(mw_view_get(r->v, MW_VF_attach_unknown)->s, "busy: the test's"),
	      "run: attach_unknown's reason");
	/* the sentences the text makes of them */
	snprintf(line, sizeof(line), "counted but not listed (lists stop at %d): %d events, "
		 "2 settings, 3 retries, 4 threshold changes, %d timeline markers\n",
		 MW_STATE_KEEP, 2 * MW_STATE_KEEP + 9, MW_STATE_KEEP + 6);
	CHECK(strstr(r->text, line) != NULL, "run: the text has no '%s'", line);
	CHECK(strstr(r->text, "exec) 2 times: ") && strstr(r->text, "(the 12 probe hits before"),
	      "run: the text's execs");
	CHECK(strstr(r->text, "  break 0x400000 -> 0x422000\n") != NULL, "run: the text's break");
	CHECK(strstr(r->text, "MISSING") == NULL, "run: the text says the end is missing");
	check_run_rows(r);
}

/* serve --probes' counters: a stream where each has its own count (hits
 * counted by the script, N, beside the lines received, E, so that the one
 * mistaken for the other shows), the live reading's aggregates beside it
 * (its fields the view does not take 9xx, so that one taken shows). */
static const char counters_stream[] =
	"# mallocwatch-stream 1\n"
	"P 1 memory_arena_new 2\nP 2 memory_arena_reuse 2\nP 3 memory_arena_reuse_free_list 1\n"
	"P 4 memory_malloc_retry 1\nP 5 memory_calloc_retry 1\nP 6 memory_heap_new 2\n"
	"P 7 memory_heap_free 2\nP 8 memory_heap_more 2\nP 9 memory_heap_less 2\nMW 1 ready\n"
	"E 1 101 4096 1024\nN 1 101 50\n"
	"E 2 102 4096 0\nE 2 103 4096 0\n"
	"E 3 104 4096\nE 3 105 4096\nE 3 106 4096\n"
	"E 4 101 64\nE 4 101 64\nE 4 101 64\nE 4 101 64\nE 5 101 64\n"
	"E 6 101 8192 4096\nE 6 101 16384 4096\nE 6 101 24576 4096\n"
	"E 6 101 32768 4096\nE 6 101 40960 4096\nE 6 101 49152 4096\n"
	"E 7 101 8192 4096\nE 7 101 16384 4096\nE 7 101 24576 4096\nE 7 101 32768 4096\n"
	"G 8192 4096 4096 8192 3 1\nG 16384 4096 4096 8192 5 6\n";

/* By hand: the E lines of each (arena_new 1, not N's 50; the retries 4 +
 * 1), the G records' grew 3 + 5 and shrank 1 + 6 plus the live 100 and
 * 200, the rest the live reading's. */
static const struct { enum mw_view_ctr k; uint64_t model, live; } counted[] = {
	{ MW_VK_arenas_created, 1, 1 }, { MW_VK_arenas_reused, 2, 2 },
	{ MW_VK_arenas_reused_free_list, 3, 3 }, { MW_VK_lock_waits, 0, 11 },
	{ MW_VK_retries, 5, 5 }, { MW_VK_heaps_created, 6, 6 }, { MW_VK_heaps_freed, 4, 4 },
	{ MW_VK_heap_grows, 8, 108 }, { MW_VK_heap_shrinks, 7, 207 },
	{ MW_VK_sbrk_more, 0, 12 }, { MW_VK_sbrk_less, 0, 13 },
	{ MW_VK_sbrk_grown, 0, 20480 }, { MW_VK_sbrk_trimmed, 0, 8192 },
};

/* c's Prometheus lines: each counter's, with its value; none for one past
 * INT64_MAX (a hostile tracer's count, held at UINT64_MAX: not known). */
static void check_counter_lines(const uint64_t *c)
{
	struct mw_psnap ps = { .pid = 7, .comm = "x", .have_where = 1 };
	int traced = 1;
	struct mw_metrics_probes pb = { .tracing = 1, .traced = &traced, .c = c };
	struct mw_metrics_info info = { .openmetrics = 1, .probes = &pb };
	char *buf = NULL, line[512];
	size_t len;
	FILE *m = open_memstream(&buf, &len);

	CHECK(mw_metrics_write(m, &ps, 1, &info) == 0, "mw_metrics_write");
	fclose(m);
	for (int k = 0; k < MW_VK_COUNT; k++) {
		const struct mw_view_ctr_info *ci = mw_view_ctr_info((enum mw_view_ctr)k);

		snprintf(line, sizeof(line),
			 "\n%s%s%s_total{pid=\"7\",command=\"x\",cgroup=\"\",container=\"\"%s%s} %llu\n",
			 ci->family, *ci->unit ? "_" : "", ci->unit, *ci->label ? "," : "",
			 ci->label, (unsigned long long)c[k]);
		CHECK((strstr(buf, line) != NULL) == (c[k] <= (uint64_t)INT64_MAX),
		      "counter %s: '%s' %s the metrics", ci->name, line + 1,
		      c[k] <= (uint64_t)INT64_MAX ? "not in" : "in");
	}
	free(buf);
}

static void check_counters(void)
{
	struct mw_state *st = mw_state_new(0);
	struct mw_stream_meta m;
	struct mw_counters live = { 901, 902, 903, 11, 905, 906, 907, 100, 200, 12, 13, 20480, 8192 };
	uint64_t c[MW_VK_COUNT], cl[MW_VK_COUNT];
	char err[512] = "";
	FILE *f = fmemopen((void *)counters_stream, sizeof(counters_stream) - 1, "r");

	memset(&m, 0, sizeof(m));
	CHECK(f && mw_stream_replay(f, st, &m, err, sizeof(err)) == 0, "counters stream: %s", err);
	if (f)
		fclose(f);
	CHECK(sizeof(counted) / sizeof(counted[0]) == MW_VK_COUNT, "a counter not counted by hand");
	mw_view_counters(st, NULL, c);
	mw_view_counters(st, &live, cl);
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		const char *name = mw_view_ctr_info(counted[i].k)->name;

		CHECK(c[counted[i].k] == counted[i].model, "counter %s: %llu, not %llu", name,
		      (unsigned long long)c[counted[i].k], (unsigned long long)counted[i].model);
		CHECK(cl[counted[i].k] == counted[i].live, "counter %s with the live reading: %llu, not %llu",
		      name, (unsigned long long)cl[counted[i].k], (unsigned long long)counted[i].live);
	}
	check_counter_lines(cl);
	cl[MW_VK_heap_grows] = (uint64_t)INT64_MAX + 1;
	check_counter_lines(cl);
	mw_stream_meta_free(&m);
	mw_state_free(st);
}

/* A snapshot's shared figures (mw_view_arena_in_use, mw_view_main_heap),
 * by hand, each side of the clamp. */
static void check_snap_figures(void)
{
	struct mw_snap_arena a = { .system_mem = 135168, .free_bytes = 4096 };
	struct mw_snap_arena b = { .system_mem = 4096, .free_bytes = 8192 };
	struct mw_snapshot s = { .sbrk_base = 0x400000, .main_end = 0x421000 };
	struct mw_snapshot t = { .sbrk_base = 0x421000, .main_end = 0x400000 };

	CHECK(mw_view_arena_in_use(&a) == 131072 && mw_view_arena_in_use(&b) == 0,
	      "an arena's bytes in use");
	CHECK(mw_view_main_heap(&s) == 0x21000 && mw_view_main_heap(&t) == 0, "the main heap");
}

int main(void)
{
	struct run r[NSTREAMS];
	int shown[MW_VF_COUNT] = { 0 };

	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < NSTREAMS; i++) {
		if (load(&r[i], streams[i]) < 0) {
			printf("FAIL cannot replay %s\n", streams[i]);
			return 1;
		}
		render(&r[i]);
		check_figures(&r[i], streams[i], shown);
		check_tables(&r[i], streams[i]);
		check_metrics(&r[i], streams[i]);
	}
	for (int f = 0; f < MW_VF_COUNT; f++)
		if (mw_view_fig_info((enum mw_view_fig)f)->text && !shown[f])
			CHECK(0, "figure %s is not shown by any of the streams",
			      mw_view_fig_info((enum mw_view_fig)f)->name);
	check_lists(&r[NSTREAMS - 3]);
	check_settings_rows(&r[NSTREAMS - 2]);
	check_run_figures(&r[NSTREAMS - 1]);
	check_totals(r, NSTREAMS - 1);	/* the run stream's arenas are unknown: */
	check_unknown_totals(r, NSTREAMS);
	check_counters();
	check_snap_figures();
	check_refused(&r[0]);
	check_refused_both();
	for (size_t i = 0; i < NSTREAMS; i++) {
		mw_view_free(r[i].v);
		json_decref(r[i].json);
		free(r[i].text);
		free(r[i].html);
		mw_stream_meta_free(&r[i].m);
		mw_state_free(r[i].st);
	}
	return failed ? 1 : 0;
}
