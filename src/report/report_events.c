/* report_events.c - the text summary's sections of what the program
 * did, from a run's view (view.h): the settings it made (mallopt and the
 * tunables), the retries, the slow-math calls and their samples, a tcache
 * double free, the events kept without a section of their own, and the
 * setjmp family's keys; called by report.c (report_int.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "report_int.h"
#include "view.h"
#include "xalloc.h"

/* Shared with report.c (report_int.h), by its short name here. */
#define more_line mw_report_more_line

/* "  ... and K more WHAT (all in --json)" when a list was cut. */
void mw_report_more_line(FILE *f, size_t shown, size_t total, const char *what)
{
	if (total > shown)
		fprintf(f, "  ... and %zu more %s (all of them in the JSON report)\n",
			total - shown, what);
}

void mw_report_settings_text(FILE *f, const struct mw_view *v)
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

void mw_report_retries_text(FILE *f, const struct mw_view *v)
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

void mw_report_math_text(FILE *f, const struct mw_view *v)
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
		int64_t hits = mw_view_cell(v, (size_t)i, MW_VC_math_hits)->v, missing;
		const struct mw_probe_info *info = mw_probe_info((int)p->v);

		if (!info)	/* every row's is a slow-math probe of the table */
			continue;
		fprintf(f, "  %s: %" PRId64 " hit%s (%s)\n", mw_quote(p->s, q, sizeof(q)), hits,
			hits == 1 ? "" : "s", info->doc);
		samples_text(f, v, i);
		missing = mw_view_cell(v, (size_t)i, MW_VC_math_samples_missing)->v;
		if (missing)	/* right or refused: a sample due is shown or said missing */
			fprintf(f, "    %" PRId64 " sample%s MISSING: %s record%s never came from the "
				"tracer (counted lost)\n", missing, missing == 1 ? "" : "s",
				missing == 1 ? "its" : "their", missing == 1 ? "" : "s");
	}
}

/* tcache double frees, prominently: among the answers. */
void mw_report_double_free_text(FILE *f, const struct mw_view *v)
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
void mw_report_events_text(FILE *f, const struct mw_view *v)
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

void mw_report_setjmp_text(FILE *f, const struct mw_view *v)
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
