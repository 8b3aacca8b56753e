/* unit-procset.c - the process set a run is about (src/tracer/procset.c),
 * as the selection options make it (src/commands/procsel.c,
 * mw_procsel_set), and what the tracer's loop asks of it, as a table:
 * each row a selection (-p's pids, --cgroup, --all, -f; none: -c) or a
 * -c set with --repeat's runs, and the kind, first process and answers
 * the loop must get (the ones its mode flags gave before: started
 * program, ptraced, polled for joiners, a set that changes). */
#include <string.h>
#include <sys/types.h>

#include "procsel.h"
#include "procset.h"
#include "unit.h"

struct row {
	const char *what;
	pid_t pids[3];
	size_t npids;
	const char *cgroup;
	int all, follow, runs;
	enum mw_procset_kind kind;
	pid_t first;
	int starts, ptraced, polled, changes;
};

static const struct row rows[] = {
	{ "-c", { 0 }, 0, NULL, 0, 0, 0, MW_PROCS_COMMAND, 0, 1, 1, 0, 0 },
	{ "-c -f", { 0 }, 0, NULL, 0, 1, 0, MW_PROCS_COMMAND, 0, 1, 1, 0, 1 },
	{ "-c --repeat 1", { 0 }, 0, NULL, 0, 0, 1, MW_PROCS_COMMAND, 0, 1, 1, 0, 0 },
	{ "-c --repeat 3", { 0 }, 0, NULL, 0, 0, 3, MW_PROCS_COMMAND, 0, 1, 1, 0, 1 },
	{ "-p 5", { 5 }, 1, NULL, 0, 0, 0, MW_PROCS_PIDS, 5, 0, 0, 0, 0 },
	{ "-p 5,6,7", { 5, 6, 7 }, 3, NULL, 0, 0, 0, MW_PROCS_PIDS, 5, 0, 0, 0, 0 },
	{ "-p 5 -f", { 5 }, 1, NULL, 0, 1, 0, MW_PROCS_PIDS, 5, 0, 1, 0, 1 },
	{ "--cgroup", { 8, 9 }, 2, "/sys/fs/cgroup/x", 0, 0, 0, MW_PROCS_CGROUP, 8, 0, 0, 1, 1 },
	{ "--cgroup -f", { 8 }, 1, "/sys/fs/cgroup/x", 0, 1, 0, MW_PROCS_CGROUP, 8, 0, 1, 1,
	  1 },
	{ "--all", { 4 }, 1, NULL, 1, 0, 0, MW_PROCS_LISTED, 4, 0, 0, 1, 1 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		struct mw_procsel sel = { .cgroup = w->cgroup, .all = w->all, .follow = w->follow,
					  .ncgroups = w->cgroup != NULL };
		struct mw_pidlist l = { .pids = (pid_t *)w->pids, .n = w->npids };
		struct mw_procset s;

		if (!w->cgroup && !w->all)	/* -p's, as given */
			sel.pids = l;
		mw_procsel_set(&sel, &l, &s);
		s.runs = w->runs;	/* the run stage's, for -c */
		CHECK(s.kind == w->kind, "%s: kind %d, not %d", w->what, s.kind, w->kind);
		CHECK(s.npid == w->npids && (!s.npid || s.pid == l.pids), "%s: its pids",
		      w->what);
		CHECK(s.follow == w->follow, "%s: follow", w->what);
		CHECK(s.cgroup == w->cgroup, "%s: the cgroup", w->what);
		CHECK(mw_procset_first(&s) == w->first, "%s: first %d", w->what,
		      (int)mw_procset_first(&s));
		CHECK(mw_procset_starts(&s) == w->starts, "%s: starts", w->what);
		CHECK(mw_procset_ptraced(&s) == w->ptraced, "%s: ptraced", w->what);
		CHECK(mw_procset_polled(&s) == w->polled, "%s: polled", w->what);
		CHECK(mw_procset_changes(&s) == w->changes, "%s: changes", w->what);
	}
	printf("%zu process sets\n", sizeof(rows) / sizeof(rows[0]));
	return failed ? 1 : 0;
}
