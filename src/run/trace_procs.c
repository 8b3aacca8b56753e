/* trace_procs.c - the trace command's processes (trace_runs.h,
 * mw_trace_procs), asked what they are (procset.h): -c's program
 * resolved (target.h) and run; -p's process traced from a snapshot, or
 * read by snapshots alone when its libc has no probes; several processes
 * (-p A,B, --cgroup, -p -f) checked to map one libc file and traced in
 * one run.  Moved out of cmd_trace.c, which keeps the options.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "glibcinfo.h"
#include "mapped.h"
#include "msg.h"
#include "procset.h"
#include "runtime.h"
#include "target.h"
#include "trace_multi.h"
#include "trace_run.h"
#include "trace_runs.h"
#include "trace_snaps.h"
#include "xalloc.h"

/* -p PID,PID,...: every process must map the same libc file (one script
 * probes it); their layouts for snapshots, when their libc has debug
 * symbols.  Then one run of them all (trace_multi.h). */
static int attach_many(struct trace_opts *o)
{
	char err[PATH_MAX + 512], libc[PATH_MAX], q[PATH_MAX];
	struct mw_attach_set set = { .n = o->procs.npid, .pid = o->procs.pid };
	struct mw_mapped first, m;
	json_t *report = NULL;
	int status;

	set.g = xcalloc(set.n, sizeof(*set.g));
	set.have_g = xcalloc(set.n, sizeof(*set.have_g));
	for (size_t i = 0; i < set.n; i++) {
		int r = mw_mapped_find(set.pid[i], MW_LIB_LIBC, i ? &m : &first, err, sizeof(err));

		if (r == 0 && !err[0])
			mw_die(MW_EXIT_RUNTIME, "process %d maps no libc", (int)set.pid[i]);
		if (r <= 0)
			mw_die(MW_EXIT_RUNTIME, "%s", err);
		if (i && (m.ino != first.ino || m.dev_major != first.dev_major ||
			  m.dev_minor != first.dev_minor))
			mw_die(MW_EXIT_RUNTIME, "processes %d and %d map different libc files ('%s' "
			       "and another): one run probes one libc; trace them in separate runs",
			       (int)set.pid[0], (int)set.pid[i], mw_quote(first.name, q, sizeof(q)));
		set.have_g[i] = mw_glibc_load(set.pid[i], &set.g[i], err, sizeof(err)) == 0;
		if (!set.have_g[i])
			mw_warn("process %d: %s; no snapshots of it at attach and at the end",
				(int)set.pid[i], err);
	}
	if (mw_choose_libc(o->libc, set.pid[0], libc, sizeof(libc), err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (mw_libc_has_probes(libc) != 1)
		mw_die(MW_EXIT_RUNTIME, "'%s' has no SDT probes to trace; 'mallocwatch snapshot -p "
		       "PID,PID,...' reads the processes' allocators without them",
		       mw_quote(libc, q, sizeof(q)));
	if (o->save_stream || o->interval_ms)
		mw_die(MW_EXIT_USAGE, "--save-stream and --interval take one process (-p PID); "
		       "not yet several");
	o->set = &set;
	status = mw_trace_in_workdir(o, NULL, libc, NULL, o->nrules ? &report : NULL, NULL);
	if (report)
		status = mw_trace_judge_each(o, &report, 1, status);
	json_decref(report);
	o->set = NULL;
	free(set.g);
	free(set.have_g);
	return status;
}

/* -p PID: trace from a snapshot; or, when its libc has no SDT probes,
 * report from snapshots alone.  Either report is judged by --check. */
static int attach(const struct trace_opts *o)
{
	char err[PATH_MAX + 512], libc[PATH_MAX];
	pid_t pid = mw_procset_first(&o->procs);
	json_t *report = NULL;
	struct mw_glibc g;
	int have_g, probes, status;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		mw_die(MW_EXIT_RUNTIME, "no process %d", (int)pid);
	if (mw_choose_libc(o->libc, pid, libc, sizeof(libc), err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	have_g = mw_glibc_load(pid, &g, err, sizeof(err)) == 0;
	probes = mw_libc_has_probes(libc);
	if (probes != 1) {
		/* the page draws a traced run: refused before any file is made */
		if (o->html)
			mw_die(MW_EXIT_USAGE, "'%s' has no SDT probes: -p reports from snapshots "
			       "alone, which --html does not draw; leave --html out", libc);
		if (!have_g)
			mw_die(MW_EXIT_RUNTIME, "'%s' has no SDT probes to trace, and snapshots "
			       "cannot be taken either: %s", libc, err);
		status = mw_snapshots_only(o, libc, &g, o->nrules ? &report : NULL);
	} else {
		if (!have_g)
			mw_warn("%s; no snapshots at attach and at the end: arenas made before "
				"tracing are not shown", err);
		status = mw_trace_in_workdir(o, NULL, libc, have_g ? &g : NULL,
					     o->nrules ? &report : NULL, NULL);
	}
	status = mw_trace_judge(o, &report, report ? 1 : 0, status);
	json_decref(report);
	return status;
}

/* -c: the program, how it is started (target.h), said in a note; then
 * its runs. */
static int run_command(const struct trace_opts *o)
{
	struct mw_target t;
	char err[PATH_MAX + 256];
	int status;

	if (mw_target_resolve((const char *const *)o->cmd, o->libc,
			      mw_runtime_pick(o->runtime) == MW_RT_KERNEL, &t, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (t.ns || t.loader[0]) {
		char q[256];

		if (t.ns)
			mw_note("running '%s' and what it starts under the probe-enabled glibc "
				"(%s, mounted over the system's in a mount namespace of their own)",
				mw_quote(o->cmd[0], q, sizeof(q)), t.libc);
		else
			mw_note("running '%s'%s%s%s under the probe-enabled glibc (%s)%s%s",
				mw_quote(o->cmd[0], q, sizeof(q)), t.interp[0] ? " (a script: "
				"its interpreter " : "", t.interp, t.interp[0] ? ")" : "", t.loader,
				t.ns_why[0] ? "; programs it starts run on the system libc, "
				"untraced: " : "", t.ns_why);
	}
	status = mw_trace_program(o, &t);
	mw_target_free(&t);
	return status;
}

int mw_trace_procs(struct trace_opts *o)
{
	if (o->procs.kind == MW_PROCS_CGROUP ||
	    (o->procs.kind == MW_PROCS_PIDS && (o->procs.npid > 1 || o->procs.follow)))
		return attach_many(o);
	if (o->procs.kind == MW_PROCS_PIDS)
		return attach(o);
	return run_command(o);
}
