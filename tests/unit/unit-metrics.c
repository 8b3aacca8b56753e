/* unit-metrics.c - label values as OpenMetrics and Prometheus 0.0.4 take
 * them (src/report/report_metrics.c), as a table: clean UTF-8 kept with
 * \\, \" and \n escaped; anything with a control byte, a byte that is not
 * UTF-8, a C1 control or a bidirectional override in mw_quote's form
 * (\xNN, backslash doubled) and then escaped; then one process's
 * metrics in both formats: counters named as each format asks, # UNIT
 * and # EOF in OpenMetrics only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_metrics.h"

static const struct {
	const char *in, *out;
} rows[] = {
	{ "", "" },
	{ "python3", "python3" },
	{ "a\"b", "a\\\"b" },
	{ "a\\b", "a\\\\b" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
	{ "a\nb", "a\\\\x0ab" },
	{ "\xff", "\\\\xff" },
	{ "a\\\x1b[31m", "a\\\\\\\\\\\\x1b[31m" },
	{ "\xc2\x9b" "2J", "\\\\xc2\\\\x9b2J" },
	{ "\xe2\x80\xae" "gnp.exe", "\\\\xe2\\\\x80\\\\xaegnp.exe" },
	{ "\xc0\xaf", "\\\\xc0\\\\xaf" },		/* overlong '/' */
	{ "/sys/fs/cgroup/a b\"c", "/sys/fs/cgroup/a b\\\"c" },
	{ NULL, "" },
};

static char *label(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	mw_metrics_label_value(m, in);
	fclose(m);
	return buf;
}

static int write_one(int openmetrics, char **buf)
{
	static struct mw_snap_arena arena = { .is_main = 1, .system_mem = 135168,
					      .free_bytes = 4096, .top_size = 4096 };
	static struct mw_snapshot snap = { .arenas = &arena, .narenas = 1, .consistent = 1,
					   .system_bytes = 135168, .free_bytes = 4096 };
	struct mw_psnap v[2] = {
		{ .pid = 42, .comm = "a\"b", .snap = &snap },
		{ .pid = 43, .comm = "?", .fail = MW_PSNAP_NO_SYMBOLS },
	};
	uint64_t errors[MW_METRICS_NFAIL] = { [MW_PSNAP_NO_SYMBOLS] = 5 };
	struct mw_metrics_info info = { .openmetrics = openmetrics, .errors_total = errors };
	size_t len = 0;
	FILE *m = open_memstream(buf, &len);
	int r = mw_metrics_write(m, v, 2, &info);

	fclose(m);
	return r;
}

int main(void)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *got = label(rows[i].in);

		if (strcmp(got, rows[i].out)) {
			printf("FAIL: row %zu: got '%s', want '%s'\n", i, got, rows[i].out);
			bad = 1;
		}
		free(got);
	}
	for (int om = 0; om <= 1; om++) {
		static const char *const want[2][4] = {
			{ "# TYPE mallocwatch_read_errors_total counter\n",
			  "mallocwatch_read_errors_total{reason=\"no_symbols\"} 5\n",
			  "mallocwatch_arena_system_bytes{pid=\"42\",command=\"a\\\"b\",cgroup=\"\","
			  "container=\"\",arena=\"0\",main=\"true\"} 135168\n",
			  "mallocwatch_processes_unread{reason=\"no_symbols\"} 1\n" },
			{ "# TYPE mallocwatch_read_errors counter\n",
			  "# UNIT mallocwatch_arena_free_bytes bytes\n",
			  "mallocwatch_arena_in_use_bytes{pid=\"42\",command=\"a\\\"b\",cgroup=\"\","
			  "container=\"\",arena=\"0\",main=\"true\"} 131072\n",
			  "\n# EOF\n" },
		};
		char *buf = NULL;

		if (write_one(om, &buf) < 0) {
			printf("FAIL: mw_metrics_write (openmetrics %d) failed\n", om);
			bad = 1;
		}
		for (int k = 0; buf && k < 4; k++)
			if (!strstr(buf, want[om][k])) {
				printf("FAIL: openmetrics %d: no '%s' in:\n%s", om, want[om][k], buf);
				bad = 1;
			}
		if (buf && !om && (strstr(buf, "# EOF") || strstr(buf, "# UNIT") || strstr(buf, "pid=\"43\""))) {
			printf("FAIL: 0.0.4 text has # EOF, # UNIT or the process not read\n");
			bad = 1;
		}
		if (buf && om && strcmp(buf + strlen(buf) - 6, "# EOF\n")) {
			printf("FAIL: OpenMetrics text does not end with # EOF\n");
			bad = 1;
		}
		free(buf);
	}
	if (!bad)
		printf("%zu label rows and 2 formats passed\n", sizeof(rows) / sizeof(rows[0]));
	return bad;
}
