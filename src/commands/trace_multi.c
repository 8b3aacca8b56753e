/* trace_multi.c - several running processes under one tracer session;
 * see trace_multi.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "gen.h"
#include "jsonout.h"
#include "msg.h"
#include "procmem.h"
#include "procs.h"
#include "protocol.h"
#include "report.h"
#include "runtime.h"
#include "sdtnote.h"
#include "snapshot.h"
#include "trace_multi.h"
#include "tracer.h"
#include "units.h"
#include "xalloc.h"

struct msink {
	struct mw_procs *procs;
	const struct mw_attach_set *set;
	long read_timeout_ms;
	unsigned long garbled_warned;
};

/* When the probes are armed: each process's allocator as it is, the
 * start of its model. */
static void attach_snapshots(struct msink *k)
{
	char err[PATH_MAX + 512];

	for (size_t i = 0; i < k->set->n; i++) {
		struct mw_process *pr = mw_procs_process(k->procs, i);

		mw_process_observe(pr);
		if (!k->set->have_g[i])
			continue;
		if (mw_snapshot_read(pr->pid, &k->set->g[i], k->read_timeout_ms, &pr->at_attach,
				     err, sizeof(err)) < 0) {
			mw_warn("no snapshot of process %d at attach: %s", pr->pid, err);
			continue;
		}
		mw_state_seed(pr->st, pr->at_attach);
	}
}

static void on_line(void *ctx, const char *line)
{
	struct msink *k = ctx;

	if (strcmp(line, MW_LINE_READY) == 0) {
		attach_snapshots(k);
		mw_note("tracing %zu processes; ^C or SIGTERM stops and reports", k->set->n);
	}
	if (mw_procs_line(k->procs, line) < 0 && !k->garbled_warned++) {
		char q[200];

		mw_warn("garbled tracer line ignored and counted: '%s'", mw_quote(line, q, sizeof(q)));
	}
	if (strcmp(line, MW_LINE_READY) == 0) {
		char o[64];	/* every process is traced from now */

		snprintf(o, sizeof(o), "%c %" PRIu64, MW_REC_ORIGIN, mw_now_ns());
		mw_procs_line(k->procs, o);
	}
}

static unsigned long long missing(void *ctx)
{
	struct msink *k = ctx;
	unsigned long long n = 0;

	for (size_t i = 0; i < mw_procs_count(k->procs); i++)
		n += mw_state_missing(mw_procs_state(k->procs, i));
	return n;
}

/* The models, their libm and main_arena's link-time address. */
static void start_states(struct msink *k, const struct mw_elf *libc, const char *libm_path,
			 int libm, const struct mw_gen_stats *gst)
{
	uint64_t sym = 0;
	int have_sym = mw_elf_symbol(libc, "main_arena", &sym) == 0;

	for (size_t i = 0; i < mw_procs_count(k->procs); i++) {
		struct mw_state *st = mw_procs_state(k->procs, i);

		if (libm)
			mw_state_set_libm(st, libm_path, gst->math_sites);
		if (have_sym)
			mw_state_set_main_arena_sym(st, sym);
	}
}

static json_int_t jlen(json_t *o, const char *key)
{
	return (json_int_t)json_array_size(json_object_get(o, key));
}

static json_int_t jnum(json_t *o, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* The totals over every process's report. */
static json_t *totals(json_t *const *reps, size_t n)
{
	json_int_t arenas = 0, heaps = 0, threads = 0, events = 0, lost = 0, net = 0,
		   retries = 0;

	for (size_t i = 0; i < n; i++) {
		arenas += jlen(reps[i], "arenas");
		heaps += jlen(reps[i], "heaps");
		threads += jlen(reps[i], "threads");
		retries += jlen(reps[i], "retries");
		events += jnum(reps[i], "events", "total");
		lost += jnum(reps[i], "events", "lost");
		net += jnum(reps[i], "sbrk", "net");
	}
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "processes", (json_int_t)n,
			 "arenas", arenas, "heaps", heaps, "threads", threads, "events", events,
			 "lost", lost, "sbrk_net", net, "retries", retries);
}

static json_int_t ji(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void totals_text(FILE *f, json_t *t)
{
	char a[32];
	json_int_t net = ji(t, "sbrk_net");

	fprintf(f, "\nmallocwatch: %" JSON_INTEGER_FORMAT " processes in all: %"
		JSON_INTEGER_FORMAT " arenas, %" JSON_INTEGER_FORMAT " heaps, %"
		JSON_INTEGER_FORMAT " threads, sbrk net %s%s, %" JSON_INTEGER_FORMAT " retries; %"
		JSON_INTEGER_FORMAT " events, %" JSON_INTEGER_FORMAT " lost\n",
		ji(t, "processes"), ji(t, "arenas"), ji(t, "heaps"), ji(t, "threads"),
		net < 0 ? "-" : "", mw_human_bytes((uint64_t)(net < 0 ? -net : net), a, sizeof(a)),
		ji(t, "retries"), ji(t, "events"), ji(t, "lost"));
}

/* Each process's summary (as one -p run prints it) to out->summary, its
 * report into reps[i]; the JSON of them all to out->json.  The exit
 * status. */
static int report_all(const struct trace_opts *o, struct outputs *out, struct msink *k,
		      const struct mw_trace_result *r, const struct mw_elf *libc,
		      const char *libc_path, enum mw_runtime rt, json_t **report)
{
	size_t n = k->set->n;
	json_t **reps = xcalloc(n, sizeof(*reps)), *arr = json_array(), *top = NULL, *t;
	FILE *json = out->json, *html = out->html;
	int status = MW_EXIT_OK;

	out->json = out->html = NULL;	/* one JSON of them all, below */
	for (size_t i = 0; i < n; i++) {
		struct trace_opts oi = *o;
		struct mw_trace_result ri_r = *r;
		struct mw_environment env;
		struct mw_process *pr = mw_procs_process(k->procs, i);
		struct mw_run_info ri;
		int st;

		pr->at_end = mw_run_end_snapshot(pr->pid, k->set->have_g[i] ? &k->set->g[i] : NULL,
						 o->read_timeout_ms, NULL);

		oi.pid = k->set->pid[i];
		ri_r.pid = k->set->pid[i];
		if (i)	/* said once, for the run */
			ri_r.tracer_died = 0;
		mw_run_environment(&oi, libc, mw_runtime_name(rt), &env);
		ri = (struct mw_run_info){ .comm = pr->comm[0] ? pr->comm : NULL,
			.where = pr->have_where ? &pr->where : NULL,
			.libc = libc_path, .runtime = mw_runtime_name(rt),
			.stopped = r->stopped, .snap_attach = pr->at_attach, .snap_end = pr->at_end,
			.env = &env };
		if (i)
			fputc('\n', out->summary);
		st = mw_run_conclude(out, pr->st, &ri_r, &ri);
		if (st != MW_EXIT_OK)
			status = st;
		reps[i] = mw_report_json_value(pr->st, &ri);
		if (!reps[i] || json_array_append(arr, reps[i]) < 0) {
			mw_error("cannot make the report: %s", strerror(ENOMEM));
			status = MW_EXIT_RUNTIME;
			goto out;
		}
	}
	t = totals(reps, n);
	totals_text(out->summary, t);
	/* the first process's report at the top, as a single -p writes it */
	top = json_deep_copy(reps[0]);
	if (!t || !top || json_object_set_new(top, "schema_version", json_integer(2)) < 0 ||
	    json_object_set(top, "processes", arr) < 0 || json_object_set_new(top, "totals", t) < 0) {
		mw_error("cannot make the report: %s", strerror(ENOMEM));
		status = MW_EXIT_RUNTIME;
		goto out;
	}
	if (json && mw_json_write(top, json, JSON_INDENT(2)) < 0)
		out->json_errno = errno ? errno : EIO;
	if (report)
		*report = json_incref(top);
out:
	out->json = json;
	out->html = html;
	json_decref(top);
	json_decref(arr);
	for (size_t i = 0; i < n; i++)
		json_decref(reps[i]);
	free(reps);
	return status;
}

int mw_run_trace_multi(const struct trace_opts *o, struct outputs *out,
		       const struct mw_attach_set *set, const char *libc_path, const char *dir,
		       json_t **report, pid_t *detaching)
{
	char err[PATH_MAX + 512];
	struct mw_run_prep p = { 0 };
	struct msink k = { .set = set, .read_timeout_ms = o->read_timeout_ms };
	struct mw_trace_result r;
	int *pids = xcalloc(set->n, sizeof(*pids));
	int status = MW_EXIT_RUNTIME;

	for (size_t i = 0; i < set->n; i++)
		pids[i] = (int)set->pid[i];
	if (!(k.procs = mw_procs_new(pids, set->n))) {
		mw_error("cannot trace %zu processes: %s", set->n, strerror(ENOMEM));
		goto cleanup;
	}
	if (mw_run_prepare(o, libc_path, dir, pids, set->n, out->script, &p) < 0)
		goto cleanup;
	start_states(&k, p.libc, p.libm_path, p.libm != NULL, &p.gst);
	if (mw_signal_pending()) {
		int sig = mw_signal_take();

		mw_error("interrupted by signal %d (%s) before tracing started", sig, strsignal(sig));
		status = 128 + sig;
		goto cleanup;
	}
	/* the flush at the end, as a single -p: the totals while the uprobes
	 * are still there, the tracer then left to remove them */
	if (mw_trace_run(&(struct mw_tracer_opts){ .env = &p.env, .script = p.script,
			 .workdir = dir, .attach_pid = set->pid[0], .more_pids = set->pid + 1,
			 .nmore = set->n - 1, .verbose = o->verbose, .duration_ms = o->duration_ms,
			 .flush = 1, .missing = missing }, on_line, &k, &r, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		if (r.interrupted)
			status = 128 + r.interrupted;
		goto cleanup;
	}
	if (r.detaching)
		*detaching = r.detaching;
	status = report_all(o, out, &k, &r, p.libc, libc_path, p.env.rt, report);
cleanup:
	mw_procs_free(k.procs);
	mw_run_prep_free(&p);
	free(pids);
	return status;
}
