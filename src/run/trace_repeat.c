/* trace_repeat.c - `mallocwatch --repeat N -c CMD`: the N runs under one
 * tracer session (trace_run.h, mw_run_trace_repeat).
 *
 * Arming a session costs the script's compile (stap -p4, about 0.2 s)
 * and a uprobe per probe site; removing them costs about 0.11 s a site,
 * serialized machine-wide (docs/platform.md).  So the session is armed
 * once: the script's set of processes changes (gen.h opts->dynamic),
 * each run's program joins it before it runs and leaves it when reaped
 * (tracer.h, procset.h runs), and every record comes prefixed with its
 * process:
 *
 *	@4242 T 3 4242 1200 0:94371840 0:3
 *	@4250 T 3 4250 1170 0:94371840 0:3
 *	@4242 N 7 4242 12
 *
 * Here the prefix picks the run, and the record goes without it into
 * that run's own model (trace_run_int.h's sink), as a run of its own
 * would have it: the declarations (P) and the ready line are given to
 * each run when its program is released, the end line to every run.  The
 * aggregates of every run come with the one flush at the last run's
 * exit; then each run is reported as it is today, in order: its summary
 * (on stderr; with -o, the last run's into the file), and the last
 * run's JSON, HTML and --save-stream (each run's stream is kept in an
 * unnamed file in the work directory until then).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linger.h"
#include "msg.h"
#include "protocol.h"
#include "trace_run.h"
#include "trace_run_int.h"
#include "tracer.h"
#include "xalloc.h"

struct rsink {
	struct sink *k;		/* a sink per run */
	pid_t *pid;		/* each run's program */
	int *status;		/* how it ended (waitpid(2)), -1 unknown */
	unsigned long *untraced;	/* processes it created, not traced */
	size_t n, cur, started;	/* runs asked; the one under way; begun */
	char **decl;		/* the script's P lines, for each run's model */
	size_t ndecl, cdecl;
};

/* "@PID RECORD": the run whose program PID is, and RECORD in *rec; -1
 * when none is. */
static long run_of(const struct rsink *s, const char *line, const char **rec)
{
	char *end;
	long pid = strtol(line + 1, &end, 10);

	if (end == line + 1 || *end != ' ')
		return -1;
	*rec = end + 1;
	for (size_t i = 0; i < s->started; i++)
		if (s->pid[i] == pid)
			return (long)i;
	return -1;
}

static void r_line(void *ctx, const char *line)
{
	struct rsink *s = ctx;
	const char *rec;
	long i;

	if (line[0] == MW_REC_PROCESS && (i = run_of(s, line, &rec)) >= 0) {
		mw_sink_line(&s->k[i], rec);
		return;
	}
	if (line[0] == MW_REC_DECLARE) {
		XGROW(s->decl, s->ndecl, s->cdecl);
		s->decl[s->ndecl++] = xstrdup(line);
	}
	if (strcmp(line, MW_LINE_END) == 0) {	/* the flush: every run's */
		for (size_t j = 0; j < s->started; j++)
			mw_sink_line(&s->k[j], line);
		return;
	}
	mw_sink_line(&s->k[s->cur], line);	/* garbled lines are counted there */
}

/* Run i's program pid is about to be released: its model starts as the
 * first run's did, with the declarations and the ready line. */
static void r_run(void *ctx, int i, pid_t pid)
{
	struct rsink *s = ctx;

	s->pid[i] = pid;
	s->cur = (size_t)i;
	s->started = (size_t)i + 1;
	if (!i)	/* the tracer's own ready line comes for the first */
		return;
	for (size_t j = 0; j < s->ndecl; j++)
		mw_sink_line(&s->k[i], s->decl[j]);
	mw_sink_line(&s->k[i], MW_LINE_READY);
}

static void r_done(void *ctx, int i, int status, unsigned long untraced)
{
	struct rsink *s = ctx;

	s->status[i] = status;
	s->untraced[i] = untraced;
}

static int r_sample(void *ctx, pid_t pid)
{
	struct rsink *s = ctx;

	return mw_sink_sample(&s->k[s->cur], pid);
}

static void r_exit(void *ctx, pid_t pid)
{
	struct rsink *s = ctx;

	mw_sink_exit_snapshot(&s->k[s->cur], pid);
}

static void r_exec(void *ctx, pid_t pid, unsigned execs, int drained)
{
	struct rsink *s = ctx;

	mw_sink_exec(&s->k[s->cur], pid, execs, drained);
}

static void r_mixed(void *ctx, pid_t pid, const char *why)
{
	struct rsink *s = ctx;

	mw_sink_mixed(&s->k[s->cur], pid, why);
}

static void r_arming(void *ctx)
{
	struct rsink *s = ctx;

	mw_sink_arming(&s->k[0]);
}

static unsigned long long r_exec_owed(void *ctx, pid_t pid)
{
	struct rsink *s = ctx;

	return mw_sink_exec_owed(&s->k[s->cur], pid);
}

static unsigned long long r_missing(void *ctx)
{
	struct rsink *s = ctx;
	unsigned long long n = 0;

	for (size_t i = 0; i < s->started; i++)
		n += mw_sink_missing(&s->k[i]);
	return n;
}

/* --save-stream: an unnamed file of the work directory's for a run's
 * stream until it is known which run is the last.  NULL when none can
 * be made (said).  (gcc -fanalyzer reports the FILE as leaked where
 * mw_run_trace_repeat stores it: a false report, it is kept in the
 * xcalloc'ed sinks, whose rsink_free closes it.) */
static FILE *stream_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+");

	if (!f) {
		mw_error("cannot make a stream file in '%s': %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* Copy the stream kept in from to the --save-stream file to. */
static void stream_copy(FILE *from, FILE *to)
{
	char buf[65536];
	size_t n;

	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
}

/* The reports of the runs begun, in order (see above); the status of
 * the last, each run's report in reports[i] when reports is not NULL. */
static int report_runs(const struct trace_opts *o, struct outputs *out, struct rsink *s,
		       const struct mw_trace_result *r, const struct mw_run_prep *p,
		       const char *libc_path, json_t **reports)
{
	int status = MW_EXIT_RUNTIME;

	for (size_t i = 0; i < s->started; i++) {
		int last = i + 1 == s->started;
		struct mw_trace_result ri = *r;
		struct outputs oi = { .summary = stderr };
		FILE *null = NULL;

		ri.pid = s->pid[i];
		ri.have_status = s->status[i] != -1;
		ri.status = s->status[i];
		ri.untraced = s->untraced[i];
		if (!last) {
			ri.detaching = 0;
			/* -o: the file keeps the last run's, as before */
			if (o->out && (null = fopen("/dev/null", "we")))
				oi.summary = null;
		}
		if (s->n > 1)
			mw_note("run %zu of %zu", i + 1, s->n);
		status = mw_sink_report(o, last ? out : &oi, &s->k[i], &ri, p->libc, libc_path,
					&p->env, p->gst.sites, reports ? &reports[i] : NULL);
		if (last && out->stream && s->k[i].save)
			stream_copy(s->k[i].save, out->stream);
		if (null)
			fclose(null);
	}
	return status;
}

static void rsink_free(struct rsink *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->k[i].have_proc)
			mw_proc_close(&s->k[i].proc);
		mw_procs_free(s->k[i].procs);
		if (s->k[i].save)
			fclose(s->k[i].save);
	}
	for (size_t i = 0; i < s->ndecl; i++)
		free(s->decl[i]);
	free(s->decl);
	free(s->k);
	free(s->pid);
	free(s->status);
	free(s->untraced);
}

int mw_run_trace_repeat(const struct trace_opts *o, struct outputs *out,
			const struct mw_target *t, const char *libc_path, const char *dir,
			json_t **reports, size_t *runs, pid_t *detaching)
{
	char err[PATH_MAX + 512];
	struct mw_run_prep p;
	struct rsink s = { .n = *runs };
	struct mw_trace_result r;
	int status = MW_EXIT_RUNTIME;
	char key[17] = "", id[160] = "", why[PATH_MAX + 128];
	struct mw_linger *join = NULL;	/* the run's once given to mw_trace_run */
	int busy = 0;

	*runs = 0;
	s.k = xcalloc(s.n, sizeof(*s.k));
	s.pid = xcalloc(s.n, sizeof(*s.pid));
	s.status = xcalloc(s.n, sizeof(*s.status));
	s.untraced = xcalloc(s.n, sizeof(*s.untraced));
	if (mw_run_prepare(o, libc_path, dir, NULL, 0, out->script, &p) < 0)
		goto cleanup;
	for (size_t i = 0; i < s.n; i++) {
		s.status[i] = -1;
		s.k[i] = (struct sink){ .progress = o->progress > 0,
					.read_timeout_ms = o->read_timeout_ms };
		if (out->stream && !(s.k[i].save = stream_file(dir)))
			goto cleanup;
		mw_sink_start(&s.k[i], o, p.libc, libc_path, p.libm, p.libm_path, &p.gst,
			      p.env.rt);
	}
	if (mw_signal_pending()) {
		int sig = mw_signal_take();

		mw_error("interrupted by signal %d (%s) before tracing started", sig, strsignal(sig));
		status = 128 + sig;
		goto cleanup;
	}
	if (o->linger_ms && p.env.rt == MW_RT_BPF) {	/* --linger: a session to join? */
		if (mw_linger_key(p.script, libc_path, key, id, sizeof(id)) < 0)
			mw_note("no lingering session: cannot read '%s'", libc_path);
		else if (!(join = mw_linger_join(key, id, p.script, &busy, why, sizeof(why))) &&
			 o->verbose)
			mw_note("no session %s to join: %s", key, why);
		if (busy)	/* its name stays its own: a tracer of ours, not lingering */
			key[0] = '\0';
	}
	if (o->linger_ms && !join) {	/* a tracer of its own: sweep first (cmd_trace.c) */
		mw_run_note_runtime(&p, o->verbose);
		mw_run_sweep();
	}
	if (mw_trace_run(&(struct mw_tracer_opts){ .env = &p.env, .script = p.script,
			 .session = join, .linger_key = key[0] && !join ? key : NULL,
			 .linger_id = id, .linger_ms = o->linger_ms,
			 .workdir = dir, .procs = &(struct mw_procset){ .kind = MW_PROCS_COMMAND,
			 .cmd = t, .runs = (int)s.n }, .verbose = o->verbose, .flush = 1,
			 .sample_ms = o->interval_ms ? o->interval_ms : 100,
			 .sample_pct_max = o->interval_ms ? 0 : 1 },
			 &(struct mw_consumer){ .ctx = &s, .line = r_line, .at_exit = r_exit,
			 .on_exec = r_exec, .on_mixed = r_mixed, .arming = r_arming,
			 .missing = r_missing, .exec_owed = r_exec_owed,
			 .sample = mw_run_samples_wanted(o) ? r_sample : NULL, .on_run = r_run,
			 .run_done = r_done }, &r, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		if (r.interrupted)
			status = 128 + r.interrupted;
		goto cleanup;
	}
	if (r.detaching)
		*detaching = r.detaching;
	if (o->verbose && r.runs > 1)
		mw_note("%d runs under one tracer session", r.runs);
	if (r.lingered >= 0)	/* --linger: armed or joined, and left armed */
		mw_note("the tracer session stays armed %.1f s for the next -c run of this "
			"script (--linger)", o->linger_ms / 1000.0);
	status = report_runs(o, out, &s, &r, &p, libc_path, reports);
	*runs = s.started;
cleanup:
	rsink_free(&s);
	mw_run_prep_free(&p);
	return status;
}
