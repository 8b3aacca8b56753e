/* report_metrics.c - snapshots as OpenMetrics or Prometheus 0.0.4 text
 * (report_metrics.h).  Every family is written whole, one table row at
 * a time, with its samples for every process (and arena) in v's order:
 * OpenMetrics does not let a family's samples interleave with another's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "report_metrics.h"
#include "units.h"
#include "view.h"

/* What a row reads from a process or an arena. */
enum pick {
	A_SYSTEM, A_MAX_SYSTEM, A_IN_USE, A_FREE, A_TRIMMABLE, A_TOP, A_HEAPS, A_HEAP_BYTES,
	A_THREADS, A_FREE_LIST,
	P_ARENAS, P_ARENAS_GLIBC, P_SYSTEM, P_IN_USE, P_FREE, P_TRIMMABLE, P_MMAPPED_CHUNKS,
	P_MMAPPED, P_SBRK_HEAP, P_MMAP_THRESHOLD, P_TRIM_THRESHOLD, P_TOP_PAD, P_ARENA_MAX,
	P_ARENA_TEST, P_ARENA_LIMIT, P_CONSISTENT, P_READ_SECONDS,
};

struct row {
	const char *name;	/* without the unit's suffix */
	const char *unit;	/* "bytes", "seconds" or "" */
	enum pick pick;
	const char *help;
};

static const struct row arena_rows[] = {
	{ "mallocwatch_arena_system", "bytes", A_SYSTEM,
	  "Bytes the arena has from the system (malloc_state.system_mem)." },
	{ "mallocwatch_arena_max_system", "bytes", A_MAX_SYSTEM,
	  "Most bytes the arena ever had from the system (malloc_state.max_system_mem)." },
	{ "mallocwatch_arena_in_use", "bytes", A_IN_USE,
	  "Bytes of the arena in chunks in use: system bytes less free bytes." },
	{ "mallocwatch_arena_free", "bytes", A_FREE,
	  "Free bytes the arena retains: fastbins, bins and the top chunk." },
	{ "mallocwatch_arena_trimmable", "bytes", A_TRIMMABLE,
	  "Bytes malloc_trim(0) could give back at most: whole free pages in binned chunks, and main_arena's top." },
	{ "mallocwatch_arena_top", "bytes", A_TOP, "Size of the arena's top chunk." },
	{ "mallocwatch_arena_heaps", "", A_HEAPS,
	  "Heaps (heap_info) of a non-main arena; 0 for main_arena, which grows by sbrk." },
	{ "mallocwatch_arena_heap", "bytes", A_HEAP_BYTES,
	  "Bytes of a non-main arena's heaps (heap_info.size summed)." },
	{ "mallocwatch_arena_attached_threads", "", A_THREADS,
	  "Threads attached to the arena (malloc_state.attached_threads)." },
	{ "mallocwatch_arena_on_free_list", "", A_FREE_LIST,
	  "1 when the arena is on glibc's free_list: no thread is attached to it." },
};

static const struct row process_rows[] = {
	{ "mallocwatch_process_arenas", "", P_ARENAS, "Arenas on the ring from main_arena." },
	{ "mallocwatch_process_arenas_glibc", "", P_ARENAS_GLIBC,
	  "glibc's own count of arenas (arena.c narenas)." },
	{ "mallocwatch_process_arena_limit", "", P_ARENA_LIMIT,
	  "Arena count at which glibc reuses arenas instead of making more: arena_max, else 8 per CPU the process may run on." },
	{ "mallocwatch_process_system", "bytes", P_SYSTEM, "Bytes all arenas have from the system." },
	{ "mallocwatch_process_in_use", "bytes", P_IN_USE, "Bytes of all arenas in chunks in use." },
	{ "mallocwatch_process_free", "bytes", P_FREE,
	  "Free bytes retained by all arenas (fastbins, bins, top chunks)." },
	{ "mallocwatch_process_trimmable", "bytes", P_TRIMMABLE,
	  "Bytes malloc_trim(0) could give back at most, over all arenas." },
	{ "mallocwatch_process_mmapped_chunks", "", P_MMAPPED_CHUNKS,
	  "Chunks allocated with mmap, outside the arenas (mp_.n_mmaps)." },
	{ "mallocwatch_process_mmapped", "bytes", P_MMAPPED,
	  "Bytes of the chunks allocated with mmap (mp_.mmapped_mem)." },
	{ "mallocwatch_process_sbrk_heap", "bytes", P_SBRK_HEAP,
	  "Extent of the main heap, from mp_.sbrk_base to the end of main_arena's top chunk." },
	{ "mallocwatch_process_mmap_threshold", "bytes", P_MMAP_THRESHOLD,
	  "Requests at least this large are mmapped (mp_.mmap_threshold)." },
	{ "mallocwatch_process_trim_threshold", "bytes", P_TRIM_THRESHOLD,
	  "A top chunk above this is trimmed on free (mp_.trim_threshold)." },
	{ "mallocwatch_process_top_pad", "bytes", P_TOP_PAD,
	  "Extra bytes asked of the system on each growth (mp_.top_pad)." },
	{ "mallocwatch_process_arena_max", "", P_ARENA_MAX,
	  "M_ARENA_MAX (mp_.arena_max); 0 when not set." },
	{ "mallocwatch_process_arena_test", "", P_ARENA_TEST,
	  "M_ARENA_TEST (mp_.arena_test)." },
	{ "mallocwatch_process_snapshot_consistent", "", P_CONSISTENT,
	  "1 when the allocator did not change while it was read; 0: the figures may be off." },
	{ "mallocwatch_process_read", "seconds", P_READ_SECONDS,
	  "Wall time spent reading the process, its libc's layouts included." },
};

static uint64_t arena_value(const struct mw_snap_arena *a, enum pick p)
{
	switch (p) {
	case A_SYSTEM: return a->system_mem;
	case A_MAX_SYSTEM: return a->max_system_mem;
	case A_IN_USE: return mw_view_arena_in_use(a);
	case A_FREE: return a->free_bytes;
	case A_TRIMMABLE: return a->trimmable;
	case A_TOP: return a->top_size;
	case A_HEAPS: return a->nheaps;
	case A_HEAP_BYTES: return a->heap_bytes;
	case A_THREADS: return a->attached_threads;
	case A_FREE_LIST: return a->on_free_list != 0;
	default: return 0;
	}
}

static uint64_t process_value(const struct mw_snapshot *s, enum pick p)
{
	switch (p) {
	case P_ARENAS: return s->narenas;
	case P_ARENAS_GLIBC: return s->narenas_glibc;
	case P_SYSTEM: return s->system_bytes;
	case P_IN_USE: return s->in_use_bytes;
	case P_FREE: return s->free_bytes;
	case P_TRIMMABLE: return s->trimmable;
	case P_MMAPPED_CHUNKS: return s->n_mmaps;
	case P_MMAPPED: return s->mmapped_mem;
	case P_SBRK_HEAP: return s->sbrk_base ? mw_view_main_heap(s) : 0;	/* 0: base unknown */
	case P_MMAP_THRESHOLD: return s->mmap_threshold;
	case P_TRIM_THRESHOLD: return s->trim_threshold;
	case P_TOP_PAD: return s->top_pad;
	case P_ARENA_MAX: return s->arena_max;
	case P_ARENA_TEST: return s->arena_test;
	case P_CONSISTENT: return s->consistent != 0;
	default: return 0;
	}
}

void mw_metrics_label_value(FILE *out, const char *s)
{
	char *q = NULL, *use;
	size_t qlen = 0, nbs = 0;
	FILE *m;

	if (!s)
		return;
	m = open_memstream(&q, &qlen);
	if (!m || mw_fputs_quoted(s, m) == EOF || fclose(m) == EOF) {
		free(q);
		fputc('?', out);	/* out of memory: nothing of s unchecked */
		return;
	}
	/* mw_fputs_quoted doubles a backslash and makes any other byte it
	 * escapes four: when only backslashes grew, s is clean UTF-8 */
	for (const char *p = s; *p; p++)
		nbs += *p == '\\';
	use = qlen == strlen(s) + nbs ? (char *)s : q;
	for (const char *p = use; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
	free(q);
}

/* The labels of process ps, without braces, as a new string (NULL when
 * out of memory). */
static char *process_labels(const struct mw_psnap *ps)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	fprintf(m, "pid=\"%d\",command=\"", (int)ps->pid);
	mw_metrics_label_value(m, ps->comm);
	fputs("\",cgroup=\"", m);
	mw_metrics_label_value(m, ps->have_where ? ps->where.cgroup : "");
	fputs("\",container=\"", m);
	mw_metrics_label_value(m, ps->have_where ? ps->where.container : "");
	fputc('"', m);
	if (fclose(m) == EOF) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* # TYPE, # UNIT (OpenMetrics only), # HELP of the family name (+ unit);
 * a counter's 0.0.4 lines name its _total sample. */
static void family(FILE *out, const struct mw_metrics_info *info, const char *name,
		   const char *unit, const char *type, const char *help)
{
	const char *sep = *unit ? "_" : "";
	const char *tot = !info->openmetrics && !strcmp(type, "counter") ? "_total" : "";

	fprintf(out, "# TYPE %s%s%s%s %s\n", name, sep, unit, tot, type);
	if (info->openmetrics && *unit)
		fprintf(out, "# UNIT %s_%s %s\n", name, unit, unit);
	fprintf(out, "# HELP %s%s%s%s %s\n", name, sep, unit, tot, help);
}

static void sample_name(FILE *out, const struct row *r)
{
	fputs(r->name, out);
	if (*r->unit)
		fprintf(out, "_%s", r->unit);
}

static void arena_families(FILE *out, const struct mw_psnap *v, size_t n,
			   const struct mw_metrics_info *info, char *const *labels)
{
	for (size_t k = 0; k < sizeof(arena_rows) / sizeof(arena_rows[0]); k++) {
		const struct row *r = &arena_rows[k];

		family(out, info, r->name, r->unit, "gauge", r->help);
		for (size_t i = 0; i < n; i++) {
			const struct mw_snapshot *s = v[i].snap;

			for (size_t a = 0; s && a < s->narenas; a++) {
				sample_name(out, r);
				fprintf(out, "{%s,arena=\"%zu\",main=\"%s\"} %" PRIu64 "\n", labels[i], a,
					s->arenas[a].is_main ? "true" : "false",
					arena_value(&s->arenas[a], r->pick));
			}
		}
	}
}

static void process_families(FILE *out, const struct mw_psnap *v, size_t n,
			     const struct mw_metrics_info *info, char *const *labels)
{
	for (size_t k = 0; k < sizeof(process_rows) / sizeof(process_rows[0]); k++) {
		const struct row *r = &process_rows[k];

		if (r->pick == P_ARENA_LIMIT && !info->arena_limit)
			continue;
		family(out, info, r->name, r->unit, "gauge", r->help);
		for (size_t i = 0; i < n; i++) {
			if (!v[i].snap || (r->pick == P_ARENA_LIMIT && !info->arena_limit[i]))
				continue;
			sample_name(out, r);
			fprintf(out, "{%s} ", labels[i]);
			if (r->pick == P_READ_SECONDS)
				fprintf(out, "%.6f\n", v[i].seconds);
			else if (r->pick == P_ARENA_LIMIT)
				fprintf(out, "%" PRIu64 "\n", info->arena_limit[i]);
			else
				fprintf(out, "%" PRIu64 "\n", process_value(v[i].snap, r->pick));
		}
	}
}

/* serve --probes: whether the tracer traces, each process there (read,
 * or not read consistently) whether it is traced, and the counters of
 * those that are. */
static void probe_families(FILE *out, size_t n, const struct mw_metrics_info *info,
			   char *const *labels)
{
	const struct mw_metrics_probes *pb = info->probes;

	family(out, info, "mallocwatch_probes_tracing", "", "gauge",
	       "1 while the tracer of --probes traces (a served process maps a libc with SDT probes), else 0.");
	fprintf(out, "mallocwatch_probes_tracing %d\n", pb->tracing);
	family(out, info, "mallocwatch_process_probes_traced", "", "gauge",
	       "1 when the process is traced (it maps the libc file traced) and has probe counters; 0: none (another libc, e.g. one without SDT probes).");
	for (size_t i = 0; i < n; i++)
		if (labels[i])
			fprintf(out, "mallocwatch_process_probes_traced{%s} %d\n", labels[i],
				pb->traced[i]);
	for (int k = 0; k < MW_VK_COUNT; k++) {
		const struct mw_view_ctr_info *r = mw_view_ctr_info((enum mw_view_ctr)k);

		if (r->help)
			family(out, info, r->family, r->unit, "counter", r->help);
		for (size_t i = 0; i < n; i++) {
			if (!labels[i] || !pb->traced[i] ||
			    !mw_count_known(pb->c[i * MW_VK_COUNT + (size_t)k]))
				continue;	/* past INT64_MAX: not known (units.h) */
			fprintf(out, "%s%s%s_total{%s%s%s} %" PRIu64 "\n", r->family,
				*r->unit ? "_" : "", r->unit, labels[i], *r->label ? "," : "",
				r->label, pb->c[i * MW_VK_COUNT + (size_t)k]);
		}
	}
}

/* The reading's own families: processes read, not read (by reason,
 * now and since the start), seen, when and how long. */
static void reading_families(FILE *out, const struct mw_psnap *v, size_t n,
			     const struct mw_metrics_info *info)
{
	size_t unread[MW_METRICS_NFAIL] = { 0 };
	size_t read = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].snap)
			read++;
		else if ((unsigned)v[i].fail < MW_METRICS_NFAIL)
			unread[v[i].fail]++;
	}
	family(out, info, "mallocwatch_processes", "", "gauge",
	       "Processes whose allocator was read in this snapshot.");
	fprintf(out, "mallocwatch_processes %zu\n", read);
	family(out, info, "mallocwatch_processes_unread", "", "gauge",
	       "Processes selected but not read in this snapshot, by reason.");
	for (int f = MW_PSNAP_EXITED; f < MW_METRICS_NFAIL; f++)
		fprintf(out, "mallocwatch_processes_unread{reason=\"%s\"} %zu\n",
			mw_psnap_fail_name((enum mw_psnap_fail)f), unread[f]);
	if (info->errors_total) {
		family(out, info, "mallocwatch_read_errors", "", "counter",
		       "Processes not read since mallocwatch started, by reason.");
		for (int f = MW_PSNAP_EXITED; f < MW_METRICS_NFAIL; f++)
			fprintf(out, "mallocwatch_read_errors_total{reason=\"%s\"} %" PRIu64 "\n",
				mw_psnap_fail_name((enum mw_psnap_fail)f), info->errors_total[f]);
	}
	if (info->seen || info->unlisted) {
		family(out, info, "mallocwatch_processes_seen", "", "gauge",
		       "Processes looked at in /proc (--all).");
		fprintf(out, "mallocwatch_processes_seen %zu\n", info->seen);
		family(out, info, "mallocwatch_processes_unlisted", "", "gauge",
		       "Processes in /proc not looked at within the budget (--all): "
		       "whether they map a glibc is not known.");
		fprintf(out, "mallocwatch_processes_unlisted %zu\n", info->unlisted);
	}
	family(out, info, "mallocwatch_snapshot_duration", "seconds", "gauge",
	       "Wall time of the whole snapshot.");
	fprintf(out, "mallocwatch_snapshot_duration_seconds %.6f\n", info->seconds);
	family(out, info, "mallocwatch_snapshot_timestamp", "seconds", "gauge",
	       "When the snapshot was taken (Unix time).");
	fprintf(out, "mallocwatch_snapshot_timestamp_seconds %.3f\n", (double)info->taken_ns / 1e9);
}

int mw_metrics_write(FILE *out, const struct mw_psnap *v, size_t n,
		     const struct mw_metrics_info *info)
{
	char **labels = calloc(n ? n : 1, sizeof(*labels));
	int ret = -1;

	if (!labels)
		return -1;
	/* a process with no reading (none consistent, say) is still there:
	 * its probe counters come from the tracer */
	for (size_t i = 0; i < n; i++)
		if ((v[i].snap || (v[i].have_where && v[i].fail != MW_PSNAP_EXITED)) &&
		    !(labels[i] = process_labels(&v[i])))
			goto cleanup;
	arena_families(out, v, n, info, labels);
	process_families(out, v, n, info, labels);
	if (info->probes)
		probe_families(out, n, info, labels);
	reading_families(out, v, n, info);
	if (info->openmetrics)
		fputs("# EOF\n", out);
	if (fflush(out) == EOF || ferror(out)) {
		if (!errno)
			errno = EIO;
		goto cleanup;
	}
	ret = 0;
cleanup:
	for (size_t i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	if (ret < 0 && !errno)
		errno = ENOMEM;
	return ret;
}
