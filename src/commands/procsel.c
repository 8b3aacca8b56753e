/* procsel.c - the process-selection options every command that takes
 * processes shares (procsel.h): -p/--pid, --cgroup, --all,
 * -f/--follow-forks, --no-stop, parsed and checked here alone.
 *
 *	mallocwatch explain --all
 *	mallocwatch: explain does not take --all: it takes -p PID[,PID...] or --cgroup DIR
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "msg.h"
#include "procsel.h"
#include "snapshot.h"
#include "xalloc.h"

int mw_procsel_option(struct mw_procsel *sel, int c, const char *arg)
{
	char err[256];

	switch (c) {
	case 'p':
		if (mw_pidlist_parse(&sel->pids, arg, err, sizeof(err)) < 0)
			mw_usage_error("%s", err);
		return 1;
	case MW_OPT_SEL_CGROUP:
		sel->cgroup = arg;
		sel->ncgroups++;
		return 1;
	case MW_OPT_SEL_ALL: sel->all = 1; return 1;
	case 'f': sel->follow = 1; return 1;
	case MW_OPT_SEL_NO_STOP: sel->no_stop = 1; return 1;
	default: return 0;
	}
}

int mw_procsel_given(const struct mw_procsel *sel)
{
	return sel->pids.n > 0 || sel->cgroup || sel->all;
}

/* What can names: "-p PID[,PID...], --cgroup DIR and --all" (last: the
 * word before the last one). */
static const char *takes(unsigned can, const char *last)
{
	static char s[128];

	snprintf(s, sizeof(s), "-p PID[,PID...]%s%s%s%s",
		 can & MW_SEL_ALL ? ", " : can & MW_SEL_CGROUP ? last : "",
		 can & MW_SEL_CGROUP ? "--cgroup DIR" : "",
		 can & MW_SEL_ALL ? last : "", can & MW_SEL_ALL ? "--all" : "");
	return s;
}

void mw_procsel_check(const struct mw_procsel *sel, const char *cmd, unsigned can)
{
	int given = (sel->pids.n > 0) + !!sel->cgroup + sel->all;

	if (sel->all && !(can & MW_SEL_ALL))
		mw_usage_error("%s does not take --all: it takes %s", cmd, takes(can, " or "));
	if (sel->cgroup && !(can & MW_SEL_CGROUP))
		mw_usage_error("%s does not take --cgroup: it takes %s", cmd, takes(can, " or "));
	if (sel->follow && !(can & MW_SEL_FOLLOW))
		mw_usage_error("%s does not take -f (--follow-forks): it takes the processes "
			       "there are now, and follows none", cmd);
	if (sel->no_stop && !(can & MW_SEL_NO_STOP))
		mw_usage_error("%s does not take --no-stop", cmd);
	if (sel->ncgroups > 1)
		mw_usage_error("--cgroup takes one directory");
	if (given > 1 || (!given && (can & MW_SEL_NEEDED)))
		mw_usage_error("%s takes one of %s", cmd, takes(can, " and "));
	if (sel->no_stop)
		mw_snapshot_no_stop(1);
}

void mw_procsel_pids(const struct mw_procsel *sel, struct mw_pidlist *l)
{
	char err[PATH_MAX + 256];
	size_t before = l->n;

	for (size_t i = 0; i < sel->pids.n; i++) {
		XGROW(l->pids, l->n, l->cap);
		l->pids[l->n++] = sel->pids.pids[i];
	}
	if (!sel->cgroup)
		return;
	if (mw_pidlist_cgroup(l, sel->cgroup, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (l->n == before)
		mw_die(MW_EXIT_RUNTIME, "no process in cgroup '%s'", sel->cgroup);
}

void mw_procsel_set(const struct mw_procsel *sel, const struct mw_pidlist *l,
		    struct mw_procset *s)
{
	*s = (struct mw_procset){ .kind = sel->cgroup ? MW_PROCS_CGROUP : sel->all ?
				  MW_PROCS_LISTED : mw_procsel_given(sel) ? MW_PROCS_PIDS :
				  MW_PROCS_COMMAND, .pid = l->pids, .npid = l->n,
				  .cgroup = sel->cgroup, .follow = sel->follow };
}

void mw_procsel_free(struct mw_procsel *sel)
{
	mw_pidlist_free(&sel->pids);
}
