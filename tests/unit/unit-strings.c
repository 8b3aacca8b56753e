/* unit-strings.c - strings from outside and figures from files:
 * mw_quote() and mw_fputs_quoted() (src/lib/msg.c) and mw_json_str()
 * (src/lib/jsonout.c) as tables, garbage included (truncated and overlong
 * UTF-8, surrogates, C1, bidi overrides); the saturating sums of
 * src/report/metrics.c at the ends of int64_t; and every jansson allocation of
 * the JSON report, a snapshot and a diff made to fail in turn: the
 * result is then NULL, never a document with a member missing. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "metrics.h"
#include "msg.h"
#include "report.h"
#include "state.h"
#include "stream.h"
#include "unit.h"
#include "view.h"

static const struct { const char *in, *quoted, *json; } strs[] = {
	{ "plain /lib/libc.so.6", "plain /lib/libc.so.6", "plain /lib/libc.so.6" },
	{ "\033[2J\033]0;t\007", "\\x1b[2J\\x1b]0;t\\x07", "\033[2J\033]0;t\007" },
	{ "back\\slash", "back\\\\slash", "back\\slash" },
	{ "caf\xc3\xa9", "caf\xc3\xa9", "caf\xc3\xa9" },			/* U+00E9 */
	{ "\xc2\x9b" "2J", "\\xc2\\x9b2J", "\xc2\x9b" "2J" },		/* C1 CSI */
	{ "\x7f", "\\x7f", "\x7f" },
	{ "\xe2\x80\xae" "gnp", "\\xe2\\x80\\xaegnp", "\xe2\x80\xae" "gnp" }, /* RLO */
	{ "\xff\xfe", "\\xff\\xfe", "\\xff\\xfe" },
	{ "a\\\xff", "a\\\\\\xff", "a\\\\\\xff" },			/* escaped: \ too */
	{ "\xc3", "\\xc3", "\\xc3" },					/* truncated */
	{ "\xc3(", "\\xc3(", "\\xc3(" },
	{ "\xc0\xaf", "\\xc0\\xaf", "\\xc0\\xaf" },			/* overlong / */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf", "\\xe0\\x80\\xaf" },
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80" },		/* surrogate */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80" }, /* > U+10FFFF */
	{ "\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!" },	/* U+1F600 */
	{ "", "", "" },
};

static void test_strings(void)
{
	char buf[256], *mem;
	size_t len;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		json_t *j = mw_json_str(strs[i].in);
		FILE *f = open_memstream(&mem, &len);

		CHECK(strcmp(mw_quote(strs[i].in, buf, sizeof(buf)), strs[i].quoted) == 0,
		       "row %zu: mw_quote gave '%s'", i, buf);
		mw_fputs_quoted(strs[i].in, f);
		fclose(f);
		CHECK(strcmp(mem, strs[i].quoted) == 0, "row %zu: mw_fputs_quoted gave '%s'", i, mem);
		free(mem);
		CHECK(j && strcmp(json_string_value(j), strs[i].json) == 0, "row %zu: mw_json_str "
		       "gave '%s'", i, j ? json_string_value(j) : "NULL");
		json_decref(j);
	}
	/* cut to fit, never inside an escape */
	mw_quote("\033\033\033\033\033", buf, 12);
	CHECK(strcmp(buf, "\\x1b\\x1b...") == 0, "cut: '%s'", buf);
	CHECK(json_is_null(mw_json_str(NULL)), "NULL is not JSON null");
	CHECK(strcmp(mw_quote(NULL, buf, sizeof(buf)), "?") == 0, "NULL quoted as '%s'", buf);
}

static void test_saturation(void)
{
	static const struct { int64_t a, b, sum, diff; } t[] = {
		{ 1, 2, 3, -1 },
		{ INT64_MAX, 1, INT64_MAX, INT64_MAX - 1 },
		{ INT64_MIN, -1, INT64_MIN, INT64_MIN + 1 },
		{ INT64_MAX, INT64_MIN, -1, INT64_MAX },
		{ INT64_MIN, INT64_MAX, -1, INT64_MIN },
		{ (int64_t)1 << 62, (int64_t)1 << 62, INT64_MAX, 0 },
	};
	static const struct { int64_t a, pct, want; } p[] = {
		{ (int64_t)1 << 62, 10, 461168601842738790 },
		{ (int64_t)1 << 62, 100, (int64_t)1 << 62 },
		{ (int64_t)1 << 62, 300, INT64_MAX },
		{ (int64_t)1 << 62, -300, INT64_MIN },
		{ INT64_MAX, INT64_MAX, INT64_MAX },
		{ 50, INT64_MAX, INT64_MAX / 2 },
		{ 0, INT64_MAX, 0 },
		{ -7, 10, 0 },
		{ 1000, -5, -50 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(mw_sat_add(t[i].a, t[i].b) == t[i].sum, "row %zu: add %" PRId64, i,
		       mw_sat_add(t[i].a, t[i].b));
		CHECK(mw_sat_sub(t[i].a, t[i].b) == t[i].diff, "row %zu: sub %" PRId64, i,
		       mw_sat_sub(t[i].a, t[i].b));
	}
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		CHECK(mw_sat_percent(p[i].a, p[i].pct) == p[i].want, "row %zu: percent %" PRId64,
		       i, mw_sat_percent(p[i].a, p[i].pct));
}

/* jansson's allocator, failing at allocation number fail_at (0: never). */
static long nallocs, fail_at;

static void *failing_malloc(size_t n)
{
	return ++nallocs == fail_at ? NULL : malloc(n);
}

/* Build with allocation k failing, for every k until one build makes no
 * failing allocation: each result is NULL or equal to the reference. */
static void oom_each(const char *what, json_t *(*build)(const void *), const void *arg)
{
	json_t *ref = build(arg), *x;
	long k;

	CHECK(ref != NULL, "%s: no reference document", what);
	for (k = 1;; k++) {
		nallocs = 0;
		fail_at = k;
		json_set_alloc_funcs(failing_malloc, free);
		x = build(arg);
		json_set_alloc_funcs(malloc, free);
		if (nallocs < k) {	/* no allocation failed: done */
			json_decref(x);
			break;
		}
		CHECK(!x || json_equal(x, ref), "%s: allocation %ld failed, the document is "
		       "not NULL but not whole", what, k);
		json_decref(x);
	}
	printf("%s: %ld allocations each failed in turn\n", what, k - 1);
	json_decref(ref);
}

struct replayed {
	struct mw_state *st;
	struct mw_run_info ri;
};

static json_t *build_report(const void *arg)
{
	const struct replayed *r = arg;
	struct mw_view *v = mw_view_make(r->st, &r->ri);	/* jansson's allocations alone fail */
	json_t *j = mw_report_json_value(v);

	mw_view_free(v);
	return j;
}

static json_t *build_snapshot(const void *arg)
{
	return mw_snapshot_json_value(arg, "\xff\xfe" "bad");
}

static json_t *build_diff(const void *arg)
{
	json_t *const *ab = arg;

	return mw_diff_new(ab[0], ab[1], "base\xff", "new");
}

static void test_oom(void)
{
	static const char *argv[] = { "./app", "\xff\xfe", NULL };
	struct mw_snap_arena ar[2] = { { .addr = 0x1000, .is_main = 1 }, { .addr = 0x2000 } };
	struct mw_snapshot snap = { .pid = 1, .libc = "/lib/\xff/libc.so.6", .consistent = 1,
				    .arenas = ar, .narenas = 2 };
	struct replayed r = { .ri = { .argv = argv, .libc = "/lib/\xff\xfe", .runtime = "bpf" } };
	struct mw_stream_meta m = { 0 };
	char err[256];
	int status;
	FILE *f = fopen("tests/streams/storm24.mw", "re");
	json_t *ab[2];

	if (!f) {
		printf("FAIL: cannot open tests/streams/storm24.mw\n");
		failed = 1;
		return;
	}
	mw_quiet(1);
	r.st = mw_state_new(0);
	CHECK(mw_stream_replay(f, r.st, &m, err, sizeof(err)) == 0, "replay: %s", err);
	fclose(f);
	mw_state_finish(r.st);
	oom_each("report", build_report, &r);
	oom_each("snapshot", build_snapshot, &snap);
	ab[0] = mw_report_load("tests/streams/trim.json", err, sizeof(err), &status);
	ab[1] = mw_report_load("tests/streams/storm24.json", err, sizeof(err), &status);
	CHECK(ab[0] && ab[1], "cannot load the reports: %s", err);
	if (ab[0] && ab[1])
		oom_each("diff", build_diff, ab);
	json_decref(ab[0]);
	json_decref(ab[1]);
	mw_stream_meta_free(&m);
	mw_state_free(r.st);
}

int main(void)
{
	test_strings();
	test_saturation();
	test_oom();
	if (!failed)
		printf("strings quoted and escaped, sums saturate, no partial document\n");
	return failed ? 1 : 0;
}
