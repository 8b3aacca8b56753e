/* unit-rules.c - rules judged (src/report/metrics_rules.c), as a table:
 * each row a rule, the report's value and the baseline's (different from
 * it, so that a limit taken of the wrong one shows), and the verdict and
 * limit expected.  Relative limits are the baseline's value plus N, or
 * plus N% of the baseline's value (rounded toward zero), never of the
 * report's; <= and < differ at the limit itself.  Then the metrics a
 * report lists as unknown ("unknown", docs/json.md): missing, every rule
 * on them fails with the report's (or the baseline's) reason, the others
 * are judged as ever; and rule texts that must be refused. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "metrics.h"
#include "unit.h"

static const struct {
	const char *rule;
	int64_t value, baseline;	/* heap_bytes of the report, of the baseline */
	int ok;
	int64_t limit;
} rows[] = {
	{ "heap_bytes<=1000", 1000, 0, 1, 1000 },
	{ "heap_bytes<1000", 1000, 0, 0, 1000 },
	{ "heap_bytes>=1000", 999, 0, 0, 1000 },
	{ "heap_bytes>999", 1000, 0, 1, 999 },
	{ "heap_bytes==1K", 1024, 0, 1, 1024 },
	{ "heap_bytes!=1K", 1024, 0, 0, 1024 },
	/* +10% of the baseline 1000 is 1100: 1105 (10.5% more) fails; taken
	 * of the value, the limit would be 1215 and it would pass */
	{ "heap_bytes<=+10%", 1105, 1000, 0, 1100 },
	{ "heap_bytes<=+10%", 1100, 1000, 1, 1100 },
	{ "heap_bytes<+10%", 1100, 1000, 0, 1100 },
	/* -10% of the baseline 2000 is 1800 (of the value 1850: 1665) */
	{ "heap_bytes<=-10%", 1850, 2000, 0, 1800 },
	{ "heap_bytes>=-10%", 1790, 2000, 0, 1800 },
	{ "heap_bytes<=+33%", 1332, 1001, 0, 1331 },	/* 1001 + 330.33 toward zero */
	{ "heap_bytes<=+0%", 1, 0, 0, 0 },		/* 0 must stay 0 */
	{ "heap_bytes<=+50", 1051, 1000, 0, 1050 },
	{ "heap_bytes>=-50", 949, 1000, 0, 950 },
	{ "heap_bytes<=+0", 7, 7, 1, 7 },
};

/* A report whose metric heap_bytes is v (one non-main arena), with an
 * "unknown" listing figure (NULL: none) for reason why. */
static json_t *report(int64_t v, const char *figure, const char *why)
{
	json_t *r = json_pack("{s:i, s:{}, s:[{s:b, s:I}, {s:b, s:I}], s:[], s:{s:I, s:I}}",
			      "version", 1, "events", "arenas", "main", 1, "heap_bytes",
			      (json_int_t)0, "main", 0, "heap_bytes", (json_int_t)v, "heaps",
			      "thresholds", "mmap", (json_int_t)131072, "trim", (json_int_t)131072);

	if (figure)
		json_object_set_new(r, "unknown", json_pack("{s:s, s:[s]}", "reason", why,
							      "figures", figure));
	return r;
}

static struct mw_verdict judge(const char *text, json_t *r, json_t *base)
{
	struct mw_rule rule;
	char err[256];

	if (mw_rule_parse(text, &rule, err, sizeof(err)) < 0) {
		CHECK(0, "'%s' refused: %s", text, err);
		return (struct mw_verdict){ .missing = 1 };
	}
	return mw_rule_check(&rule, r, base);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *r = report(rows[i].value, NULL, NULL), *b = report(rows[i].baseline, NULL, NULL);
		struct mw_verdict v = judge(rows[i].rule, r, b);

		CHECK(!v.missing && v.ok == rows[i].ok && v.limit == rows[i].limit,
		      "'%s' on %lld (baseline %lld): ok %d limit %lld, expected ok %d limit %lld",
		      rows[i].rule, (long long)rows[i].value, (long long)rows[i].baseline, v.ok,
		      (long long)v.limit, rows[i].ok, (long long)rows[i].limit);
		json_decref(r);
		json_decref(b);
	}

	/* unknown figures: missing, failed, with the reason */
	{
		const char *why = "no snapshot at attach: process 42: arena 0x7f is locked";
		json_t *r = report(5000, "heap_bytes", why), *k = report(5000, NULL, NULL);
		struct mw_verdict v = judge("heap_bytes>=0", r, NULL);
		int64_t x;

		CHECK(mw_metric_value(r, MW_M_heap_bytes, &x) < 0, "an unknown metric has a value");
		CHECK(mw_metric_unknown(r, MW_M_heap_bytes) &&
		      strcmp(mw_metric_unknown(r, MW_M_heap_bytes), why) == 0, "its reason");
		CHECK(!mw_metric_unknown(r, MW_M_mmap_threshold), "a known metric is not unknown");
		CHECK(!v.ok && v.missing && strcmp(v.why, why) == 0, "heap_bytes>=0 on it: ok %d "
		      "missing %d why '%s'", v.ok, v.missing, v.why);
		v = judge("mmap_threshold==128K", r, NULL);
		CHECK(v.ok && !v.missing && !v.why[0], "a known metric beside it is judged");
		v = judge("heap_bytes<=+100%", k, r);	/* unknown in the baseline */
		CHECK(!v.ok && v.missing && strncmp(v.why, "the baseline: ", 14) == 0 &&
		      strcmp(v.why + 14, why) == 0, "a relative rule, baseline unknown: '%s'", v.why);
		v = judge("heap_bytes<=+100%", r, k);	/* unknown in the report */
		CHECK(!v.ok && v.missing && strcmp(v.why, why) == 0, "relative, report unknown");
		json_object_set_new(json_object_get(r, "unknown"), "figures", json_string("x"));
		CHECK(mw_metric_value(r, MW_M_heap_bytes, &x) == 0 && x == 5000,
		      "figures not a list: nothing unknown");
		json_decref(r);
		json_decref(k);
	}

	/* rules that are not rules */
	{
		static const char *const bad[] = { "heap_bytes", "heap_bytes<=", "heap_bytes<<4",
			"heap_bytes<=4X", "heap_bytes<=+10%%", "nosuch<=1", "<=4", "heap_bytes<=++1" };
		struct mw_rule rule;
		char err[256];

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK(mw_rule_parse(bad[i], &rule, err, sizeof(err)) < 0 && err[0],
			      "'%s' was taken", bad[i]);
	}
	return failed ? 1 : 0;
}
