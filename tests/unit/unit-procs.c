/* unit-procs.c - the routing of a run's records to its processes'
 * models (procs.h): prefixed records reach their process only, the
 * run's lines reach every process, garbage is counted, never fatal. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "procs.h"
#include "state.h"
#include "unit.h"
#include "view.h"

static uint64_t garbled(struct mw_state *st)
{
	uint64_t total, lost, g;
	int ended;

	mw_state_totals(st, &total, &lost, &g, &ended);
	return g;
}

/* pr's counters as serve gives them out (serve_probes.c): the view's of
 * its model and newest live reading, never lower than before; 1 when a
 * live reading has come. */
static int counters(struct mw_process *pr, uint64_t *c)
{
	mw_view_counters(pr->st, pr->have_live ? &pr->live : NULL, c);
	mw_process_keep_max(pr, c, MW_VK_COUNT);
	return pr->have_live;
}

/* serve --probes: an empty run, processes added and removed, live
 * readings (MW 1 live ... MW 1 live end) replace each other, counters
 * never go down, a live record of a process gone is not garbage. */
static void live_reading(void)
{
	struct mw_procs *p = mw_procs_new(NULL, 0);
	struct mw_process *pr;
	uint64_t c[MW_VK_COUNT];

	CHECK(p && mw_procs_count(p) == 0 && mw_procs_multi(p));
	CHECK(mw_procs_line(p, "P 0 memory_arena_new 2") == 0);
	CHECK(mw_procs_line(p, "@7 E 0 7 1 2") < 0);	/* not in the run, no model: counted nowhere */
	CHECK((pr = mw_procs_add(p, 7)) != NULL);
	CHECK(counters(pr, c) == 0 && c[MW_VK_arenas_created] == 0);
	CHECK(mw_procs_line(p, "@7 T 0 7 1000 139830511960064 135168") == 0);
	CHECK(mw_procs_line(p, "MW 1 live") == 0);
	CHECK(mw_procs_line(p, "@7 A 3 8 0:4096 0:3") == 0);
	CHECK(mw_procs_line(p, "@7 A 3 9 4096 2") == 0);
	CHECK(mw_procs_line(p, "@7 G 4096 8192 200704 200704 5 1") == 0);
	CHECK(mw_procs_line(p, "@7 S 135168 0 1 0 135168 1 2 0 0") == 0);
	CHECK(mw_procs_line(p, "@8 A 3 9 4096 2") == 0);	/* gone: ignored */
	CHECK(counters(pr, c) == 0);	/* not complete yet */
	CHECK(mw_procs_line(p, "MW 1 live end") == 0);
	CHECK(counters(pr, c) == 1);
	CHECK(c[MW_VK_arenas_created] == 1 && c[MW_VK_lock_waits] == 5 &&
	      c[MW_VK_heap_grows] == 5 && c[MW_VK_heap_shrinks] == 1 &&
	      c[MW_VK_sbrk_grown] == 135168 && c[MW_VK_sbrk_more] == 1);
	/* the next reading replaces it; a lower figure does not show */
	CHECK(mw_procs_line(p, "MW 1 live") == 0);
	CHECK(mw_procs_line(p, "@7 A 3 8 4096 4") == 0);
	CHECK(mw_procs_line(p, "@7 X 1") < 0);
	CHECK(mw_procs_line(p, "MW 1 live end") == 0);
	CHECK(counters(pr, c) == 1 && c[MW_VK_lock_waits] == 5 && c[MW_VK_heap_grows] == 5);
	CHECK(garbled(pr->st) == 1);
	CHECK(mw_procs_remove(p, 7) == 0 && mw_procs_count(p) == 0);
	CHECK(mw_procs_remove(p, 7) < 0);
	CHECK(mw_procs_line(p, "@7 E 0 7 1 2") < 0);	/* no model to count it in */
	mw_procs_free(p);
}

static size_t arenas(struct mw_state *st)
{
	size_t n;

	mw_state_finish(st);
	mw_state_arenas(st, &n);
	return n;
}

/* -f: a process's exec, its old image's totals emptied (@PID MW 1 exec
 * after its N counts): the old image's streamed records that come after
 * that line (stapbpf's perf buffer is another path than the drain's
 * output: t-fork-exec) are owed, dropped as they come (a freed heap's G
 * with them) and counted missing until then; the new image's count. */
static void late_after_exec(void)
{
	struct mw_procs *p = mw_procs_new(NULL, 0);
	struct mw_process *pr;
	uint64_t before;

	CHECK(p && mw_procs_line(p, "P 0 memory_arena_new 2") == 0);
	CHECK((pr = mw_procs_add(p, 7)) != NULL);
	CHECK(mw_procs_line(p, "MW 1 ready") == 0);
	CHECK(mw_procs_line(p, "@7 T 0 8 1000 139830511960064 135168") == 0);
	CHECK(mw_procs_line(p, "@7 N 0 8 2") == 0);
	CHECK(mw_procs_line(p, "@7 MW 1 exec") == 0);
	CHECK(mw_state_owed(pr->st) == 1 && mw_state_missing(pr->st) == 1);
	CHECK(mw_procs_line(p, "@7 G 4096 8192 200704 200704 5 1") == 0);
	CHECK(mw_procs_line(p, "@7 T 0 8 1100 139830646177792 135168") == 0);
	CHECK(mw_state_owed(pr->st) == 0 && mw_state_missing(pr->st) == 0);
	CHECK(mw_procs_line(p, "@7 T 0 9 2000 139830780395520 135168") == 0);
	CHECK(mw_procs_line(p, "@7 N 0 9 1") == 0);
	CHECK(mw_procs_line(p, "MW 1 end") == 0);
	CHECK(garbled(pr->st) == 0 && mw_state_missing(pr->st) == 0);
	CHECK(mw_state_execs(pr->st, &before) == 1 && before == 2);
	CHECK(arenas(pr->st) == 2);	/* main_arena and the new image's one */
	mw_procs_free(p);
}

int main(void)
{
	const int pids[] = { 100, 200 };
	struct mw_procs *p = mw_procs_new(pids, 2), *one = mw_procs_new(pids, 1);
	static const char *const garbage[] = {
		"@", "@0 E 0 1 2 3", "@300 E 0 300 1 2", "@-1 E 0 1", "@100", "@100 ",
		"@100 P 0 memory_arena_new 2", "@100 @200 E 0 1 2 3", "@99999999999 E 0 1 2",
		"E 0 100 139830511960064 135168", "@100 MW 1 ready", "@100 # pid 3",
		"@100E 0 1 2 3", "@1x0 E 0 1 2 3",
	};

	CHECK(p && one && mw_procs_multi(p) && !mw_procs_multi(one));
	CHECK(mw_procs_count(p) == 2 && mw_procs_pid(p, 1) == 200);
	CHECK(mw_procs_find(p, 200) == mw_procs_state(p, 1) && !mw_procs_find(p, 300));
	/* the run's lines reach both; a process's records its own model */
	CHECK(mw_procs_line(p, "P 0 memory_arena_new 2") == 0);
	CHECK(mw_procs_line(p, "MW 1 ready") == 0);
	CHECK(mw_procs_line(p, "@100 E 0 101 139830511960064 135168") == 0);
	CHECK(mw_procs_line(p, "@200 E 0 201 139830511960064 135168") == 0);
	CHECK(mw_procs_line(p, "@200 E 0 202 139830646177792 135168") == 0);
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++)
		CHECK(mw_procs_line(p, garbage[i]) < 0);
	CHECK(mw_procs_line(p, "MW 1 end") == 0);
	CHECK(garbled(mw_procs_state(p, 0)) == sizeof(garbage) / sizeof(garbage[0]));
	CHECK(garbled(mw_procs_state(p, 1)) == 0);
	/* main_arena (unknown address) plus the arenas each made */
	CHECK(arenas(mw_procs_state(p, 0)) == 2);
	CHECK(arenas(mw_procs_state(p, 1)) == 3);
	/* one process: version 1 lines as they are, a prefix is garbage */
	CHECK(mw_procs_line(one, "P 0 memory_arena_new 2") == 0);
	CHECK(mw_procs_line(one, "E 0 101 139830511960064 135168") == 0);
	CHECK(mw_procs_line(one, "@100 E 0 101 139830511960064 135168") < 0);
	mw_procs_free(p);
	mw_procs_free(one);
	mw_procs_free(NULL);
	live_reading();
	late_after_exec();
	printf("%s: %d failed\n", __FILE__, failed);
	return failed ? 1 : 0;
}
