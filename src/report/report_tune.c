/* report_tune.c - tune's table, markdown and JSON; see report_tune.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsonout.h"
#include "msg.h"
#include "report_tune.h"
#include "units.h"

static const char *hb(uint64_t v)
{
	static char ring[16][16];
	static unsigned i;

	if (v == MW_TUNE_UNKNOWN)
		return "-";
	return mw_human_bytes(v, ring[i++ % 16], sizeof(ring[0]));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the known values of one figure (at offset off) over the
 * runs (of an even count, the mean of the middle two), their least into
 * *lo and most into *hi; all MW_TUNE_UNKNOWN when none is known. */
static uint64_t median_u64(const struct mw_tune_sample *r, size_t n, size_t off, uint64_t *lo,
			   uint64_t *hi)
{
	uint64_t *v = calloc(n ? n : 1, sizeof(*v)), m = MW_TUNE_UNKNOWN;
	size_t k = 0;

	*lo = *hi = MW_TUNE_UNKNOWN;
	if (!v)
		return MW_TUNE_UNKNOWN;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = *(const uint64_t *)((const char *)&r[i] + off);

		if (x != MW_TUNE_UNKNOWN)
			v[k++] = x;
	}
	qsort(v, k, sizeof(*v), cmp_u64);
	if (k) {
		/* no overflow: v[k/2 - 1] <= v[k/2] */
		m = k % 2 ? v[k / 2] : v[k / 2 - 1] + (v[k / 2] - v[k / 2 - 1]) / 2;
		*lo = v[0];
		*hi = v[k - 1];
	}
	free(v);
	return m;
}

static double median_dbl(const struct mw_tune_sample *r, size_t n, size_t off, double *lo,
			 double *hi)
{
	double *v = calloc(n ? n : 1, sizeof(*v)), m = 0;

	*lo = *hi = 0;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&r[i] + off);
	qsort(v, n, sizeof(*v), cmp_dbl);
	if (n) {
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		*lo = v[0];
		*hi = v[n - 1];
	}
	free(v);
	return m;
}

/* Whether a's spread of peak RSS or wall time lies wholly below b's, by
 * more than the noise floor: 1 peak RSS, 2 wall, 3 both, 0 neither. */
static int beats(const struct mw_tune_row *a, const struct mw_tune_row *b)
{
	int r = 0;

	if (a->hi.peak_rss != MW_TUNE_UNKNOWN && b->lo.peak_rss != MW_TUNE_UNKNOWN &&
	    a->hi.peak_rss + MW_TUNE_FLOOR_RSS < b->lo.peak_rss)
		r |= 1;
	if (a->hi.wall_s + MW_TUNE_FLOOR_WALL < b->lo.wall_s)
		r |= 2;
	return r;
}

/* Every run read at its exit (peak RSS from VmHWM, not the rusage,
 * whose ru_maxrss also counts the forked mallocwatch before the exec),
 * and each run exited as the first did. */
static int row_complete(const struct mw_tune_row *r)
{
	for (size_t j = 0; j < r->nruns; j++)
		if (r->runs[j].why[0] || r->runs[j].peak_rss == MW_TUNE_UNKNOWN ||
		    r->runs[j].status != r->runs[0].status)
			return 0;
	return r->nruns > 0;
}

static void row_finish(struct mw_tune_row *r)
{
	r->med.wall_s = median_dbl(r->runs, r->nruns, offsetof(struct mw_tune_sample, wall_s),
				   &r->lo.wall_s, &r->hi.wall_s);
	r->med.cpu_s = median_dbl(r->runs, r->nruns, offsetof(struct mw_tune_sample, cpu_s),
				  &r->lo.cpu_s, &r->hi.cpu_s);
#define MED(x) r->med.x = median_u64(r->runs, r->nruns, offsetof(struct mw_tune_sample, x), \
				     &r->lo.x, &r->hi.x)
	MED(peak_rss);
	MED(rss_exit);
	MED(in_use_exit);
	MED(free_exit);
	MED(arenas_exit);
	MED(waits);
#undef MED
	r->med.status = r->nruns ? r->runs[r->nruns - 1].status : 0;
	r->med.why[0] = '\0';
	for (size_t j = 0, k = 0; j < r->nruns; j++)
		if (r->runs[j].why[0] && !k++)
			snprintf(r->med.why, sizeof(r->med.why), "run %zu: %.990s", j + 1,
				 r->runs[j].why);
}

void mw_tune_finish(struct mw_tune_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		row_finish(&rows[i]);
	for (size_t i = 0; i < n; i++) {
		int wins = 0, lost = 0;

		rows[i].best = 0;
		if (!row_complete(&rows[i]))	/* never marked, and compared with none */
			continue;
		for (size_t j = 0; j < n; j++)
			if (j != i && row_complete(&rows[j])) {
				wins |= beats(&rows[i], &rows[j]);
				lost |= beats(&rows[j], &rows[i]);
			}
		rows[i].best = wins && !lost;
	}
}

static const char *name(const struct mw_tune_row *r)
{
	return r->setting[0] ? r->setting : "(baseline)";
}

static const char *waits(const struct mw_tune_sample *s, char *buf, size_t len)
{
	if (s->waits == MW_TUNE_UNKNOWN)
		return "-";
	snprintf(buf, len, "%" PRIu64, s->waits);
	return buf;
}

static const char *arenas(const struct mw_tune_sample *s, char *buf, size_t len)
{
	if (s->arenas_exit == MW_TUNE_UNKNOWN)
		return "-";
	snprintf(buf, len, "%" PRIu64, s->arenas_exit);
	return buf;
}

/* The row tried with exactly setting knob, or NULL. */
static const struct mw_tune_row *row_of(const struct mw_tune_row *rows, size_t n,
					const char *knob)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].setting, knob) == 0)
			return &rows[i];
	return NULL;
}

static int64_t less(uint64_t base, uint64_t v)
{
	return base == MW_TUNE_UNKNOWN || v == MW_TUNE_UNKNOWN ? 0 : (int64_t)(base - v);
}

/* The settings the baseline's findings name, and what was measured with
 * them (a finding gives no estimate: findings.h). */
static void estimates_text(FILE *f, const struct mw_tune_row *rows, size_t n, int md)
{
	const struct mw_tune_row *b = n ? &rows[0] : NULL;
	int any = 0;

	for (size_t i = 0; b && i < b->nfindings; i++) {
		const struct mw_finding *x = &b->findings[i];
		const struct mw_tune_row *r;
		char d[16];

		if (!x->knob[0])
			continue;
		if (!any++)
			fprintf(f, md ? "\n**Settings the baseline's findings name, and what was "
				"measured**\n\n" : "\nSettings the baseline's findings (at its exit) "
				"name, and what was measured:\n");
		fprintf(f, "%s%s%s (finding %s)", md ? "- `" : "  ", x->knob, md ? "`" : "", x->id);
		if (!(r = row_of(rows, n, x->knob))) {
			fprintf(f, "; not tried (--try %s)\n", x->knob);
			continue;
		}
		mw_human_bytes((uint64_t)llabs(less(b->med.free_exit, r->med.free_exit)), d,
			       sizeof(d));
		fprintf(f, "; measured: free and resident at exit %s -> %s (%s%s), RSS at exit "
			"%s -> %s, peak RSS %s -> %s, wall %.2f -> %.2f s\n", hb(b->med.free_exit),
			hb(r->med.free_exit), less(b->med.free_exit, r->med.free_exit) >= 0 ? "-" :
			"+", d, hb(b->med.rss_exit), hb(r->med.rss_exit), hb(b->med.peak_rss),
			hb(r->med.peak_rss), b->med.wall_s, r->med.wall_s);
	}
}

/* "MED (LO-HI)" of a byte figure; "-" unknown. */
static const char *bspread(uint64_t med, uint64_t lo, uint64_t hi, char *buf, size_t len)
{
	if (med == MW_TUNE_UNKNOWN)
		return "-";
	if (lo == hi)
		snprintf(buf, len, "%s", hb(med));
	else
		snprintf(buf, len, "%s (%s-%s)", hb(med), hb(lo), hb(hi));
	return buf;
}

static const char *tspread(double med, double lo, double hi, char *buf, size_t len)
{
	snprintf(buf, len, "%.2fs (%.2f-%.2f)", med, lo, hi);
	return buf;
}

static int any_best(const struct mw_tune_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].best)
			return 1;
	return 0;
}

/* Under the table: what the mark means, or that there is no difference;
 * why a row's figures at exit are missing. */
static void tune_notes(FILE *f, const struct mw_tune_row *rows, size_t n, int md)
{
	if (any_best(rows, n))
		fprintf(f, "\n%s best: its spread (min-max over its runs) of peak RSS or of wall "
			"time lies wholly below another setting's, and no setting's lies wholly "
			"below its own (noise floors: %d KiB, %.2f s)\n", md ? "**best**:" : "  *",
			MW_TUNE_FLOOR_RSS / 1024, MW_TUNE_FLOOR_WALL);
	else
		fprintf(f, "\n%sno difference: no setting's spread (min-max over its runs) of peak "
			"RSS or wall time lies wholly below another's (noise floors: %d KiB, "
			"%.2f s)\n", md ? "" : "  ", MW_TUNE_FLOOR_RSS / 1024, MW_TUNE_FLOOR_WALL);
	for (size_t i = 0; i < n; i++)
		if (rows[i].med.why[0]) {
			fprintf(f, "%s%s: not compared, figures at exit missing ('-', or medians of "
				"fewer runs; peak RSS then from the rusage): ", md ? "- " : "  ",
				name(&rows[i]));
			mw_fputs_quoted(rows[i].med.why, f);
			fputc('\n', f);
		}
}

void mw_tune_text(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd)
{
	size_t w = 10;
	char q[4096];

	fputs("mallocwatch: tune", f);
	for (size_t i = 0; cmd && cmd[i]; i++)
		fprintf(f, " %s", mw_quote(cmd[i], q, sizeof(q)));
	fprintf(f, ": %zu settings, %zu run%s each, interleaved (median, min-max)\n\n", n,
		n ? rows[0].nruns : 0, n && rows[0].nruns == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		w = strlen(name(&rows[i])) > w ? strlen(name(&rows[i])) : w;
	fprintf(f, "  %-*s %-30s %-30s %10s %10s %6s %-22s %8s %7s %6s\n", (int)w, "SETTING",
		"PEAK RSS", "RSS@EXIT", "IN USE", "FREE@EXIT", "ARENAS", "WALL", "CPU", "WAITS",
		"EXIT");
	for (size_t i = 0; i < n; i++) {
		const struct mw_tune_row *r = &rows[i];
		const struct mw_tune_sample *m = &r->med;
		char a[24], wt[24], p[64], x[64], t[64];

		fprintf(f, "%c %-*s %-30s %-30s %10s %10s %6s %-22s %7.2fs %7s %6d\n",
			r->best ? '*' : ' ', (int)w, name(r),
			bspread(m->peak_rss, r->lo.peak_rss, r->hi.peak_rss, p, sizeof(p)),
			bspread(m->rss_exit, r->lo.rss_exit, r->hi.rss_exit, x, sizeof(x)),
			hb(m->in_use_exit), hb(m->free_exit), arenas(m, a, sizeof(a)),
			tspread(m->wall_s, r->lo.wall_s, r->hi.wall_s, t, sizeof(t)), m->cpu_s,
			waits(m, wt, sizeof(wt)), m->status);
	}
	tune_notes(f, rows, n, 0);
	fprintf(f, "  (at exit: read in the program's exit stop; IN USE: in the arenas at exit, "
		"resident, mmapped chunks not included; FREE@EXIT: free chunks and tops, "
		"resident; WAITS: arena lock waits, '-' without a tracer)\n");
	estimates_text(f, rows, n, 0);
}

void mw_tune_markdown(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd)
{
	fputs("### mallocwatch tune:", f);
	for (size_t i = 0; cmd && cmd[i]; i++)
		fprintf(f, " `%s`", cmd[i]);
	fprintf(f, "\n\n| | setting | peak RSS | RSS at exit | in use | free at exit | arenas | "
		"wall (s) | CPU (s) | lock waits | exit |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct mw_tune_row *r = &rows[i];
		const struct mw_tune_sample *m = &r->med;
		char a[24], wt[24], p[64], x[64], t[64];

		fprintf(f, "| %s | `%s` | %s | %s | %s | %s | %s | %s | %.2f | %s | %d |\n",
			r->best ? "**best**" : "", name(r),
			bspread(m->peak_rss, r->lo.peak_rss, r->hi.peak_rss, p, sizeof(p)),
			bspread(m->rss_exit, r->lo.rss_exit, r->hi.rss_exit, x, sizeof(x)),
			hb(m->in_use_exit), hb(m->free_exit), arenas(m, a, sizeof(a)),
			tspread(m->wall_s, r->lo.wall_s, r->hi.wall_s, t, sizeof(t)), m->cpu_s,
			waits(m, wt, sizeof(wt)), m->status);
	}
	fprintf(f, "\nMedians (min-max) over %zu run%s each, interleaved.\n", n ? rows[0].nruns : 0,
		n && rows[0].nruns == 1 ? "" : "s");
	tune_notes(f, rows, n, 1);
	estimates_text(f, rows, n, 1);
}

static json_t *unum(uint64_t v)
{
	return v == MW_TUNE_UNKNOWN ? json_null() : json_integer((json_int_t)v);
}

static json_t *sample_json(const struct mw_tune_sample *s)
{
	return json_pack("{s:i, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:o}", "exit_status", s->status,
		"wall_seconds", s->wall_s, "cpu_seconds", s->cpu_s, "peak_rss", unum(s->peak_rss),
		"rss_at_exit", unum(s->rss_exit), "in_use_at_exit", unum(s->in_use_exit),
		"free_at_exit", unum(s->free_exit), "arenas_at_exit", unum(s->arenas_exit),
		"lock_waits", unum(s->waits));
}

int mw_tune_json(FILE *f, const struct mw_tune_row *rows, size_t n, char *const *cmd)
{
	json_t *root = json_object(), *t = json_object(), *c = json_array(), *set = json_array(),
	       *est = json_array();
	int ret;

	for (size_t i = 0; cmd && cmd[i]; i++)
		mw_json_append(&c, mw_json_str(cmd[i]));
	for (size_t i = 0; i < n; i++) {
		json_t *runs = json_array(), *o;

		for (size_t j = 0; j < rows[i].nruns; j++)
			mw_json_append(&runs, sample_json(&rows[i].runs[j]));
		o = sample_json(&rows[i].med);
		mw_json_set(&o, "tunables", rows[i].setting[0] ? json_string(rows[i].setting) :
			    json_null());
		mw_json_set(&o, "best", json_boolean(rows[i].best));
		mw_json_set(&o, "spread", json_pack("{s:[o,o], s:[o,o], s:[f,f]}",
			"peak_rss", unum(rows[i].lo.peak_rss), unum(rows[i].hi.peak_rss),
			"rss_at_exit", unum(rows[i].lo.rss_exit), unum(rows[i].hi.rss_exit),
			"wall_seconds", rows[i].lo.wall_s, rows[i].hi.wall_s));
		mw_json_set(&o, "unknown_reason", rows[i].med.why[0] ?
			    mw_json_str(rows[i].med.why) : json_null());
		mw_json_set(&o, "runs", runs);
		mw_json_append(&set, o);
	}
	for (size_t i = 0; n && i < rows[0].nfindings; i++) {
		const struct mw_finding *x = &rows[0].findings[i];
		const struct mw_tune_row *r;

		if (!x->knob[0])
			continue;
		r = row_of(rows, n, x->knob);
		mw_json_append(&est, json_pack("{s:s, s:s, s:n, s:o, s:o}", "finding", x->id,
			"tunable", x->knob, "estimate_bytes",
			"tried", json_boolean(r != NULL),
			"measured_bytes", r && r->med.free_exit != MW_TUNE_UNKNOWN &&
			rows[0].med.free_exit != MW_TUNE_UNKNOWN ?
			json_integer((json_int_t)less(rows[0].med.free_exit, r->med.free_exit)) :
			json_null()));
	}
	mw_json_set(&t, "command", c);
	mw_json_set(&t, "settings", set);
	mw_json_set(&t, "estimates", est);
	mw_json_set(&root, "version", json_integer(1));
	mw_json_set(&root, "tune", t);
	ret = mw_json_write(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	json_decref(root);
	return ret;
}
