/* tracer_set.c - the set of processes a tracer session takes hits of,
 * while it runs (tracer_int.h): -f's new processes are added by tracer.c
 * at their fork stop and --repeat's runs at their start; here
 * --cgroup's joiners and serve's processes come and go, and -f's
 * processes leave it when `mallocwatch release` asks (release.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "msg.h"
#include "proclist.h"
#include "protocol.h"
#include "release.h"
#include "tracer_int.h"
#include "xalloc.h"

/* -f, --cgroup: the tracer's set of processes, once its maps exist. */
void mw_tr_open_set(struct run *rn)
{
	const struct mw_procset *ps = rn->o->procs;
	char err[256];

	if (!mw_procset_changes(ps) && !rn->lg && !rn->o->env->untargeted)
		return;
	if (!(rn->pids = mw_pidset_open(rn->o->env->rt, rn->tracer, rn->module, err,
					sizeof(err)))) {
		rn->pids_failed = 1;
		mw_warn("%s; %s will not be traced", err, rn->o->env->untargeted ?
			"no process" : ps->follow ? "processes that the program creates" :
			ps->kind == MW_PROCS_LISTED ? "processes that appear" :
			ps->kind == MW_PROCS_CGROUP ?
			"processes that join the cgroup" : "--repeat runs after the first");
	}
}

/* A session with no target (runtime.h, untargeted): the -c program, or
 * -p's processes, join its empty set at the ready line, before the
 * program is released and before the readings at attach. */
void mw_tr_set_start(struct run *rn)
{
	const struct mw_procset *ps = rn->o->procs;

	if (ps->kind == MW_PROCS_LISTED)	/* serve: each one as it is listed */
		return;
	mw_tr_set_add(rn, rn->prog);
	for (size_t i = 1; i < ps->npid; i++)	/* -p's others */
		mw_tr_set_add(rn, ps->pid[i]);
}

/* Take pid's hits from now (pidset.h); counted when it cannot be. */
void mw_tr_set_add(struct run *rn, pid_t pid)
{
	if (rn->pids && mw_pidset_add(rn->pids, pid) == 0) {
		rn->set_added++;
		return;
	}
	if (!rn->r->set_failed++ && rn->pids && errno == E2BIG)	/* a full BPF hash map */
		mw_warn("cannot add process %d to the tracer's set: it is full (%d processes "
			"at once)", (int)pid, MW_MAP_PIDS);
	else if (rn->r->set_failed == 1 && rn->pids)
		mw_warn("cannot add process %d to the tracer's set: %s", (int)pid,
			strerror(errno));
}

static int pid_in(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

void mw_tr_pid_push(pid_t **v, size_t *n, size_t *cap, pid_t pid)
{
	XGROW(*v, *n, *cap);
	(*v)[(*n)++] = pid;
}

static void pid_drop(pid_t *v, size_t *n, size_t i)
{
	v[i] = v[--*n];
}

/* serve: the processes that joined and are no longer listed (l) leave
 * the set; those seen and no longer listed are forgotten, so that a
 * process that gets the pid later is looked at anew. */
static void serve_gone(struct run *rn, const struct mw_pidlist *l)
{
	for (size_t i = 0; i < rn->nwatch;) {
		pid_t pid = rn->watch[i];

		if (pid_in(l->pids, l->n, pid)) {
			i++;
			continue;
		}
		if (rn->pids)
			mw_pidset_del(rn->pids, pid);
		rn->c->leave(rn->c->ctx, pid);
		pid_drop(rn->watch, &rn->nwatch, i);
	}
	for (size_t i = 0; i < rn->nknown;)
		if (pid_in(l->pids, l->n, rn->known[i]))
			i++;
		else
			pid_drop(rn->known, &rn->nknown, i);
}

/* --cgroup (serve: the consumer's list()): the processes in it now that
 * were not there before; each that join() accepts is traced from now,
 * and watched for its end. */
void mw_tr_cgroup_look(struct run *rn)
{
	const struct mw_procset *ps = rn->o->procs;
	int serve = ps->kind == MW_PROCS_LISTED;
	struct mw_pidlist l = { 0 };
	char err[PATH_MAX + 128];
	int listed;

	if (!mw_procset_polled(ps) || !rn->r->ready || rn->stopping || rn->flushing ||
	    mw_now_ms() < rn->next_cgroup)
		return;
	rn->next_cgroup = mw_now_ms() + (serve ? MW_SERVE_POLL_MS : MW_CGROUP_POLL_MS);
	listed = serve ? rn->c->list(rn->c->ctx, &l) :
		 mw_pidlist_cgroup(&l, ps->cgroup, err, sizeof(err));
	if (listed == 0 && serve)
		serve_gone(rn, &l);
	if (listed == 0) {
		for (size_t i = 0; i < l.n; i++) {
			pid_t pid = l.pids[i];

			if (pid_in(rn->known, rn->nknown, pid))
				continue;
			mw_tr_pid_push(&rn->known, &rn->nknown, &rn->capknown, pid);
			if (rn->pids && rn->c->join(rn->c->ctx, pid) == 0) {
				mw_tr_set_add(rn, pid);
				mw_tr_pid_push(&rn->watch, &rn->nwatch, &rn->capwatch, pid);
			}
		}
	}
	mw_pidlist_free(&l);
}

/* -f: why process pid cannot be let go now, or NULL.  *again: it can be
 * in a moment. */
static const char *release_refused(struct run *rn, pid_t pid, int *again, char *why,
				   size_t len)
{
	*again = 0;
	if (pid == rn->prog) {
		snprintf(why, len, "process %d is the run's %s: its end is the run's (^C or "
			 "SIGTERM lets go of every process)", (int)pid,
			 mw_procset_starts(rn->o->procs) ? "program" : "process (-p)");
		return why;
	}
	if (!rn->r->ready || rn->stopping || rn->flushing || rn->tree_over) {
		*again = !rn->r->ready;
		snprintf(why, len, "the run is %s", rn->r->ready ? "ending" : "starting");
		return why;
	}
	return NULL;
}

/* A request of `mallocwatch release` (release.h) on connection c: the
 * process let go (ptrace_tree.h), out of the tracer's set, the caller
 * told (its consumer's on_released), and the answer. */
static void release_one(void *ctx, int c, pid_t pid)
{
	struct run *rn = ctx;
	char why[256];
	int again;

	if (release_refused(rn, pid, &again, why, sizeof(why)) ||
	    mw_ptree_let_go(rn->pt, pid, &again, why, sizeof(why)) < 0) {
		mw_release_answer(c, again ? "again" : "no", why);
		return;
	}
	if (rn->pids)
		mw_pidset_del(rn->pids, pid);
	if (rn->c->on_released)
		rn->c->on_released(rn->c->ctx, pid);
	mw_note("process %d released by request (mallocwatch release): its later forks and "
		"execs are not followed, and it has no exit snapshot", (int)pid);
	if (!mw_ptree_live(rn->pt))	/* the last one: the run ends */
		rn->tree_over = 1;
	mw_release_answer(c, "ok", NULL);
}

void mw_tr_release_serve(struct run *rn)
{
	char why[512];

	if (!rn->rel && !rn->rel_tried && rn->o->procs->follow && rn->pt) {
		rn->rel_tried = 1;	/* said once */
		if (!(rn->rel = mw_release_listen(why, sizeof(why))))
			mw_warn("`mallocwatch release` cannot reach this run: %s", why);
	}
	mw_release_step(rn->rel, release_one, rn);
}
