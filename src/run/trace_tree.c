/* trace_tree.c - the texts of a run of several processes (-f's tree,
 * -p PID,PID,..., --cgroup): the tree's table, which processes are
 * summarized in full, and the totals; see trace_tree.h.  Moved out of
 * trace_multi.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "msg.h"
#include "procs.h"
#include "snapshot.h"
#include "trace_tree.h"
#include "units.h"

static json_int_t jlen(json_t *o, const char *key)
{
	return (json_int_t)json_array_size(json_object_get(o, key));
}

/* The command line of pr as one quoted string into buf. */
static const char *command_of(const struct mw_process *pr, char *buf, size_t len)
{
	char line[512], q[600];
	size_t n = 0;

	line[0] = '\0';
	for (char **a = pr->argv; a && *a && n < sizeof(line) - 1; a++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "", *a);
	if (!n)
		snprintf(line, sizeof(line), "%s", pr->comm[0] ? pr->comm : "?");
	snprintf(buf, len, "%s", mw_quote(line, q, sizeof(q)));
	if (pr->title)	/* the title it gave itself, beside it */
		snprintf(buf + strlen(buf), len - strlen(buf), "  (title '%s')",
			 mw_quote(pr->title, q, sizeof(q)));
	return buf;
}

/* The depth of process i in the tree (its parents' chain), at most 16. */
static int depth_of(const struct mw_procs *procs, size_t i)
{
	int d = 0;
	const struct mw_process *pr = mw_procs_process(procs, i);

	while (pr->parent && d < 16) {
		const struct mw_process *up = mw_procs_by_pid(procs, pr->parent);

		if (!up)
			break;
		pr = up;
		d++;
	}
	return d;
}

#define TREE_ROWS 50		/* rows of the tree table, at most */
#define TREE_SUMMARIES 10	/* processes summarized in full, at most */

/* Which processes the summaries after the tree are of: "the program
 * and the 9 of the other 24 processes that held the most at exit". */
static void summaries_text(FILE *f, const struct mw_procs *procs, size_t n)
{
	size_t shown = 0;

	for (size_t i = 1; i < n; i++)
		shown += mw_tree_summarized(procs, i, n);
	fprintf(f, "  summaries below: the program and the %zu of the other %zu processes that "
		"held the most at exit (arenas and mmapped chunks); the JSON report has every "
		"process's\n", shown, n - 1);
}

/* What a snapshot's allocator holds from the system: arenas and mmapped
 * chunks. */
static uint64_t held(const struct mw_snapshot *s)
{
	return s->system_bytes + s->mmapped_mem;
}

/* -f: is process i summarized in full?  All of a small tree; else the
 * program and the TREE_SUMMARIES - 1 that held the most at exit (arenas
 * and mmapped chunks). */
int mw_tree_summarized(const struct mw_procs *procs, size_t i, size_t n)
{
	const struct mw_snapshot *s = mw_procs_process(procs, i)->at_exit;
	size_t above = 0;

	if (n <= TREE_SUMMARIES || i == 0)
		return 1;
	if (!s)
		return 0;
	for (size_t j = 1; j < n; j++) {
		const struct mw_snapshot *o = mw_procs_process(procs, j)->at_exit;

		if (o && (held(o) > held(s) || (held(o) == held(s) && j < i)))
			above++;
	}
	return above < TREE_SUMMARIES - 1;
}

/* -f: the tree, a line per process: its pid, parent, how it ended, its
 * arenas, and its allocator at exit (system and in use bytes, mmapped
 * chunks included as in a snapshot's Total; free but retained). */
void mw_tree_text(FILE *f, const struct mw_procs *procs, json_t *const *reps, size_t n,
		  unsigned long set_failed, int summaries)
{
	fprintf(f, "mallocwatch: %zu process%s in the tree (-f)%s\n", n, n == 1 ? "" : "es",
		set_failed ? "; some could not be traced (see above)" : "");
	fprintf(f, "  %7s %7s %6s %6s %9s %9s %9s  %s\n", "PID", "PARENT", "EXIT", "ARENAS",
		"SYSTEM", "IN USE", "FREE", "COMMAND");
	for (size_t i = 0; i < n && i < TREE_ROWS; i++) {
		const struct mw_process *pr = mw_procs_process(procs, i);
		const struct mw_snapshot *s = pr->at_exit;
		char ex[16], sy[16], iu[16], fr[16], par[16], ar[24], cmd[700];

		if (pr->released_ns)	/* let go on request: its end is not ours */
			snprintf(ex, sizeof(ex), "rel");
		else if (!pr->have_status)
			snprintf(ex, sizeof(ex), "-");
		else if (WIFSIGNALED(pr->status))
			snprintf(ex, sizeof(ex), "sig %d", WTERMSIG(pr->status));
		else
			snprintf(ex, sizeof(ex), "%d", WEXITSTATUS(pr->status));
		snprintf(par, sizeof(par), pr->parent ? "%d" : "-", pr->parent);
		if (json_is_array(json_object_get(reps[i], "arenas")))
			snprintf(ar, sizeof(ar), "%" JSON_INTEGER_FORMAT, jlen(reps[i], "arenas"));
		else	/* refused: they mix its images (null) */
			snprintf(ar, sizeof(ar), "?");
		fprintf(f, "  %7d %7s %6s %6s %9s %9s %9s  %*s%s\n", pr->pid, par, ex, ar,
			s ? mw_human_bytes(s->system_bytes + s->mmapped_mem, sy, sizeof(sy)) : "-",
			s ? mw_human_bytes(s->in_use_bytes + s->mmapped_mem, iu, sizeof(iu)) : "-",
			s ? mw_human_bytes(s->free_bytes, fr, sizeof(fr)) : "-", 2 * depth_of(procs, i),
			"", command_of(pr, cmd, sizeof(cmd)));
	}
	if (n > TREE_ROWS)
		fprintf(f, "  ... and %zu more (the JSON report has every process)\n",
			n - TREE_ROWS);
	fprintf(f, "  (read at each process's exit; SYSTEM and IN USE: arenas and mmapped "
		"chunks, FREE: free but retained by the arenas)\n");
	for (size_t i = 0; i < n; i++)
		if (mw_procs_process(procs, i)->released_ns) {
			fprintf(f, "  (EXIT rel: released by request, mallocwatch release; no exit "
				"snapshot, its later forks and execs not followed)\n");
			break;
		}
	if (summaries && n > TREE_SUMMARIES)
		summaries_text(f, procs, n);
}
