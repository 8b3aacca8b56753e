/* fuzz-report.c - libFuzzer harness for the report reader behind
 * `mallocwatch check` and `mallocwatch diff` (src/report/metrics.c): loading a
 * report, every metric, absolute and relative rules in every output
 * format, one run and several (--repeat), the environment comparison
 * and the diff in its three formats.  The input up to its first NUL byte
 * is the report, what follows the baseline (no NUL: the input is both).
 * Seeds: corpus-report/ (reports mallocwatch wrote: the JSON of tests/streams,
 * examples/output, check fixtures; and regressions). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rules over every metric: absolute, relative, percentages at the ends
 * of int64_t (limits must saturate, never overflow: UBSan is fatal). */
static const char *const forms[] = {
	"%s<=4", "%s>0", "%s==0", "%s!=1", "%s>=-9223372036854775808", "%s<9223372036854775807",
	"%s<=+10%%", "%s>=-50%%", "%s<=+0", "%s<+9223372036854775807",
	"%s>-9223372036854775807", "%s<=+9223372036854775807%%", "%s>=-9223372036854775807%%",
	"%s<=8796093022207G",
};

static size_t make_rules(struct mw_rule *r, size_t max)
{
	char text[128], err[256];
	size_t n = 0;

	for (int m = 0; m < MW_M_COUNT; m++)
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]) && n < max; i++) {
			snprintf(text, sizeof(text), forms[i], mw_metric_info((enum mw_metric)m)->name);
			if (mw_rule_parse(text, &r[n], err, sizeof(err)) == 0)
				n++;
		}
	return n;
}

static void judge(FILE *null, const struct mw_rule *r, size_t n, json_t *rep, json_t *base)
{
	json_t *runs[3] = { rep, base, rep };
	struct mw_verdict v[MW_M_COUNT * 14];
	int64_t x;

	for (int m = 0; m < MW_M_COUNT; m++)
		mw_metric_value(rep, (enum mw_metric)m, &x);
	for (int f = MW_FMT_TEXT; f <= MW_FMT_MARKDOWN; f++)
		mw_rules_report(null, (enum mw_format)f, r, n, rep, base);
	for (size_t i = 0; i < n; i++)
		v[i] = mw_rule_judge_runs(&r[i], runs, 3, (enum mw_aggregate)(i % 4), base, null);
	mw_verdicts_write(null, MW_FMT_TEXT, r, v, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	static struct mw_rule rules[MW_M_COUNT * 14];
	static size_t nrules;
	const char *sep = memchr(data, '\0', size);
	size_t rlen = sep ? (size_t)(sep - (const char *)data) : size;
	char err[512], why[1024];
	int status;
	json_t *rep, *base, *d;

	if (!null) {
		if (!(null = fopen("/dev/null", "we")))
			return 0;
		unsetenv("GITHUB_STEP_SUMMARY");
		mw_quiet(1);
		nrules = make_rules(rules, sizeof(rules) / sizeof(rules[0]));
	}
	rep = mw_report_loadb((const char *)data, rlen, "report\033[2J", err, sizeof(err), &status);
	base = sep ? mw_report_loadb(sep + 1, size - rlen - 1, "base", err, sizeof(err), &status) :
	       json_incref(rep);
	if (rep && base) {
		judge(null, rules, nrules, rep, base);
		mw_env_differs(base, rep, why, sizeof(why));
		mw_check_env(base, rep, 0);
		d = mw_diff_new(base, rep, "base\xff", "new");
		if (d) {
			mw_diff_write(null, MW_FMT_TEXT, d);
			mw_diff_write(null, MW_FMT_JSON, d);
			mw_diff_write(null, MW_FMT_MARKDOWN, d);
		}
		json_decref(d);
	}
	json_decref(rep);
	json_decref(base);
	return 0;
}
