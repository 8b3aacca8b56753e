/* serve_probes.c - one tracer session for `mallocwatch serve --probes`;
 * see serve_probes.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leftovers.h"
#include "mapped.h"
#include "msg.h"
#include "procs.h"
#include "protocol.h"
#include "serve_probes.h"
#include "target.h"
#include "trace_run.h"
#include "tracer.h"
#include "view.h"
#include "xalloc.h"

#define LIVE_MS 1000		/* the aggregates read this often */
#define LIBCS_KNOWN 64		/* libc files looked at, kept */

/* A libc file (device, inode) looked at, and whether it has probes. */
struct libc_seen {
	unsigned dev_major, dev_minor;
	uint64_t ino;
	int probes;
};

struct mw_serve_probes {
	pthread_t th;
	pthread_mutex_t mu;	/* procs, tracing */
	int stop_r, stop_w;	/* the stop: a byte on the pipe */
	mw_serve_list_fn list;
	void *lctx;
	int verbose;
	struct mw_procs *procs;	/* the traced processes' models */
	int tracing;
	struct mw_mapped libc;	/* the file traced */
	char libc_path[PATH_MAX];
	struct libc_seen seen[LIBCS_KNOWN];
	size_t nseen;
	unsigned long garbled_warned;
};

static int same_file(const struct mw_mapped *a, const struct mw_mapped *b)
{
	return a->ino == b->ino && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

/* Does the libc file pid maps carry probes?  The answer kept per file;
 * 1 (with its path in sp->libc_path, the mapping in sp->libc) or 0. */
static int probed_libc(struct mw_serve_probes *sp, pid_t pid)
{
	char err[PATH_MAX + 512], path[PATH_MAX];
	struct mw_mapped m;
	size_t i;
	int probes;

	if (mw_mapped_find(pid, MW_LIB_LIBC, &m, err, sizeof(err)) != 1)
		return 0;
	for (i = 0; i < sp->nseen; i++)
		if (sp->seen[i].ino == m.ino && sp->seen[i].dev_major == m.dev_major &&
		    sp->seen[i].dev_minor == m.dev_minor)
			break;
	if (i < sp->nseen && !sp->seen[i].probes)
		return 0;
	probes = mw_choose_libc(NULL, pid, path, sizeof(path), err, sizeof(err)) == 0 &&
		 mw_libc_has_probes(path) == 1;
	if (i == sp->nseen && sp->nseen < LIBCS_KNOWN)
		sp->seen[sp->nseen++] = (struct libc_seen){ .dev_major = m.dev_major,
			.dev_minor = m.dev_minor, .ino = m.ino, .probes = probes };
	if (!probes)
		return 0;
	sp->libc = m;
	snprintf(sp->libc_path, sizeof(sp->libc_path), "%s", path);
	return 1;
}

/* Wait (MW_SERVE_POLL_MS at a time) until a served process maps a libc
 * with probes.  1 found, 0 when the stop came first. */
static int find_libc(struct mw_serve_probes *sp)
{
	struct pollfd p = { .fd = sp->stop_r, .events = POLLIN };
	int said = 0;

	for (;;) {
		struct mw_pidlist l = { 0 };
		int found = 0;

		if (sp->list(sp->lctx, &l) == 0)
			for (size_t i = 0; i < l.n && !found; i++)
				found = probed_libc(sp, l.pids[i]);
		mw_pidlist_free(&l);
		if (found)
			return 1;
		if (!said++)
			mw_note("--probes: no served process maps a libc with SDT probes yet "
				"(Debian's own has none); probe counters start when one does");
		if (poll(&p, 1, MW_SERVE_POLL_MS) > 0)
			return 0;
	}
}

static int list_cb(void *ctx, struct mw_pidlist *l)
{
	struct mw_serve_probes *sp = ctx;

	return sp->list(sp->lctx, l);
}

/* A served process not seen before: traced when it maps the libc file
 * traced (one script probes one file). */
static int join_cb(void *ctx, pid_t pid)
{
	struct mw_serve_probes *sp = ctx;
	char err[PATH_MAX + 512];
	struct mw_mapped m;
	struct mw_process *pr;

	if (mw_mapped_find(pid, MW_LIB_LIBC, &m, err, sizeof(err)) != 1 ||
	    !same_file(&m, &sp->libc))
		return -1;
	pthread_mutex_lock(&sp->mu);
	pr = mw_procs_add(sp->procs, pid);
	pthread_mutex_unlock(&sp->mu);
	if (!pr)
		return -1;
	if (sp->verbose)
		mw_note("--probes: tracing process %d", (int)pid);
	return 0;
}

static void leave_cb(void *ctx, pid_t pid)
{
	struct mw_serve_probes *sp = ctx;

	pthread_mutex_lock(&sp->mu);
	mw_procs_remove(sp->procs, pid);
	pthread_mutex_unlock(&sp->mu);
	if (sp->verbose)
		mw_note("--probes: process %d no longer traced", (int)pid);
}

static void on_line(void *ctx, const char *line)
{
	struct mw_serve_probes *sp = ctx;
	int bad;

	pthread_mutex_lock(&sp->mu);
	if (!strcmp(line, MW_LINE_READY))
		sp->tracing = 1;
	bad = mw_procs_line(sp->procs, line) < 0;
	pthread_mutex_unlock(&sp->mu);
	if (!strcmp(line, MW_LINE_READY)) {
		char q[PATH_MAX];

		mw_note("--probes: tracing the processes that map %s",
			mw_quote(sp->libc_path, q, sizeof(q)));
	}
	if (bad && !sp->garbled_warned++) {
		char q[200];

		mw_warn("garbled tracer line ignored and counted: '%s'", mw_quote(line, q, sizeof(q)));
	}
}

/* The session in the work directory dir: script, tracer, until the stop.
 * The pid of the tracer left removing its uprobes, or 0. */
static pid_t session(struct mw_serve_probes *sp, const char *dir)
{
	pid_t self = getpid();	/* the script's target(), in no process's way */
	struct trace_opts o = { .runtime = MW_RT_AUTO, .verbose = sp->verbose,
				.procs = { .kind = MW_PROCS_LISTED, .pid = &self, .npid = 1 } };
	struct mw_run_prep p;
	struct mw_trace_result r;
	char err[PATH_MAX + 512];
	pid_t detaching = 0;

	if (mw_run_prepare(&o, sp->libc_path, dir, NULL, 0, NULL, &p) < 0) {
		mw_warn("--probes: no probe counters (see above)");
		goto cleanup;
	}
	if (mw_trace_run(&(struct mw_tracer_opts){ .env = &p.env, .script = p.script,
			 .workdir = dir, .procs = &o.procs, .verbose = sp->verbose,
			 .flush = 1, .stop_fd = sp->stop_r, .live_ms = LIVE_MS },
			 &(struct mw_consumer){ .ctx = sp, .line = on_line, .list = list_cb,
			 .join = join_cb, .leave = leave_cb }, &r, err, sizeof(err)) < 0)
		mw_warn("--probes: no probe counters: %s", err);
	else if (!r.stopped)
		mw_warn("--probes: the tracer ended (%s); no probe counters from now",
			r.tracer_msg[0] ? r.tracer_msg : "no message");
	else if (r.detaching)
		detaching = r.detaching;
cleanup:
	pthread_mutex_lock(&sp->mu);
	sp->tracing = 0;
	pthread_mutex_unlock(&sp->mu);
	mw_run_prep_free(&p);
	return detaching;
}

static void *run(void *arg)
{
	struct mw_serve_probes *sp = arg;
	char dir[PATH_MAX], err[PATH_MAX + 256], module[64];
	struct mw_sweep sw;
	pid_t detaching;

	if (!find_libc(sp))
		return NULL;
	mw_tracer_reap();
	mw_sweep(&sw, MW_SWEEP_RUN_MS);
	if (mw_workdir_make(dir, sizeof(dir), err, sizeof(err)) < 0) {
		mw_warn("--probes: no probe counters: %s", err);
		return NULL;
	}
	detaching = session(sp, dir);
	if (!detaching || mw_tracer_hand_off(detaching, dir,
					     mw_runtime_module(dir, module, sizeof(module))) < 0)
		mw_workdir_remove(dir);
	return NULL;
}

struct mw_serve_probes *mw_serve_probes_start(mw_serve_list_fn list, void *ctx, int verbose,
					      char *err, size_t errlen)
{
	struct mw_serve_probes *sp = xcalloc(1, sizeof(*sp));
	int fds[2], e;

	sp->list = list;
	sp->lctx = ctx;
	sp->verbose = verbose;
	if (!(sp->procs = mw_procs_new(NULL, 0)) || pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "--probes: %s", strerror(errno ? errno : ENOMEM));
		mw_procs_free(sp->procs);
		free(sp);
		return NULL;
	}
	sp->stop_r = fds[0];
	sp->stop_w = fds[1];
	pthread_mutex_init(&sp->mu, NULL);
	if ((e = pthread_create(&sp->th, NULL, run, sp)) != 0) {
		snprintf(err, errlen, "--probes: cannot start a thread: %s", strerror(e));
		close(fds[0]);
		close(fds[1]);
		mw_procs_free(sp->procs);
		free(sp);
		return NULL;
	}
	return sp;
}

int mw_serve_probes_of(struct mw_serve_probes *sp, pid_t pid, uint64_t *c)
{
	struct mw_process *pr;
	int have = 0;

	pthread_mutex_lock(&sp->mu);
	if ((pr = mw_procs_by_pid(sp->procs, (int)pid))) {
		mw_view_counters(pr->st, pr->have_live ? &pr->live : NULL, c);
		mw_process_keep_max(pr, c, MW_VK_COUNT);
		have = pr->have_live;
	}
	pthread_mutex_unlock(&sp->mu);
	return have;
}

int mw_serve_probes_tracing(struct mw_serve_probes *sp)
{
	int t;

	pthread_mutex_lock(&sp->mu);
	t = sp->tracing;
	pthread_mutex_unlock(&sp->mu);
	return t;
}

void mw_serve_probes_stop(struct mw_serve_probes *sp)
{
	ssize_t w;

	if (!sp)
		return;
	w = write(sp->stop_w, "s", 1);
	(void)w;
	pthread_join(sp->th, NULL);
	close(sp->stop_r);
	close(sp->stop_w);
	pthread_mutex_destroy(&sp->mu);
	mw_procs_free(sp->procs);
	free(sp);
}
