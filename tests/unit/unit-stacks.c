/* unit-stacks.c - --stacks' records as tables, garbage included: the
 * script's Q records (kernel runtime, ubacktrace(); src/stacks/
 * stacks_save.c, mw_stacks_script_line) placed in this very process's
 * module map and symbolized (the functions below, by name), and the
 * saved stream's L, X and Z records (mw_stacks_save, mw_stacks_load_line)
 * written and read back to the same frames.  The kernel runtime never
 * ran here: this is what checks its parser. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probetab.h"
#include "stacks.h"
#include "unit.h"

static __attribute__((noinline)) void chain_leaf(void)
{
	__asm__ volatile("");
}

static __attribute__((noinline)) void chain_mid(void)
{
	chain_leaf();
	__asm__ volatile("");
}

/* A Q record of probe id in this process, the leaf's address then the
 * middle's start + 1 (a return address is looked up at pc - 1). */
static void q_line(char *buf, size_t len, int id)
{
	snprintf(buf, len, "Q %d %d %d 12345 139830511960112 135168 0 0x%" PRIxPTR " 0x%"
		 PRIxPTR, id, (int)getpid(), (int)getpid(), (uintptr_t)chain_leaf,
		 (uintptr_t)chain_mid + 1);
}

static void check_frames(struct mw_stacks *s, const char *what)
{
	const struct mw_stack_event *e;
	struct mw_frame f0, f1;

	CHECK(mw_stacks_count(s) == 1, "%s: %zu events, not 1", what, mw_stacks_count(s));
	if (mw_stacks_count(s) != 1)
		return;
	e = mw_stacks_event(s, 0);
	CHECK(e->probe == MW_P_memory_arena_new && e->pid == getpid() && e->npcs == 2 &&
	       e->args[0] == 139830511960112 && e->args[1] == 135168,
	       "%s: probe %d pid %d npcs %d", what, e->probe, (int)e->pid, e->npcs);
	mw_stacks_frame(s, e, 0, &f0);
	mw_stacks_frame(s, e, 1, &f1);
	CHECK(strcmp(f0.function, "chain_leaf") == 0 && strcmp(f1.function, "chain_mid") == 0,
	       "%s: frames '%s' '%s'", what, f0.function, f1.function);
	CHECK(strcmp(f0.module, "unit-stacks") == 0 && f0.build_id[0],
	       "%s: module '%s' build-id '%s'", what, f0.module, f0.build_id);
}

/* Garbled Q records: none is kept. */
static void q_garbage(struct mw_stacks *s)
{
	char ok[256], bad[256];
	const char *rows[] = {
		"Q", "Q 0 1 2", "Q 0 1 2 3 4 5 6", "Q x 1 2 3 4 5 6 0x1",
		"Q %d 0 1 2 3 4 5 0x1",		/* pid 0 */
		"Q %d -4 1 2 3 4 5 0x1",	/* a negative pid */
		"Q %d 1 1 2 3 4 5 zz",		/* not an address */
		"Q %d 1 1 2 3 4 5 0x",		/* no digits */
		"Q %d 1 1 2 3 4 5 0x12g4",	/* trailing garbage */
		"Q %d 1 1 2 3 4 5",		/* no stack */
		"Q %d 1 99999999999 2 3 4 5 0x1",	/* tid past 32 bits */
	};

	q_line(ok, sizeof(ok), MW_P_memory_arena_new);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(bad, sizeof(bad), rows[i], MW_P_memory_arena_new);
		CHECK(mw_stacks_script_line(s, bad) < 0, "garbage kept: '%s'", bad);
	}
	/* a probe that is never stacked, and one past the table */
	q_line(bad, sizeof(bad), MW_P_memory_heap_more);
	CHECK(mw_stacks_script_line(s, bad) < 0, "a hot probe's Q kept");
	q_line(bad, sizeof(bad), MW_P_COUNT + 5);
	CHECK(mw_stacks_script_line(s, bad) < 0, "an unknown probe's Q kept");
	CHECK(mw_stacks_count(s) == 0, "%zu garbled Q records kept", mw_stacks_count(s));
	CHECK(mw_stacks_script_line(s, ok) == 0, "a good Q line refused: '%s'", ok);
}

/* The saved records, and garbage in them. */
static void saved(struct mw_stacks *live)
{
	static const char *const bad[] = {
		"L 1 0 10 5 0 - /x",		/* end before start */
		"L 1 0 5 10 0 zz /x",		/* a build-id not hex */
		"L 1 0 5 10 0 - x",		/* a relative path */
		"L 1 99999 5 10 0 - /x",	/* an image past the bound */
		"L 0 0 5 10 0 - /x",		/* pid 0 */
		"X memory_heap_less 1 1 0 5 3 1 2 3 4",	/* never stacked (heap_more
							 * is: sampled) */
		"X memory_arena_new 1 1 0 5 9 1 2 3 4",	/* KNOWN past 3 bits */
		"X memory_arena_new 1 1 0 5 3 1 2 3",	/* no frame */
		"X memory_arena_new 1 1 -2 5 3 1 2 3 4",	/* image -2 */
		"X nonesuch 1 1 0 5 3 1 2 3 4",
		"Z 1 2 3",
		"Z 1 2 3 4 5 6 7 8 2000000",	/* a heap_more period past 1000000 */
		"Z 1 2 3 4 5 6 7 8 64 9",	/* a field too many */
		"L", "X", "Z",
	};
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct mw_stacks *s = NULL;

	CHECK(f && mw_stacks_save(live, f) == 0, "cannot save");
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		CHECK(mw_stacks_record(line) && mw_stacks_load_line(&s, line, NULL) == 0,
		       "a saved record refused: '%s'", line);
	if (s)
		check_frames(s, "saved and read back");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(mw_stacks_load_line(&s, bad[i], NULL) < 0, "garbage kept: '%s'", bad[i]);
	CHECK(!s || mw_stacks_count(s) == 1, "garbled X records kept");
	mw_stacks_free(s);
	free(text);
}

int main(void)
{
	struct mw_stacks *s = mw_stacks_new_script("/nonexistent/libc.so.6");

	chain_mid();
	mw_stacks_watch(s, getpid());
	q_garbage(s);
	check_frames(s, "Q record");
	saved(s);
	mw_stacks_free(s);
	if (!failed)
		printf("PASS\n");
	return failed ? 1 : 0;
}
