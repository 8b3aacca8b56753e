/* metrics_verdicts.c - the verdicts of rules written for people and CI
 * (`mallocwatch check --format`); see metrics.h.  The text format:
 *
 *	FAIL arenas 16, limit <= 4 (rule 'arenas<=4')
 *	PASS tcache_double_free 0, limit == 0 (rule 'tcache_double_free==0')
 *	1 passed, 1 failed
 *
 * json, junit (XML), github (workflow commands, and a Markdown table
 * appended to $GITHUB_STEP_SUMMARY) and markdown say the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "jsonout.h"
#include "msg.h"
#include "output.h"
#include "xalloc.h"

static const char *op_name(enum mw_op op)
{
	static const char *const names[] = { "<=", "<", ">=", ">", "==", "!=" };

	return names[op];
}

int mw_format_parse(const char *s, enum mw_format *f)
{
	static const char *const names[] = { "text", "json", "junit", "github", "markdown" };

	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0) {
			*f = (enum mw_format)i;
			return 0;
		}
	return -1;
}

/* One rule's result as one line of text, without PASS/FAIL. */
static void result_line(char *buf, size_t len, const struct mw_rule *r,
			const struct mw_verdict *v)
{
	const char *name = mw_metric_info(r->metric)->name;

	if (v->missing)
		snprintf(buf, len, "%s: not in the report%s (rule '%s')", name,
			 r->relative ? " or the baseline" : "", r->text);
	else if (v->has_baseline)
		snprintf(buf, len, "%s %" PRId64 ", limit %s %" PRId64 " (baseline %" PRId64
			 ", rule '%s')", name, v->value, op_name(r->op), v->limit, v->baseline,
			 r->text);
	else
		snprintf(buf, len, "%s %" PRId64 ", limit %s %" PRId64 " (rule '%s')", name,
			 v->value, op_name(r->op), v->limit, r->text);
}


/* A Markdown table of the results (also GitHub's step summary). */
static void markdown(FILE *out, const struct mw_rule *rules, const struct mw_verdict *v,
		     size_t n, size_t failed)
{
	fprintf(out, "### mallocwatch: %zu passed, %zu failed\n\n"
		"| result | rule | value | limit | baseline |\n|---|---|---|---|---|\n",
		n - failed, failed);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "| %s | `%s` | ", v[i].ok ? "pass" : "**FAIL**", rules[i].text);
		if (v[i].missing)
			fprintf(out, "missing | | |\n");
		else if (v[i].has_baseline)
			fprintf(out, "%" PRId64 " | %s %" PRId64 " | %" PRId64 " |\n", v[i].value,
				op_name(rules[i].op), v[i].limit, v[i].baseline);
		else
			fprintf(out, "%" PRId64 " | %s %" PRId64 " | |\n", v[i].value,
				op_name(rules[i].op), v[i].limit);
	}
}

static json_t *json_results(const struct mw_rule *rules, const struct mw_verdict *v, size_t n,
			    size_t failed)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:o, s:s, s:b, s:o, s:o, s:o}",
			"rule", mw_json_str(rules[i].text), "metric", mw_metric_info(rules[i].metric)->name,
			"ok", v[i].ok, "value", v[i].missing ? json_null() : json_integer(v[i].value),
			"limit", v[i].missing ? json_null() : json_integer(v[i].limit),
			"baseline", v[i].has_baseline ? json_integer(v[i].baseline) : json_null()));
	return json_pack("{s:o, s:I, s:I}", "rules", arr, "passed", (json_int_t)(n - failed),
			 "failed", (json_int_t)failed);
}

size_t mw_rules_report(FILE *out, enum mw_format f, const struct mw_rule *rules, size_t n,
		       const json_t *report, const json_t *baseline)
{
	struct mw_verdict *v = xcalloc(n, sizeof(*v));
	size_t failed;

	for (size_t i = 0; i < n; i++)
		v[i] = mw_rule_check(&rules[i], report, baseline);
	failed = mw_verdicts_write(out, f, rules, v, n);
	free(v);
	return failed;
}

/* --format text: "PASS|FAIL LINE" per rule, then "N passed, N failed". */
static void text_results(FILE *out, const struct mw_rule *rules, const struct mw_verdict *v,
			 size_t n, size_t failed)
{
	char line[512];

	for (size_t i = 0; i < n; i++) {
		result_line(line, sizeof(line), &rules[i], &v[i]);
		fprintf(out, "%s %s\n", v[i].ok ? "PASS" : "FAIL", line);
	}
	fprintf(out, "%zu passed, %zu failed\n", n - failed, failed);
}

/* --format junit: a testsuite of one testcase per rule, the failed ones
 * with a failure whose message is the result line. */
static void junit_results(FILE *out, const struct mw_rule *rules, const struct mw_verdict *v,
			  size_t n, size_t failed)
{
	char line[512];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"mallocwatch\""
		" tests=\"%zu\" failures=\"%zu\">\n", n, failed);
	for (size_t i = 0; i < n; i++) {
		result_line(line, sizeof(line), &rules[i], &v[i]);
		fputs("  <testcase classname=\"mallocwatch.check\" name=\"", out);
		mw_xml_escape(out, rules[i].text);
		if (v[i].ok) {
			fputs("\"/>\n", out);
			continue;
		}
		fputs("\">\n    <failure message=\"", out);
		mw_xml_escape(out, line);
		fputs("\"/>\n  </testcase>\n", out);
	}
	fputs("</testsuite>\n", out);
}

/* --format github: a notice or error workflow command per rule, and the
 * Markdown table appended to $GITHUB_STEP_SUMMARY when it is set. */
static void github_results(FILE *out, const struct mw_rule *rules, const struct mw_verdict *v,
			   size_t n, size_t failed)
{
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	char line[512];

	for (size_t i = 0; i < n; i++) {
		result_line(line, sizeof(line), &rules[i], &v[i]);
		fprintf(out, "::%s title=mallocwatch::%s ", v[i].ok ? "notice" : "error",
			v[i].ok ? "PASS" : "FAIL");
		/* workflow commands: %, CR and LF are escaped in a message */
		for (const char *p = line; *p; p++)
			fputs(*p == '%' ? "%25" : *p == '\r' ? "%0D" : *p == '\n' ? "%0A" :
			      (char[2]){ *p, 0 }, out);
		fputc('\n', out);
	}
	if (summary && *summary) {
		FILE *s = mw_output_append(summary);

		if (s) {
			markdown(s, rules, v, n, failed);
			fclose(s);
		}
	}
}

size_t mw_verdicts_write(FILE *out, enum mw_format f, const struct mw_rule *rules,
			 const struct mw_verdict *v, size_t n)
{
	size_t failed = 0;
	json_t *j;

	for (size_t i = 0; i < n; i++)
		failed += !v[i].ok;
	switch (f) {
	case MW_FMT_TEXT:
		text_results(out, rules, v, n, failed);
		break;
	case MW_FMT_JSON:
		/* out of memory exits, as xalloc.h does; a write error is
		 * the caller's to find on out */
		if (!(j = json_results(rules, v, n, failed)))
			mw_die(MW_EXIT_RUNTIME, "cannot write the results: %s", strerror(ENOMEM));
		mw_json_write(j, out, JSON_INDENT(2));
		json_decref(j);
		break;
	case MW_FMT_JUNIT:
		junit_results(out, rules, v, n, failed);
		break;
	case MW_FMT_GITHUB:
		github_results(out, rules, v, n, failed);
		break;
	case MW_FMT_MARKDOWN:
		markdown(out, rules, v, n, failed);
		break;
	}
	return failed;
}
