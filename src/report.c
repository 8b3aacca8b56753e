/* report.c - text summary and JSON report; see report.h and docs/json.md. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "xalloc.h"

static const char *attach_name(enum mw_attach how)
{
	switch (how) {
	case MW_ATTACH_NEW: return "new";
	case MW_ATTACH_REUSE: return "reuse";
	case MW_ATTACH_FREE_LIST: return "free_list";
	case MW_ATTACH_IMPLICIT: return "initial";
	}
	return "?";
}

/* Room for a probe name (at most 127 bytes in a stream) quoted. */
#define MW_NAME_Q (4 * 128 + 8)

/* The text summary prints at most this many rows per table and threads
 * per arena; the JSON report has every one. */
#define TOP_ROWS 32
#define TOP_ATTACH 8

/* "  ... and K more WHAT (all in --json)" when a list was cut. */
static void more_line(FILE *f, size_t shown, size_t total, const char *what)
{
	if (total > shown)
		fprintf(f, "  ... and %zu more %s (all of them in the JSON report)\n",
			total - shown, what);
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The TOP_ROWS-th largest of v[0..n-1] (0 when n <= TOP_ROWS): rows at
 * or above it are shown. */
static uint64_t top_cutoff(const uint64_t *v, size_t n)
{
	uint64_t *c, cut;

	if (n <= TOP_ROWS)
		return 0;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), u64_desc);
	cut = c[TOP_ROWS - 1];
	free(c);
	return cut;
}

static void addr_str(uint64_t a, char *buf, size_t len)
{
	if (a)
		snprintf(buf, len, "0x%" PRIx64, a);
	else
		snprintf(buf, len, "?");
}

static void header(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	uint64_t total, lost, garbled;
	int ended;

	/* the command, the libc path and the runtime come from a stream or
	 * the target: quoted (msg.h) */
	fprintf(f, "mallocwatch:");
	for (const char *const *a = ri->argv; a && *a; a++) {
		fputc(' ', f);
		mw_fputs_quoted(*a, f);
	}
	fprintf(f, "%s(pid %d)\n  libc ", ri->argv ? " " : " process ", ri->pid);
	mw_fputs_quoted(ri->libc, f);
	fputs(", ", f);
	mw_fputs_quoted(ri->runtime, f);
	fputs(" runtime\n", f);
	if (ri->have_status && ri->term_signal)
		fprintf(f, "  killed by signal %d (%s)\n", ri->term_signal, strsignal(ri->term_signal));
	else if (ri->have_status)
		fprintf(f, "  exit status %d\n", ri->exit_status);
	mw_state_totals(st, &total, &lost, &garbled, &ended);
	fprintf(f, "  events: %" PRIu64 " probe hits, %" PRIu64 " lost", total, lost);
	if (garbled)
		fprintf(f, " (%" PRIu64 " garbled lines)", garbled);
	if (!ended)
		fprintf(f, "; the tracer's end-of-run totals are MISSING: heap sizes, "
			"waits and sbrk below are incomplete");
	fprintf(f, "\n");
	if (mw_state_full_tables(st)[0])
		fprintf(f, "  the script's tables were FULL, later entries dropped: %s\n",
			mw_state_full_tables(st));
	{
		const struct mw_state_omitted *o = mw_state_omitted_get(st);

		if (o->events || o->settings || o->retries || o->thresholds || o->marks)
			fprintf(f, "  counted but not listed (lists stop at %d): %" PRIu64
				" events, %" PRIu64 " settings, %" PRIu64 " retries, %" PRIu64
				" threshold changes, %" PRIu64 " timeline markers\n", MW_STATE_KEEP,
				o->events, o->settings, o->retries, o->thresholds, o->marks);
	}
}

static void arenas_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	const struct mw_arena *a = mw_state_arenas(st, &n);
	char ad[32], hb[32];

	fprintf(f, "\nArenas: %zu\n  %-16s %-5s %-8s %5s %-10s %7s  %s\n", n, "ADDRESS", "KIND",
		"CREATOR", "HEAPS", "HEAP BYTES", "WAITS", "THREADS (how attached)");
	for (size_t i = 0; i < n; i++) {
		char creator[16] = "-";

		addr_str(a[i].addr, ad, sizeof(ad));
		if (a[i].created_by_tid)
			snprintf(creator, sizeof(creator), "%d", a[i].created_by_tid);
		else if (a[i].at_attach && !a[i].is_main)
			snprintf(creator, sizeof(creator), "(before)");
		mw_human_bytes(a[i].heap_bytes, hb, sizeof(hb));
		fprintf(f, "  %-16s %-5s %-8s %5zu %-10s %7" PRIu64 " ", ad,
			a[i].is_main ? "main" : "arena", creator, a[i].nheaps,
			hb, a[i].waits);
		for (size_t j = 0; j < a[i].natt && j < TOP_ATTACH; j++)
			fprintf(f, " %d(%s)", a[i].att[j].tid, attach_name(a[i].att[j].how));
		if (a[i].natt > TOP_ATTACH)
			fprintf(f, " and %zu more", a[i].natt - TOP_ATTACH);
		if (a[i].threads_at_attach)
			fprintf(f, " %" PRIu64 " attached before tracing", a[i].threads_at_attach);
		fprintf(f, "%s\n", a[i].natt || a[i].threads_at_attach ? "" : " -");
	}
}

static void heaps_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	const struct mw_heap *h = mw_state_heaps(st, &n);
	char ad[32], ar[32], sz[32], pk[32];

	fprintf(f, "\nHeaps (heap_info): %zu\n", n);
	if (!n)
		return;
	fprintf(f, "  %-16s %-16s %-12s %-12s %6s %6s  %s\n", "ADDRESS", "ARENA", "SIZE",
		"PEAK", "GREW", "SHRANK", "STATE");
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		addr_str(h[i].addr, ad, sizeof(ad));
		addr_str(h[i].arena, ar, sizeof(ar));
		fprintf(f, "  %-16s %-16s %-12s %-12s %6" PRIu64 " %6" PRIu64 "  %s\n", ad, ar,
			mw_human_bytes(h[i].size, sz, sizeof(sz)),
			mw_human_bytes(h[i].peak, pk, sizeof(pk)), h[i].grew, h[i].shrank,
			h[i].freed ? "freed" : "live");
	}
	more_line(f, TOP_ROWS, n, "heaps");
}

static void sbrk_text(FILE *f, const struct mw_state *st)
{
	const struct mw_sbrk *s = mw_state_sbrk_get(st);
	char g[32], t[32], n[32], p[32];

	fprintf(f, "\nMain arena sbrk:\n  grown %s in %" PRIu64 " calls, trimmed %s in %"
		PRIu64 " calls, net %s (%" PRIu64 " bytes), peak %s\n",
		mw_human_bytes(s->grown, g, sizeof(g)), s->nmore,
		mw_human_bytes(s->trimmed, t, sizeof(t)), s->nless,
		mw_human_bytes(s->grown - s->trimmed, n, sizeof(n)), s->grown - s->trimmed,
		mw_human_bytes((uint64_t)(s->peak > 0 ? s->peak : 0), p, sizeof(p)));
	if (s->first_brk)
		fprintf(f, "  break 0x%" PRIx64 " -> 0x%" PRIx64 "\n", s->first_brk, s->last_brk);
	if (s->failed)
		fprintf(f, "  sbrk failed %" PRIu64 " times (glibc fell back to mmap)\n", s->failed);
}

static void thresholds_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	uint64_t mm, tr;
	const struct mw_threshold_change *c = mw_state_thresholds(st, &n, &mm, &tr);
	char a[32], b[32], q[MW_NAME_Q];

	const char *how = n ? "" : mw_state_seeded(st) ? " as at attach" : " default";

	fprintf(f, "\nThresholds:\n  mmap threshold %s (%" PRIu64 " bytes)%s, trim threshold %s"
		" (%" PRIu64 " bytes)%s\n", mw_human_bytes(mm, a, sizeof(a)), mm, how,
		mw_human_bytes(tr, b, sizeof(b)), tr, how);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  change %zu: thread %d, %s: mmap %s, trim %s\n", i + 1, c[i].tid,
			mw_quote(c[i].source, q, sizeof(q)), mw_human_bytes(c[i].mmap, a, sizeof(a)),
			mw_human_bytes(c[i].trim, b, sizeof(b)));
}

static void threads_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	const struct mw_thread *t = mw_state_threads(st, &n);
	uint64_t *hits = xmalloc((n + 1) * sizeof(*hits)), cut;
	size_t shown = 0;
	char ad[32];

	for (size_t i = 0; i < n; i++)
		hits[i] = t[i].hits;
	cut = top_cutoff(hits, n);
	free(hits);
	fprintf(f, "\nThreads: %zu%s\n  %-8s %-16s %8s %8s %10s\n", n,
		n > TOP_ROWS ? " (the busiest shown)" : "", "TID", "ARENA", "WAITS", "RETRIES",
		"PROBE HITS");
	for (size_t i = 0; i < n && shown < TOP_ROWS; i++) {
		if (t[i].hits < cut)
			continue;
		shown++;
		addr_str(t[i].arena, ad, sizeof(ad));
		fprintf(f, "  %-8d %-16s %8" PRIu64 " %8" PRIu64 " %10" PRIu64 "\n", t[i].tid, ad,
			t[i].waits, t[i].retries, t[i].hits);
	}
	more_line(f, shown, n, "threads");
}

static void settings_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	const struct mw_setting *s = mw_state_settings(st, &n);
	char q[MW_NAME_Q];

	if (!n)
		return;
	fprintf(f, "\nmallopt and tunables: %zu\n", n);
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		if (s[i].from_mallopt)
			fprintf(f, "  thread %d mallopt(%s (%d), %" PRId64 ")", s[i].tid,
				mw_quote(s[i].name, q, sizeof(q)), s[i].param, s[i].value);
		else
			fprintf(f, "  thread %d tunable %s=%" PRId64, s[i].tid,
				mw_quote(s[i].name, q, sizeof(q)), s[i].value);
		if (s[i].has_previous && s[i].previous_unavailable)
			fprintf(f, ", previous unavailable (its symbol did not resolve)\n");
		else if (s[i].has_previous)
			fprintf(f, ", previous %" PRId64 "\n", s[i].previous);
		else
			fprintf(f, ", no do_set probe (ignored or not traced)\n");
	}
	more_line(f, TOP_ROWS, n, "settings");
}

static void retries_text(FILE *f, const struct mw_state *st)
{
	size_t n;
	const struct mw_retry *r = mw_state_retries(st, &n);
	char b[32], q[MW_NAME_Q];

	if (!n)
		return;
	fprintf(f, "\nRetried allocations: %zu\n", n);
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		fprintf(f, "  thread %d %s: %s (%" PRIu64 " bytes)", r[i].tid,
			mw_quote(r[i].probe, q, sizeof(q)),
			mw_human_bytes(r[i].bytes, b, sizeof(b)), r[i].bytes);
		if (r[i].arena)
			fprintf(f, " failed in arena 0x%" PRIx64, r[i].arena);
		fprintf(f, "\n");
	}
	more_line(f, TOP_ROWS, n, "retries");
}

/* A slow-math argument as text: doubles from their bits, ints as is. */
static void math_arg(char *buf, size_t len, enum mw_unit u, int64_t v)
{
	double d;

	if (u == MW_UNIT_DPTR) {
		memcpy(&d, &v, sizeof(d));
		snprintf(buf, len, "%.17g", d);
	} else {
		snprintf(buf, len, "%" PRId64, v);
	}
}

static void math_text(FILE *f, const struct mw_state *st)
{
	int sites;
	const char *libm = mw_state_libm(st, &sites);
	size_t np, ne;
	const struct mw_probe_count *p = mw_state_probes(st, &np);
	const struct mw_event *e = mw_state_events(st, &ne);
	char v[64], q[MW_NAME_Q];

	if (!libm)
		return;
	fprintf(f, sites ? "\nSlow math paths (" : "\nSlow math paths: '");
	mw_fputs_quoted(libm, f);
	if (!sites) {
		fprintf(f, "' has no slow-path probes (glibc 2.19 to 2.33 have them)\n");
		return;
	}
	fprintf(f, ", %d probe sites):\n", sites);
	for (size_t i = 0; i < np; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);

		if (!info || info->family != MW_FAM_MATH || !p[i].hits)
			continue;
		fprintf(f, "  %s: %" PRIu64 " hits (%s)\n", mw_quote(p[i].name, q, sizeof(q)),
			p[i].hits, info->doc);
		for (size_t k = 0; k < ne; k++) {
			if (strcmp(e[k].name, p[i].name) != 0)
				continue;
			fprintf(f, "    thread %d:", e[k].tid);
			for (int j = 0; j < e[k].nargs; j++) {
				math_arg(v, sizeof(v), mw_probe_arg_unit(info, j), e[k].arg[j]);
				fprintf(f, " %s=%s", j < 3 ? info->arg_name[j] : "result", v);
			}
			fprintf(f, "\n");
		}
	}
}

/* Is event e shown in a section of its own? */
static int modelled(const struct mw_event *e)
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

/* tcache double frees, prominently; then probes without a section. */
static void events_text(FILE *f, const struct mw_state *st)
{
	size_t n, other = 0, shown = 0;
	const struct mw_event *e = mw_state_events(st, &n);
	char q[MW_NAME_Q];

	for (size_t i = 0; i < n; i++) {
		if (e[i].known == MW_P_memory_tcache_double_free)
			fprintf(f, "\n*** tcache double free detected: thread %d freed chunk 0x%"
				PRIx64 " (tcache bin %" PRId64 ") twice ***\n", e[i].tid,
				(uint64_t)e[i].arg[0], e[i].arg[1]);
		other += !modelled(&e[i]);
	}
	if (!other)
		return;
	fprintf(f, "\nOther events: %zu\n", other);
	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(e[i].known);

		if (modelled(&e[i]) || shown == TOP_ROWS)
			continue;
		shown++;
		fprintf(f, "  thread %d %s", e[i].tid, mw_quote(e[i].name, q, sizeof(q)));
		for (int j = 0; j < e[i].nargs; j++) {
			if (e[i].unavail & (1u << j))
				fprintf(f, " %s=unavailable", info && j < 3 ? info->arg_name[j] : "arg");
			else if (info && j < info->nargs && info->arg_unit[j] == MW_UNIT_ADDR)
				fprintf(f, " %s=0x%" PRIx64, info->arg_name[j], (uint64_t)e[i].arg[j]);
			else if (info && j < info->nargs)
				fprintf(f, " %s=%" PRId64, info->arg_name[j], e[i].arg[j]);
			else
				fprintf(f, " arg%d=%" PRId64, j + 1, e[i].arg[j]);
		}
		fprintf(f, "%s\n", info ? "" : " (not in mallocwatch's probe table)");
	}
	more_line(f, shown, other, "events");
}

#define TOP_JUMPS 8

/* The setjmp family's probes present in the stream, by name. */
static int has_setjmp(const struct mw_state *st)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(st, &n);

	for (size_t i = 0; i < n; i++)
		if (p[i].known == MW_P_setjmp || p[i].known == MW_P_longjmp ||
		    p[i].known == MW_P_longjmp_target)
			return 1;
	return 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct mw_jump *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The J records of one kind (and probe, unless NULL), busiest first;
 * malloc'ed, *n entries. */
static struct mw_jump *jumps_of(const struct mw_state *st, enum mw_jump_kind kind,
				const char *probe, size_t *n)
{
	size_t all, k = 0;
	const struct mw_jump *j = mw_state_jumps(st, &all);
	struct mw_jump *out = xcalloc(all + 1, sizeof(*out));

	for (size_t i = 0; i < all; i++)
		if (j[i].kind == kind && (!probe || strcmp(j[i].name, probe) == 0))
			out[k++] = j[i];
	if (out)
		qsort(out, k, sizeof(*out), by_count_desc);
	*n = k;
	return out;
}

/* "  WHAT (PROBE): key (count), ..." for the busiest TOP_JUMPS, if any. */
static void jump_line(FILE *f, const struct mw_state *st, enum mw_jump_kind kind,
		      const char *probe, const char *what, const char *label)
{
	size_t n;
	struct mw_jump *j = jumps_of(st, kind, probe, &n);

	for (size_t i = 0; j && i < n && i < TOP_JUMPS; i++) {
		if (!i)
			fprintf(f, "  %s (%s):", what, label);
		if (kind == MW_JUMP_VALUE)
			fprintf(f, "%s %" PRId64 " (%" PRIu64 ")", i ? "," : "", j[i].key, j[i].count);
		else
			fprintf(f, "%s 0x%" PRIx64 " (%" PRIu64 ")", i ? "," : "",
				(uint64_t)j[i].key, j[i].count);
	}
	if (n > TOP_JUMPS)
		fprintf(f, ", %zu more", n - TOP_JUMPS);
	if (n)
		fprintf(f, "\n");
	free(j);
}

static void setjmp_text(FILE *f, const struct mw_state *st)
{
	static const char *const names[] = { "setjmp", "longjmp", "longjmp_target" };
	static const char *const addr_what[] = { "return addresses", "targets", "targets" };
	size_t nt;
	const struct mw_thread *t = mw_state_threads(st, &nt);

	if (!has_setjmp(st))
		return;
	fprintf(f, "\nsetjmp/longjmp:\n  %-8s %12s %12s %15s\n", "TID", "SETJMP", "LONGJMP",
		"LONGJMP_TARGET");
	for (size_t i = 0; i < nt; i++) {
		const uint64_t *c = t[i].jumps;

		if (c[0] || c[1] || c[2])
			fprintf(f, "  %-8d %12" PRIu64 " %12" PRIu64 " %15" PRIu64 "\n",
				t[i].tid, c[0], c[1], c[2]);
	}
	for (int k = 0; k < 3; k++) {
		jump_line(f, st, MW_JUMP_BUF, names[k], "jmp_bufs", names[k]);
		jump_line(f, st, MW_JUMP_ADDR, names[k], addr_what[k], names[k]);
	}
	jump_line(f, st, MW_JUMP_VALUE, "longjmp", "values", "longjmp");
}

int mw_report_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	header(f, st, ri);
	arenas_text(f, st);
	heaps_text(f, st);
	sbrk_text(f, st);
	thresholds_text(f, st);
	threads_text(f, st);
	setjmp_text(f, st);
	settings_text(f, st);
	retries_text(f, st);
	math_text(f, st);
	events_text(f, st);
	if (ri->snap_attach)
		mw_snapshot_diff_text(f, ri->snap_attach, ri->snap_end);
	if (ri->snap_exit)
		mw_snapshot_arenas_text(f, ri->snap_exit, "Allocator at exit, read from the process");
	if (ri->stopped)
		fprintf(f, "\nTracing was stopped (^C, SIGTERM or --duration); the process runs on.\n");
	if (ri->tracer_died)
		fprintf(f, "\nThe tracer ended before the program did: events after that "
			"point are missing.\n");
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* ---- JSON (jansson; keys in docs/json.md) ---- */

/* An address as "0x..." (JSON numbers lose precision past 2^53), or
 * null when unknown. */
static json_t *jaddr(uint64_t a)
{
	char buf[24];

	if (!a)
		return json_null();
	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

static json_t *jint(int64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *json_target(const struct mw_state *st, const struct mw_run_info *ri)
{
	json_t *argv = json_array();

	for (const char *const *a = ri->argv; a && *a; a++)
		mw_json_append(&argv, mw_json_str(*a));
	return json_pack("{s:o, s:i, s:o, s:o, s:o}", "argv", argv, "pid", mw_state_pid(st),
		"exit_status", ri->have_status && !ri->term_signal ? jint(ri->exit_status) :
		json_null(),
		"signal", ri->have_status && ri->term_signal ? jint(ri->term_signal) : json_null(),
		"libc", mw_json_str(ri->libc));
}

static json_t *json_events(const struct mw_state *st, const struct mw_run_info *ri)
{
	uint64_t total, lost, garbled;
	int ended;
	size_t np;
	const struct mw_probe_count *p = mw_state_probes(st, &np);
	json_t *by = json_object();

	const struct mw_state_omitted *o = mw_state_omitted_get(st);
	json_t *ev;

	mw_state_totals(st, &total, &lost, &garbled, &ended);
	for (size_t i = 0; i < np; i++)
		mw_json_set(&by, p[i].name, jint((int64_t)p[i].hits));
	ev = json_pack("{s:o, s:o, s:o, s:b, s:o, s:o}", "total", jint((int64_t)total),
		"lost", jint((int64_t)lost), "garbled", jint((int64_t)garbled),
		"complete", ended && !ri->tracer_died && !mw_state_full_tables(st)[0],
		"by_probe", by, "full_tables", mw_json_str(mw_state_full_tables(st)));
	if (o->events || o->settings || o->retries || o->thresholds || o->marks)
		mw_json_set(&ev, "omitted", json_pack("{s:o, s:o, s:o, s:o, s:o}",
			"events_log", jint((int64_t)o->events), "settings",
			jint((int64_t)o->settings), "retries", jint((int64_t)o->retries),
			"threshold_changes", jint((int64_t)o->thresholds),
			"timeline_markers", jint((int64_t)o->marks)));
	return ev;
}

static json_t *json_arenas(const struct mw_state *st)
{
	size_t n;
	const struct mw_arena *a = mw_state_arenas(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *threads = json_array();

		for (size_t j = 0; j < a[i].natt; j++)
			mw_json_append(&threads, json_pack("{s:i, s:s}", "tid",
				a[i].att[j].tid, "how", attach_name(a[i].att[j].how)));
		mw_json_append(&arr, json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:b, s:o}",
			"address", jaddr(a[i].addr), "main", a[i].is_main,
			"created_by_tid", a[i].created_by_tid ? jint(a[i].created_by_tid) :
			json_null(), "threads", threads, "heaps", jint((int64_t)a[i].nheaps),
			"heap_bytes", jint((int64_t)a[i].heap_bytes),
			"waits", jint((int64_t)a[i].waits), "at_attach", a[i].at_attach,
			"threads_at_attach", jint((int64_t)a[i].threads_at_attach)));
	}
	return arr;
}

static json_t *json_heaps(const struct mw_state *st)
{
	size_t n;
	const struct mw_heap *h = mw_state_heaps(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:b, s:b}",
			"address", jaddr(h[i].addr), "arena", jaddr(h[i].arena),
			"size", jint((int64_t)h[i].size), "peak_size", jint((int64_t)h[i].peak),
			"grew", jint((int64_t)h[i].grew), "shrank", jint((int64_t)h[i].shrank),
			"created_by_tid", h[i].created_by_tid, "freed", h[i].freed,
			"at_attach", h[i].at_attach));
	return arr;
}

static json_t *json_sbrk(const struct mw_state *st)
{
	const struct mw_sbrk *s = mw_state_sbrk_get(st);

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "grown", jint((int64_t)s->grown),
		"trimmed", jint((int64_t)s->trimmed),
		"net", jint((int64_t)(s->grown - s->trimmed)), "peak", jint(s->peak),
		"grow_calls", jint((int64_t)s->nmore), "trim_calls", jint((int64_t)s->nless),
		"failed", jint((int64_t)s->failed));
}

static json_t *json_thresholds(const struct mw_state *st)
{
	size_t n;
	uint64_t mm, tr;
	const struct mw_threshold_change *c = mw_state_thresholds(st, &n, &mm, &tr);
	json_t *changes = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&changes, json_pack("{s:i, s:s, s:o, s:o}", "tid", c[i].tid,
			"source", c[i].source, "mmap", jint((int64_t)c[i].mmap),
			"trim", jint((int64_t)c[i].trim)));
	return json_pack("{s:o, s:o, s:o}", "mmap", jint((int64_t)mm), "trim", jint((int64_t)tr),
			 "changes", changes);
}

static json_t *json_threads(const struct mw_state *st)
{
	size_t n;
	const struct mw_thread *t = mw_state_threads(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:i, s:o, s:o, s:o, s:o}", "tid", t[i].tid,
			"arena", jaddr(t[i].arena), "waits", jint((int64_t)t[i].waits),
			"retries", jint((int64_t)t[i].retries), "hits", jint((int64_t)t[i].hits)));
	return arr;
}

static json_t *json_events_log(const struct mw_state *st)
{
	size_t n;
	const struct mw_event *e = mw_state_events(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *args = json_array();

		for (int j = 0; j < e[i].nargs; j++)
			mw_json_append(&args, e[i].unavail & (1u << j) ? json_null() :
					      jint(e[i].arg[j]));
		mw_json_append(&arr, json_pack("{s:o, s:i, s:o}", "probe", mw_json_str(e[i].name),
						     "tid", e[i].tid, "args", args));
	}
	return arr;
}

static json_t *json_settings(const struct mw_state *st)
{
	size_t n;
	const struct mw_setting *s = mw_state_settings(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:i, s:s, s:o}", "tid", s[i].tid,
				      "source", s[i].from_mallopt ? "mallopt" : "tunable",
				      "name", mw_json_str(s[i].name));

		if (s[i].from_mallopt)
			mw_json_set(&o, "param", jint(s[i].param));
		mw_json_set(&o, "value", jint(s[i].value));
		mw_json_set(&o, "previous", s[i].has_previous && !s[i].previous_unavailable ?
				    jint(s[i].previous) : json_null());
		mw_json_append(&arr, o);
	}
	return arr;
}

static json_t *json_retries(const struct mw_state *st)
{
	size_t n;
	const struct mw_retry *r = mw_state_retries(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:i, s:o, s:o, s:o}", "tid", r[i].tid,
			"probe", mw_json_str(r[i].probe), "bytes", jint((int64_t)r[i].bytes),
			"arena", jaddr(r[i].arena)));
	return arr;
}

static json_t *json_double_frees(const struct mw_state *st)
{
	size_t n;
	const struct mw_event *e = mw_state_events(st, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		if (e[i].known == MW_P_memory_tcache_double_free)
			mw_json_append(&arr, json_pack("{s:i, s:o, s:o}", "tid", e[i].tid,
				"entry", jaddr((uint64_t)e[i].arg[0]), "tc_idx", jint(e[i].arg[1])));
	return arr;
}

static json_t *json_jumps(const struct mw_state *st, enum mw_jump_kind kind)
{
	size_t n;
	struct mw_jump *j = jumps_of(st, kind, NULL, &n);
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:o, s:o, s:o}", "probe", mw_json_str(j[i].name),
			kind == MW_JUMP_VALUE ? "value" : "address",
			kind == MW_JUMP_VALUE ? jint(j[i].key) : jaddr((uint64_t)j[i].key),
			"count", jint((int64_t)j[i].count)));
	free(j);
	return arr;
}

static json_t *json_setjmp(const struct mw_state *st)
{
	size_t nt;
	const struct mw_thread *t = mw_state_threads(st, &nt);
	json_t *threads = json_array();

	for (size_t i = 0; i < nt; i++) {
		const uint64_t *c = t[i].jumps;

		if (c[0] || c[1] || c[2])
			mw_json_append(&threads, json_pack("{s:i, s:o, s:o, s:o}", "tid",
				t[i].tid, "setjmp", jint((int64_t)c[0]), "longjmp",
				jint((int64_t)c[1]), "longjmp_target", jint((int64_t)c[2])));
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "threads", threads,
			 "jmp_bufs", json_jumps(st, MW_JUMP_BUF),
			 "code_addresses", json_jumps(st, MW_JUMP_ADDR),
			 "longjmp_values", json_jumps(st, MW_JUMP_VALUE));
}

/* A slow-math argument: a double as a number (nan and inf, which JSON
 * has not, as strings), an int as an integer. */
static json_t *math_json_arg(enum mw_unit u, int64_t v)
{
	double d;

	if (u != MW_UNIT_DPTR)
		return jint(v);
	memcpy(&d, &v, sizeof(d));
	if (isnan(d))
		return json_string("nan");
	if (isinf(d))
		return json_string(d > 0 ? "inf" : "-inf");
	return json_real(d);
}

static json_t *json_math(const struct mw_state *st, const char *libm, int sites)
{
	size_t np, ne;
	const struct mw_probe_count *p = mw_state_probes(st, &np);
	const struct mw_event *e = mw_state_events(st, &ne);
	json_t *funcs = json_array();

	for (size_t i = 0; i < np; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);
		json_t *samples = json_array();

		if (!info || info->family != MW_FAM_MATH || !p[i].hits) {
			json_decref(samples);
			continue;
		}
		for (size_t k = 0; k < ne; k++) {
			json_t *o;

			if (strcmp(e[k].name, p[i].name) != 0)
				continue;
			o = json_pack("{s:i}", "tid", e[k].tid);
			for (int j = 0; j < e[k].nargs; j++)
				mw_json_set(&o, j < 3 ? info->arg_name[j] : "result",
					math_json_arg(mw_probe_arg_unit(info, j), e[k].arg[j]));
			mw_json_append(&samples, o);
		}
		mw_json_append(&funcs, json_pack("{s:o, s:o, s:o}", "probe", mw_json_str(p[i].name),
			"hits", jint((int64_t)p[i].hits), "samples", samples));
	}
	return json_pack("{s:o, s:i, s:o}", "libm", mw_json_str(libm), "sites", sites,
			 "functions", funcs);
}

/* "snapshots": {"attach": {...}, "end": {...} | null} for -p, {"exit":
 * {...}} for -c. */
static json_t *json_snapshots(const struct mw_run_info *ri)
{
	json_t *o = json_object();

	if (ri->snap_exit)
		mw_json_set(&o, "exit", mw_snapshot_json_value(ri->snap_exit, "?"));
	if (ri->snap_attach) {
		mw_json_set(&o, "attach", mw_snapshot_json_value(ri->snap_attach, "?"));
		mw_json_set(&o, "end", ri->snap_end ?
				    mw_snapshot_json_value(ri->snap_end, "?") : json_null());
	}
	return o;
}

json_t *mw_report_json_value(const struct mw_state *st, const struct mw_run_info *ri)
{
	json_t *root = json_object();
	int sites;
	const char *libm = mw_state_libm(st, &sites);

	mw_json_set(&root, "version", json_integer(1));
	mw_json_set(&root, "schema_version", json_integer(1));
	mw_json_set(&root, "target", json_target(st, ri));
	if (ri->env) {
		const struct mw_environment *e = ri->env;
		char ver[16];

		snprintf(ver, sizeof(ver), "2.%d", e->glibc_minor);
		mw_json_set(&root, "environment", json_pack("{s:o, s:I, s:I, s:o, s:o, s:s, s:s}",
			"glibc", e->glibc_minor ? json_string(ver) : json_null(),
			"nproc", (json_int_t)e->nproc, "cpus", (json_int_t)e->cpus,
			"glibc_tunables", e->tunables[0] ? mw_json_str(e->tunables) : json_null(),
			"malloc_env", mw_json_str(e->malloc_vars), "runtime", e->runtime,
			"mallocwatch", e->version));
	}
	mw_json_set(&root, "runtime", mw_json_str(ri->runtime));
	mw_json_set(&root, "events", json_events(st, ri));
	mw_json_set(&root, "arenas", json_arenas(st));
	mw_json_set(&root, "heaps", json_heaps(st));
	mw_json_set(&root, "sbrk", json_sbrk(st));
	mw_json_set(&root, "thresholds", json_thresholds(st));
	mw_json_set(&root, "threads", json_threads(st));
	mw_json_set(&root, "events_log", json_events_log(st));
	mw_json_set(&root, "settings", json_settings(st));
	mw_json_set(&root, "retries", json_retries(st));
	mw_json_set(&root, "tcache_double_free", json_double_frees(st));
	if (has_setjmp(st))
		mw_json_set(&root, "setjmp", json_setjmp(st));
	if (libm)
		mw_json_set(&root, "math", json_math(st, libm, sites));
	if (ri->snap_attach || ri->snap_exit)
		mw_json_set(&root, "snapshots", json_snapshots(ri));
	return root;
}

int mw_report_json(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	json_t *root = mw_report_json_value(st, ri);
	int ret;

	ret = mw_json_write(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(root);
	return ret;
}
