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

static json_int_t jnum(json_t *o, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* The totals over every process's report; arenas and heaps null when a
 * process's are unknown (its "unknown", docs/json.md), with how many. */
json_t *mw_tree_totals(json_t *const *reps, size_t n)
{
	json_int_t arenas = 0, heaps = 0, threads = 0, events = 0, lost = 0, net = 0,
		   retries = 0, unknown = 0;
	json_t *t;

	for (size_t i = 0; i < n; i++) {
		unknown += json_is_object(json_object_get(reps[i], "unknown"));
		arenas += jlen(reps[i], "arenas");
		heaps += jlen(reps[i], "heaps");
		threads += jlen(reps[i], "threads");
		retries += jlen(reps[i], "retries");
		events += jnum(reps[i], "events", "total");
		lost += jnum(reps[i], "events", "lost");
		net += jnum(reps[i], "sbrk", "net");
	}
	t = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "processes", (json_int_t)n,
		      "arenas", arenas, "heaps", heaps, "threads", threads, "events", events,
		      "lost", lost, "sbrk_net", net, "retries", retries);
	if (t && unknown) {	/* not a sum of what is known */
		json_object_set_new(t, "arenas", json_null());
		json_object_set_new(t, "heaps", json_null());
		json_object_set_new(t, "unknown_processes", json_integer(unknown));
	}
	return t;
}

static json_int_t ji(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* "" for one of key, "s" for any other count: "1 thread", "2 threads" */
static const char *s1(json_t *t, const char *key)
{
	return ji(t, key) == 1 ? "" : "s";
}

void mw_tree_totals_text(FILE *f, json_t *t)
{
	char a[32];
	json_int_t net = ji(t, "sbrk_net");

	fprintf(f, "\nmallocwatch: %" JSON_INTEGER_FORMAT " process%s in all: ", ji(t, "processes"),
		ji(t, "processes") == 1 ? "" : "es");
	if (ji(t, "unknown_processes"))	/* their allocators at attach are unknown */
		fprintf(f, "? arenas, ? heaps (%" JSON_INTEGER_FORMAT " process%s allocator at "
			"attach unknown), ", ji(t, "unknown_processes"),
			ji(t, "unknown_processes") == 1 ? "'s" : "es'");
	else
		fprintf(f, "%" JSON_INTEGER_FORMAT " arena%s, %" JSON_INTEGER_FORMAT " heap%s, ",
			ji(t, "arenas"), s1(t, "arenas"), ji(t, "heaps"), s1(t, "heaps"));
	fprintf(f, "%" JSON_INTEGER_FORMAT " thread%s, sbrk net %s%s, %" JSON_INTEGER_FORMAT
		" retr%s; %" JSON_INTEGER_FORMAT " event%s, %" JSON_INTEGER_FORMAT " lost\n",
		ji(t, "threads"), s1(t, "threads"), net < 0 ? "-" : "",
		mw_human_bytes((uint64_t)(net < 0 ? -net : net), a, sizeof(a)), ji(t, "retries"),
		ji(t, "retries") == 1 ? "y" : "ies", ji(t, "events"), s1(t, "events"),
		ji(t, "lost"));
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
		char ex[16], sy[16], iu[16], fr[16], par[16], cmd[700];

		if (pr->released_ns)	/* let go on request: its end is not ours */
			snprintf(ex, sizeof(ex), "rel");
		else if (!pr->have_status)
			snprintf(ex, sizeof(ex), "-");
		else if (WIFSIGNALED(pr->status))
			snprintf(ex, sizeof(ex), "sig %d", WTERMSIG(pr->status));
		else
			snprintf(ex, sizeof(ex), "%d", WEXITSTATUS(pr->status));
		snprintf(par, sizeof(par), pr->parent ? "%d" : "-", pr->parent);
		fprintf(f, "  %7d %7s %6s %6" JSON_INTEGER_FORMAT " %9s %9s %9s  %*s%s\n", pr->pid,
			par, ex, jlen(reps[i], "arenas"),
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
