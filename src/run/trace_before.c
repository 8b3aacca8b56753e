/* trace_before.c - -p PID -f: the processes already under PID when
 * tracing starts.  -f follows the processes PID (and they) create from
 * then on; those it had created before (a prefork server's workers, busy
 * backends among them) run untraced.  They are named, and the ways to
 * trace them too offered (trace_multi.h mw_tree_before):
 *
 *	process 4242 had 2 processes under it when tracing started, not
 *	traced (-f follows those created from now): 4250 'postgres:
 *	checkpointer', 4251 'postgres: walwriter'; to trace them too:
 *	-p 4242,4250,4251 (their new processes not followed), or --cgroup
 *	/sys/fs/cgroup/unified/system.slice/postgresql.service (3 processes
 *	now)
 *
 * Their names are their command lines (a title they gave themselves) or
 * command names: another process's bytes, quoted (msg.h).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "procmem.h"
#include "procs.h"
#include "procwhere.h"
#include "trace_multi.h"
#include "xalloc.h"

#define BEFORE_NAMED 10		/* processes named, at most */
#define BEFORE_PIDS 100		/* a -p list offered for at most these */

/* Every process's pid and parent now, from /proc/PID/stat; *n of them
 * (new arrays). */
static void all_parents(pid_t **pid, pid_t **ppid, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	*n = 0;
	*pid = *ppid = NULL;
	while (d && (e = readdir(d))) {
		char buf[1024], *end;
		const char *f;
		long p = strtol(e->d_name, &end, 10);
		int pp;

		if (p <= 0 || *end || !(f = mw_proc_stat_fields((pid_t)p, buf, sizeof(buf))) ||
		    sscanf(f, "%*c %d", &pp) != 1)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			*pid = xrealloc(*pid, cap * sizeof(**pid));
			*ppid = xrealloc(*ppid, cap * sizeof(**ppid));
		}
		(*pid)[*n] = (pid_t)p;
		(*ppid)[(*n)++] = (pid_t)pp;
	}
	if (d)
		closedir(d);
}

/* The descendants of root among pid[0..n) (parents ppid) that are not
 * in procs (followed already: created since ptrace took root), in the
 * order a breadth-first walk finds them; *nd of them (a new array). */
static pid_t *descendants(pid_t root, const pid_t *pid, const pid_t *ppid, size_t n,
			  const struct mw_procs *procs, size_t *nd)
{
	pid_t *out = xcalloc(n + 1, sizeof(*out));
	size_t m = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (ppid[i] == root)
			out[m++] = pid[i];
	for (size_t h = 0; h < m; h++)
		for (size_t i = 0; i < n && m < n; i++)
			if (ppid[i] == out[h] && pid[i] != root)
				out[m++] = pid[i];
	for (size_t i = 0; i < m; i++)	/* those not followed */
		if (!mw_procs_by_pid(procs, out[i]))
			out[k++] = out[i];
	*nd = k;
	return out;
}

/* A process's name: its command line (words joined by blanks: a title
 * it set over them shows), else its command name; quoted, cut. */
static const char *name_of(pid_t p, char *buf, size_t len)
{
	char path[64], line[512], q[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p);
	n = mw_read_small(path, 0, line, sizeof(line));
	while (n > 0 && (line[n - 1] == '\0' || line[n - 1] == ' '))
		n--;
	for (ssize_t i = 0; i < n; i++)
		line[i] = line[i] ? line[i] : ' ';
	if (n > 0)
		line[n] = '\0';
	else
		mw_process_comm(p, line, sizeof(line));
	snprintf(buf, len, "'%s'", mw_quote(line[0] ? line : "?", q, 48));
	return buf;
}

/* The directory of root's cgroup (procwhere.h): its path under the
 * mount of its hierarchy (/proc/self/mounts: cgroup2, or the cgroup v1
 * mount whose options name its controllers), into dir; 0, or -1 when it
 * is the root cgroup or cannot be found. */
static int cgroup_dir(pid_t root, char *dir, size_t len)
{
	struct mw_where w;
	char err[256], line[PATH_MAX + 256], mnt[PATH_MAX], type[32], opts[512];
	FILE *f;
	int found = 0;

	if (mw_proc_where(root, &w, err, sizeof(err)) < 0 || !w.cgroup[0] ||
	    strcmp(w.cgroup, "/") == 0 || !(f = fopen("/proc/self/mounts", "re")))
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char tok[70];

		if (sscanf(line, "%*s %4095s %31s %511s", mnt, type, opts) != 3)
			continue;
		snprintf(tok, sizeof(tok), ",%s,", w.cgroup_from);
		if (strcmp(w.cgroup_from, "v2") == 0)
			found = strcmp(type, "cgroup2") == 0;
		else if (strcmp(type, "cgroup") == 0) {
			char o[520];

			snprintf(o, sizeof(o), ",%s,", opts);
			found = strstr(o, tok) != NULL;
		}
	}
	fclose(f);
	if (!found || (size_t)snprintf(dir, len, "%s%s", mnt, w.cgroup) >= len)
		return -1;
	return 0;
}

/* How many processes the cgroup directory dir holds now (its
 * cgroup.procs; child cgroups not counted); 0 unknown. */
static size_t cgroup_count(const char *dir)
{
	char path[PATH_MAX + 16], buf[65536];
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0)
		return 0;
	for (const char *p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

/* The offer: "-p ROOT,A,B (...), or --cgroup DIR (N processes now)". */
static void offer(FILE *f, pid_t root, const pid_t *d, size_t nd)
{
	char dir[PATH_MAX], q[PATH_MAX + 8];
	int cg = cgroup_dir(root, dir, sizeof(dir)) == 0;

	fputs("; to trace them too: ", f);
	if (nd <= BEFORE_PIDS) {
		fprintf(f, "-p %d", (int)root);
		for (size_t i = 0; i < nd; i++)
			fprintf(f, ",%d", (int)d[i]);
		fputs(" (their new processes not followed)", f);
	}
	if (cg)
		fprintf(f, "%s--cgroup %s (%zu processes now)", nd <= BEFORE_PIDS ? ", or " : "",
			mw_quote(dir, q, sizeof(q)), cgroup_count(dir));
	else if (nd > BEFORE_PIDS)
		fprintf(f, "-p %d,... with the processes to trace", (int)root);
}

char *mw_tree_before(pid_t root, const struct mw_procs *procs, size_t *count)
{
	pid_t *pid, *ppid, *d;
	size_t n, nd, len = 0;
	char *text = NULL, name[160];
	FILE *f;

	all_parents(&pid, &ppid, &n);
	d = descendants(root, pid, ppid, n, procs, &nd);
	*count = nd;
	if (nd && (f = open_memstream(&text, &len))) {
		fprintf(f, "process %d had %zu process%s under it when tracing started, not "
			"traced (-f follows those created from now): ", (int)root, nd,
			nd == 1 ? "" : "es");
		for (size_t i = 0; i < nd && i < BEFORE_NAMED; i++)
			fprintf(f, "%s%d %s", i ? ", " : "", (int)d[i], name_of(d[i], name,
										 sizeof(name)));
		if (nd > BEFORE_NAMED)
			fprintf(f, " and %zu more", nd - BEFORE_NAMED);
		offer(f, root, d, nd);
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
		}
	}
	free(pid);
	free(ppid);
	free(d);
	return text;
}
