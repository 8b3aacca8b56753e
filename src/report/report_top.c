/* report_top.c - many processes' snapshots as text and JSON
 * (report_top.h).  The --all table, as `snapshot --all` prints it:
 *
 *	mallocwatch: 2026-11-24 12:40:01 UTC: 41 of 104 processes map a glibc or may not be read: 39 read, 0 inconsistent, 2 not; 2.84 s
 *	    PID COMMAND          ARENAS     SYSTEM     IN USE       FREE  TRIMMABLE  NSPID CGROUP/CONTAINER
 *	   8123 python3               7    2.3 MiB    1.5 MiB  916.3 KiB   92.0 KiB      - /user.slice/session-3.scope
 *	    812 sshd                  -          -          -          -          -      - /system.slice/ssh.service  (no_symbols: ...)
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jsonout.h"
#include "msg.h"
#include "report_snap.h"
#include "report_top.h"
#include "units.h"

static void totals_text(FILE *f, const struct mw_psnap *v, size_t n)
{
	struct mw_psnap_totals t;
	char a[16], b[16], c[16], d[16], m[16], sm[16], um[16];

	mw_psnap_totals(v, n, &t);
	fprintf(f, "\nTotal over %zu process%s", t.read, t.read == 1 ? "" : "es");
	if (t.inconsistent)
		fprintf(f, " (%zu inconsistent, not counted%s", t.inconsistent, t.failed ? "; " : ")");
	if (t.failed)
		fprintf(f, "%s%zu not read)", t.inconsistent ? "" : " (", t.failed);
	/* mmapped chunks are in use and not in any arena: said apart, and added */
	fprintf(f, ": %" PRIu64 " arenas, system %s + mmapped chunks %s = %s, in use %s + "
		"mmapped = %s, free (retained) %s; malloc_trim(0) could give back at most %s\n",
		t.arenas, mw_human_bytes(t.system_bytes, a, sizeof(a)),
		mw_human_bytes(t.mmapped_bytes, m, sizeof(m)),
		mw_human_bytes(t.system_bytes + t.mmapped_bytes, sm, sizeof(sm)),
		mw_human_bytes(t.in_use_bytes, b, sizeof(b)),
		mw_human_bytes(t.in_use_bytes + t.mmapped_bytes, um, sizeof(um)),
		mw_human_bytes(t.free_bytes, c, sizeof(c)), mw_human_bytes(t.trimmable, d, sizeof(d)));
}

int mw_top_reports_text(FILE *f, const struct mw_psnap *v, size_t n)
{
	int first = 1;

	for (size_t i = 0; i < n; i++) {
		if (!v[i].snap)
			continue;
		if (!first)
			fputc('\n', f);
		first = 0;
		mw_snapshot_text_where(f, v[i].snap, v[i].comm,
				       v[i].have_where ? &v[i].where : NULL);
	}
	totals_text(f, v, n);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

static void heading(FILE *f, size_t n, const struct mw_top_info *info,
		    const struct mw_psnap_totals *t)
{
	char when[64];
	time_t sec = (time_t)(info->taken_ns / 1000000000u);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&sec, &tm));
	fprintf(f, "mallocwatch: %s: %zu of %zu process%s map a glibc or may not be read: %zu "
		"read, %zu inconsistent, %zu not; %.2f s\n", when, n, info->seen,
		info->seen == 1 ? "" : "es", t->read,
		t->inconsistent, t->failed, info->seconds);
	fprintf(f, "  %5s %-16s %6s %10s %10s %10s %10s %6s %s\n", "PID", "COMMAND", "ARENAS",
		"SYSTEM", "IN USE", "FREE", "TRIMMABLE", "NSPID", "CGROUP/CONTAINER");
}

/* The figures of a consistent snapshot, else dashes. */
static void figures(FILE *f, const struct mw_snapshot *s)
{
	char sy[16], us[16], fr[16], tr[16];

	if (s && s->consistent)
		fprintf(f, "%6zu %10s %10s %10s %10s", s->narenas,
			mw_human_bytes(s->system_bytes, sy, sizeof(sy)),
			mw_human_bytes(s->in_use_bytes, us, sizeof(us)),
			mw_human_bytes(s->free_bytes, fr, sizeof(fr)),
			mw_human_bytes(s->trimmable, tr, sizeof(tr)));
	else
		fprintf(f, "%6s %10s %10s %10s %10s", "-", "-", "-", "-", "-");
}

static void row(FILE *f, const struct mw_psnap *ps)
{
	char cm[20], nsp[16] = "-", q[4 * 4096 + 8];
	const struct mw_snapshot *s = ps->snap;
	const struct mw_where *w = &ps->where;
	pid_t inner = ps->have_where ? mw_where_inner_pid(w) : 0;

	if (ps->have_where && w->pid_ns_other > 0 && inner)
		snprintf(nsp, sizeof(nsp), "%d", (int)inner);
	fprintf(f, "  %5d %-16s ", (int)ps->pid, mw_quote(ps->comm, cm, sizeof(cm) - 3));
	figures(f, s);
	fprintf(f, " %6s %s", nsp, !ps->have_where ? "?" :
		mw_quote(w->container[0] ? w->container : w->cgroup[0] ? w->cgroup : "?", q,
			 sizeof(q)));
	if (!s)
		fprintf(f, "  (%s: %s)", mw_psnap_fail_name(ps->fail), mw_quote(ps->err, q, sizeof(q)));
	else if (!s->consistent)
		fprintf(f, "  (inconsistent after %d tries: %s)", s->tries,
			mw_quote(s->why, q, sizeof(q)));
	fputc('\n', f);
}

int mw_top_table_text(FILE *f, const struct mw_psnap *v, size_t n, const struct mw_top_info *info)
{
	struct mw_psnap_totals t;

	mw_psnap_totals(v, n, &t);
	heading(f, n, info, &t);
	for (size_t i = 0; i < n; i++)
		row(f, &v[i]);
	/* memcached's 44 MiB of slab pages are mmapped chunks: not in its row */
	fprintf(f, "  (SYSTEM, IN USE, FREE, TRIMMABLE: the arenas' alone; mmapped chunks are "
		"in the total below and in snapshot -p PID)\n");
	totals_text(f, v, n);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* One process as a JSON object (new reference, NULL when out of
 * memory): read, the snapshot object (report_snap.h) with "where" and
 * "error": null; not read, {"pid", "comm", "where" (null when gone),
 * "error": {"kind", "message"}} (kinds: snapmulti.h). */
static json_t *mw_top_process_json(const struct mw_psnap *ps)
{
	json_t *o, *where = ps->have_where ? mw_where_json(&ps->where) : json_null();

	if (ps->snap) {
		o = mw_snapshot_json_value(ps->snap, ps->comm);
		mw_json_set(&o, "where", where);
		mw_json_set(&o, "error", json_null());
		return o;
	}
	return json_pack("{s:i, s:o, s:o, s:{s:s, s:o}}", "pid", (int)ps->pid,
			 "comm", mw_json_str(ps->comm), "where", where,
			 "error", "kind", mw_psnap_fail_name(ps->fail),
			 "message", mw_json_str(ps->err));
}

static json_t *totals_json(const struct mw_psnap *v, size_t n)
{
	struct mw_psnap_totals t;

	mw_psnap_totals(v, n, &t);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "processes_read", (json_int_t)t.read,
			 "processes_inconsistent", (json_int_t)t.inconsistent,
			 "processes_not_read", (json_int_t)t.failed, "arenas", (json_int_t)t.arenas,
			 "system_bytes", (json_int_t)t.system_bytes,
			 "in_use_bytes", (json_int_t)t.in_use_bytes,
			 "free_bytes", (json_int_t)t.free_bytes,
			 "trimmable_bytes", (json_int_t)t.trimmable,
			 "mmapped_bytes", (json_int_t)t.mmapped_bytes,
			 "system_and_mmapped_bytes", (json_int_t)(t.system_bytes + t.mmapped_bytes),
			 "in_use_and_mmapped_bytes", (json_int_t)(t.in_use_bytes + t.mmapped_bytes));
}

int mw_top_json(FILE *f, const struct mw_psnap *v, size_t n, const struct mw_top_info *info,
		size_t flags)
{
	json_t *procs = json_array(), *root;
	int ret;

	for (size_t i = 0; i < n; i++)
		mw_json_append(&procs, mw_top_process_json(&v[i]));
	root = json_pack("{s:i, s:i, s:s, s:o, s:o, s:I, s:I, s:o, s:o}", "version", 1,
			 "schema_version", 2, "mode", info->mode,
			 "cgroup", info->cgroup ? mw_json_str(info->cgroup) : json_null(),
			 "processes_seen", info->seen || !strcmp(info->mode, "all") ?
			 json_integer((json_int_t)info->seen) : json_null(),
			 "taken_unix_ns", (json_int_t)info->taken_ns,
			 "duration_ns", (json_int_t)(info->seconds * 1e9),
			 "processes", procs, "totals", totals_json(v, n));
	ret = mw_json_write(root, f, flags);
	json_decref(root);
	return ret;
}
