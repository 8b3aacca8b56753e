/* metrics_procs.c - rules judged per process of reports of several
 * processes (-f, -p PID,PID,..., --cgroup; several runs with --repeat),
 * see metrics.h mw_rules_report_procs.  A process is known across runs,
 * and in a baseline, by its key: its command line and how many before
 * it had the same (mw_report_process_key):
 *
 *	./arena-storm\x1f4\x1f#1	the second process of that command line
 *
 * With several runs, the result of a process names the run whose value
 * was judged and that run's pid (never the last run's pid beside another
 * run's value), and each run's value is printed:
 *
 *	mallocwatch: process './arena-storm 4': arenas per run: 1: 5 (pid
 *	100), 2: 6 (pid 200); max 6, run 2
 *	FAIL process 200 (arena-storm), run 2 of 2: arenas 6, limit <= 5 ...
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "metrics.h"
#include "metrics_int.h"
#include "msg.h"
#include "xalloc.h"

const char *mw_report_process_name(const json_t *report)
{
	const json_t *t = json_object_get(report, "target");
	const char *name = json_string_value(json_object_get(t, "comm"));

	return name ? name : json_string_value(json_array_get(json_object_get(t, "argv"), 0));
}

/* Process i's command line in procs (a run's "processes"), its words
 * separated by 0x1f; its command name when it has none. */
static void process_line(const json_t *procs, size_t i, char *buf, size_t len)
{
	json_t *t = json_object_get(json_array_get(procs, i), "target"), *a;
	const char *comm = json_string_value(json_object_get(t, "comm"));
	size_t j, m = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(t, "argv"), j, a)
		if (m < len - 1)
			m += (size_t)snprintf(buf + m, len - m, "%s\x1f",
					      json_string_value(a) ? json_string_value(a) : "");
	if (!m)
		snprintf(buf, len, "comm %s", comm ? comm : "?");
}

void mw_report_process_key(const json_t *procs, size_t i, char *buf, size_t len)
{
	char line[1024], other[1024];
	size_t same = 0;

	process_line(procs, i, line, sizeof(line));
	for (size_t k = 0; k < i; k++) {
		process_line(procs, k, other, sizeof(other));
		same += strcmp(line, other) == 0;
	}
	snprintf(buf, len, "%s#%zu", line, same);
}

/* The process of procs with key (mw_report_process_key); NULL when none
 * has it.  Owned by procs. */
static json_t *mw_report_process_by_key(const json_t *procs, const char *key)
{
	char k[1100];

	for (size_t i = 0; i < json_array_size(procs); i++) {
		mw_report_process_key(procs, i, k, sizeof(k));
		if (strcmp(k, key) == 0)
			return json_array_get(procs, i);
	}
	return NULL;
}

/* A key as people read it: "'./arena-storm 4'", " #N" after it when N
 * before it had the same command line; quoted (another process's bytes). */
static const char *key_label(const char *key, char *buf, size_t len)
{
	char line[1100], q[400];
	const char *h = strrchr(key, '#');
	size_t n = h ? (size_t)(h - key) : strlen(key);

	snprintf(line, sizeof(line), "%.*s", (int)n, key);
	for (char *p = line; *p; p++)
		if (*p == '\x1f')
			*p = p[1] ? ' ' : '\0';
	snprintf(buf, len, "'%s'%s%s", mw_quote(line, q, sizeof(q)), h && strcmp(h, "#0") ?
		 " " : "", h && strcmp(h, "#0") ? h : "");
	return buf;
}

/* w's label ("process PID (NAME)", ", run R of N" with several runs) and
 * its junit classname (by name and key, the same from run to run). */
static void who_name(struct mw_who *w, const char *name, const char *key, size_t nruns)
{
	const char *nm = name ? name : "?";
	uint64_t h = mw_fnv1a(MW_FNV1A_INIT, key, strlen(key));
	char q[80], safe[48];
	size_t k = 0;

	snprintf(w->label, sizeof(w->label), "process %d (%s)", w->pid,
		 name ? mw_quote(name, q, sizeof(q)) : "?");
	if (w->nruns && w->run)
		snprintf(w->label + strlen(w->label), sizeof(w->label) - strlen(w->label),
			 ", run %d of %zu", w->run, nruns);
	if (strrchr(nm, '/') && strrchr(nm, '/')[1])	/* a path: its last part */
		nm = strrchr(nm, '/') + 1;
	for (; *nm && k < sizeof(safe) - 1; nm++)	/* a classname's part */
		safe[k++] = isalnum((unsigned char)*nm) || *nm == '-' || *nm == '_' ? *nm : '_';
	safe[k] = '\0';
	snprintf(w->cls, sizeof(w->cls), "mallocwatch.process.%s.%08" PRIx32, k ? safe : "_",
		 (uint32_t)(h ^ (h >> 32)));
}

static int pid_of(const json_t *proc)
{
	return (int)json_integer_value(json_object_get(json_object_get(proc, "target"), "pid"));
}

/* One process's reports in the runs that had it: mine[0..n), the i-th
 * from run no[i] (1 the first). */
struct runs_of {
	json_t **mine;
	int *no;
	size_t n;
};

/* w for rule r's verdict v on a process whose reports are in *ro (the
 * last run's proc): with several runs, each one's number, pid and value,
 * and the one judged (its pid is w's). */
static void who_runs(struct mw_who *w, const struct mw_rule *r, const struct mw_verdict *v,
		     const struct runs_of *ro, const json_t *proc)
{
	w->pid = pid_of(proc);
	if (ro->n < 2)
		return;
	w->nruns = ro->n;
	w->run_no = xcalloc(ro->n, sizeof(int));
	w->run_pid = xcalloc(ro->n, sizeof(int));
	w->run_has = xcalloc(ro->n, sizeof(int));
	w->run_val = xcalloc(ro->n, sizeof(int64_t));
	for (size_t i = 0; i < ro->n; i++) {
		w->run_no[i] = ro->no[i];
		w->run_pid[i] = pid_of(ro->mine[i]);
		w->run_has[i] = mw_metric_value(ro->mine[i], r->metric, &w->run_val[i]) == 0;
	}
	if (v->run > 0 && (size_t)v->run <= ro->n) {	/* the run whose value was judged */
		w->run = ro->no[v->run - 1];
		w->pid = w->run_pid[v->run - 1];
	}
}

/* --repeat: "mallocwatch: process 'CMD': arenas per run: 1: 5 (pid 100),
 * 2: 6 (pid 200); max 6, run 2" to log. */
static void log_runs(FILE *log, const struct mw_who *w, const struct mw_rule *r,
		     const struct mw_verdict *v, const char *key, enum mw_aggregate a)
{
	char l[512], runs[1024];

	if (!log || !w->nruns)
		return;
	fprintf(log, "mallocwatch: process %s: %s per run: %s", key_label(key, l, sizeof(l)),
		mw_metric_info(r->metric)->name, mw_who_runs(w, runs, sizeof(runs)));
	if (v->missing)
		fprintf(log, "; missing in a run\n");
	else
		fprintf(log, "; %s %" PRId64 ", run %d\n", mw_aggregate_name(r, a), v->value, w->run);
}

/* The reports of the process of key in each of runs[0..nruns) into *ro. */
static void runs_of(json_t *const *runs, size_t nruns, const char *key, struct runs_of *ro)
{
	ro->n = 0;
	for (size_t run = 0; run < nruns; run++) {
		json_t *q = mw_report_process_by_key(json_object_get(runs[run], "processes"), key);

		if (q) {
			ro->mine[ro->n] = q;
			ro->no[ro->n++] = (int)run + 1;
		}
	}
}

static void who_free(struct mw_who *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(w[i].run_no);
		free(w[i].run_pid);
		free(w[i].run_has);
		free(w[i].run_val);
	}
	free(w);
}

size_t mw_rules_report_procs(FILE *out, enum mw_format f, const struct mw_rule *rules, size_t n,
			     json_t *const *runs, size_t nruns, enum mw_aggregate a,
			     const json_t *baseline, size_t *judged, FILE *log)
{
	const json_t *procs = nruns ? json_object_get(runs[nruns - 1], "processes") : NULL;
	const json_t *bprocs = json_object_get(baseline, "processes");
	size_t np = json_array_size(procs), k = 0, failed;
	struct mw_rule *r = xcalloc(n * np + 1, sizeof(*r));
	struct mw_verdict *v = xcalloc(n * np + 1, sizeof(*v));
	struct mw_who *w = xcalloc(n * np + 1, sizeof(*w));
	struct runs_of ro = { .mine = xcalloc(nruns + 1, sizeof(json_t *)),
			      .no = xcalloc(nruns + 1, sizeof(int)) };

	for (size_t p = 0; p < np; p++) {
		json_t *proc = json_array_get(procs, p);
		const json_t *base = baseline;
		char key[1100];

		mw_report_process_key(procs, p, key, sizeof(key));
		runs_of(runs, nruns, key, &ro);	/* its value in each */
		if (json_is_array(bprocs))	/* a baseline of several: the same process's */
			base = mw_report_process_by_key(bprocs, key);
		for (size_t i = 0; i < n; i++) {
			if (!mw_rule_selects(&rules[i], proc))
				continue;
			r[k] = rules[i];
			v[k] = ro.n == 1 ? mw_rule_check(&rules[i], proc, base) :
			       mw_rule_judge_runs(&rules[i], ro.mine, ro.n, a, base, NULL);
			who_runs(&w[k], &rules[i], &v[k], &ro, proc);
			who_name(&w[k], mw_report_process_name(proc), key, nruns);
			log_runs(log, &w[k], &rules[i], &v[k], key, a);
			k++;
		}
	}
	failed = mw_verdicts_write_who(out, f, r, v, k, w);
	if (judged)
		*judged = k;
	free(r);
	free(v);
	who_free(w, k);
	free(ro.mine);
	free(ro.no);
	return failed;
}
