/* unit-mathsamples.c - a slow-math probe's samples (its first
 * MW_MATH_SAMPLES hits of an image, streamed as T records) are each shown
 * or said missing, never left out without a word (issue 44).  Records in
 * the orders the bpf runtime can give them: the samples travel through
 * stapbpf's per-CPU perf buffers, the end's N counts and MW_LINE_END (or
 * an exec's) do not, so under load the samples can come after them, or
 * never (the run ends once the flush is complete).  Seen once in a stress
 * round: t-fixture-math's report had every slow-math probe's hits and
 * none of its samples, with "lost 0" and "complete".  Each case checks
 * the model (what the flush and an exec wait for), the view, the text,
 * the JSON and a --check rule on events_lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "metrics.h"
#include "procs.h"
#include "protocol.h"
#include "report.h"
#include "state.h"
#include "stream.h"
#include "unit.h"
#include "view.h"

/* The declarations of a script traced with libmfix.so (mathprog's
 * probes) and a streamed probe of libc's. */
static const char *const decl[] = {
	"P 33 slowexp_p6 2", "P 39 slowatan2 4",
	"P 16 memory_mallopt 2", "MW 1 ready",
};

/* Samples of slowexp_p6 (x, result) and slowatan2 (precision, x, y,
 * result) as mathprog's first hits give them. */
static const char *const sexp[] = {
	"T 33 7 100 0 4607182418800017408",
	"T 33 7 101 4602678819172646912 4609695803604914856",
	"T 33 7 102 4607182418800017408 4613303445314885481",
	"T 33 7 103 4609434218613702656 4616721089735398533",
};
static const char satan2[] = "T 39 7 104 -7 -4616189618054758400 -9223372036854775808 "
	"-4609115380302729960";

static struct mw_state *fed(const char *const *lines, size_t n)
{
	struct mw_state *st = mw_state_new(7);

	mw_state_set_libm(st, "/x/libmfix.so", 5);	/* a saved stream's "# libm" */
	for (size_t i = 0; i < sizeof(decl) / sizeof(decl[0]); i++)
		CHECK(mw_stream_line(st, decl[i]) == 0, "%s", decl[i]);
	for (size_t i = 0; i < n; i++)
		CHECK(mw_stream_line(st, lines[i]) == 0, "%s", lines[i]);
	return st;
}

static void feed(struct mw_state *st, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK(mw_stream_line(st, lines[i]) == 0, "%s", lines[i]);
}

struct seen {
	int64_t lost, missing[2], samples;
	int64_t json_missing[2], json_samples[2], json_lost;
	int text_says, rule_ok;
	char *text;
};

/* st's report: the view's figures, its text and JSON, and the rule
 * events_lost==0 judged on that JSON. */
static void report(struct mw_state *st, struct seen *s)
{
	struct mw_run_info ri = { .pid = 7, .libc = "/x/libc.so.6", .runtime = "bpf" };
	struct mw_view *v;
	struct mw_rule rule;
	char err[256];
	size_t len;
	json_t *j, *fn;
	FILE *f;

	mw_state_finish(st);
	v = mw_view_make(st, &ri);
	memset(s, 0, sizeof(*s));
	s->lost = mw_view_get(v, MW_VF_lost)->v;
	s->samples = mw_view_get(v, MW_VF_math_samples)->v;
	for (int64_t i = 0; i < mw_view_get(v, MW_VF_math_functions)->v && i < 2; i++)
		s->missing[i] = mw_view_cell(v, (size_t)i, MW_VC_math_samples_missing)->v;
	f = open_memstream(&s->text, &len);
	mw_report_text(f, v);
	fclose(f);
	s->text_says = strstr(s->text, "MISSING: ") != NULL;
	j = mw_report_json_value(v);
	fn = json_object_get(json_object_get(j, "math"), "functions");
	for (size_t i = 0; i < 2; i++) {
		s->json_missing[i] = json_integer_value(json_object_get(json_array_get(fn, i),
									"samples_missing"));
		s->json_samples[i] = (int64_t)json_array_size(json_object_get(json_array_get(fn, i),
									     "samples"));
	}
	s->json_lost = json_integer_value(json_object_get(json_object_get(j, "events"), "lost"));
	CHECK(mw_rule_parse("events_lost==0", &rule, err, sizeof(err)) == 0, "%s", err);
	s->rule_ok = mw_rule_check(&rule, j, NULL).ok;
	json_decref(j);
	mw_view_free(v);
}

/* The gap seen: the end's counts and MW_LINE_END, no sample yet.  The
 * model counts the 4 + 1 samples due as missing (the flush waits for
 * them: trace_sink.c's missing); the run ended without them, the report
 * says so in the view, text and JSON, and events_lost==0 fails.  Then the
 * same with the samples come after the end: every one shown, none
 * missing. */
static void end_before_samples(void)
{
	static const char *const end[] = { "N 33 7 10", "N 39 7 1", "MW 1 end" };
	struct mw_state *st = fed(end, 3);
	struct seen s;

	CHECK(mw_state_missing(st) == 5, "the flush waits for the 5 samples due: %llu",
	      (unsigned long long)mw_state_missing(st));
	report(st, &s);
	CHECK(s.samples == 0 && s.missing[0] == 4 && s.missing[1] == 1,
	      "samples shown %lld, missing %lld and %lld", (long long)s.samples,
	      (long long)s.missing[0], (long long)s.missing[1]);
	CHECK(s.lost == 5 && s.json_lost == 5, "lost %lld (JSON %lld)", (long long)s.lost,
	      (long long)s.json_lost);
	CHECK(s.json_missing[0] == 4 && s.json_missing[1] == 1 && s.json_samples[0] == 0,
	      "the JSON's samples_missing %lld, %lld", (long long)s.json_missing[0],
	      (long long)s.json_missing[1]);
	CHECK(s.text_says && strstr(s.text, "    4 samples MISSING: their records never came "
				   "from the tracer (counted lost)\n") &&
	      strstr(s.text, "    1 sample MISSING: its record never came"),
	      "the text says which are missing:\n%s", s.text);
	CHECK(!s.rule_ok, "events_lost==0 passes with samples missing");
	free(s.text);
	mw_state_free(st);

	st = fed(end, 3);
	feed(st, sexp, 4);
	feed(st, &(const char *){ satan2 }, 1);
	CHECK(mw_state_missing(st) == 0, "%llu", (unsigned long long)mw_state_missing(st));
	report(st, &s);
	CHECK(s.samples == 5 && s.missing[0] == 0 && s.missing[1] == 0 && s.lost == 0 &&
	      s.json_samples[0] == 4 && s.json_samples[1] == 1 && !s.text_says && s.rule_ok,
	      "late samples: shown %lld, missing %lld %lld, lost %lld", (long long)s.samples,
	      (long long)s.missing[0], (long long)s.missing[1], (long long)s.lost);
	free(s.text);
	mw_state_free(st);
}

/* An exec (the old image's counts, then MW_LINE_EXEC) with one of the
 * old image's 3 samples still on its way: owed (the process is held at
 * its exec stop for it), dropped when it comes; the new image's own 2
 * samples (the script's caps emptied at the exec: gen_drain.c) are the
 * ones shown, not the old image's late one. */
static void exec_before_sample(void)
{
	static const char *const old[] = { "T 33 7 100 0 4607182418800017408",
		"T 33 7 101 4602678819172646912 4609695803604914856", "N 33 7 3", "MW 1 exec" };
	static const char *const now[] = { "T 33 7 300 4621819117588971520 4658815484840378368",
		"T 33 7 301 4622382067542392832 4661117040719048704", "N 33 7 2", "MW 1 end" };
	struct mw_state *st = fed(old, 4);
	struct seen s;
	size_t ne;
	const struct mw_event *e;

	CHECK(mw_state_owed(st) == 1 && mw_state_missing(st) == 1,
	      "the old image's late sample is owed: %llu",
	      (unsigned long long)mw_state_owed(st));
	feed(st, &sexp[2], 1);	/* the old image's, late */
	CHECK(mw_state_owed(st) == 0, "%llu", (unsigned long long)mw_state_owed(st));
	feed(st, now, 4);
	e = mw_state_events(st, &ne);
	CHECK(ne == 2 && e[0].arg[0] == 4621819117588971520 && e[1].arg[0] == 4622382067542392832,
	      "the new image's samples: %zu events", ne);
	report(st, &s);
	CHECK(s.samples == 2 && s.missing[0] == 0 && s.lost == 0 && s.rule_ok,
	      "shown %lld, missing %lld, lost %lld", (long long)s.samples, (long long)s.missing[0],
	      (long long)s.lost);
	free(s.text);
	mw_state_free(st);
}

/* The events log full (MW_STATE_KEEP mallopt calls) before the samples
 * come: each sample due is kept all the same (they are a few a probe),
 * not counted among the events omitted without a word in the math
 * section. */
static void log_full(void)
{
	struct mw_state *st = fed(NULL, 0);
	char line[64];
	struct seen s;

	for (int i = 0; i < MW_STATE_KEEP + 3; i++) {
		snprintf(line, sizeof(line), "T 16 7 %d 1 %d", 10 + i, i);
		feed(st, &(const char *){ line }, 1);
	}
	snprintf(line, sizeof(line), "N 16 7 %d", MW_STATE_KEEP + 3);
	feed(st, &(const char *){ line }, 1);
	feed(st, sexp, 4);
	feed(st, &(const char *){ satan2 }, 1);
	feed(st, (const char *const[]){ "N 33 7 10", "N 39 7 1", "MW 1 end" }, 3);
	report(st, &s);
	CHECK(s.samples == 5 && s.missing[0] == 0 && s.missing[1] == 0 && s.lost == 0,
	      "past the events log's cap: shown %lld, missing %lld %lld", (long long)s.samples,
	      (long long)s.missing[0], (long long)s.missing[1]);
	CHECK(mw_state_omitted_get(st)->events == 3, "%zu omitted",
	      (size_t)mw_state_omitted_get(st)->events);
	free(s.text);
	mw_state_free(st);
}

/* Hits past INT64_MAX (a hostile stream's N records: no tracer counts
 * that many): the view's and JSON's cells are int64, so the probe's hits
 * came out negative and the total wrapped (2^63 + 7 hits printed as
 * -9223372036854775801).  The record that would pass it is garbled, the
 * hits shown those before it, never negative; A and K records too. */
static void hits_overflow(void)
{
	static const struct { const char *line; int ret; } in[] = {
		{ "N 33 7 10", 0 }, { "N 33 7 9223372036854775790", 0 },
		{ "N 39 7 8", -1 },	/* the total would be INT64_MAX + 1 */
		{ "N 39 7 7", 0 },	/* INT64_MAX */
		{ "N 39 8 1", -1 }, { "A 39 8 4096 1", -1 },
		{ "N 33 7 9223372036854775807", -1 },
	};
	struct mw_state *st = fed(sexp, 4);
	uint64_t total, lost, garbled;
	struct seen s;
	int ended;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK(mw_stream_line(st, in[i].line) == in[i].ret, "'%s' not %s", in[i].line,
		      in[i].ret ? "garbled" : "taken");
	feed(st, (const char *const[]){ "MW 1 end" }, 1);
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	CHECK(total == (uint64_t)INT64_MAX && garbled == 4, "hits %llu (INT64_MAX), garbled %llu (4)",
	      (unsigned long long)total, (unsigned long long)garbled);
	report(st, &s);
	CHECK(s.samples == 4 && s.missing[0] == 0 && s.missing[1] == 4,
	      "shown %lld, missing %lld %lld", (long long)s.samples, (long long)s.missing[0],
	      (long long)s.missing[1]);
	free(s.text);
	mw_state_free(st);
}

/* Exec lines between images of 2^62 hits each (a hostile stream): the
 * hits before the last image passed INT64_MAX and came out as
 * -9223372036854775806 in the text and the JSON.  Now unknown (null),
 * and the text says so. */
static void hits_before_overflow(void)
{
	struct mw_state *st = fed(NULL, 0);
	struct mw_run_info ri = { .pid = 7, .libc = "/x/libc.so.6", .runtime = "bpf" };
	struct mw_view *v;
	uint64_t before;
	char *text;
	size_t len;
	FILE *f;

	for (int i = 0; i < 3; i++)
		feed(st, (const char *const[]){ "N 16 7 4611686018427387904", "MW 1 end",
						"MW 1 exec" }, 3);
	feed(st, (const char *const[]){ "MW 1 end" }, 1);
	CHECK(mw_state_execs(st, &before) == 3 && before > (uint64_t)INT64_MAX, "hits before %llu",
	      (unsigned long long)before);
	mw_state_finish(st);
	v = mw_view_make(st, &ri);
	CHECK(!mw_view_get(v, MW_VF_hits_before)->known, "hits before known: %lld",
	      (long long)mw_view_get(v, MW_VF_hits_before)->v);
	f = open_memstream(&text, &len);
	mw_report_text(f, v);
	fclose(f);
	CHECK(strstr(text, "more than can be counted") && !strstr(text, "-922"), "%s", text);
	free(text);
	mw_view_free(v);
	mw_state_free(st);
}

/* st's view (finished), its text and its JSON; a --check rule on
 * rule's metric judged on that JSON: 1 passes. */
static struct mw_view *rendered(struct mw_state *st, const struct mw_run_info *ri, char **text,
				json_t **j, const char *rule_text, int *rule_ok)
{
	struct mw_view *v;
	struct mw_rule rule;
	char err[256];
	size_t len;
	FILE *f;

	mw_state_finish(st);
	v = mw_view_make(st, ri);
	f = open_memstream(text, &len);
	mw_report_text(f, v);
	fclose(f);
	*j = mw_report_json_value(v);
	CHECK(mw_rule_parse(rule_text, &rule, err, sizeof(err)) == 0, "%s", err);
	*rule_ok = mw_rule_check(&rule, *j, NULL).ok;
	return v;
}

/* Images of 2^62 streamed hits each, none received (a hostile stream
 * replayed by root): three of them summed past INT64_MAX and events.lost
 * came out as -4611686018427387904 in the JSON, 13835058055282163712 in
 * the text, and 'events_lost<=0' passed; five wrapped to 2^62, a figure
 * that looks right.  Now the model holds it at UINT64_MAX, the view says
 * unknown, the text "more than can be counted", the JSON null, and a
 * rule on it fails. */
static void lost_overflow(void)
{
	struct mw_state *st = fed(NULL, 0);
	struct mw_run_info ri = { .pid = 7, .libc = "/x/libc.so.6", .runtime = "bpf" };
	uint64_t total, lost, garbled;
	struct mw_view *v;
	json_t *j, *l;
	char *text;
	int ended, ok;

	for (int i = 0; i < 5; i++)
		feed(st, (const char *const[]){ "N 16 7 4611686018427387904", "MW 1 end",
						"MW 1 exec" }, 3);
	feed(st, (const char *const[]){ "MW 1 end" }, 1);
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	CHECK(lost == UINT64_MAX && mw_state_missing(st) == UINT64_MAX &&
	      mw_state_owed(st) == UINT64_MAX, "lost %llu, not held", (unsigned long long)lost);
	v = rendered(st, &ri, &text, &j, "events_lost<=0", &ok);
	l = json_object_get(json_object_get(j, "events"), "lost");
	CHECK(!mw_view_get(v, MW_VF_lost)->known, "lost known: %lld",
	      (long long)mw_view_get(v, MW_VF_lost)->v);
	CHECK(json_is_null(l), "the JSON's lost: %lld", (long long)json_integer_value(l));
	CHECK(strstr(text, "0 probe hits, more than can be counted lost") && !strstr(text, "-46") &&
	      !strstr(text, "13835"), "%s", text);
	CHECK(!ok, "events_lost<=0 passes on a lost past INT64_MAX");
	CHECK(mw_metric_unknown(j, MW_M_events_lost) &&
	      strstr(mw_metric_unknown(j, MW_M_events_lost), "more than can be counted"),
	      "the rule's reason: %s", mw_metric_unknown(j, MW_M_events_lost));
	free(text);
	json_decref(j);
	mw_view_free(v);
	mw_state_free(st);
}

/* G and S records' hits (memory_heap_more/less, memory_sbrk_more/less,
 * counted with no thread) went into the image's total unchecked: with an
 * N record of INT64_MAX - 10 hits, a G record of 100 and 10 made
 * events.total negative, and an S record's NMORE + FAILED wrapped.  The
 * record that would pass INT64_MAX is garbled, as an N record is. */
static void unthreaded_overflow(void)
{
	static const struct { const char *line; int ret; } in[] = {
		{ "P 40 memory_heap_more 2", 0 }, { "P 41 memory_heap_less 2", 0 },
		{ "P 42 memory_sbrk_more 2", 0 }, { "P 43 memory_sbrk_less 2", 0 },
		{ "N 16 7 9223372036854775797", 0 },		/* INT64_MAX - 10 */
		{ "G 4096 0 65536 65536 100 10", -1 },
		{ "G 4096 0 65536 65536 9223372036854775807 9223372036854775807", -1 },
		{ "S 0 0 9223372036854775807 0 0 0 0 9223372036854775807 0", -1 },
		{ "S 0 0 8 0 0 0 0 0 3", -1 },		/* 11 hits */
		{ "G 4096 0 65536 65536 6 4", 0 },		/* 10: INT64_MAX */
		{ "S 0 0 1 0 0 0 0 0 0", -1 },
	};
	struct mw_state *st = fed(NULL, 0);
	uint64_t total, lost, garbled;
	int ended;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK(mw_stream_line(st, in[i].line) == in[i].ret, "'%s' not %s", in[i].line,
		      in[i].ret ? "garbled" : "taken");
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	CHECK(total == (uint64_t)INT64_MAX && garbled == 5 &&
	      mw_state_hits_unthreaded(st) == 10, "total %llu, garbled %llu, unthreaded %llu",
	      (unsigned long long)total, (unsigned long long)garbled,
	      (unsigned long long)mw_state_hits_unthreaded(st));
	mw_state_free(st);
}

/* The totals of several processes (-f, -p PID,PID, --cgroup): three of
 * INT64_MAX hits each summed to -9223372036854775807 events; one whose
 * lost is unknown left a sum of the others.  Now both are unknown:
 * null in the JSON, "more than can be counted" in the text; and the
 * cost's total is no wrapped one (no cost line).  serve's counters of a
 * process (a live reading's heap grows and the freed heaps') are held at
 * UINT64_MAX, not wrapped. */
static void totals_overflow(void)
{
	struct mw_run_info ri = { .pid = 7, .libc = "/x/libc.so.6", .runtime = "bpf" };
	struct mw_state *st[4];
	struct mw_view *v[4];
	struct mw_view_totals t;
	struct mw_counters live = { .heap_grows = UINT64_MAX - 5 };
	uint64_t c[MW_VK_COUNT];
	json_t *tj;
	char *text;
	size_t len;
	FILE *f;

	for (int i = 0; i < 4; i++) {
		st[i] = fed(NULL, 0);
		if (i < 3)
			feed(st[i], (const char *const[]){ "N 33 7 9223372036854775807" }, 1);
		for (int k = 0; i == 3 && k < 3; k++)	/* lost past INT64_MAX */
			feed(st[i], (const char *const[]){ "N 16 7 4611686018427387904",
							   "MW 1 end", "MW 1 exec" }, 3);
		feed(st[i], (const char *const[]){ "MW 1 end" }, 1);
		mw_state_finish(st[i]);
		v[i] = mw_view_make(st[i], &ri);
	}
	mw_view_totals(v, 3, &t);
	tj = mw_view_totals_json(&t);
	CHECK(json_is_null(json_object_get(tj, "events")) &&
	      json_integer_value(json_object_get(tj, "lost")) == 12 &&
	      json_integer_value(json_object_get(tj, "threads")) == 3, "three: events %lld",
	      (long long)json_integer_value(json_object_get(tj, "events")));
	CHECK(json_is_null(json_object_get(json_object_get(tj, "cost"), "hits")) || !t.cost.matters,
	      "the cost");
	f = open_memstream(&text, &len);
	mw_view_totals_text(f, &t, 1);
	fclose(f);
	CHECK(strstr(text, "; more than can be counted events, 12 lost") && !strstr(text, "-92") &&
	      !strstr(text, "tracing cost"), "%s", text);
	free(text);
	json_decref(tj);
	mw_view_totals(v + 2, 2, &t);	/* INT64_MAX hits, and lost unknown */
	tj = mw_view_totals_json(&t);
	CHECK(json_is_null(json_object_get(tj, "lost")) &&
	      json_integer_value(json_object_get(tj, "events")) == INT64_MAX, "lost unknown: %lld",
	      (long long)json_integer_value(json_object_get(tj, "lost")));
	json_decref(tj);
	for (int i = 0; i < 4; i++) {
		mw_view_free(v[i]);
		mw_state_free(st[i]);
	}
	st[0] = fed(NULL, 0);
	feed(st[0], (const char *const[]){ "P 40 memory_heap_more 2", "G 4096 0 4096 4096 9 0" },
	     2);
	mw_view_counters(st[0], &live, c);
	CHECK(c[MW_VK_heap_grows] == UINT64_MAX, "serve's heap grows %llu",
	      (unsigned long long)c[MW_VK_heap_grows]);
	mw_state_free(st[0]);
}

/* Sums over the rows of a hostile stream: an arena's heap bytes (three
 * heaps of 2^62 + 2^61 bytes wrapped to 2^61, a figure that looks
 * right; two would have been negative), and the threads' hits of probes
 * never declared (three of INT64_MAX, in no total: "add up to
 * 9223372036854775805").  Now the arena's heap bytes are unknown (null,
 * the rule fails) and the text says "more than can be counted". */
static void rows_overflow(void)
{
	struct mw_state *st = fed(NULL, 0);
	struct mw_run_info ri = { .pid = 7, .libc = "/x/libc.so.6", .runtime = "bpf" };
	const json_t *a;
	struct mw_view *v;
	json_t *j;
	char *text;
	int ok;

	feed(st, (const char *const[]){ "P 0 memory_arena_new 2", "E 0 8 140000000004096 1024",
		"H 140000000000000 140000000004096 6917529027641081856 0 0 0",
		"H 140000000065536 140000000004096 6917529027641081856 0 0 0",
		"H 140000000131072 140000000004096 6917529027641081856 0 0 0",
		"N 98 8 9223372036854775807", "N 98 9 9223372036854775807",
		"N 98 10 9223372036854775807", "MW 1 end" }, 9);
	v = rendered(st, &ri, &text, &j, "heap_bytes<=0", &ok);
	a = json_array_get(json_object_get(j, "arenas"), 1);
	CHECK(a && json_is_null(json_object_get(a, "heap_bytes")), "heap_bytes %lld",
	      (long long)json_integer_value(json_object_get(a, "heap_bytes")));
	CHECK(!ok, "heap_bytes<=0 passes on heap bytes past INT64_MAX");
	CHECK(strstr(text, "PROBE HITS add up to more than can be counted") &&
	      !strstr(text, "add up to 9"), "%s", text);
	free(text);
	json_decref(j);
	mw_view_free(v);
	mw_state_free(st);
}

int main(void)
{
	end_before_samples();
	exec_before_sample();
	log_full();
	hits_overflow();
	hits_before_overflow();
	lost_overflow();
	unthreaded_overflow();
	totals_overflow();
	rows_overflow();
	printf("%s: %d failed\n", __FILE__, failed);
	return failed ? 1 : 0;
}
