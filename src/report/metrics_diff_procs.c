/* metrics_diff_procs.c - `mallocwatch diff` of reports of several
 * processes (-f, -p PID,PID,..., --cgroup): every process of the new
 * report diffed against the base's process of the same key, as `check
 * --baseline` matches them (mw_report_process_key: the command line and
 * how many before it had the same), and the processes that appeared or
 * vanished; see metrics.h.  The text form:
 *
 *	Processes, matched by command line and order (as check --baseline
 *	matches them): 3 in both (1 changed), 1 appeared, 0 vanished
 *
 *	~ './prefork 4' (pid 6600 -> 6710): 3 of 15 metrics changed
 *	METRIC                         BASE            NEW         CHANGE ...
 *	arenas                            1              3             +2 ...
 *	...
 *	= 'make test' (pid 6592 -> 6701): no metric changed
 *	+ './worker' #1 (pid 6720): only in new.json
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "metrics.h"
#include "metrics_int.h"
#include "msg.h"
#include "xalloc.h"

#define DIFF_LIST 50	/* processes listed a kind, at most (JSON: all) */

int mw_diff_is_multi(const json_t *r)
{
	return json_is_array(json_object_get(r, "processes"));
}

/* The processes of report r: its "processes", or r as the only one (a
 * report of one process).  A new reference. */
static json_t *procs_of(const json_t *r)
{
	json_t *p = json_object_get(r, "processes");

	return json_is_array(p) ? json_incref(p) : json_pack("[O]", r);
}

/* The keys of every process of procs (mw_report_process_key), a new
 * array of n strings. */
static char **keys_of(const json_t *procs, size_t n)
{
	char **k = xcalloc(n + 1, sizeof(*k));

	for (size_t i = 0; i < n; i++) {
		char buf[1100];

		mw_report_process_key(procs, i, buf, sizeof(buf));
		k[i] = xstrdup(buf);
	}
	return k;
}

static void keys_free(char **k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i]);
	free(k);
}

/* The index of key in k[0..n), or n. */
static size_t key_at(char *const *k, size_t n, const char *key)
{
	size_t i = 0;

	while (i < n && strcmp(k[i], key) != 0)
		i++;
	return i;
}

/* How many before process i of procs have its key's command line: the
 * number after the key's last '#'. */
static json_int_t order_of(const char *key)
{
	const char *h = strrchr(key, '#');

	return h ? strtoll(h + 1, NULL, 10) : 0;
}

/* What a process is known by: {"argv", "comm", "order", "pid"} (argv and
 * comm from its report's target, null when it has none). */
static json_t *who(const json_t *proc, const char *key, const char *pid_key)
{
	const json_t *t = json_object_get(proc, "target");

	return json_pack("{s:O?, s:O?, s:I, s:O?}", "argv", json_object_get(t, "argv"),
			 "comm", json_object_get(t, "comm"), "order", order_of(key), pid_key,
			 json_object_get(t, "pid"));
}

/* Did a diff of one process (mw_diff_one) find a change: a metric whose
 * change is not 0 (or that one report lacks), an arena that appeared,
 * vanished or changed?  The number of metrics changed, or 1 for arenas
 * alone; 0 when nothing did. */
static json_int_t changes(const json_t *d)
{
	const json_t *ar = json_object_get(d, "arenas"), *m;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(json_object_get(d, "metrics"), i, m) {
		const json_t *c = json_object_get(m, "change");

		n += !json_is_integer(c) || json_integer_value(c) != 0;
	}
	if (!n && (json_array_size(json_object_get(ar, "appeared")) ||
		   json_array_size(json_object_get(ar, "vanished")) ||
		   json_array_size(json_object_get(ar, "changed"))))
		n = 1;
	return n;
}

/* The entry of a process in both: who it is (both pids), how many
 * metrics changed, and the diff of its reports. */
static json_t *both_entry(const json_t *pa, const json_t *pb, const char *key)
{
	json_t *e = who(pb, key, "new_pid"), *d = mw_diff_one(pa, pb);

	if (!e || !d) {
		json_decref(e);
		json_decref(d);
		return NULL;
	}
	mw_json_set(&e, "base_pid", json_incref(json_object_get(json_object_get(pa, "target"),
								 "pid")));
	mw_json_set(&e, "changed", json_integer(changes(d)));
	mw_json_set(&e, "metrics", json_incref(json_object_get(d, "metrics")));
	mw_json_set(&e, "arenas", json_incref(json_object_get(d, "arenas")));
	json_decref(d);
	return e;
}

json_t *mw_diff_procs(const json_t *a, const json_t *b)
{
	json_t *pa = procs_of(a), *pb = procs_of(b), *both = json_array(),
	       *appeared = json_array(), *vanished = json_array();
	size_t na = json_array_size(pa), nb = json_array_size(pb);
	char **ka = keys_of(pa, na), **kb = keys_of(pb, nb);

	for (size_t i = 0; i < nb; i++) {
		size_t j = key_at(ka, na, kb[i]);
		const json_t *p = json_array_get(pb, i);

		if (j < na)
			mw_json_append(&both, both_entry(json_array_get(pa, j), p, kb[i]));
		else
			mw_json_append(&appeared, who(p, kb[i], "pid"));
	}
	for (size_t j = 0; j < na; j++)
		if (key_at(kb, nb, ka[j]) == nb)
			mw_json_append(&vanished, who(json_array_get(pa, j), ka[j], "pid"));
	keys_free(ka, na);
	keys_free(kb, nb);
	json_decref(pa);
	json_decref(pb);
	return json_pack("{s:s, s:o, s:o, s:o}", "matched_by", "command line and order",
			 "both", both, "appeared", appeared, "vanished", vanished);
}

/* A process as people read it: its command line (else its command
 * name), quoted (another process's bytes: msg.h), cut to fit len, and
 * " #N" when N before it had the same. */
static const char *label(const json_t *e, char *buf, size_t len)
{
	char line[512], q[400];
	size_t n = 0, i;
	const json_t *a;
	json_int_t order = json_integer_value(json_object_get(e, "order"));

	line[0] = '\0';
	json_array_foreach(json_object_get(e, "argv"), i, a)
		if (n < sizeof(line) - 1)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "",
					      json_string_value(a) ? json_string_value(a) : "");
	if (!n)
		snprintf(line, sizeof(line), "%s",
			 json_string_value(json_object_get(e, "comm")) ?
			 json_string_value(json_object_get(e, "comm")) : "?");
	snprintf(buf, len, "'%s'%s", mw_quote(line, q, sizeof(q)), order ? " #" : "");
	if (order)
		snprintf(buf + strlen(buf), len - strlen(buf), "%lld", (long long)order);
	return buf;
}

static json_int_t pid_of(const json_t *e, const char *key)
{
	return json_integer_value(json_object_get(e, key));
}

/* The processes in only one report, "+" (appeared) or "-" (vanished). */
static void only_text(FILE *f, const json_t *list, char sign, const char *where)
{
	char l[512];
	size_t i;
	json_t *e;

	json_array_foreach(list, i, e) {
		if (i == DIFF_LIST) {
			fprintf(f, "%c ... and %zu more (--format json lists them)\n", sign,
				json_array_size(list) - i);
			break;
		}
		fprintf(f, "%c %s (pid %lld): only in %s\n", sign, label(e, l, sizeof(l)),
			(long long)pid_of(e, "pid"), where);
	}
}

/* Each process in both: the changed ones first, each with its metrics
 * that changed and its arenas; then the others a line each. */
static void both_text(FILE *f, const json_t *both)
{
	char l[512];
	size_t i, listed = 0;
	json_t *e;

	json_array_foreach(both, i, e) {
		json_int_t c = json_integer_value(json_object_get(e, "changed"));

		if (!c)
			continue;
		fprintf(f, "\n~ %s (pid %lld -> %lld): %lld of %zu metrics changed\n",
			label(e, l, sizeof(l)), (long long)pid_of(e, "base_pid"),
			(long long)pid_of(e, "new_pid"), (long long)c,
			json_array_size(json_object_get(e, "metrics")));
		mw_diff_text_one(f, e, 1);
	}
	fputc('\n', f);
	json_array_foreach(both, i, e) {
		if (json_integer_value(json_object_get(e, "changed")))
			continue;
		if (listed++ == DIFF_LIST) {
			fprintf(f, "= ... and more with no change (--format json lists them)\n");
			break;
		}
		fprintf(f, "= %s (pid %lld -> %lld): no change\n", label(e, l, sizeof(l)),
			(long long)pid_of(e, "base_pid"), (long long)pid_of(e, "new_pid"));
	}
}

void mw_diff_procs_text(FILE *f, const json_t *diff)
{
	const json_t *p = json_object_get(diff, "processes"), *e;
	const json_t *both = json_object_get(p, "both");
	const char *an = json_string_value(json_object_get(diff, "base"));
	const char *bn = json_string_value(json_object_get(diff, "new"));
	char qa[256], qb[256];
	size_t i, changed = 0;

	json_array_foreach(both, i, e)
		changed += json_integer_value(json_object_get(e, "changed")) != 0;
	fprintf(f, "Processes, matched by command line and order (as check --baseline matches "
		"them): %zu in both (%zu changed), %zu appeared, %zu vanished\n",
		json_array_size(both), changed, json_array_size(json_object_get(p, "appeared")),
		json_array_size(json_object_get(p, "vanished")));
	both_text(f, both);
	only_text(f, json_object_get(p, "appeared"), '+', mw_quote(bn, qb, sizeof(qb)));
	only_text(f, json_object_get(p, "vanished"), '-', mw_quote(an, qa, sizeof(qa)));
}

void mw_diff_procs_markdown(FILE *f, const json_t *diff)
{
	const json_t *p = json_object_get(diff, "processes"), *e, *m;
	char l[512];
	size_t i, j;

	fprintf(f, "| process | metric | base | new | change | percent | unit |\n"
		"|---|---|---:|---:|---:|---:|---|\n");
	json_array_foreach(json_object_get(p, "both"), i, e)
		json_array_foreach(json_object_get(e, "metrics"), j, m) {
			const json_t *ch = json_object_get(m, "change");

			if (json_is_integer(ch) && !json_integer_value(ch))
				continue;
			fputs("| ", f);
			mw_md_cell(f, label(e, l, sizeof(l)));
			fputs(" |", f);
			mw_diff_md_cells(f, m);
		}
	fprintf(f, "\nProcesses: %zu in both, %zu appeared, %zu vanished\n",
		json_array_size(json_object_get(p, "both")),
		json_array_size(json_object_get(p, "appeared")),
		json_array_size(json_object_get(p, "vanished")));
	for (int k = 0; k < 2; k++)
		json_array_foreach(json_object_get(p, k ? "vanished" : "appeared"), i, e) {
			fprintf(f, "- %s ", k ? "vanished:" : "appeared:");
			mw_md_cell(f, label(e, l, sizeof(l)));
			fputc('\n', f);
		}
}
