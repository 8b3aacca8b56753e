/* procs.c - a run's processes and the routing of records to their
 * models; see procs.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procmem.h"
#include "procs.h"
#include "protocol.h"
#include "snapshot.h"
#include "stream.h"

struct mw_procs {
	size_t n;
	struct mw_process *pr;
};

struct mw_procs *mw_procs_new(const int *pids, size_t n)
{
	struct mw_procs *p = n ? calloc(1, sizeof(*p)) : NULL;

	if (!p)
		return NULL;
	if (!(p->pr = calloc(n, sizeof(*p->pr))))
		goto fail;
	for (p->n = 0; p->n < n; p->n++) {
		p->pr[p->n].pid = pids[p->n];
		if (!(p->pr[p->n].st = mw_state_new(pids[p->n])))
			goto fail;
	}
	return p;
fail:
	mw_procs_free(p);
	return NULL;
}

static void free_argv(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

void mw_procs_free(struct mw_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		mw_state_free(p->pr[i].st);
		free_argv(p->pr[i].argv);
		mw_snapshot_free(p->pr[i].at_attach);
		mw_snapshot_free(p->pr[i].at_end);
		mw_snapshot_free(p->pr[i].at_exit);
		mw_ledger_free(p->pr[i].ledger_exit);
		mw_ledger_free(p->pr[i].ledger_end);
	}
	free(p->pr);
	free(p);
}

/* The parent from /proc/PID/stat: the field after the command, which is
 * in parentheses and may hold anything (the last ')' ends it). */
static int parent_of(int pid)
{
	char buf[1024];
	const char *f = mw_proc_stat_fields(pid, buf, sizeof(buf));
	int ppid = 0;

	return f && sscanf(f, "%*c %d", &ppid) == 1 ? ppid : 0;
}

/* /proc/PID/cmdline as an argv (NUL-separated words); NULL unknown. */
static char **argv_of(int pid)
{
	char path[64], buf[8192];
	ssize_t n;
	size_t words = 0, k = 0;
	char **argv;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((n = mw_read_small(path, 0, buf, sizeof(buf))) <= 0)
		return NULL;
	for (ssize_t i = 0; i < n; i++)
		words += buf[i] == '\0' || i == n - 1;
	if (!(argv = calloc(words + 1, sizeof(*argv))))
		return NULL;
	for (ssize_t i = 0; i < n && k < words; i += (ssize_t)strlen(buf + i) + 1)
		if (!(argv[k++] = strdup(buf + i))) {
			free_argv(argv);
			return NULL;
		}
	return argv;
}

void mw_process_observe(struct mw_process *pr)
{
	char err[PATH_MAX + 256];

	pr->ppid = parent_of(pr->pid);
	mw_process_comm(pr->pid, pr->comm, sizeof(pr->comm));
	free_argv(pr->argv);
	pr->argv = argv_of(pr->pid);
	pr->have_libc = mw_mapped_find(pr->pid, MW_LIB_LIBC, &pr->libc, err, sizeof(err)) == 1;
	pr->have_libm = mw_mapped_find(pr->pid, MW_LIB_LIBM, &pr->libm, err, sizeof(err)) == 1;
	pr->have_where = mw_proc_where(pr->pid, &pr->where, err, sizeof(err)) == 0;
}

struct mw_process *mw_procs_process(const struct mw_procs *p, size_t i)
{
	return &p->pr[i];
}

size_t mw_procs_count(const struct mw_procs *p)
{
	return p->n;
}

int mw_procs_pid(const struct mw_procs *p, size_t i)
{
	return p->pr[i].pid;
}

struct mw_state *mw_procs_state(const struct mw_procs *p, size_t i)
{
	return p->pr[i].st;
}

struct mw_state *mw_procs_find(const struct mw_procs *p, int pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->pr[i].pid == pid)
			return p->pr[i].st;
	return NULL;
}

int mw_procs_multi(const struct mw_procs *p)
{
	return p->n > 1;
}

/* "@PID REST": the pid (1..INT_MAX) and where REST starts; -1 if not. */
static int prefix(const char *line, const char **rest)
{
	long long pid = 0;
	const char *s = line + 1;

	if (*s < '1' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		pid = pid * 10 + (*s - '0');
		if (pid > 0x7fffffff)
			return -1;
	}
	if (*s != ' ' || !s[1])
		return -1;
	*rest = s + 1;
	return (int)pid;
}

int mw_procs_line(struct mw_procs *p, const char *line)
{
	const char *rest;
	struct mw_state *st;
	int pid, ret = 0;

	if (p->n == 1)
		return mw_stream_line(p->pr[0].st, line);
	if (line[0] != MW_REC_PROCESS) {
		/* the run's: declarations, handshake, metadata (a record of
		 * a process without its prefix is garbled in every model
		 * it reaches, and counted once) */
		if (line[0] && line[0] != '#' && line[0] != MW_REC_DECLARE &&
		    line[0] != MW_REC_ORIGIN && line[1] == ' ') {
			mw_state_garbled(p->pr[0].st);
			return -1;
		}
		for (size_t i = 0; i < p->n; i++)
			ret |= mw_stream_line(p->pr[i].st, line);
		return ret;
	}
	pid = prefix(line, &rest);
	if (pid < 0 || !(st = mw_procs_find(p, pid)) || rest[0] == MW_REC_DECLARE ||
	    rest[0] == MW_REC_PROCESS || rest[0] == '#' || rest[0] == 'M') {
		mw_state_garbled(p->pr[0].st);
		return -1;
	}
	return mw_stream_line(st, rest);
}
