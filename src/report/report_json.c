/* report_json.c - the JSON report (mw_report_json, mw_report_json_value),
 * built through jansson; its keys are documented in docs/json.md, e.g.
 *
 *	{
 *	  "version": 1,
 *	  "schema_version": 1,
 *	  "target": {
 *	    "argv": [ "./examples/sbrk-trim", "2" ],
 *	    "pid": 10991,
 *	    "exit_status": 0,
 *	    "signal": null,
 *	    "libc": "/var/cache/mallocwatch/glibc/lib/libc.so.6"
 *	  },
 *	  "runtime": "bpf",
 *	  "events": { "total": 382, "lost": 0, "garbled": 0, "complete": true, ...
 *
 * Each figure is the run's view's (view.h); this file only writes them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "metrics.h"
#include "probetab.h"
#include "report.h"
#include "report_stacks.h"
#include "report_ledger.h"
#include "view.h"

static json_t *jint(int64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *json_target(const struct mw_view *v, const struct mw_run_info *ri)
{
	json_t *argv = json_array(), *t;

	for (const char *const *a = ri->argv; a && *a; a++)
		mw_json_append(&argv, mw_json_str(*a));
	t = json_pack("{s:o, s:i, s:o, s:o, s:o}", "argv", argv, "pid",
		(int)mw_view_get(v, MW_VF_pid)->v,
		"exit_status", ri->have_status && !ri->term_signal ? jint(ri->exit_status) :
		json_null(),
		"signal", ri->have_status && ri->term_signal ? jint(ri->term_signal) : json_null(),
		"libc", mw_json_str(ri->libc));
	/* -p: the command name (a saved stream keeps it; an older stream
	 * has none, and the key is left out) */
	if (t && !ri->have_status && ri->status_why)	/* why exit_status is null */
		mw_json_set(&t, "exit_status_unknown", mw_json_str(ri->status_why));
	if (t && ri->comm)
		mw_json_set(&t, "comm", mw_json_str(ri->comm));
	if (t && ri->title) {	/* the title it gave itself, and when it was read */
		mw_json_set(&t, "title", mw_json_str(ri->title));
		mw_json_set(&t, "title_read", json_string(ri->title_at_end ? "end" : "exit"));
	}
	if (t && ri->where)
		mw_json_set(&t, "where", mw_where_json(ri->where));
	return t;
}

static json_t *json_events(const struct mw_run_info *ri, const struct mw_view *v)
{
	json_t *ev = json_object();

	/* total, lost, ..., unthreaded (view.def): the hits no thread's count
	 * holds (the threads' "hits" add up to total less these); what
	 * tracing cost */
	mw_view_json_section(v, "events", &ev);
	mw_json_set(&ev, "cost", mw_report_cost_json_of(mw_view_cost(v)));
	if (!mw_view_section_zero(v, "events.execs")) {	/* the report is of the last image */
		json_t *ex = json_object();

		mw_view_json_section(v, "events.execs", &ex);
		if (ex && ri->last_argv) {
			json_t *a = json_array();

			for (const char *const *s = ri->last_argv; *s; s++)
				mw_json_append(&a, mw_json_str(*s));
			mw_json_set(&ex, "last_argv", a);
		}
		mw_json_set(&ev, "execs", ex);
	}
	if (!mw_view_section_zero(v, "events.omitted")) {
		json_t *om = json_object();

		mw_view_json_section(v, "events.omitted", &om);
		mw_json_set(&ev, "omitted", om);
	}
	return ev;
}

/* "thresholds": mmap and trim (view.def; null when the allocator at
 * attach is unknown: mallopt or GLIBC_TUNABLES may have set them), and
 * every change. */
static json_t *json_thresholds(const struct mw_view *v)
{
	json_t *o = json_object();

	mw_view_json_section(v, "thresholds", &o);
	mw_json_set(&o, "changes", mw_view_table_json(v, MW_VT_changes));
	return o;
}

static json_t *json_setjmp(const struct mw_view *v)
{
	return json_pack("{s:o, s:o, s:o, s:o}", "threads", mw_view_table_json(v, MW_VT_jumps),
			 "jmp_bufs", mw_view_table_json(v, MW_VT_jmp_bufs),
			 "code_addresses", mw_view_table_json(v, MW_VT_code_addresses),
			 "longjmp_values", mw_view_table_json(v, MW_VT_longjmp_values));
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

/* Function fn's samples (the view's): {"tid": ..., ARG: value, ...}. */
static json_t *math_samples(const struct mw_view *v, int64_t fn)
{
	json_t *samples = json_array();

	for (int64_t k = 0; k < mw_view_get(v, MW_VF_math_samples)->v; k++) {
		const struct mw_view_arg *a = mw_view_args(v, (size_t)k, MW_VC_samples_args);
		json_t *o;

		if (mw_view_cell(v, (size_t)k, MW_VC_samples_function)->v != fn)
			continue;
		o = json_pack("{s:I}", "tid",
			      (json_int_t)mw_view_cell(v, (size_t)k, MW_VC_samples_tid)->v);
		for (int64_t j = 0; j < mw_view_cell(v, (size_t)k, MW_VC_samples_args)->v; j++)
			mw_json_set(&o, a[j].name, math_json_arg(a[j].unit, a[j].val.v));
		mw_json_append(&samples, o);
	}
	return samples;
}

/* "math": the libm, its probe sites, and each slow-math probe hit (the
 * view's) with its samples. */
static json_t *json_math(const struct mw_view *v)
{
	json_t *o = json_object(), *funcs = mw_view_table_json(v, MW_VT_math);

	mw_view_json_section(v, "math", &o);
	for (size_t i = 0; i < json_array_size(funcs); i++)
		/* row is the array's: on failure the array goes, not row alone */
		if (json_object_set_new(json_array_get(funcs, i), "samples",
					math_samples(v, (int64_t)i)) < 0) {
			json_decref(funcs);
			funcs = NULL;
			break;
		}
	mw_json_set(&o, "functions", funcs);
	return o;
}

/* "snapshots": {"attach": {...} | null, "end": {...} | null} for -p
 * (attach null: refused, "unknown" says why), {"exit": {...}} for -c. */
static json_t *json_snapshots(const struct mw_view *view, const struct mw_run_info *ri)
{
	json_t *o = json_object();
	size_t n;
	const struct mw_finding *v = mw_view_findings(view, &n);	/* the last reading's */

	if (ri->snap_exit) {
		json_t *x = mw_snapshot_json_value(ri->snap_exit, "?");

		if (ri->ledger_exit)
			mw_ledger_json_add(&x, ri->snap_exit, ri->ledger_exit, v, n);
		mw_json_set(&o, "exit", x);
	}
	if (ri->snap_attach || ri->snap_end) {	/* -p: attach null when refused */
		mw_json_set(&o, "attach", ri->snap_attach ?
			    mw_snapshot_json_value(ri->snap_attach, "?") : json_null());
		json_t *e = ri->snap_end ? mw_snapshot_json_value(ri->snap_end, "?") : json_null();

		if (ri->snap_end && ri->ledger_end)
			mw_ledger_json_add(&e, ri->snap_end, ri->ledger_end, v, n);
		mw_json_set(&o, "end", e);
	}
	return o;
}

/* "unknown": {"reason": ..., "figures": [metric names]}: the figures
 * the report does not have: metrics.def's attach column when the
 * allocator at attach is unknown; every traced figure (with "at_s", the
 * time since the run's start, null unknown) when they mix the process's
 * images (view.def's images_refused), both reasons when both.  NULL
 * when it has them all. */
static json_t *json_unknown(const struct mw_view *v)
{
	const struct mw_view_val *at = mw_view_get(v, MW_VF_images_refused_ns);
	const char *why = mw_view_get(v, MW_VF_attach_unknown)->s;
	const char *mixed = mw_view_get(v, MW_VF_images_refused)->s;
	json_t *figures, *o;
	char *both = NULL;

	if (!why && !mixed)
		return NULL;
	figures = json_array();
	for (int m = 0; m < MW_M_COUNT; m++)
		if ((mixed && mw_metric_traced((enum mw_metric)m)) ||
		    (why && mw_metric_info((enum mw_metric)m)->attach))
			mw_json_append(&figures, json_string(mw_metric_info((enum mw_metric)m)->name));
	if (why && mixed && asprintf(&both, "%s; %s", mixed, why) < 0)
		both = NULL;
	o = json_pack("{s:o, s:o}", "reason", mw_json_str(both ? both : mixed ? mixed : why),
		      "figures", figures);
	free(both);
	if (mixed)
		mw_json_set(&o, "at_s", at->known ? json_real((double)at->v / 1e9) : json_null());
	return o;
}

json_t *mw_report_json_value(const struct mw_view *v)
{
	json_t *root = json_object(), *sbrk;
	const struct mw_run_info *ri = mw_view_run_info(v);

	mw_json_set(&root, "version", json_integer(1));
	mw_json_set(&root, "schema_version", json_integer(1));
	mw_json_set(&root, "target", json_target(v, ri));
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
	if (mw_view_get(v, MW_VF_attach_unknown)->v || mw_view_get(v, MW_VF_images_refused)->v)
		mw_json_set(&root, "unknown", json_unknown(v));
	mw_json_set(&root, "events", json_events(ri, v));
	mw_json_set(&root, "arenas", mw_view_table_json(v, MW_VT_arenas));
	mw_json_set(&root, "heaps", mw_view_table_json(v, MW_VT_heaps));
	sbrk = json_object();
	mw_view_json_section(v, "sbrk", &sbrk);
	mw_json_set(&root, "sbrk", sbrk);
	mw_json_set(&root, "thresholds", json_thresholds(v));
	mw_json_set(&root, "threads", mw_view_table_json(v, MW_VT_threads));
	mw_json_set(&root, "events_log", mw_view_table_json(v, MW_VT_events));
	mw_json_set(&root, "settings", mw_view_table_json(v, MW_VT_settings));
	mw_json_set(&root, "retries", mw_view_table_json(v, MW_VT_retries));
	mw_json_set(&root, "tcache_double_free", mw_view_table_json(v, MW_VT_frees));
	if (mw_view_get(v, MW_VF_setjmp_traced)->v)
		mw_json_set(&root, "setjmp", json_setjmp(v));
	if (mw_view_get(v, MW_VF_math_libm)->s)
		mw_json_set(&root, "math", json_math(v));
	if (ri->snap_attach || ri->snap_end || ri->snap_exit)
		mw_json_set(&root, "snapshots", json_snapshots(v, ri));
	if (ri->stacks)
		mw_json_set(&root, "stacks", mw_report_stacks_json(ri->stacks, ri->stacks_pid));
	mw_view_json_refused(v, &root);	/* they mix its images */
	return root;
}

int mw_report_json(FILE *f, const struct mw_view *v)
{
	json_t *root = mw_report_json_value(v);
	int ret;

	ret = mw_json_write(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(root);
	return ret;
}
