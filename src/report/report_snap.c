/* report_snap.c - a snapshot (snapshot.h) as text and as JSON; the JSON
 * keys are in docs/json.md ("Snapshot").  JSON goes through jansson. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "jsonout.h"
#include "msg.h"
#include "report_snap.h"
#include "units.h"
#include "view.h"
#include "xalloc.h"

#define SNAP_ARENA_ROWS 64
#define SNAP_HEAP_ROWS 32

static void hex(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "0x%" PRIx64, v);
}

static void arena_row(FILE *f, const struct mw_snap_arena *a)
{
	char ad[24], sy[16], us[16], fr[16], tr[16], tp[16];

	hex(ad, sizeof(ad), a->addr);
	fprintf(f, "  %-16s %-5s %10s %10s %10s %10s %10s %5zu %7" PRIu64 "%s\n", ad,
		a->is_main ? "main" : "arena", mw_human_bytes(a->system_mem, sy, sizeof(sy)),
		mw_human_bytes(mw_view_arena_in_use(a), us, sizeof(us)),
		mw_human_bytes(a->free_bytes, fr, sizeof(fr)),
		mw_human_bytes(a->trimmable, tr, sizeof(tr)),
		mw_human_bytes(a->top_size, tp, sizeof(tp)), a->nheaps, a->attached_threads,
		a->on_free_list ? "  (on the free list)" : "");
}

/* The totals, mmapped chunks counted (glibc's malloc_stats "Total (incl.
 * mmap)"): an mmapped chunk is in use until freed, and then unmapped.
 *
 *	Total: system 141.3 MiB = arenas 264.0 KiB + mmapped chunks 141.0 MiB (6)
 *	       in use 141.1 MiB = arenas 85.0 KiB + mmapped chunks 141.0 MiB; free (retained) ...
 */
void mw_snapshot_totals_text(FILE *f, const struct mw_snapshot *s)
{
	char a[16], b[16], c[16], d[16], m[16], sa[16], ua[16];

	mw_human_bytes(s->mmapped_mem, m, sizeof(m));
	fprintf(f, "\nTotal: system %s = arenas %s + mmapped chunks %s (%" PRIu64 " chunk%s)\n"
		"       in use %s = arenas %s + mmapped chunks %s; free (retained) %s; "
		"malloc_trim(0) could give back at most %s\n",
		mw_human_bytes(s->system_bytes + s->mmapped_mem, a, sizeof(a)),
		mw_human_bytes(s->system_bytes, sa, sizeof(sa)), m, s->n_mmaps,
		s->n_mmaps == 1 ? "" : "s",
		mw_human_bytes(s->in_use_bytes + s->mmapped_mem, b, sizeof(b)),
		mw_human_bytes(s->in_use_bytes, ua, sizeof(ua)), m,
		mw_human_bytes(s->free_bytes, c, sizeof(c)),
		mw_human_bytes(s->trimmable, d, sizeof(d)));
}

static void arenas_table(FILE *f, const struct mw_snapshot *s)
{
	fprintf(f, "  %-16s %-5s %10s %10s %10s %10s %10s %5s %7s\n", "ADDRESS", "KIND", "SYSTEM",
		"IN USE", "FREE", "TRIMMABLE", "TOP", "HEAPS", "THREADS");
	for (size_t i = 0; i < s->narenas && i < SNAP_ARENA_ROWS; i++)
		arena_row(f, &s->arenas[i]);
	if (s->narenas > SNAP_ARENA_ROWS)
		fprintf(f, "  ... and %zu more arenas (all of them in the JSON report)\n",
			s->narenas - SNAP_ARENA_ROWS);
}

void mw_snapshot_arenas_only_text(FILE *f, const struct mw_snapshot *s, const char *title)
{
	fprintf(f, "\n%s: %zu arena%s%s\n", title, s->narenas, s->narenas == 1 ? "" : "s",
		s->consistent ? "" : " (INCONSISTENT)");
	arenas_table(f, s);
}

void mw_snapshot_arenas_text(FILE *f, const struct mw_snapshot *s, const char *title)
{
	mw_snapshot_arenas_only_text(f, s, title);
	mw_snapshot_totals_text(f, s);
}

/* " (ours)", " (not ours)", "" unknown */
static const char *ours(int other)
{
	return other < 0 ? "" : other ? " (not ours)" : " (ours)";
}

void mw_where_text(FILE *f, const struct mw_where *w)
{
	char q[4 * 4096 + 8];
	pid_t inner = mw_where_inner_pid(w);

	fputs("  ", f);
	if (inner && inner != w->pid)
		fprintf(f, "pid %d in its ", (int)inner);
	if (w->pid_ns)
		fprintf(f, "pid namespace %" PRIu64 "%s", w->pid_ns, ours(w->pid_ns_other));
	else
		fputs("pid namespace unknown", f);
	if (w->mnt_ns)
		fprintf(f, ", mount namespace %" PRIu64 "%s", w->mnt_ns, ours(w->mnt_ns_other));
	else
		fputs(", mount namespace unknown", f);
	/* a cgroup's name is its maker's, maybe the process's own */
	if (w->cgroup[0])
		fprintf(f, "; cgroup %s (%s)", mw_quote(w->cgroup, q, sizeof(q)), w->cgroup_from);
	if (w->container[0])
		fprintf(f, ", container %s", mw_quote(w->container, q, sizeof(q)));
	fputc('\n', f);
}

static json_t *ns_json(uint64_t inode, int other)
{
	return json_pack("{s:o, s:o}", "inode", inode ? json_integer((json_int_t)inode) : json_null(),
			 "ours", other < 0 ? json_null() : json_boolean(!other));
}

json_t *mw_where_json(const struct mw_where *w)
{
	json_t *nspid = json_array();

	for (int i = 0; i < w->nnspid; i++)
		mw_json_append(&nspid, json_integer(w->nspid[i]));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"pid_namespace", ns_json(w->pid_ns, w->pid_ns_other),
		"mount_namespace", ns_json(w->mnt_ns, w->mnt_ns_other),
		"nspid", nspid,
		"pid_in_namespace", w->nnspid ? json_integer(mw_where_inner_pid(w)) : json_null(),
		"cgroup", w->cgroup[0] ? mw_json_str(w->cgroup) : json_null(),
		"cgroup_from", w->cgroup[0] ? mw_json_str(w->cgroup_from) : json_null(),
		"container", w->container[0] ? mw_json_str(w->container) : json_null());
}

int mw_snapshot_text(FILE *f, const struct mw_snapshot *s, const char *comm)
{
	return mw_snapshot_text_where(f, s, comm, NULL);
}

int mw_snapshot_text_where(FILE *f, const struct mw_snapshot *s, const char *comm,
			   const struct mw_where *w)
{
	char a[16], b[16], c[16], q[4 * 4096 + 8];
	size_t nheaps = 0, shown = 0;

	/* the process names itself and its files: nothing of it reaches a
	 * terminal unquoted */
	fprintf(f, "mallocwatch: snapshot of process %d (%s), read in %.1f ms", (int)s->pid,
		mw_quote(comm, q, sizeof(q)), (double)s->duration_ns / 1e6);
	if (s->stops)	/* snapshot.h: its threads held by ptrace */
		fprintf(f, "; the process was stopped for %.2f ms (%d stop%s)\n",
			(double)s->stopped_ns / 1e6, s->stops, s->stops == 1 ? "" : "s");
	else
		fprintf(f, " while it ran\n");
	if (w)
		mw_where_text(f, w);
	fprintf(f, "  libc %s", mw_quote(s->libc, q, sizeof(q)));
	if (s->glibc_minor)
		fprintf(f, " (glibc 2.%d)", s->glibc_minor);
	if (s->libc_elsewhere)	/* a container's, or replaced on disk since */
		fprintf(f, ", the process's own file (another here)");
	fprintf(f, ", layouts from %s\n", mw_quote(s->dwarf_file, q, sizeof(q)));
	if (!s->consistent)
		fprintf(f, "  INCONSISTENT after %d tries: %s (the allocator changed while it was "
			"read; the figures below are the last try's)\n", s->tries,
			mw_quote(s->why, q, sizeof(q)));
	fprintf(f, "\nArenas: %zu (glibc counts %" PRIu64 ")\n", s->narenas, s->narenas_glibc);
	arenas_table(f, s);
	for (size_t i = 0; i < s->narenas; i++)
		nheaps += s->arenas[i].nheaps;
	fprintf(f, "\nHeaps (heap_info): %zu\n", nheaps);
	if (nheaps)
		fprintf(f, "  %-16s %-16s %12s %12s\n", "ADDRESS", "ARENA", "SIZE", "MPROTECT");
	for (size_t i = 0; i < s->narenas; i++)
		for (size_t j = 0; j < s->arenas[i].nheaps; j++) {
			const struct mw_snap_heap *h = &s->arenas[i].heaps[j];
			char ha[24], aa[24];

			if (shown++ >= SNAP_HEAP_ROWS)
				continue;
			hex(ha, sizeof(ha), h->addr);
			hex(aa, sizeof(aa), s->arenas[i].addr);
			fprintf(f, "  %-16s %-16s %12s %12s\n", ha, aa,
				mw_human_bytes(h->size, a, sizeof(a)),
				mw_human_bytes(h->mprotect_size, b, sizeof(b)));
		}
	if (nheaps > SNAP_HEAP_ROWS)
		fprintf(f, "  ... and %zu more heaps (all of them in the JSON report)\n",
			nheaps - SNAP_HEAP_ROWS);
	fprintf(f, "\nMain heap (sbrk): 0x%" PRIx64 " .. 0x%" PRIx64 ", %s; break 0x%" PRIx64 "\n",
		s->sbrk_base, s->main_end,
		mw_human_bytes(mw_view_main_heap(s), a, sizeof(a)), s->brk);
	fprintf(f, "\nThresholds: mmap %s (%" PRIu64 " bytes, %s), trim %s (%" PRIu64
		" bytes), top_pad %s (%" PRIu64 " bytes)\n",
		mw_human_bytes(s->mmap_threshold, a, sizeof(a)), s->mmap_threshold,
		s->no_dyn_threshold ? "fixed by mallopt or a tunable" : "dynamic",
		mw_human_bytes(s->trim_threshold, b, sizeof(b)), s->trim_threshold,
		mw_human_bytes(s->top_pad, c, sizeof(c)), s->top_pad);
	fprintf(f, "Arena limits: arena_max %" PRIu64 "%s, arena_test %" PRIu64 "\n", s->arena_max,
		s->arena_max ? "" : " (unset: 8 x cores)", s->arena_test);
	fprintf(f, "mmapped chunks: %" PRIu64 " (%s), peak %" PRIu64 " (%s); limit %" PRIu64
		" chunks (mp_.n_mmaps_max)\n",
		s->n_mmaps, mw_human_bytes(s->mmapped_mem, a, sizeof(a)), s->max_n_mmaps,
		mw_human_bytes(s->max_mmapped_mem, b, sizeof(b)), s->n_mmaps_max);
	mw_snapshot_totals_text(f, s);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

static json_t *arena_json(const struct mw_snap_arena *a)
{
	json_t *heaps = json_array();

	for (size_t j = 0; j < a->nheaps; j++)
		mw_json_append(&heaps, json_pack("{s:o, s:I, s:I}",
			"address", mw_json_addr(a->heaps[j].addr), "size", (json_int_t)a->heaps[j].size,
			"mprotect_size", (json_int_t)a->heaps[j].mprotect_size));
	return json_pack("{s:o, s:b, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:b,"
			 " s:{s:I, s:I, s:I, s:I}, s:o, s:I, s:I}",
		"address", mw_json_addr(a->addr), "main", a->is_main,
		"system_bytes", (json_int_t)a->system_mem,
		"max_system_bytes", (json_int_t)a->max_system_mem,
		"top", mw_json_addr(a->top), "top_bytes", (json_int_t)a->top_size,
		"free_bytes", (json_int_t)a->free_bytes,
		"in_use_bytes", (json_int_t)mw_view_arena_in_use(a),
		"trimmable_bytes", (json_int_t)a->trimmable,
		"attached_threads", (json_int_t)a->attached_threads,
		"on_free_list", a->on_free_list,
		"malloc_info", "fast_count", (json_int_t)a->fast_count,
		"fast_bytes", (json_int_t)a->fast_bytes, "rest_count", (json_int_t)a->rest_count,
		"rest_bytes", (json_int_t)a->rest_bytes,
		"heaps", heaps, "heap_bytes", (json_int_t)a->heap_bytes,
		"heap_mprotect_bytes", (json_int_t)a->heap_mprotect);
}

/* mw_snapshot.check's names in the JSON (docs/json.md, "check"). */
static const char *const check_names[] = {
	[MW_SNAP_CHECK_REREAD] = "reread", [MW_SNAP_CHECK_IDLE] = "idle",
	[MW_SNAP_CHECK_STOPPED] = "stopped", [MW_SNAP_CHECK_HEADERS] = "headers",
};

static const char *check_name(int c)
{
	return c >= 0 && c < (int)(sizeof(check_names) / sizeof(*check_names)) ? check_names[c] :
	       "reread";
}

/* A report's "check" back (absent before 2026-11-29: a stopped read, or
 * a later read's). */
static int check_of(const json_t *o, int stops)
{
	const char *t = json_string_value(json_object_get(o, "check"));

	for (int c = 0; t && c < (int)(sizeof(check_names) / sizeof(*check_names)); c++)
		if (!strcmp(t, check_names[c]))
			return c;
	return stops ? MW_SNAP_CHECK_STOPPED : MW_SNAP_CHECK_REREAD;
}

json_t *mw_snapshot_json_value(const struct mw_snapshot *s, const char *comm)
{
	json_t *arenas = json_array();
	char ver[16];

	for (size_t i = 0; i < s->narenas; i++)
		mw_json_append(&arenas, arena_json(&s->arenas[i]));
	snprintf(ver, sizeof(ver), "2.%d", s->glibc_minor);
	json_t *o;

	/* comm and the paths come from the process: not necessarily UTF-8 */
	o = json_pack("{s:i, s:o, s:o, s:o, s:o, s:I, s:I, s:b, s:o, s:i, s:s, s:i, s:I, s:i, s:o, s:I,"
			 " s:{s:o, s:o, s:I, s:o}, s:{s:I, s:I, s:b, s:I},"
			 " s:{s:I, s:I}, s:{s:I, s:I, s:I, s:I, s:I},"
			 " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		"pid", (int)s->pid, "comm", mw_json_str(comm), "libc", mw_json_str(s->libc),
		"dwarf", mw_json_str(s->dwarf_file),
		"glibc", s->glibc_minor ? json_string(ver) : json_null(),
		"taken_unix_ns", (json_int_t)s->taken_ns, "duration_ns", (json_int_t)s->duration_ns,
		"consistent", s->consistent,
		"inconsistent_reason", s->consistent ? json_null() : mw_json_str(s->why),
		"tries", s->tries, "check", check_name(s->check), "stops", s->stops, "stopped_ns", (json_int_t)s->stopped_ns,
		"settle_rounds", s->settle_rounds, "arenas", arenas, "narenas", (json_int_t)s->narenas_glibc,
		"main_heap", "sbrk_base", mw_json_addr(s->sbrk_base), "end", mw_json_addr(s->main_end),
		"bytes", (json_int_t)mw_view_main_heap(s),
		"brk", mw_json_addr(s->brk),
		"thresholds", "mmap", (json_int_t)s->mmap_threshold, "trim",
		(json_int_t)s->trim_threshold, "dynamic", !s->no_dyn_threshold,
		"top_pad", (json_int_t)s->top_pad,
		"arena_limits", "arena_max", (json_int_t)s->arena_max,
		"arena_test", (json_int_t)s->arena_test,
		"mmap", "count", (json_int_t)s->n_mmaps, "bytes", (json_int_t)s->mmapped_mem,
		"max_count", (json_int_t)s->max_n_mmaps, "max_bytes",
		(json_int_t)s->max_mmapped_mem, "count_limit", (json_int_t)s->n_mmaps_max,
		"totals", "system_bytes", (json_int_t)s->system_bytes, "in_use_bytes",
		(json_int_t)s->in_use_bytes, "free_bytes", (json_int_t)s->free_bytes,
		"trimmable_bytes", (json_int_t)s->trimmable,
		"mmapped_bytes", (json_int_t)s->mmapped_mem,
		"system_and_mmapped_bytes", (json_int_t)(s->system_bytes + s->mmapped_mem),
		"in_use_and_mmapped_bytes", (json_int_t)(s->in_use_bytes + s->mmapped_mem));
	/* only when true: older readers and goldens see the same object */
	if (o && s->libc_elsewhere && json_object_set_new(o, "libc_elsewhere", json_true()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Readers of mw_snapshot_json_value's keys: 0, or -1 when the key is
 * missing or of another type. */
static int get_u(const json_t *o, const char *k, uint64_t *v)
{
	const json_t *j = json_object_get(o, k);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

static int get_hex(const json_t *o, const char *k, uint64_t *v)
{
	const char *t = json_string_value(json_object_get(o, k));
	char *end;

	if (!t || strncmp(t, "0x", 2) != 0 || !t[2])
		return -1;
	errno = 0;
	*v = strtoull(t + 2, &end, 16);
	return errno || *end ? -1 : 0;
}

static int get_b(const json_t *o, const char *k, int *v)
{
	const json_t *j = json_object_get(o, k);

	if (!json_is_boolean(j))
		return -1;
	*v = json_is_true(j);
	return 0;
}

static int arena_from_json(const json_t *o, struct mw_snap_arena *a, size_t *heaps_left)
{
	const json_t *mi = json_object_get(o, "malloc_info"), *hs = json_object_get(o, "heaps");
	uint64_t unused;

	if (!json_is_object(o) || !json_is_object(mi) || !json_is_array(hs) ||
	    get_hex(o, "address", &a->addr) < 0 || get_b(o, "main", &a->is_main) < 0 ||
	    get_u(o, "system_bytes", &a->system_mem) < 0 ||
	    get_u(o, "max_system_bytes", &a->max_system_mem) < 0 ||
	    get_hex(o, "top", &a->top) < 0 || get_u(o, "top_bytes", &a->top_size) < 0 ||
	    get_u(o, "free_bytes", &a->free_bytes) < 0 || get_u(o, "in_use_bytes", &unused) < 0 ||
	    get_u(o, "trimmable_bytes", &a->trimmable) < 0 ||
	    get_u(o, "attached_threads", &a->attached_threads) < 0 ||
	    get_b(o, "on_free_list", &a->on_free_list) < 0 ||
	    get_u(mi, "fast_count", &a->fast_count) < 0 || get_u(mi, "fast_bytes", &a->fast_bytes) < 0 ||
	    get_u(mi, "rest_count", &a->rest_count) < 0 || get_u(mi, "rest_bytes", &a->rest_bytes) < 0 ||
	    get_u(o, "heap_bytes", &a->heap_bytes) < 0 ||
	    get_u(o, "heap_mprotect_bytes", &a->heap_mprotect) < 0 ||
	    json_array_size(hs) > *heaps_left)
		return -1;
	a->nheaps = json_array_size(hs);
	*heaps_left -= a->nheaps;
	a->heaps = a->nheaps ? xcalloc(a->nheaps, sizeof(*a->heaps)) : NULL;
	for (size_t j = 0; j < a->nheaps; j++) {
		const json_t *h = json_array_get(hs, j);

		if (!json_is_object(h) || get_hex(h, "address", &a->heaps[j].addr) < 0 ||
		    get_u(h, "size", &a->heaps[j].size) < 0 ||
		    get_u(h, "mprotect_size", &a->heaps[j].mprotect_size) < 0)
			return -1;
	}
	return 0;
}

struct mw_snapshot *mw_snapshot_from_json(const json_t *o, char *err, size_t errlen)
{
	const json_t *ar = json_object_get(o, "arenas"), *mh = json_object_get(o, "main_heap"),
		     *th = json_object_get(o, "thresholds"), *lim = json_object_get(o, "arena_limits"),
		     *mm = json_object_get(o, "mmap"), *tot = json_object_get(o, "totals"),
		     *ver = json_object_get(o, "glibc");
	struct mw_snapshot *s = xcalloc(1, sizeof(*s));
	size_t heaps_left = MW_SNAP_MAX_HEAPS;
	const char *t;
	int dyn, tries, stops, settle;

	if (!json_is_object(o) || !json_is_array(ar) || json_array_size(ar) > MW_SNAP_MAX_ARENAS ||
	    !json_is_object(mh) || !json_is_object(th) || !json_is_object(lim) ||
	    !json_is_object(mm) || !json_is_object(tot))
		goto bad;
	if (json_unpack((json_t *)o, "{s:i, s:i, s:i, s:i}", "tries", &tries, "stops", &stops,
			"settle_rounds", &settle, "pid", &dyn) < 0)
		goto bad;
	s->tries = tries;
	s->stops = stops;
	s->check = check_of(o, stops);
	s->settle_rounds = settle;
	s->pid = (pid_t)dyn;
	if ((t = json_string_value(json_object_get(o, "libc"))))
		snprintf(s->libc, sizeof(s->libc), "%s", t);
	if ((t = json_string_value(json_object_get(o, "dwarf"))))
		snprintf(s->dwarf_file, sizeof(s->dwarf_file), "%s", t);
	if ((t = json_string_value(ver)) && strncmp(t, "2.", 2) == 0)
		s->glibc_minor = atoi(t + 2);
	if (get_b(o, "consistent", &s->consistent) < 0 ||
	    get_u(o, "taken_unix_ns", &s->taken_ns) < 0 ||
	    get_u(o, "duration_ns", &s->duration_ns) < 0 ||
	    get_u(o, "stopped_ns", &s->stopped_ns) < 0 ||
	    get_u(o, "narenas", &s->narenas_glibc) < 0 ||
	    get_hex(mh, "sbrk_base", &s->sbrk_base) < 0 || get_hex(mh, "end", &s->main_end) < 0 ||
	    get_hex(mh, "brk", &s->brk) < 0 ||
	    get_u(th, "mmap", &s->mmap_threshold) < 0 || get_u(th, "trim", &s->trim_threshold) < 0 ||
	    get_b(th, "dynamic", &dyn) < 0 || get_u(th, "top_pad", &s->top_pad) < 0 ||
	    get_u(lim, "arena_max", &s->arena_max) < 0 ||
	    get_u(lim, "arena_test", &s->arena_test) < 0 ||
	    get_u(mm, "count", &s->n_mmaps) < 0 || get_u(mm, "bytes", &s->mmapped_mem) < 0 ||
	    get_u(mm, "max_count", &s->max_n_mmaps) < 0 ||
	    get_u(mm, "max_bytes", &s->max_mmapped_mem) < 0 ||
	    get_u(mm, "count_limit", &s->n_mmaps_max) < 0 ||
	    get_u(tot, "system_bytes", &s->system_bytes) < 0 ||
	    get_u(tot, "in_use_bytes", &s->in_use_bytes) < 0 ||
	    get_u(tot, "free_bytes", &s->free_bytes) < 0 ||
	    get_u(tot, "trimmable_bytes", &s->trimmable) < 0)
		goto bad;
	s->no_dyn_threshold = !dyn;
	if ((t = json_string_value(json_object_get(o, "inconsistent_reason"))))
		snprintf(s->why, sizeof(s->why), "%s", t);
	s->libc_elsewhere = json_is_true(json_object_get(o, "libc_elsewhere"));
	s->narenas = json_array_size(ar);
	s->arenas = s->narenas ? xcalloc(s->narenas, sizeof(*s->arenas)) : NULL;
	for (size_t i = 0; i < s->narenas; i++)
		if (arena_from_json(json_array_get(ar, i), &s->arenas[i], &heaps_left) < 0)
			goto bad;
	return s;
bad:
	snprintf(err, errlen, "not a snapshot as mallocwatch writes it (docs/json.md)");
	mw_snapshot_free(s);
	return NULL;
}

static void fmt(char *buf, size_t len, uint64_t v, int bytes)
{
	if (bytes)
		mw_human_bytes(v, buf, len);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

/* "  WHAT  A  B  CHANGE", or "  WHAT  A" when there is no b. */
static void row(FILE *f, const char *what, uint64_t a, const uint64_t *b, int bytes)
{
	char x[16], y[16], z[24] = "=";

	fmt(x, sizeof(x), a, bytes);
	if (!b) {
		fprintf(f, "  %-18s %12s\n", what, x);
		return;
	}
	fmt(y, sizeof(y), *b, bytes);
	if (*b != a) {
		z[0] = *b > a ? '+' : '-';
		fmt(z + 1, sizeof(z) - 1, *b > a ? *b - a : a - *b, bytes);
	}
	fprintf(f, "  %-18s %12s %12s %12s\n", what, x, y, z);
}

void mw_snapshot_diff_text(FILE *f, const struct mw_snapshot *a, const struct mw_snapshot *b)
{
	mw_snapshot_diff_text_named(f, a, b, "AT ATTACH", "AT THE END", NULL, NULL);
}

void mw_snapshot_diff_text_named(FILE *f, const struct mw_snapshot *a,
				 const struct mw_snapshot *b, const char *a_name,
				 const char *b_name, const char *a_what, const char *why_none)
{
	uint64_t an = a->narenas, bn = b ? b->narenas : 0, am = a->main_end - a->sbrk_base,
		 bm = b ? b->main_end - b->sbrk_base : 0;
	char x[16];

	fprintf(f, "\nAllocator state, read from the process%s%s%s%s%s:\n",
		a_what || !b ? " (" : "", a_what ? a_what : "", a_what && !b ? "; " : "",
		b ? "" : why_none ? why_none : "none at the end", a_what || !b ? ")" : "");
	if (b)
		fprintf(f, "  %-18s %12s %12s %12s\n", "", a_name, b_name, "CHANGE");
	row(f, "arenas", an, b ? &bn : NULL, 0);
	row(f, "system bytes", a->system_bytes, b ? &b->system_bytes : NULL, 1);
	row(f, "in use", a->in_use_bytes, b ? &b->in_use_bytes : NULL, 1);
	row(f, "free (retained)", a->free_bytes, b ? &b->free_bytes : NULL, 1);
	row(f, "trimmable at most", a->trimmable, b ? &b->trimmable : NULL, 1);
	row(f, "main heap (sbrk)", am, b ? &bm : NULL, 1);
	row(f, "mmapped chunks", a->n_mmaps, b ? &b->n_mmaps : NULL, 0);
	row(f, "mmapped bytes", a->mmapped_mem, b ? &b->mmapped_mem : NULL, 1);
	row(f, "system + mmapped", a->system_bytes + a->mmapped_mem,
	    b ? &(uint64_t){ b->system_bytes + b->mmapped_mem } : NULL, 1);
	row(f, "mmap threshold", a->mmap_threshold, b ? &b->mmap_threshold : NULL, 1);
	row(f, "trim threshold", a->trim_threshold, b ? &b->trim_threshold : NULL, 1);
	if (!a->consistent || (b && !b->consistent)) {
		/* a replayed stream's text: quoted (msg.h) */
		fputs("  (a snapshot is marked INCONSISTENT: ", f);
		mw_fputs_quoted(!a->consistent ? a->why : b->why, f);
		fputs(")\n", f);
	}
	if (!b)
		return;
	/* each arena found by address in the other snapshot: 65536 arenas
	 * each (a stream can hold as many) would be 2^32 comparisons */
	struct mw_idmap ia = { 0 }, ib = { 0 };

	for (size_t i = 0; i < a->narenas; i++)
		mw_idmap_put(&ia, a->arenas[i].addr, i);
	for (size_t i = 0; i < b->narenas; i++)
		mw_idmap_put(&ib, b->arenas[i].addr, i);
	for (size_t i = 0; i < b->narenas; i++) {
		const struct mw_snap_arena *y = &b->arenas[i], *o;
		size_t k = mw_idmap_get(&ia, y->addr);

		o = k == MW_IDMAP_NONE ? NULL : &a->arenas[k];

		if (!o)
			fprintf(f, "  arena 0x%" PRIx64 " is new: %s\n", y->addr,
				mw_human_bytes(y->system_mem, x, sizeof(x)));
		else if (o->system_mem != y->system_mem || o->nheaps != y->nheaps)
			fprintf(f, "  arena 0x%" PRIx64 ": %zu -> %zu heaps, system %+" PRId64
				" bytes, free %+" PRId64 " bytes\n", y->addr, o->nheaps, y->nheaps,
				(int64_t)(y->system_mem - o->system_mem),
				(int64_t)(y->free_bytes - o->free_bytes));
	}
	for (size_t i = 0; i < a->narenas; i++)
		if (mw_idmap_get(&ib, a->arenas[i].addr) == MW_IDMAP_NONE)
			fprintf(f, "  arena 0x%" PRIx64 " is gone\n", a->arenas[i].addr);
	mw_idmap_free(&ia);
	mw_idmap_free(&ib);
}
