/* procs.c - a run's processes and the routing of records to their
 * models; see procs.h. */
#include <stdlib.h>
#include <string.h>

#include "procs.h"
#include "protocol.h"
#include "stream.h"

struct mw_procs {
	size_t n;
	int *pid;
	struct mw_state **st;
};

struct mw_procs *mw_procs_new(const int *pids, size_t n)
{
	struct mw_procs *p = n ? calloc(1, sizeof(*p)) : NULL;

	if (!p)
		return NULL;
	p->pid = calloc(n, sizeof(*p->pid));
	p->st = calloc(n, sizeof(*p->st));
	if (!p->pid || !p->st)
		goto fail;
	for (p->n = 0; p->n < n; p->n++) {
		p->pid[p->n] = pids[p->n];
		if (!(p->st[p->n] = mw_state_new(pids[p->n])))
			goto fail;
	}
	return p;
fail:
	mw_procs_free(p);
	return NULL;
}

void mw_procs_free(struct mw_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		mw_state_free(p->st[i]);
	free(p->st);
	free(p->pid);
	free(p);
}

size_t mw_procs_count(const struct mw_procs *p)
{
	return p->n;
}

int mw_procs_pid(const struct mw_procs *p, size_t i)
{
	return p->pid[i];
}

struct mw_state *mw_procs_state(const struct mw_procs *p, size_t i)
{
	return p->st[i];
}

struct mw_state *mw_procs_find(const struct mw_procs *p, int pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->pid[i] == pid)
			return p->st[i];
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
		return mw_stream_line(p->st[0], line);
	if (line[0] != MW_REC_PROCESS) {
		/* the run's: declarations, handshake, metadata (a record of
		 * a process without its prefix is garbled in every model
		 * it reaches, and counted once) */
		if (line[0] && line[0] != '#' && line[0] != MW_REC_DECLARE &&
		    line[0] != MW_REC_ORIGIN && line[1] == ' ') {
			mw_state_garbled(p->st[0]);
			return -1;
		}
		for (size_t i = 0; i < p->n; i++)
			ret |= mw_stream_line(p->st[i], line);
		return ret;
	}
	pid = prefix(line, &rest);
	if (pid < 0 || !(st = mw_procs_find(p, pid)) || rest[0] == MW_REC_DECLARE ||
	    rest[0] == MW_REC_PROCESS || rest[0] == '#' || rest[0] == 'M') {
		mw_state_garbled(p->st[0]);
		return -1;
	}
	return mw_stream_line(st, rest);
}
