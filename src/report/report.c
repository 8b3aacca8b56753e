/* report.c - the text summary (mw_report_text), its head in
 * report_head.c (report_int.h), of a run's view (view.h); and the run's
 * findings, which the JSON report shares (report.h). */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "report_stacks.h"
#include "report_int.h"
#include "report_ledger.h"
#include "view.h"
#include "xalloc.h"

/* Did the stream declare a probe of family fam (traced, hit or not)? */
static int family_traced(const struct mw_state *st, enum mw_family fam)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(st, &n);

	for (size_t i = 0; i < n; i++) {
		const struct mw_probe_info *info = mw_probe_info(p[i].known);

		if (info && info->family == fam)
			return 1;
	}
	return 0;
}

/* Nothing to say of the heaps: none seen, all known (quiet_text()). */
static int heaps_quiet(const struct mw_view *v)
{
	return !mw_view_get(v, MW_VF_heaps)->v && !mw_view_get(v, MW_VF_attach_unknown)->v;
}

/* Nothing to say of sbrk: no call seen (quiet_text()). */
static int sbrk_quiet(const struct mw_view *v)
{
	static const enum mw_view_fig f[] = {
		MW_VF_sbrk_grown, MW_VF_sbrk_trimmed, MW_VF_sbrk_grow_calls, MW_VF_sbrk_trim_calls,
		MW_VF_sbrk_failed, MW_VF_sbrk_failed_less, MW_VF_sbrk_first_brk,
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (mw_view_get(v, f[i])->v)
			return 0;
	return 1;
}

/* ---- the text summary ---- */

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

/* -f: was the process created traced, its model starting from the
 * allocator it inherited at fork (its "attach" snapshot is that copy)? */
static int forked(const struct mw_run_info *ri)
{
	return ri->in_tree && ri->snap_attach;
}

static void arenas_text(FILE *f, const struct mw_view *v, int fork)
{
	int64_t n = mw_view_get(v, MW_VF_arenas)->v;

	/* the arenas there before tracing are not all known */
	if (mw_view_get(v, MW_VF_attach_unknown)->v)
		fprintf(f, "\nArenas: ? (%" PRId64 " seen while traced)\n", n);
	else
		fprintf(f, "\nArenas: %" PRId64 "\n", n);
	mw_view_table_text(f, v, MW_VT_arenas, NULL, SIZE_MAX, fork, TOP_ATTACH);
}

static void heaps_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_heaps)->v;

	if (heaps_quiet(v))	/* quiet_text() */
		return;
	if (mw_view_get(v, MW_VF_attach_unknown)->v)	/* those made before tracing are unknown */
		fprintf(f, "\nHeaps (heap_info): ? (%zu seen while traced)\n", n);
	else
		fprintf(f, "\nHeaps (heap_info): %zu\n", n);
	if (!n)
		return;
	mw_view_table_text(f, v, MW_VT_heaps, NULL, TOP_ROWS, 0, 0);
	more_line(f, TOP_ROWS, n, "heaps");
}

/* "Main arena sbrk:": its figures (view.def) as a sentence. */
static void sbrk_text(FILE *f, const struct mw_view *v)
{
	char g[32], t[32], n[32], p[32];
	int64_t net = mw_view_get(v, MW_VF_sbrk_net)->v, peak = mw_view_get(v, MW_VF_sbrk_peak)->v;
	uint64_t grown = (uint64_t)mw_view_get(v, MW_VF_sbrk_grown)->v;
	uint64_t trimmed = (uint64_t)mw_view_get(v, MW_VF_sbrk_trimmed)->v;
	uint64_t nmore = (uint64_t)mw_view_get(v, MW_VF_sbrk_grow_calls)->v;
	uint64_t nless = (uint64_t)mw_view_get(v, MW_VF_sbrk_trim_calls)->v;
	uint64_t failed = (uint64_t)mw_view_get(v, MW_VF_sbrk_failed)->v;
	/* -p: what was there before may be trimmed while traced: a net below 0 */
	int neg = net < 0;
	uint64_t mag = neg ? (uint64_t)-net : (uint64_t)net;

	if (sbrk_quiet(v))	/* quiet_text() */
		return;
	fprintf(f, "\nMain arena sbrk:\n  grown %s in %" PRIu64 " call%s, trimmed %s in %"
		PRIu64 " call%s, net %s%s (%s%" PRIu64 " bytes), peak %s\n",
		mw_human_bytes(grown, g, sizeof(g)), nmore, nmore == 1 ? "" : "s",
		mw_human_bytes(trimmed, t, sizeof(t)), nless, nless == 1 ? "" : "s",
		neg ? "-" : "", mw_human_bytes(mag, n, sizeof(n)), neg ? "-" : "", mag,
		mw_human_bytes((uint64_t)(peak > 0 ? peak : 0), p, sizeof(p)));
	if (mw_view_get(v, MW_VF_sbrk_first_brk)->v)
		fprintf(f, "  break 0x%" PRIx64 " -> 0x%" PRIx64 "\n",
			(uint64_t)mw_view_get(v, MW_VF_sbrk_first_brk)->v,
			(uint64_t)mw_view_get(v, MW_VF_sbrk_last_brk)->v);
	if (failed)
		fprintf(f, "  sbrk failed %" PRIu64 " times (glibc fell back to mmap)\n", failed);
}

static void thresholds_text(FILE *f, const struct mw_state *st, const struct mw_view *v,
			    int fork)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_threshold_changes)->v;
	uint64_t mm = (uint64_t)mw_view_get(v, MW_VF_mmap_threshold)->v;
	uint64_t tr = (uint64_t)mw_view_get(v, MW_VF_trim_threshold)->v;
	char a[32], b[32], q[MW_NAME_Q];
	const char *how = n ? "" : !mw_state_seeded(st) ? " default" :
			  fork ? " as inherited at fork" : " as at attach";

	if (!n && !mw_view_get(v, MW_VF_attach_unknown)->v)
		return;		/* nothing changed them: quiet_text() */
	if (mw_view_get(v, MW_VF_attach_unknown)->v)	/* mallopt or a tunable may have set them */
		fprintf(f, "\nThresholds:\n  mmap threshold ?, trim threshold ? (not read at "
			"attach)\n");
	else
		fprintf(f, "\nThresholds:\n  mmap threshold %s (%" PRIu64 " bytes)%s, trim "
			"threshold %s (%" PRIu64 " bytes)%s\n", mw_human_bytes(mm, a, sizeof(a)),
			mm, how, mw_human_bytes(tr, b, sizeof(b)), tr, how);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  change %zu: thread %" PRId64 ", %s: mmap %s, trim %s\n", i + 1,
			mw_view_cell(v, i, MW_VC_changes_tid)->v,
			mw_quote(mw_view_cell(v, i, MW_VC_changes_source)->s, q, sizeof(q)),
			mw_human_bytes((uint64_t)mw_view_cell(v, i, MW_VC_changes_mmap)->v, a,
				       sizeof(a)),
			mw_human_bytes((uint64_t)mw_view_cell(v, i, MW_VC_changes_trim)->v, b,
				       sizeof(b)));
}

/* "; the other 40522 are memory_heap_more's 40495, memory_heap_less's 26
 * and memory_sbrk_more's 1, counted per heap and for main_arena, not per
 * thread": the probes whose hits no thread's count holds. */
static void unthreaded_text(FILE *f, const struct mw_state *st, uint64_t heaps)
{
	size_t n, k = 0, left = 0;
	const struct mw_probe_count *p = mw_state_probes(st, &n);
	char q[MW_NAME_Q];

	for (size_t i = 0; i < n; i++)
		left += mw_state_probe_unthreaded(st, p[i].known) > 0;
	fprintf(f, "; the other %" PRIu64 " %s", heaps, heaps == 1 ? "is" : "are");
	for (size_t i = 0; i < n; i++) {
		uint64_t u = mw_state_probe_unthreaded(st, p[i].known);

		if (!u)
			continue;
		fprintf(f, "%s%s%s's %" PRIu64, !k ? "" : k + 1 == left ? " and" : ",",
			k == 1 ? "\n   " : " ", mw_quote(p[i].name, q, sizeof(q)), u);
		k++;
	}
	fprintf(f, ",%scounted per heap and for main_arena, not per thread",
		k == 1 ? "\n   " : " ");
}

/* When the threads' PROBE HITS do not add up to the header's count, why:
 *
 *	  (their PROBE HITS add up to 57 of the 40579; the other 40522 are memory_heap_more's 40495,
 *	   memory_heap_less's 26 and memory_sbrk_more's 1, counted per heap and for main_arena, not per thread) */
static void hits_sum_text(FILE *f, const struct mw_state *st, const struct mw_thread *t,
			  size_t n)
{
	uint64_t total, lost, garbled, sum = 0, heaps = mw_state_hits_unthreaded(st);
	int ended;

	mw_state_totals(st, &total, &lost, &garbled, &ended);
	for (size_t i = 0; i < n; i++)
		sum += t[i].hits;
	if (sum == total)
		return;
	fprintf(f, "  (%s PROBE HITS add up to %" PRIu64 " of the %" PRIu64,
		n > TOP_ROWS ? "all the threads'" : "their", sum, total);
	if (heaps)
		unthreaded_text(f, st, heaps);
	if (sum + heaps > total)	/* N records of a probe never declared */
		fprintf(f, ";\n   %" PRIu64 " of the threads' hits are of probes the stream never "
			"declared, not in the %" PRIu64, sum + heaps - total, total);
	else if (sum + heaps < total)
		fprintf(f, ";\n   %" PRIu64 " the report cannot place", total - sum - heaps);
	fprintf(f, ")\n");
}

static void threads_text(FILE *f, const struct mw_state *st, const struct mw_view *v)
{
	size_t n;
	const struct mw_thread *t = mw_state_threads(st, &n);
	uint64_t *hits = xmalloc((n + 1) * sizeof(*hits)), cut;
	unsigned char *show = xmalloc(n + 1);
	size_t shown;

	for (size_t i = 0; i < n; i++)
		hits[i] = t[i].hits;
	cut = top_cutoff(hits, n);
	for (size_t i = 0; i < n; i++)	/* the busiest TOP_ROWS */
		show[i] = t[i].hits >= cut;
	free(hits);
	if (!n) {
		fprintf(f, "\nThreads: 0 (no thread hit a probe while traced)\n");
		free(show);
		return;
	}
	fprintf(f, "\nThreads: %zu%s\n", n, n > TOP_ROWS ? " (the busiest shown)" : "");
	shown = mw_view_table_text(f, v, MW_VT_threads, show, TOP_ROWS, 0, 0);
	free(show);
	more_line(f, shown, n, "threads");
	hits_sum_text(f, st, t, n);
}

static void settings_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_settings)->v;
	char q[MW_NAME_Q];

	if (!n)
		return;
	fprintf(f, "\nmallopt and tunables: %zu\n", n);
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		const struct mw_view_val *param = mw_view_cell(v, i, MW_VC_settings_param);
		const struct mw_view_val *prev = mw_view_cell(v, i, MW_VC_settings_previous);
		int64_t tid = mw_view_cell(v, i, MW_VC_settings_tid)->v;
		int64_t value = mw_view_cell(v, i, MW_VC_settings_value)->v;

		mw_quote(mw_view_cell(v, i, MW_VC_settings_name)->s, q, sizeof(q));
		if (param->known)	/* mallopt's */
			fprintf(f, "  thread %" PRId64 " mallopt(%s (%" PRId64 "), %" PRId64 ")", tid,
				q, param->v, value);
		else
			fprintf(f, "  thread %" PRId64 " tunable %s=%" PRId64, tid, q, value);
		if (prev->known)
			fprintf(f, ", previous %" PRId64 "\n", prev->v);
		else
			fprintf(f, ", %s\n", prev->s);
	}
	more_line(f, TOP_ROWS, n, "settings");
}

static void retries_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_retries)->v;
	char b[32], q[MW_NAME_Q];

	if (!n)
		return;
	fprintf(f, "\nRetried allocations: %zu\n", n);
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		uint64_t bytes = (uint64_t)mw_view_cell(v, i, MW_VC_retries_bytes)->v;
		const struct mw_view_val *arena = mw_view_cell(v, i, MW_VC_retries_arena);

		fprintf(f, "  thread %" PRId64 " %s: %s (%" PRIu64 " bytes)",
			mw_view_cell(v, i, MW_VC_retries_tid)->v,
			mw_quote(mw_view_cell(v, i, MW_VC_retries_probe)->s, q, sizeof(q)),
			mw_human_bytes(bytes, b, sizeof(b)), bytes);
		if (arena->known)
			fprintf(f, " failed in arena 0x%" PRIx64, (uint64_t)arena->v);
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

/* Function fn's samples (the view's): "    thread 101: x=1.5 result=...". */
static void samples_text(FILE *f, const struct mw_view *v, int64_t fn)
{
	char val[64];

	for (int64_t k = 0; k < mw_view_get(v, MW_VF_math_samples)->v; k++) {
		const struct mw_view_arg *a = mw_view_args(v, (size_t)k, MW_VC_samples_args);

		if (mw_view_cell(v, (size_t)k, MW_VC_samples_function)->v != fn)
			continue;
		fprintf(f, "    thread %" PRId64 ":", mw_view_cell(v, (size_t)k, MW_VC_samples_tid)->v);
		for (int64_t j = 0; j < mw_view_cell(v, (size_t)k, MW_VC_samples_args)->v; j++) {
			math_arg(val, sizeof(val), a[j].unit, a[j].val.v);
			fprintf(f, " %s=%s", a[j].name, val);
		}
		fprintf(f, "\n");
	}
}

static void math_text(FILE *f, const struct mw_view *v)
{
	const char *libm = mw_view_get(v, MW_VF_math_libm)->s;
	char q[MW_NAME_Q];

	if (!libm || !mw_view_get(v, MW_VF_math_sites)->v)	/* none: quiet_text() */
		return;
	fprintf(f, "\nSlow math paths (");
	mw_fputs_quoted(libm, f);
	fprintf(f, ", %" PRId64 " probe sites):\n", mw_view_get(v, MW_VF_math_sites)->v);
	for (int64_t i = 0; i < mw_view_get(v, MW_VF_math_functions)->v; i++) {
		const struct mw_view_val *p = mw_view_cell(v, (size_t)i, MW_VC_math_probe);
		int64_t hits = mw_view_cell(v, (size_t)i, MW_VC_math_hits)->v;
		const struct mw_probe_info *info = mw_probe_info((int)p->v);

		if (!info)	/* every row's is a slow-math probe of the table */
			continue;
		fprintf(f, "  %s: %" PRId64 " hit%s (%s)\n", mw_quote(p->s, q, sizeof(q)), hits,
			hits == 1 ? "" : "s", info->doc);
		samples_text(f, v, i);
	}
}

/* tcache double frees, prominently: among the answers. */
static void double_free_text(FILE *f, const struct mw_view *v)
{
	for (int64_t i = 0; i < mw_view_get(v, MW_VF_double_frees)->v; i++)
		fprintf(f, "\n*** tcache double free detected: thread %" PRId64 " freed chunk 0x%"
			PRIx64 " (tcache bin %" PRId64 ") twice ***\n",
			mw_view_cell(v, (size_t)i, MW_VC_frees_tid)->v,
			(uint64_t)mw_view_cell(v, (size_t)i, MW_VC_frees_entry)->v,
			mw_view_cell(v, (size_t)i, MW_VC_frees_tc_idx)->v);
}

/* Row i's arguments: " NAME=VALUE" (an address in hex), " NAME=unavailable",
 * " argN=VALUE" for one probes.def does not name. */
static void args_text(FILE *f, const struct mw_view *v, size_t i)
{
	const struct mw_view_arg *a = mw_view_args(v, i, MW_VC_events_args);

	for (int64_t j = 0; j < mw_view_cell(v, i, MW_VC_events_args)->v; j++) {
		if (!a[j].val.known)
			fprintf(f, " %s=unavailable", a[j].name ? a[j].name : "arg");
		else if (a[j].unit == MW_UNIT_ADDR)
			fprintf(f, " %s=0x%" PRIx64, a[j].name, (uint64_t)a[j].val.v);
		else if (a[j].unit != MW_UNIT_NONE)
			fprintf(f, " %s=%" PRId64, a[j].name, a[j].val.v);
		else
			fprintf(f, " arg%d=%" PRId64, (int)j + 1, a[j].val.v);
	}
}

/* The events kept without a section of their own. */
static void events_text(FILE *f, const struct mw_view *v)
{
	size_t n = (size_t)mw_view_get(v, MW_VF_events_log)->v, shown = 0;
	int64_t other = mw_view_get(v, MW_VF_other_events)->v;
	char q[MW_NAME_Q];

	if (!other)
		return;
	fprintf(f, "\nOther events: %" PRId64 "\n", other);
	for (size_t i = 0; i < n && shown < TOP_ROWS; i++) {
		const struct mw_view_val *p = mw_view_cell(v, i, MW_VC_events_probe);

		if (mw_view_cell(v, i, MW_VC_events_own)->v)
			continue;
		shown++;
		fprintf(f, "  thread %" PRId64 " %s", mw_view_cell(v, i, MW_VC_events_tid)->v,
			mw_quote(p->s, q, sizeof(q)));
		args_text(f, v, i);
		fprintf(f, "%s\n", mw_probe_info((int)p->v) ? "" : " (not in mallocwatch's probe table)");
	}
	more_line(f, shown, (size_t)other, "events");
}

#define TOP_JUMPS 8

/* A table of the setjmp probes' keys (view.def's jmp_bufs, ...): its
 * columns, the probe, the key (an address or a value) and the count. */
struct jump_table {
	enum mw_view_table t;
	enum mw_view_col probe, key, count;
};

static const struct jump_table bufs = { MW_VT_jmp_bufs, MW_VC_jmp_bufs_probe,
	MW_VC_jmp_bufs_address, MW_VC_jmp_bufs_count };
static const struct jump_table addrs = { MW_VT_code_addresses, MW_VC_code_addresses_probe,
	MW_VC_code_addresses_address, MW_VC_code_addresses_count };
static const struct jump_table values = { MW_VT_longjmp_values, MW_VC_longjmp_values_probe,
	MW_VC_longjmp_values_value, MW_VC_longjmp_values_count };

/* "  WHAT (PROBE): key (count), ..." for the busiest TOP_JUMPS of table
 * j's rows of probe, if any (its rows are busiest first). */
static void jump_line(FILE *f, const struct mw_view *v, const struct jump_table *j,
		      const char *probe, const char *what)
{
	size_t n = 0;

	for (int64_t i = 0; i < mw_view_get(v, mw_view_table_rows(j->t))->v; i++) {
		int64_t key = mw_view_cell(v, (size_t)i, j->key)->v;
		uint64_t count = (uint64_t)mw_view_cell(v, (size_t)i, j->count)->v;

		if (strcmp(mw_view_cell(v, (size_t)i, j->probe)->s, probe) != 0 || n++ >= TOP_JUMPS)
			continue;
		if (n == 1)
			fprintf(f, "  %s (%s):", what, probe);
		if (j == &values)
			fprintf(f, "%s %" PRId64 " (%" PRIu64 ")", n > 1 ? "," : "", key, count);
		else
			fprintf(f, "%s 0x%" PRIx64 " (%" PRIu64 ")", n > 1 ? "," : "", (uint64_t)key,
				count);
	}
	if (n > TOP_JUMPS)
		fprintf(f, ", %zu more", n - TOP_JUMPS);
	if (n)
		fprintf(f, "\n");
}

static void setjmp_text(FILE *f, const struct mw_view *v)
{
	static const char *const names[] = { "setjmp", "longjmp", "longjmp_target" };
	static const char *const addr_what[] = { "return addresses", "targets", "targets" };

	if (!mw_view_get(v, MW_VF_setjmp_hits)->v)	/* not traced, or none: quiet_text() */
		return;
	fprintf(f, "\nsetjmp/longjmp:\n");
	mw_view_table_text(f, v, MW_VT_jumps, NULL, SIZE_MAX, 0, 0);
	for (int k = 0; k < 3; k++) {
		jump_line(f, v, &bufs, names[k], "jmp_bufs");
		jump_line(f, v, &addrs, names[k], addr_what[k]);
	}
	jump_line(f, v, &values, "longjmp", "values");
}

void mw_run_findings(const struct mw_state *st, const struct mw_run_info *ri,
		     struct mw_finding **out, size_t *n)
{
	struct mw_finding_waits *w;
	const struct mw_arena *ar;
	size_t na;

	const struct mw_snapshot *s = ri->ledger_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;

	*out = NULL;
	*n = 0;
	if (!s || !l)
		return;
	ar = mw_state_arenas(st, &na);
	if (mw_state_images_refused(st, NULL))	/* waits that mix its images: none */
		na = 0;
	w = xcalloc(na ? na : 1, sizeof(*w));
	for (size_t i = 0; i < na; i++)
		w[i] = (struct mw_finding_waits){ .arena = ar[i].addr, .waits = ar[i].waits };
	mw_findings_make_cmd(s, l, ri->env && ri->env->cpus > 0 ? (uint64_t)ri->env->cpus : 1,
			     w, na, ri->argv, out, n);
	free(w);
}

char *mw_run_findings_text(const struct mw_state *st, const struct mw_run_info *ri)
{
	struct mw_finding *v;
	char *text = NULL;
	size_t n, len = 0;
	FILE *f;

	mw_run_findings(st, ri, &v, &n);
	if (n && (f = open_memstream(&text, &len))) {
		mw_findings_text(f, v, n);
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
		}
	}
	free(v);
	return text;
}

/* text (lines ending in '\n', from a saved stream) to f, each line
 * quoted (msg.h): its bytes are the stream's, which anyone may write. */
static void quoted_lines(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		char *line = strndup(text, n);

		if (line) {
			mw_fputs_quoted(line, f);
			fputc('\n', f);
			free(line);
		}
		text += n + (text[n] == '\n');
	}
}

/* The answer, first: a tcache double free, the allocator's totals and
 * the RSS at the last reading (the exit's with -c, the end's with -p),
 * and the findings:
 *
 *	Total: system 2.4 GiB = arenas 2.4 GiB + mmapped chunks 0 B (0 chunks)
 *	       in use 2.4 GiB = arenas 2.4 GiB + mmapped chunks 0 B; free ...
 *	RSS at exit 276.2 MiB, peak 276.2 MiB (the RSS ledger below adds up)
 *
 *	Findings (largest first):
 *	 1. ... */
static void answer_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri,
			const struct mw_view *view)
{
	const struct mw_snapshot *s = ri->snap_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;
	struct mw_finding *v;
	char a[32], b[32];
	size_t n;

	if (!mw_view_get(view, MW_VF_images_refused)->v)	/* else they mix its images */
		double_free_text(f, view);
	if (s)
		mw_snapshot_totals_text(f, s);
	if (l) {
		fprintf(f, "%sRSS %s %s", s ? "" : "\n", ri->ledger_exit ? "at exit" : "at the end",
			mw_human_bytes(l->total.rss, a, sizeof(a)));
		if (l->peak_rss)
			fprintf(f, ", peak %s", mw_human_bytes(l->peak_rss, b, sizeof(b)));
		fprintf(f, " (the RSS ledger below %s)\n", l->ok ? "adds up" : "DOES NOT ADD UP");
	}
	if (!l && ri->findings_text) {	/* a replay: the ledger was read from the
					 * process's pages, its findings are saved */
		quoted_lines(f, ri->findings_text);
		return;
	}
	if (!l || !(ri->ledger_exit ? ri->snap_exit : ri->snap_end))
		return;
	mw_run_findings(st, ri, &v, &n);
	mw_findings_text(f, v, n);
	free(v);
}

/* The last reading's ledger (its findings are in answer_text). */
static void exit_ledger_text(FILE *f, const struct mw_run_info *ri)
{
	const struct mw_snapshot *s = ri->ledger_exit ? ri->snap_exit : ri->snap_end;
	const struct mw_ledger *l = ri->ledger_exit ? ri->ledger_exit : ri->ledger_end;

	if (s && l)
		mw_ledger_text(f, s, l);
}

/* The sections with nothing to say, folded into one line:
 *
 *	Nothing else to report: no heaps of other arenas (heap_info); no
 *	sbrk call; no threshold change (mmap 128.0 KiB, trim 128.0 KiB,
 *	default); no setjmp/longjmp; no slow-math probes in
 *	'/lib/x86_64-linux-gnu/libm.so.6' (glibc 2.19 to 2.33 have them)
 *
 * (one line in the output). */
static void quiet_text(FILE *f, const struct mw_state *st, const struct mw_view *v, int fork)
{
	uint64_t mm = (uint64_t)mw_view_get(v, MW_VF_mmap_threshold)->v;
	uint64_t tr = (uint64_t)mw_view_get(v, MW_VF_trim_threshold)->v;
	const char *libm = mw_view_get(v, MW_VF_math_libm)->s;
	char a[32], b[32];
	int k = 0;

	if (heaps_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			family_traced(st, MW_FAM_HEAP) ? "no heaps of other arenas (heap_info)" :
			"no heap probes traced");
	if (sbrk_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			family_traced(st, MW_FAM_SBRK) ? "no sbrk call" : "no sbrk probes traced");
	if (!mw_view_get(v, MW_VF_threshold_changes)->v && !mw_view_get(v, MW_VF_attach_unknown)->v)
		fprintf(f, "%sno threshold change (mmap %s, trim %s, %s)", k++ ? "; " :
			"\nNothing else to report: ", mw_human_bytes(mm, a, sizeof(a)),
			mw_human_bytes(tr, b, sizeof(b)), !mw_state_seeded(st) ? "default" :
			fork ? "as inherited at fork" : "as at attach");
	if (mw_view_get(v, MW_VF_setjmp_traced)->v && !mw_view_get(v, MW_VF_setjmp_hits)->v)
		fprintf(f, "%sno setjmp/longjmp", k++ ? "; " : "\nNothing else to report: ");
	if (libm && !mw_view_get(v, MW_VF_math_sites)->v) {
		fprintf(f, "%sno slow-math probes in '", k++ ? "; " : "\nNothing else to report: ");
		mw_fputs_quoted(libm, f);
		fprintf(f, "' (glibc 2.19 to 2.33 have them)");
	}
	if (k)
		fputc('\n', f);
}

/* The figures counted from the tracer. */
static void traced_text(FILE *f, const struct mw_state *st, const struct mw_view *v, int fork)
{
	arenas_text(f, v, fork);
	heaps_text(f, v);
	sbrk_text(f, v);
	thresholds_text(f, st, v, fork);	/* when they changed */
	threads_text(f, st, v);
	setjmp_text(f, v);
	settings_text(f, v);
	retries_text(f, v);
	math_text(f, v);
	events_text(f, v);
	quiet_text(f, st, v, fork);
}

int mw_report_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	struct mw_view *v = mw_view_make(st, ri);

	mw_report_head_text(f, ri, v);
	answer_text(f, st, ri, v);
	if (!mw_view_get(v, MW_VF_images_refused)->v)	/* else they mix its images */
		traced_text(f, st, v, forked(ri));
	if (ri->snap_attach)	/* against the end's (-p), else the exit's (-f) */
		mw_snapshot_diff_text_named(f, ri->snap_attach, ri->snap_end ? ri->snap_end :
					    ri->snap_exit, forked(ri) ? "AT FORK" : "AT ATTACH",
					    ri->snap_end ? "AT THE END" : "AT EXIT",
					    forked(ri) ? "at fork: the copy of its parent's "
					    "allocator it started with" : NULL, ri->end_why);
	else if (ri->snap_end)	/* -p, no attach snapshot: the end's own figures */
		mw_snapshot_arenas_only_text(f, ri->snap_end, "Allocator at the end, read from "
					     "the process");
	if (ri->snap_exit)	/* its Total is in answer_text */
		mw_snapshot_arenas_only_text(f, ri->snap_exit, "Allocator at exit, read from the "
					     "process");
	exit_ledger_text(f, ri);
	if (ri->stacks)
		mw_report_stacks_text(f, ri->stacks, ri->stacks_pid);
	if (ri->stopped)
		fprintf(f, "\nTracing was stopped (^C, SIGTERM or --duration); the process runs on.\n");
	if (ri->tracer_died)
		fprintf(f, "\nThe tracer ended before the program did: events after that "
			"point are missing.\n");
	mw_view_free(v);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
