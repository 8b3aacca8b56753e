/* trace_run.c - one traced run (trace_run.h): the script written, the
 * runtime prepared, the tracer run through the run's sink (trace_sink.c:
 * the tracer's lines into the model and --save-stream, the allocator's
 * samples and snapshots, the run's notes and reports); how a run ends
 * (the snapshot at -p's end, the notes, its exit status, the reports
 * written) in trace_end.c.
 *
 * Moved out of cmd_trace.c, which keeps the options and chooses what to
 * run: target (which libc) -> sdtnote (its probes) -> gen (the script)
 * -> runtime + tracer (stap) -> stream -> state -> report.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "glibcinfo.h"
#include "leftovers.h"
#include "msg.h"
#include "output.h"
#include "probetab.h"
#include "procmem.h"
#include "procs.h"
#include "procwhere.h"
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
#include "xalloc.h"

/* Write the script into the work directory, and to save (--save-script,
 * already open; closed by mw_outputs_close) unless NULL. */
static int mw_run_write_script(const struct mw_elf *libc, const struct mw_gen_opts *g,
			const char *dir, char *script, size_t len, FILE *save,
			struct mw_gen_stats *st)
{
	char err[PATH_MAX + 256], sites[PATH_MAX];
	struct mw_gen_opts with = *g;
	FILE *f, *sf = NULL;

	snprintf(script, len, "%s/mallocwatch.stp", dir);
	snprintf(sites, sizeof(sites), "%s/" MW_GEN_SITES_FILE, dir);
	if (!(f = fopen(script, "we"))) {
		mw_error("cannot create '%s': %s", script, strerror(errno));
		return -1;
	}
	/* the bpf runtime's sites, which umulti-shim.so arms early: a help,
	 * not a need (without them it arms as stapbpf asks) */
	if (g->runtime == MW_RT_BPF)
		sf = fopen(sites, "we");
	with.sites_out = sf;
	if (mw_gen_script(libc, &with, f, st, err, sizeof(err)) < 0 ||
	    (save && mw_gen_script(libc, g, save, st, err, sizeof(err)) < 0)) {
		fclose(f);
		if (sf)
			fclose(sf);
		mw_error("%s", err);
		return -1;
	}
	if (fclose(f) != 0) {
		mw_error("cannot write '%s': %s", script, strerror(errno));
		if (sf)
			fclose(sf);
		return -1;
	}
	if (sf && fclose(sf) != 0)
		unlink(sites);
	return 0;
}

/* The libm whose slow-math probes to trace (into path): --libm, else the
 * one beside the libc; NULL when there is none or the math family is not
 * selected.  *bad is set for an unusable --libm. */
static struct mw_elf *mw_run_open_libm(const struct trace_opts *o, const char *libc,
				char *path, size_t len, int *bad)
{
	char err[PATH_MAX + 256];
	struct mw_elf *e;

	path[0] = '\0';
	if (o->families && !(o->families & (1u << MW_FAM_MATH)))
		return NULL;
	if (mw_choose_libm(o->libm, libc, path, len, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		*bad = 1;
		return NULL;
	}
	if (!path[0])
		return NULL;
	if (!(e = mw_elf_open(path, err, sizeof(err))))
		mw_warn("%s; slow-math probes not traced", err);
	return e;
}

void mw_run_sweep(void)
{
	struct mw_sweep sw;
	char what[256];

	mw_sweep(&sw, MW_SWEEP_RUN_MS);
	if (sw.tracers || sw.uprobes || sw.dirs || sw.modules || sw.cache || sw.sockets) {
		mw_sweep_text(&sw, what, sizeof(what));
		mw_note("cleaned up after an earlier run that was killed: %s", what);
	}
}

void mw_run_note_runtime(const struct mw_run_prep *p, int verbose)
{
	if (verbose)
		mw_note("%s runtime%s%s", mw_runtime_name(p->env.rt), p->env.did[0] ? ": " : "",
		p->env.did);
}

int mw_run_prepare(const struct trace_opts *o, const char *libc_path, const char *dir,
		   const int *pids, size_t npids, FILE *save, struct mw_run_prep *p)
{
	char err[PATH_MAX + 512];
	struct mw_gen_opts go;
	int bad_libm = 0;

	memset(p, 0, sizeof(*p));
	if (!(p->libc = mw_elf_open(libc_path, err, sizeof(err))) ||
	    mw_runtime_prepare(o->runtime, 1, dir, &p->env, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	if (!o->linger_ms)	/* --linger: trace_repeat.c says it if this run arms */
		mw_run_note_runtime(p, o->verbose);
	p->libm = mw_run_open_libm(o, libc_path, p->libm_path, sizeof(p->libm_path), &bad_libm);
	go = (struct mw_gen_opts){
		.runtime = p->env.rt, .libc_path = libc_path, .families = o->families,
		.libm = p->libm, .libm_path = p->libm_path, .pids = pids, .npids = npids,
		.dynamic = mw_procset_changes(&o->procs) || o->repeat > 1 || o->linger_ms,
		.linger = o->linger_ms > 0, .live = o->procs.kind == MW_PROCS_LISTED,
		.stacks = o->stacks && p->env.rt == MW_RT_KERNEL };
	p->env.untargeted = mw_gen_untargeted(&go);
	if (bad_libm || mw_run_write_script(p->libc, &go, dir, p->script, sizeof(p->script), save,
					    &p->gst) < 0)
		return -1;
	return 0;
}

void mw_run_prep_free(struct mw_run_prep *p)
{
	mw_elf_close(p->libm);
	mw_elf_close(p->libc);
	p->libm = p->libc = NULL;
}

/* Everything from the libc's probes to the reports, in the work
 * directory dir (trace_run.h). */
int mw_run_trace(const struct trace_opts *o, struct outputs *out,
		 const struct mw_target *t, const char *libc_path, const char *dir,
		 struct mw_glibc *g, json_t **report, pid_t *detaching)
{
	pid_t attached = mw_procset_first(&o->procs);	/* -p's process; 0: -c */
	char err[PATH_MAX + 512];
	struct mw_run_prep p;
	struct sink k = { .save = out->stream, .attach_pid = attached, .g = g,
			  .progress = o->progress > 0, .read_timeout_ms = o->read_timeout_ms };
	struct mw_trace_result r;
	struct mw_consumer c;
	struct mw_procset ps = o->procs;	/* -c's program, or -p's process */
	int status = MW_EXIT_RUNTIME;

	ps.cmd = t;

	if (mw_run_prepare(o, libc_path, dir, NULL, 0, out->script, &p) < 0)
		goto cleanup;
	mw_sink_start(&k, o, p.libc, libc_path, p.libm, p.libm_path, &p.gst, p.env.rt);
	if (attached) {	/* not ptraced: its execs watched, from before arming */
		k.xw = mw_images_watch_new(k.save);
		mw_images_watch_add(k.xw, k.pr, attached, libc_path);
	}
	if (o->stacks && p.env.rt == MW_RT_KERNEL) {
		/* the script's ubacktrace(): the module gets their unwind data */
		p.env.ustack = 1;
		/* an absolute path: stap runs in the run's directory, and -d
		 * with a relative path that does not resolve there gave the
		 * module no unwind data for the program, silently (-w) */
		if (t && !realpath(t->interp[0] ? t->interp : t->path, p.env.unwind))
			snprintf(p.env.unwind, sizeof(p.env.unwind), "%s",
				 t->interp[0] ? t->interp : t->path);
		else if (!t)
			snprintf(p.env.unwind, sizeof(p.env.unwind), "/proc/%d/exe", (int)attached);
		k.stacks = mw_stacks_new_script(libc_path);
	} else if (o->stacks && !(k.stacks = mw_stacks_start(libc_path, err, sizeof(err)))) {
		mw_error("--stacks: %s", err);
		goto cleanup;
	}
	if (k.stacks && attached)
		mw_stacks_watch(k.stacks, attached);
	if (mw_signal_pending()) {
		r = (struct mw_trace_result){ .interrupted = mw_signal_take() };
		snprintf(err, sizeof(err), "interrupted by signal %d (%s) before tracing started",
			 r.interrupted, strsignal(r.interrupted));
	} else if (mw_trace_run(&(struct mw_tracer_opts){ .env = &p.env, .script = p.script,
				.workdir = dir, .procs = &ps,
				.verbose = o->verbose, .duration_ms = o->duration_ms, .flush = 1,
				.sample_ms = o->interval_ms ?
				o->interval_ms : attached ? 1000 : 100,
				.sample_pct_max = o->interval_ms ? 0 : 1 },
				mw_sink_consumer(&k, &c, t != NULL, mw_run_samples_wanted(o)), &r,
				err, sizeof(err)) == 0) {
		mw_stacks_stop(k.stacks);
		if (k.stacks && r.pid > 0)
			mw_stacks_only(k.stacks, r.pid);
		if (r.detaching)
			*detaching = r.detaching;
		status = mw_sink_report(o, out, &k, &r, p.libc, libc_path, &p.env, p.gst.sites,
				    report);
		goto cleanup;
	}
	mw_error("%s", err);
	if (r.interrupted)
		status = 128 + r.interrupted;
cleanup:
	if (k.have_proc)
		mw_proc_close(&k.proc);
	mw_stacks_free(k.stacks);
	mw_images_watch_free(k.xw);
	mw_procs_free(k.procs);	/* the model and the snapshots */
	mw_run_prep_free(&p);
	return status;
}
