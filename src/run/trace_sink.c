/* trace_sink.c - one run's sink (trace_run_int.h): the tracer's lines
 * into the model and --save-stream, the allocator sampled every
 * --interval and read at -c's exit and -p's attach (its snapshots into
 * the saved stream), the program's execs (trace_images.h), and at the end, the run's notes, -p's snapshot at
 * the end, the saved stream's footer and the reports.
 *
 * Split out of trace_run.c, which prepares a run (the script, the
 * runtime) and runs it through this sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "explain.h"
#include "gen.h"
#include "glibcinfo.h"
#include "msg.h"
#include "procmem.h"
#include "procs.h"
#include "procwhere.h"
#include "protocol.h"
#include "report.h"
#include "report_snap.h"
#include "runtime.h"
#include "snapattach.h"
#include "snapshot.h"
#include "stacks.h"
#include "state.h"
#include "stream.h"
#include "trace_images.h"
#include "trace_run.h"
#include "trace_run_int.h"
#include "tracer.h"
#include "view.h"
#include "xalloc.h"

#define SAMPLE_LOAD_TRIES 20	/* samples that may find no libc mapped yet */


/* --progress: one vmstat-like line: the sample just taken (s, at ns),
 * the newest lock-wait count the script answered, retries so far. */
static void progress_line(struct sink *k, const struct mw_snapshot *s, uint64_t ns)
{
	size_t nt;
	const struct mw_thread *t = mw_state_threads(k->st, &nt);
	uint64_t heap = 0, retries = 0, origin = mw_state_origin(k->st);
	uint64_t waits = mw_state_waits_latest(k->st);
	char hb[16], sb[16];

	for (size_t i = 0; i < s->narenas; i++)
		heap += s->arenas[i].heap_bytes;
	for (size_t i = 0; i < nt; i++)
		retries += t[i].retries;
	mw_note("%7.1fs  arenas %3zu  heaps %9s  main heap %9s  waits +%-6" PRIu64
		"  retries +%" PRIu64, origin && ns > origin ? (double)(ns - origin) / 1e9 : 0.0,
		s->narenas, mw_human_bytes(heap, hb, sizeof(hb)),
		mw_human_bytes(s->main_end > s->sbrk_base ? s->main_end - s->sbrk_base : 0, sb,
			       sizeof(sb)), waits - k->prev_waits, retries - k->prev_retries);
	k->prev_waits = waits;
	k->prev_retries = retries;
}

/* A snapshot's figures as Y and U lines, into the stream like the
 * tracer's (so --save-stream keeps them), timed now; returns that time. */
static uint64_t emit_sample(struct sink *k, const struct mw_snapshot *s)
{
	char line[256];
	uint64_t ns = mw_now_ns();

	/* with the mmapped chunks and the RSS (MW_NF_SAMPLE_MEM fields) */
	snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		 " %zu %" PRIu64 " %" PRIu64 " %" PRIu64, MW_REC_SAMPLE, ns, s->mmap_threshold,
		 s->trim_threshold, s->sbrk_base, s->main_end, s->narenas, s->mmapped_mem,
		 s->n_mmaps, mw_process_rss(s->pid));
	mw_sink_line(k, line);
	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];

		snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %zu %" PRIu64,
			 MW_REC_SARENA, a->addr, a->system_mem, a->nheaps, a->heap_bytes);
		mw_sink_line(k, line);
		/* the libc's load bias, as the script's B gives it once an
		 * event saw the libc: main_arena is named by its address in
		 * the trace tables even when no probe did */
		if (a->is_main && k->main_sym && !k->bias_sent && a->addr > k->main_sym) {
			snprintf(line, sizeof(line), "%c %" PRIu64, MW_REC_BIAS,
				 a->addr - k->main_sym);
			k->bias_sent = 1;
			mw_sink_line(k, line);
		}
	}
	return ns;
}

/* V records at the sample taken at ns: the threads the stream named that
 * /proc/PID/task no longer lists (each once).  Nothing when the process
 * itself is gone: its end says so. */
static void threads_gone(struct sink *k, pid_t pid, uint64_t ns)
{
	char path[64], name[16], line[64];
	const struct mw_thread *t;
	size_t n;
	int dfd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	t = mw_state_threads(k->st, &n);
	for (size_t i = 0; i < n; i++) {
		if (t[i].gone_ns || t[i].tid <= 0)
			continue;
		snprintf(name, sizeof(name), "%d", t[i].tid);
		if (faccessat(dfd, name, F_OK, 0) == 0 || errno != ENOENT)
			continue;
		snprintf(line, sizeof(line), "%c %d %" PRIu64, MW_REC_GONE, t[i].tid, ns);
		mw_sink_line(k, line);	/* t may move: its gone_ns is set */
		t = mw_state_threads(k->st, &n);
	}
	close(dfd);
}

int mw_run_samples_wanted(const struct trace_opts *o)
{
	return o->interval_ms || o->html || o->save_stream || o->progress > 0;
}

/* --interval: read the allocator (headers only, snapshot.h) and give the
 * sample to the stream as Y and U lines, so that --save-stream keeps it.
 * 0; -1 when there is none (a sample not read within --read-timeout, or
 * of a corrupt allocator, is counted as skipped). */
int mw_sink_sample(void *ctx, pid_t pid)
{
	struct sink *k = ctx;
	const struct mw_glibc *g = k->g;
	struct mw_snapshot *s;
	char err[PATH_MAX + 512];
	uint64_t ns;

	/* -c: the libc is mapped once the loader has run, and mapped anew
	 * at each exec (a shim's: pyenv's, a shell wrapper's; then the
	 * program's), so it is looked up at each sample (glibcinfo.h caches
	 * the layouts per libc file: this is a read of the maps) */
	if (!g) {
		if (!k->have_sg && k->sg_failed >= SAMPLE_LOAD_TRIES)
			return -1;
		if (mw_glibc_load(pid, &k->sg, err, sizeof(err)) < 0) {
			if (!k->have_sg && ++k->sg_failed == SAMPLE_LOAD_TRIES)
				mw_warn("no allocator samples: %s", err);
			return -1;
		}
		k->have_sg = 1;
		g = &k->sg;
	}
	if (!k->have_proc) {
		if (mw_proc_open(&k->proc, pid, err, sizeof(err)) < 0)
			return -1;
		k->have_proc = 1;
	} else if (mw_proc_refresh(&k->proc, err, sizeof(err)) < 0) {
		return -1;
	}
	k->samples++;
	switch (mw_snapshot_sample(&k->proc, g, k->read_timeout_ms, &s, err, sizeof(err))) {
	case MW_SNAP_OK:
		break;
	case MW_SNAP_TIMEOUT:
	case MW_SNAP_CORRUPT:
	case MW_SNAP_INCONSISTENT:	/* skipped, not drawn; said once at the end */
		if (!k->skipped++)
			snprintf(k->skip_why, sizeof(k->skip_why), "%s", err);
		return -1;
	default:
		return -1;
	}
	ns = emit_sample(k, s);
	threads_gone(k, pid, ns);
	if (k->progress)
		progress_line(k, s, ns);
	mw_snapshot_free(s);
	return 0;
}

/* -c, the program is exiting (held in its ptrace exit stop): read the
 * allocator while its memory is still there. */
void mw_sink_exit_snapshot(void *ctx, pid_t pid)
{
	struct sink *k = ctx;
	char err[PATH_MAX + 512];
	struct mw_explained e;

	mw_stacks_sync(k->stacks);	/* its last stacks, while its maps are there */
	mw_sink_exit_images(k, pid);	/* the program it exec'd, traced or not */
	if (mw_glibc_load(pid, &k->sg, err, sizeof(err)) == 0)	/* after the last exec */
		k->have_sg = 1;
	/* the program as it ends, while it is there to be read */
	k->pr->pid = pid;
	mw_process_observe(k->pr);
	if (!k->have_sg || mw_explain_read(pid, &k->sg, k->read_timeout_ms, &e, err,
					   sizeof(err)) < 0) {
		mw_note("no snapshot at exit: %s", err);
		return;
	}
	k->pr->at_exit = e.s;	/* the run owns them now */
	k->pr->ledger_exit = e.l;
	free(e.f);	/* made again by the reports, with the lock waits */
	if (!e.l)
		mw_note("no RSS ledger at exit: %s", e.lerr);
	emit_sample(k, k->pr->at_exit);	/* the timeline's last sample */
}

void mw_sink_arming(void *ctx)
{
	struct sink *k = ctx;
	char err[PATH_MAX + 512];

	if (k->libc_path)
		(void)mw_glibc_preload(k->libc_path, err, sizeof(err));
}

/* A snapshot the report shows, into the saved stream (a replay shows it
 * again, and seeds its model with the attach snapshot where it comes). */
static void save_snapshot(FILE *save, const char *which, const struct mw_snapshot *s)
{
	json_t *j = save && s ? mw_snapshot_json_value(s, "?") : NULL;
	char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;

	if (t)
		mw_stream_write_snapshot(save, which, t);
	free(t);
	json_decref(j);
}

/* -p, probes armed: read the allocator as it is, and start from it;
 * refused (tried within the read timeout), the figures that need it are
 * unknown (state.h), in the report and the saved stream. */
static void attach_snapshot(struct sink *k)
{
	char err[PATH_MAX + 512], why[PATH_MAX + 600];
	struct mw_glibc g;
	int r = -1;

	if (k->pr->at_attach)
		return;
	if (k->g)
		r = mw_attach_snapshot(k->attach_pid, k->g, k->read_timeout_ms, &k->pr->at_attach,
				       err, sizeof(err));
	else if (mw_glibc_load(k->attach_pid, &g, err, sizeof(err)) == 0)	/* its reason */
		snprintf(err, sizeof(err), "the libc's layouts were not loaded");
	if (r < 0) {
		snprintf(why, sizeof(why), "no snapshot at attach: %s", err);
		mw_warn("%s; the arenas, heaps and thresholds the report would count from it "
			"are reported as unknown", why);
		mw_state_attach_unknown(k->st, why);
		if (k->save)
			mw_stream_write_attach_refused(k->save, why);
		return;
	}
	mw_state_seed(k->st, k->pr->at_attach);
	save_snapshot(k->save, "attach", k->pr->at_attach);
}

void mw_sink_line(void *ctx, const char *line)
{
	static int warned;
	struct sink *k = ctx;

	/* --stacks, kernel runtime: not saved (the X records at the end
	 * hold them; a saved stream's Q line is garbled, as ever) */
	if (k->stacks && line[0] == MW_REC_USTACK && line[1] == ' ') {
		if (mw_stacks_script_line(k->stacks, line) < 0)
			mw_state_garbled(k->st);
		return;
	}
	if (k->save)
		fprintf(k->save, "%s\n", line);
	if (k->attach_pid && strcmp(line, MW_LINE_READY) == 0) {
		k->pr->pid = k->attach_pid;
		mw_process_observe(k->pr);	/* what it is as tracing starts */
		attach_snapshot(k);
		mw_note("tracing process %d; ^C or SIGTERM stops and reports", (int)k->attach_pid);
	}
	if (mw_procs_line(k->procs, line) < 0 && !warned++) {
		char q[200];

		mw_warn("garbled tracer line ignored and counted: '%s'", mw_quote(line, q, sizeof(q)));
	}
	if (strcmp(line, MW_LINE_READY) == 0 && !mw_state_origin(k->st)) {
		/* the program starts now (-c: released; -p: traced from now) */
		char o[64];

		snprintf(o, sizeof(o), "%c %" PRIu64, MW_REC_ORIGIN, mw_now_ns());
		mw_sink_line(k, o);
	}
}

unsigned long long mw_sink_missing(void *ctx)
{
	return mw_state_missing(((struct sink *)ctx)->st);
}

void mw_sink_exec(void *ctx, pid_t pid, unsigned execs, int drained)
{
	struct sink *k = ctx;

	(void)pid;
	(void)drained;
	if (execs > k->execs)
		k->execs = execs;
}

unsigned long long mw_sink_exec_owed(void *ctx, pid_t pid)
{
	(void)pid;
	return mw_state_owed(((struct sink *)ctx)->st);
}

void mw_sink_mixed(void *ctx, pid_t pid, const char *why)
{
	struct sink *k = ctx;

	(void)pid;
	mw_images_refuse(k->st, k->save, why);
}

void mw_sink_exit_images(struct sink *k, pid_t pid)
{
	char why[PATH_MAX + 192];

	/* its first exec started the program: only a later one replaced it */
	if (k->execs > 1 && mw_images_untraced(pid, k->libc_path, why, sizeof(why)) == 1) {
		mw_warn("process %d: %s; its figures from the tracer are refused in the report",
			(int)pid, why);
		mw_images_refuse(k->st, k->save, why);
	}
}

int mw_sink_watch_sample(void *ctx, pid_t pid)
{
	struct sink *k = ctx;

	if (mw_images_watch_check(k->xw))
		return -1;	/* its layouts are the old program's */
	return k->want_samples ? mw_sink_sample(ctx, pid) : -1;
}

const struct mw_consumer *mw_sink_consumer(struct sink *k, struct mw_consumer *c, int program,
					   int samples)
{
	k->want_samples = samples;
	*c = (struct mw_consumer){ .ctx = k, .line = mw_sink_line, .missing = mw_sink_missing,
				   .sample = k->xw ? mw_sink_watch_sample :
					     samples ? mw_sink_sample : NULL,
				   .at_exit = program ? mw_sink_exit_snapshot : NULL,
				   .on_exec = program ? mw_sink_exec : NULL,
				   .on_mixed = program ? mw_sink_mixed : NULL,
				   .exec_owed = program ? mw_sink_exec_owed : NULL,
				   .arming = program ? mw_sink_arming : NULL };
	return c;
}

/* Record how the run ended at the end of a saved stream. */
static void mw_run_save_footer(FILE *f, const struct mw_trace_result *r, const char *findings,
			const char *comm, uint64_t traced_ns)
{
	struct mw_stream_meta m = { .pid = r->pid, .have_status = r->have_status,
		.wait_status = r->status, .tracer_died = r->tracer_died,
		.stopped = r->stopped, .tracer_lost = r->lost, .findings = (char *)findings,
		.traced_ns = traced_ns };

	snprintf(m.comm, sizeof(m.comm), "%s", comm ? comm : "");

	snprintf(m.tracer_msg, sizeof(m.tracer_msg), "%s", r->tracer_msg);
	mw_stream_write_footer(f, &m);
}

/* A new model in k->st for this libc (and libm, whose gst->math_sites
 * probe sites are traced when it is not NULL), main_arena's link-time
 * address when the libc has its symbol; with --save-stream the stream's
 * header, which says the same for a replay. */
void mw_sink_start(struct sink *k, const struct trace_opts *o, const struct mw_elf *libc,
			const char *libc_path, const struct mw_elf *libm, const char *libm_path,
			const struct mw_gen_stats *gst, enum mw_runtime rt)
{
	uint64_t sym = 0;
	int unknown = 0;	/* -c: the pid comes when the program is started */

	if (!(k->procs = mw_procs_new(&unknown, 1)))
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	k->pr = mw_procs_process(k->procs, 0);
	k->st = k->pr->st;
	k->libc_path = libc_path;
	if (libm)
		mw_state_set_libm(k->st, libm_path, gst->math_sites);
	if (mw_elf_symbol(libc, "main_arena", &sym) == 0) {
		mw_state_set_main_arena_sym(k->st, sym);
		k->main_sym = sym;
	}
	else
		mw_warn("'main_arena' not found in '%s' (stripped?); main_arena's address "
			"will be unknown", libc_path);
	if (k->save) {
		struct mw_stream_meta m = { .main_arena = sym, .libm_sites = gst->math_sites,
					    .argv = o->cmd };

		snprintf(m.libc, sizeof(m.libc), "%s", libc_path);
		snprintf(m.runtime, sizeof(m.runtime), "%s", mw_runtime_name(rt));
		snprintf(m.libm, sizeof(m.libm), "%s", libm ? libm_path : "");
		mw_stream_write_header(k->save, &m);
	}
}

/* After a traced run r that worked: the notes on how it ended (sites:
 * the probe sites the tracer still detaches from), -p's snapshot at the
 * end, --save-stream's footer, then the reports.  Returns the exit
 * status; the report as a jansson value in *report when report is not
 * NULL. */
int mw_sink_report(const struct trace_opts *o, struct outputs *out, struct sink *k,
		      const struct mw_trace_result *r, const struct mw_elf *libc,
		      const char *libc_path, const struct mw_runtime_env *env, int sites,
		      json_t **report)
{
	pid_t attached = mw_procset_first(&o->procs);	/* -p's process; 0: -c */
	enum mw_runtime rt = env->rt;
	struct mw_environment menv;
	struct mw_run_info ri;
	struct mw_view *v;
	const char *xwhy;
	int status;
	uint64_t traced = mw_run_traced_ns(mw_state_origin(k->st), r);

	if (r->detaching) {
		if (o->verbose)
			mw_note("report complete %lld ms after the %s", r->flush_ms,
				attached ? "end of tracing" : "program's exit");
		/* (not counted from uprobe_events: reading it waits
		 * behind every removal under way on the machine; a
		 * detail for -v: the report is complete) */
		if (o->verbose)
			mw_note("the tracer (pid %d) goes on removing the uprobes of %d "
				"probe sites in the background%s; %s", (int)r->detaching, sites,
				rt != MW_RT_BPF ? "" : env->umulti ?
				" (one uprobe_multi link: all at once)" : " (about 0.11 s each)", attached ?
				"its handlers are off: nothing more is traced" :
				"the program has exited and nothing is traced");
	}
	if (r->ptrace_msg[0])
		mw_note("%s", r->ptrace_msg);
	if (r->untraced)
		mw_note("the program created %lu process%s, not traced: -f follows them",
			r->untraced, r->untraced == 1 ? "" : "es");
	if (k->skipped)
		mw_warn("%lu of %lu allocator samples skipped (not in the timeline); the "
			"first: %s", k->skipped, k->samples, k->skip_why);
	mw_images_watch_check(k->xw);	/* -p: an exec, now at the latest */
	xwhy = mw_images_watch_end_why(k->xw, k->pr);
	if (attached && !xwhy && (k->pr->at_end = mw_run_end_snapshot(attached, k->g,
							o->read_timeout_ms, &k->pr->ledger_end)))
		emit_sample(k, k->pr->at_end);	/* the timeline's last */
	mw_run_environment(o, libc, mw_runtime_name(rt), &menv);
	ri = (struct mw_run_info){ .argv = (const char *const *)o->cmd,
		.comm = attached && k->pr->comm[0] ? k->pr->comm : NULL,
		.where = attached && k->pr->have_where ? &k->pr->where : NULL,
		.libc = libc_path,
		.runtime = mw_runtime_name(rt), .stopped = r->stopped,
		.snap_attach = k->pr->at_attach, .snap_end = k->pr->at_end,
		.snap_exit = k->pr->at_exit, .ledger_exit = k->pr->ledger_exit,
		.ledger_end = k->pr->ledger_end,
		.last_argv = !attached ? (const char *const *)k->pr->argv : NULL,
		.env = &menv, .stacks = k->stacks,
		.status_why = r->have_status ? NULL : mw_run_status_why(attached != 0, 0,
						r->stopped && mw_process_alive(r->pid)),
		.end_why = k->pr->at_end || !attached ? NULL : xwhy ? xwhy : mw_process_alive(attached) ?
			   "none at the end, see the warnings" :
			   "none at the end: the process had exited" };
	ri.traced_ns = traced;
	save_snapshot(k->save, "end", k->pr->at_end);
	save_snapshot(k->save, "exit", k->pr->at_exit);
	v = mw_run_finish(k->st, r, &ri, &status);	/* the run's one view */
	if (k->save && k->stacks)
		mw_stacks_save(k->stacks, k->save);	/* before the footer */
	if (k->save)	/* its findings, for a replay's page (the same) */
		mw_run_save_footer(k->save, r, mw_view_findings_text(v), ri.comm, ri.traced_ns);
	if (mw_run_write_reports(out, v) < 0)
		status = MW_EXIT_RUNTIME;
	mw_run_write_folded(out, k->stacks);
	if (report && !(*report = mw_report_json_value(v))) {	/* the same view's */
		mw_error("cannot judge the run: %s", strerror(ENOMEM));
		status = MW_EXIT_RUNTIME;
	}
	mw_view_free(v);
	return status;
}

