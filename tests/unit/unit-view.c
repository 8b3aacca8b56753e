/* unit-view.c - every figure of the view (src/report/view.def) in every
 * report of a run: recorded streams (tests/streams/) replayed into the
 * model as `mallocwatch replay` does, then for each figure of the table,
 * its value in the JSON report (at its section and key; a ROWS figure the
 * length of its array), its words in the text summary and in the HTML
 * page whenever the text says it (a MW_VF_QUIET figure only when it is
 * not 0), and each column of the arenas, heaps and threads tables in
 * every row of the JSON's array and its heading in the text and HTML; a
 * renderer that skips a figure fails here.  Each figure the text shows must be shown by one
 * of the streams at least (else the check above never ran for it).
 * Then the totals of the streams' views (mw_view_totals) against the sums
 * of their JSON reports, as the totals of a run of several processes
 * were read back before.  And a process whose figures from the tracer are
 * refused (images mixed): unknown everywhere, the totals too. */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "report.h"
#include "stream.h"
#include "view.h"
#include "unit.h"

static const char *const streams[] = {
	"storm24", "trim", "thresholds", "edge-garbled", "edge-lost", "cost-setjmp",
	"edge-died", "edge-signal", "synthetic",
};
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

static int load(struct run *r, const char *name)
{
	char path[256], err[512];
	FILE *f;

	snprintf(path, sizeof(path), "tests/streams/%s.mw", name);
	if (!(f = strcmp(name, "synthetic") ? fopen(path, "r") : synthetic()))
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

	f = open_memstream(&r->text, &len);
	mw_report_text(f, r->st, &r->ri);
	fclose(f);
	f = open_memstream(&r->html, &len);
	mw_report_html(f, r->st, &r->ri);
	fclose(f);
	r->json = mw_report_json_value(r->st, &r->ri);
	r->v = mw_view_make(r->st, &r->ri);
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

static void check_figures(const struct run *r, const char *name, int *shown)
{
	for (int f = 0; f < MW_VF_COUNT; f++) {
		const struct mw_view_fig_info *fi = mw_view_fig_info((enum mw_view_fig)f);
		const struct mw_view_val *x = mw_view_get(r->v, (enum mw_view_fig)f);
		json_t *sec = fi->section[0] ? json_object_get(r->json, fi->section) : r->json;
		char *h;

		CHECK(json_is(json_object_get(sec, fi->key), fi->unit, x),
		      "%s: figure %s: JSON %s.%s is not %lld", name, fi->name, fi->section,
		      fi->key, (long long)x->v);
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

/* Each column of each table (the arenas, heaps, threads) in every row
 * of the JSON's array, and its heading in the text and the page when
 * the text has the table (any row). */
static void check_tables(const struct run *r, const char *name)
{
	for (int c = 0; c < MW_VC_COUNT; c++) {
		const struct mw_view_col_info *ci = mw_view_col_info((enum mw_view_col)c);
		const char *tab = mw_view_table_name(ci->table);
		json_t *arr = json_object_get(r->json, tab);
		char *h;

		CHECK(json_is_array(arr), "%s: JSON %s", name, tab);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const struct mw_view_val *x = mw_view_cell(r->v, i, (enum mw_view_col)c);
			json_t *j = json_object_get(json_array_get(arr, i), ci->key);

			if (ci->unit == MW_VU_ATTACH)
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

/* The totals from the views against the sums of the JSON reports. */
static void check_totals(struct run *r, size_t n)
{
	struct mw_view **v = calloc(n, sizeof(*v));
	struct mw_view_totals t;
	json_t *j;

	for (size_t i = 0; i < n; i++)
		v[i] = r[i].v;
	mw_view_totals(v, n, &t);
	j = mw_view_totals_json(&t);
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
	free(v);
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
	fputs("# mallocwatch-stream 1\nP 7 memory_heap_more 2\nMW 1 ready\nO 1000000000\n"
	      "N 7 100 3\n# images_mixed 1500000000 it replaced its image \\x41\nMW 1 end\n", f);
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
	CHECK(strcmp(json_string_value(json_object_get(u, "reason")), "it replaced its image A") == 0 &&
	      json_array_size(json_object_get(u, "figures")) == 13 &&
	      json_real_value(json_object_get(u, "at_s")) == 0.5, "unknown");
	CHECK(json_is_null(json_object_get(r.json, "arenas")) &&
	      json_is_null(json_object_get(r.json, "sbrk")) &&
	      json_is_null(json_object_get(json_object_get(r.json, "events"), "total")), "nulls");
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
	}
	for (int f = 0; f < MW_VF_COUNT; f++)
		if (mw_view_fig_info((enum mw_view_fig)f)->text && !shown[f])
			CHECK(0, "figure %s is not shown by any of the streams",
			      mw_view_fig_info((enum mw_view_fig)f)->name);
	check_totals(r, NSTREAMS);
	check_refused(&r[0]);
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
