/* tracer_start.c - the tracer started (tracer_int.h): the run's script
 * compiled, or a session's module taken; then the tracer of a lingering
 * session joined or armed (linger.h), or our own child spawned (spawn.h).
 * Split out of tracer.c.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "leftovers.h"
#include "linger.h"
#include "msg.h"
#include "runtime.h"
#include "signals.h"
#include "spawn.h"
#include "tracer_int.h"
#include "tracer_proc.h"

/* The run's module name, and its script compiled (or a session's taken):
 * the object's path into bo.  0, or -1 with err (r->interrupted set when
 * a signal stopped the compile). */
int mw_tr_compile(struct run *rn, char *bo, size_t bolen, char *err, size_t errlen)
{
	const struct mw_tracer_opts *o = rn->o;
	int cached = 0;

	mw_runtime_module(o->workdir, rn->module, sizeof(rn->module));
	if (o->session) {	/* a session's tracer, armed: its module */
		rn->lg = o->session;
		snprintf(rn->module, sizeof(rn->module), "%s", rn->lg->module);
	} else {
		/* its FIFO directory, held against sweeps (runtime.h) */
		if (o->env->rt == MW_RT_BPF &&
		    mw_runtime_procfs_hold(rn->module, err, errlen) < 0)
			return -1;
		if (o->env->rt == MW_RT_BPF ?
		    mw_tracer_compile_bpf(o->env, o->script, o->workdir, rn->module, bo, bolen,
					  mw_procset_starts(o->procs), &cached, err, errlen) < 0 :
		    mw_tracer_compile_kernel(o->env, o->script, o->workdir, bo, bolen, &cached,
					     err, errlen) < 0) {
			rn->r->interrupted = mw_signal_take();
			return -1;
		}
		if (o->verbose)
			mw_note("%s %s%s", o->env->rt == MW_RT_BPF ? "bpf object" : "kernel module",
				bo, cached ? " (built before for this script and kernel)" : "");
	}
	/* Kernel runtime: a module loading while an earlier run's stapio
	 * still unloads its own has locked up both CPUs of the test guest
	 * (stap 4.8, Linux 6.1; docs/testing.md, "One emulated CPU"): wait for
	 * the tracers left detaching first (well under a second each). */
	if (o->env->rt == MW_RT_KERNEL && mw_wait_detaching() > 0 && o->verbose)
		mw_note("waited for an earlier run's tracer to unload its module");
	return 0;
}

/* The tracer: a joined session's; one that a session armed here starts
 * (--linger); else our own child.  0, or -1 with errno set. */
int mw_tr_start_tracer(struct run *rn, const char **argv)
{
	const struct mw_tracer_opts *o = rn->o;
	const char *preload = o->env->shim[0] ? o->env->shim : NULL;
	char why[PATH_MAX + 128], sites[PATH_MAX];
	const char *slash = strrchr(o->script, '/');

	/* the script's sites, for umulti-shim.so to arm while stapbpf loads
	 * its programs (gen.h, sites_out) */
	if (!o->env->umulti || !slash ||
	    snprintf(sites, sizeof(sites), "%.*s/" MW_GEN_SITES_FILE, (int)(slash - o->script),
		     o->script) >= (int)sizeof(sites) || faccessat(AT_FDCWD, sites, R_OK, AT_EACCESS) != 0)
		sites[0] = '\0';
	if (!rn->lg && o->linger_key && o->env->rt == MW_RT_BPF &&
	    !(rn->lg = mw_linger_arm(o->linger_key, o->linger_id, o->script, o->linger_ms,
				     o->workdir, rn->module, (char *const *)argv, preload,
				     sites[0] ? sites : NULL, why, sizeof(why))))
		mw_note("no lingering session: %s", why);
	if (rn->lg) {
		rn->tracer = rn->lg->tracer;
		rn->out_fd = rn->lg->out_fd;
		rn->err_fd = rn->lg->err_fd;
		rn->lg->out_fd = rn->lg->err_fd = -1;	/* the run's to close */
		/* joined: said always (the notes above were of a session of its
		 * own, which this run did not arm) */
		if (o->session)
			mw_note("joined a tracer session (tracer pid %d, lingers %ld s after a "
				"run) an earlier run armed: this run armed nothing",
				(int)rn->tracer, o->linger_ms / 1000);
		else if (o->verbose)
			mw_note("armed a tracer session (tracer pid %d, lingers %ld s after a run)",
				(int)rn->tracer, o->linger_ms / 1000);
		return 0;
	}
	rn->tracer = mw_tracer_spawn((char *const *)argv, o->workdir, preload,
				     sites[0] ? sites : NULL, &rn->out_fd, &rn->err_fd);
	return rn->tracer < 0 ? -1 : 0;
}
