/* report_metrics.h - many processes' snapshots (snapmulti.h) as metrics
 * for Prometheus: OpenMetrics 1.0 text, or the Prometheus text format
 * 0.0.4 (node_exporter's textfile collector, scrapers that do not ask
 * for OpenMetrics).  `mallocwatch serve` writes them; the names, types,
 * units and labels are listed in docs/monitoring.md and
 * mallocwatch-serve(1).  An OpenMetrics exposition looks like:
 *
 *	# TYPE mallocwatch_arena_system_bytes gauge
 *	# UNIT mallocwatch_arena_system_bytes bytes
 *	# HELP mallocwatch_arena_system_bytes Bytes the arena has from the system (malloc_state.system_mem).
 *	mallocwatch_arena_system_bytes{pid="4242",command="python3",cgroup="/user.slice",container="",arena="0",main="true"} 135168
 *	...
 *	# TYPE mallocwatch_read_errors counter
 *	mallocwatch_read_errors_total{reason="exited"} 3
 *	# EOF
 *
 * the 0.0.4 text the same without # UNIT and # EOF, and a counter's
 * HELP and TYPE name its _total sample.
 *
 * Label values come from the processes (comm, cgroup paths): a value
 * that is valid UTF-8 with no control character is kept as it is;
 * any other is written as msg.h's mw_quote shows it (\xNN for each such
 * byte, \\ for a backslash).  Then backslash, double quote and newline
 * are escaped as both formats ask (\\, \", \n).
 */
#ifndef MALLOCWATCH_REPORT_METRICS_H
#define MALLOCWATCH_REPORT_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "snapmulti.h"

/* The number of failure kinds (enum mw_psnap_fail, MW_PSNAP_READ
 * included), the size of an errors_total array. */
#define MW_METRICS_NFAIL (MW_PSNAP_INCONSISTENT + 1)

/* What the reading was, beside the processes. */
struct mw_metrics_info {
	int openmetrics;	/* 1: OpenMetrics 1.0; 0: Prometheus text 0.0.4 */
	size_t seen;		/* --all: processes looked at in /proc; 0: not emitted */
	size_t unlisted;	/* --all: processes in /proc not looked at within
				 * the budget (emitted with seen) */
	uint64_t taken_ns;	/* CLOCK_REALTIME when the reading started */
	double seconds;		/* wall time of the whole reading */
	/* processes not read since the start, by kind (index: enum
	 * mw_psnap_fail; [MW_PSNAP_READ] unused) */
	const uint64_t *errors_total;
	/* the arena count at which glibc reuses arenas instead of making
	 * more, for each process of v (arena_max, else 8 x its CPUs);
	 * 0 or NULL: unknown, not emitted */
	const uint64_t *arena_limit;
	/* serve --probes: what the tracer session counted (serve_probes.h);
	 * NULL without --probes: no probe families at all */
	const struct mw_metrics_probes *probes;
};

/* The probe counters of a reading: whether the tracer is tracing, and
 * for each process of v whether it is traced (with a live reading of
 * it: traced[i] 1, its counters, view.h's mw_view_counters, in
 * c[i * MW_VK_COUNT ...]) or not (0: another libc than the one traced,
 * or not yet; no counter series then, never zeros).  Each counter is
 * written as view.def's MW_VIEW_CTR names it. */
struct mw_metrics_probes {
	int tracing;
	const int *traced;
	const uint64_t *c;
};

/* The metrics of v (n processes; those not read are counted by reason,
 * not listed) to out, in the format info asks.  0, or -1 when writing
 * failed (errno set). */
int mw_metrics_write(FILE *out, const struct mw_psnap *v, size_t n,
		     const struct mw_metrics_info *info);

/* s as a label value, escaped as above, without the quotes, to out;
 * NULL s is "".  For tests and other writers. */
void mw_metrics_label_value(FILE *out, const char *s);

#endif /* MALLOCWATCH_REPORT_METRICS_H */
