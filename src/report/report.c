/* report.c - the text summary (mw_report_text), and the few helpers the
 * JSON report (report_json.c) shares with it (report_int.h); see report.h. */
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

/* The hits of the setjmp probes traced (their P records), or -1 when
 * none of them was traced. */
static int64_t setjmp_hits(const struct mw_state *st)
{
	size_t n;
	const struct mw_probe_count *p = mw_state_probes(st, &n);
	int64_t hits = -1;

	for (size_t i = 0; i < n; i++)
		if (p[i].known == MW_P_setjmp || p[i].known == MW_P_longjmp ||
		    p[i].known == MW_P_longjmp_target)
			hits = (hits < 0 ? 0 : hits) + (int64_t)p[i].hits;
	return hits;
}

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

int mw_report_has_setjmp(const struct mw_state *st)
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

struct mw_jump *mw_report_jumps_of(const struct mw_state *st, enum mw_jump_kind kind,
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

static void math_text(FILE *f, const struct mw_state *st, const struct mw_view *v)
{
	int sites;
	const char *libm = mw_state_libm(st, &sites);
	size_t ne;
	const struct mw_event *e = mw_state_events(st, &ne);
	char val[64], q[MW_NAME_Q];

	if (!libm || !sites)	/* none: quiet_text() */
		return;
	fprintf(f, "\nSlow math paths (");
	mw_fputs_quoted(libm, f);
	fprintf(f, ", %d probe sites):\n", sites);
	for (int64_t i = 0; i < mw_view_get(v, MW_VF_math_functions)->v; i++) {
		const struct mw_view_val *p = mw_view_cell(v, (size_t)i, MW_VC_math_probe);
		int64_t hits = mw_view_cell(v, (size_t)i, MW_VC_math_hits)->v;
		const struct mw_probe_info *info = mw_probe_info((int)p->v);

		if (!info)	/* every row's is a slow-math probe of the table */
			continue;
		fprintf(f, "  %s: %" PRId64 " hit%s (%s)\n", mw_quote(p->s, q, sizeof(q)), hits,
			hits == 1 ? "" : "s", info->doc);
		for (size_t k = 0; k < ne; k++) {
			if (strcmp(e[k].name, p->s) != 0)
				continue;
			fprintf(f, "    thread %d:", e[k].tid);
			for (int j = 0; j < e[k].nargs; j++) {
				math_arg(val, sizeof(val), mw_probe_arg_unit(info, j), e[k].arg[j]);
				fprintf(f, " %s=%s", j < 3 ? info->arg_name[j] : "result", val);
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

/* The probes without a section of their own. */
static void events_text(FILE *f, const struct mw_state *st)
{
	size_t n, other = 0, shown = 0;
	const struct mw_event *e = mw_state_events(st, &n);
	char q[MW_NAME_Q];

	for (size_t i = 0; i < n; i++)
		other += !modelled(&e[i]);
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

/* "  WHAT (PROBE): key (count), ..." for the busiest TOP_JUMPS, if any. */
static void jump_line(FILE *f, const struct mw_state *st, enum mw_jump_kind kind,
		      const char *probe, const char *what, const char *label)
{
	size_t n;
	struct mw_jump *j = mw_report_jumps_of(st, kind, probe, &n);

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

static void setjmp_text(FILE *f, const struct mw_state *st, const struct mw_view *v)
{
	static const char *const names[] = { "setjmp", "longjmp", "longjmp_target" };
	static const char *const addr_what[] = { "return addresses", "targets", "targets" };

	if (setjmp_hits(st) <= 0)	/* not traced, or none: quiet_text() */
		return;
	fprintf(f, "\nsetjmp/longjmp:\n");
	mw_view_table_text(f, v, MW_VT_jumps, NULL, SIZE_MAX, 0, 0);
	for (int k = 0; k < 3; k++) {
		jump_line(f, st, MW_JUMP_BUF, names[k], "jmp_bufs", names[k]);
		jump_line(f, st, MW_JUMP_ADDR, names[k], addr_what[k], names[k]);
	}
	jump_line(f, st, MW_JUMP_VALUE, "longjmp", "values", "longjmp");
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

	if (!mw_state_images_refused(st, NULL))	/* else they mix its images */
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
	size_t n;
	uint64_t mm, tr;
	int sites, k = 0;
	const char *libm = mw_state_libm(st, &sites);
	char a[32], b[32];

	if (heaps_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			family_traced(st, MW_FAM_HEAP) ? "no heaps of other arenas (heap_info)" :
			"no heap probes traced");
	if (sbrk_quiet(v))
		fprintf(f, "%s%s", k++ ? "; " : "\nNothing else to report: ",
			family_traced(st, MW_FAM_SBRK) ? "no sbrk call" : "no sbrk probes traced");
	mw_state_thresholds(st, &n, &mm, &tr);
	if (!n && !mw_state_attach_refused(st))
		fprintf(f, "%sno threshold change (mmap %s, trim %s, %s)", k++ ? "; " :
			"\nNothing else to report: ", mw_human_bytes(mm, a, sizeof(a)),
			mw_human_bytes(tr, b, sizeof(b)), !mw_state_seeded(st) ? "default" :
			fork ? "as inherited at fork" : "as at attach");
	if (setjmp_hits(st) == 0)	/* traced, not hit */
		fprintf(f, "%sno setjmp/longjmp", k++ ? "; " : "\nNothing else to report: ");
	if (libm && !sites) {
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
	setjmp_text(f, st, v);
	settings_text(f, v);
	retries_text(f, v);
	math_text(f, st, v);
	events_text(f, st);
	quiet_text(f, st, v, fork);
}

int mw_report_text(FILE *f, const struct mw_state *st, const struct mw_run_info *ri)
{
	struct mw_view *v = mw_view_make(st, ri);

	mw_report_head_text(f, st, ri, v);
	answer_text(f, st, ri, v);
	if (!mw_state_images_refused(st, NULL))	/* else they mix its images */
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
