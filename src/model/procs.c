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
#include "units.h"

struct mw_procs {
	size_t n, cap;
	struct mw_process **pr;	/* each its own allocation: pointers stay */
	int multi;		/* records prefixed (several, or a changing set) */
	char **run_lines;	/* the run's lines so far, for a process added */
	size_t nrun, caprun;
	int in_live;		/* between MW_LINE_LIVE and MW_LINE_LIVE_END */
};

/* A new process pid with an empty model at the end of p; NULL when out
 * of memory. */
static struct mw_process *push(struct mw_procs *p, int pid)
{
	struct mw_process *pr;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4;
		struct mw_process **v = realloc(p->pr, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->pr = v;
		p->cap = cap;
	}
	if (!(pr = calloc(1, sizeof(*pr))))
		return NULL;
	pr->pid = pid;
	if (!(pr->st = mw_state_new(pid))) {
		free(pr);
		return NULL;
	}
	p->pr[p->n++] = pr;
	return pr;
}

struct mw_procs *mw_procs_new(const int *pids, size_t n)
{
	struct mw_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->multi = n != 1;
	for (size_t i = 0; i < n; i++)
		if (!push(p, pids[i]))
			goto fail;
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

static void process_free(struct mw_process *pr)
{
	mw_state_free(pr->st);
	free_argv(pr->argv);
	free(pr->title);
	mw_snapshot_free(pr->at_attach);
	mw_snapshot_free(pr->at_end);
	mw_snapshot_free(pr->at_exit);
	mw_ledger_free(pr->ledger_exit);
	mw_ledger_free(pr->ledger_end);
	free(pr);
}

void mw_procs_free(struct mw_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		process_free(p->pr[i]);
	for (size_t i = 0; i < p->nrun; i++)
		free(p->run_lines[i]);
	free(p->run_lines);
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

void mw_process_read_title(struct mw_process *pr, int at_end)
{
	char path[64], buf[4096], line[4096];
	ssize_t n;
	size_t m = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pr->pid);
	if ((n = mw_read_small(path, 0, buf, sizeof(buf))) <= 0)
		return;
	/* setproctitle() leaves the rest of the area NUL (or blank) */
	while (n > 0 && (buf[n - 1] == '\0' || buf[n - 1] == ' '))
		n--;
	for (ssize_t i = 0; i < n; i++)
		buf[i] = buf[i] ? buf[i] : ' ';
	buf[n] = '\0';
	line[0] = '\0';
	for (char **a = pr->argv; a && *a && m < sizeof(line) - 1; a++)
		m += (size_t)snprintf(line + m, sizeof(line) - m, "%s%s", m ? " " : "", *a);
	if (!n || strcmp(buf, line) == 0)
		return;
	free(pr->title);
	pr->title = strdup(buf);
	pr->title_at_end = at_end;
}

struct mw_process *mw_procs_process(const struct mw_procs *p, size_t i)
{
	return p->pr[i];
}

void mw_procs_set_multi(struct mw_procs *p)
{
	p->multi = 1;
}

/* pr replaced its image: what was read of the old one goes */
static void drop_attach(struct mw_process *pr)
{
	mw_snapshot_free(pr->at_attach);
	pr->at_attach = NULL;
}

int mw_procs_renew(struct mw_procs *p, struct mw_process *pr)
{
	struct mw_state *st = mw_state_new(pr->pid);

	if (!st)
		return -1;
	for (size_t i = 0; i < p->nrun; i++)
		mw_stream_line(st, p->run_lines[i]);
	mw_state_keep_received(st, pr->st);
	mw_state_free(pr->st);
	pr->st = st;
	drop_attach(pr);
	free(pr->title);	/* the old image's */
	pr->title = NULL;
	return 0;
}

struct mw_process *mw_procs_add(struct mw_procs *p, int pid)
{
	struct mw_process *pr;

	if (!p->multi || pid <= 0 || mw_procs_find(p, pid) || !(pr = push(p, pid)))
		return NULL;
	for (size_t i = 0; i < p->nrun; i++)
		mw_stream_line(pr->st, p->run_lines[i]);
	return pr;
}

struct mw_process *mw_procs_add_reused(struct mw_procs *p, int pid)
{
	struct mw_process *pr;

	if (!p->multi || pid <= 0 || !(pr = push(p, pid)))
		return NULL;
	for (size_t i = 0; i < p->nrun; i++)
		mw_stream_line(pr->st, p->run_lines[i]);
	return pr;
}

int mw_procs_remove(struct mw_procs *p, int pid)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->pr[i]->pid != pid)
			continue;
		process_free(p->pr[i]);
		memmove(&p->pr[i], &p->pr[i + 1], (p->n - i - 1) * sizeof(*p->pr));
		p->n--;
		return 0;
	}
	return -1;
}

size_t mw_procs_count(const struct mw_procs *p)
{
	return p->n;
}

int mw_procs_pid(const struct mw_procs *p, size_t i)
{
	return p->pr[i]->pid;
}

struct mw_state *mw_procs_state(const struct mw_procs *p, size_t i)
{
	return p->pr[i]->st;
}

struct mw_process *mw_procs_by_pid(const struct mw_procs *p, int pid)
{
	/* the newest first: a changing set's records are mostly theirs */
	for (size_t i = p->n; i-- > 0;)
		if (p->pr[i]->pid == pid)
			return p->pr[i];
	return NULL;
}

struct mw_state *mw_procs_find(const struct mw_procs *p, int pid)
{
	struct mw_process *pr = mw_procs_by_pid(p, pid);

	return pr ? pr->st : NULL;
}

int mw_procs_multi(const struct mw_procs *p)
{
	return p->multi;
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

/* A line of the run's (declaration, handshake, origin), kept for the
 * processes added later (the first MW_PROCS_RUN_LINES). */
#define MW_PROCS_RUN_LINES 1024
static void keep_run_line(struct mw_procs *p, const char *line)
{
	char *c;

	if (line[0] == '#' || p->nrun >= MW_PROCS_RUN_LINES)
		return;
	if (p->nrun == p->caprun) {
		size_t cap = p->caprun ? p->caprun * 2 : 32;
		char **v = realloc(p->run_lines, cap * sizeof(*v));

		if (!v)
			return;
		p->run_lines = v;
		p->caprun = cap;
	}
	if ((c = strdup(line)))
		p->run_lines[p->nrun++] = c;
}

/* A garbled line, counted in the first model (none: a run whose
 * processes all left). */
static void garbled(struct mw_procs *p)
{
	if (p->n)
		mw_state_garbled(p->pr[0]->st);
}

/* MW_LINE_LIVE starts a live reading (every process's pending counts
 * cleared), MW_LINE_LIVE_END makes it the newest.  1 when line is one
 * of them. */
static int live_mark(struct mw_procs *p, const char *line)
{
	int end = strcmp(line, MW_LINE_LIVE_END) == 0;

	if (!end && strcmp(line, MW_LINE_LIVE) != 0)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		struct mw_process *pr = p->pr[i];

		if (!end)
			memset(&pr->pending, 0, sizeof(pr->pending));
		else if (p->in_live) {
			pr->live = pr->pending;
			pr->have_live = 1;
		}
	}
	p->in_live = !end;
	return 1;
}

/* One record of a live reading (without its prefix) into pr's pending
 * counts (any other record, streamed meanwhile, goes to its model): G (a live heap: HEAP ARENA SIZE PEAK GREW SHRANK), A (ID TID
 * ARENA COUNT), S (GROWN TRIMMED NMORE NLESS PEAK FIRST LAST FAILED
 * FAILED_LESS).  0, or -1 when it does not parse (counted as garbled). */
static int live_record(struct mw_process *pr, const char *rec)
{
	struct mw_counters *c = &pr->pending;
	int64_t v[9];
	int n;

	if (!strchr("GAS", rec[0]))	/* an event streamed meanwhile */
		return mw_stream_line(pr->st, rec);
	n = mw_stream_numbers(rec + 1, v, 9);
	if (rec[0] == MW_REC_HEAPHITS && n == MW_NF_HEAP) {
		/* held at UINT64_MAX (units.h): serve leaves out a
		 * counter past INT64_MAX (report_metrics.c) */
		c->heap_grows = mw_count_add(c->heap_grows, (uint64_t)v[4]);
		c->heap_shrinks = mw_count_add(c->heap_shrinks, (uint64_t)v[5]);
	} else if (rec[0] == MW_REC_WAITS && n == MW_NF_WAITS) {
		c->lock_waits = mw_count_add(c->lock_waits, (uint64_t)v[3]);
	} else if (rec[0] == MW_REC_SBRK && n == MW_NF_SBRK_HITS) {
		c->sbrk_grown = (uint64_t)v[0];
		c->sbrk_trimmed = (uint64_t)v[1];
		c->sbrk_more = mw_count_add((uint64_t)v[2], (uint64_t)v[7]);
		c->sbrk_less = mw_count_add((uint64_t)v[3], (uint64_t)v[8]);
	} else {
		mw_state_garbled(pr->st);
		return -1;
	}
	return 0;
}

void mw_process_keep_max(struct mw_process *pr, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n && i < MW_PROCS_SHOWN; i++) {
		if (v[i] > pr->shown[i])
			pr->shown[i] = v[i];
		v[i] = pr->shown[i];
	}
}

int mw_procs_line(struct mw_procs *p, const char *line)
{
	struct mw_process *pr;
	const char *rest;
	struct mw_state *st;
	int pid, ret = 0;

	if (!p->multi)
		return mw_stream_line(p->pr[0]->st, line);
	if (line[0] != MW_REC_PROCESS) {
		/* the run's: declarations, handshake, metadata (a record of
		 * a process without its prefix is garbled in every model
		 * it reaches, and counted once) */
		if (line[0] && line[0] != '#' && line[0] != MW_REC_DECLARE &&
		    line[0] != MW_REC_ORIGIN && line[1] == ' ') {
			garbled(p);
			return -1;
		}
		if (live_mark(p, line))
			return 0;
		/* one process's image (protocol.h): never of a run of several,
		 * whose records would all be lost to it */
		if (strcmp(line, MW_LINE_EXEC) == 0) {
			garbled(p);
			return -1;
		}
		for (size_t i = 0; i < p->n; i++)
			ret |= mw_stream_line(p->pr[i]->st, line);
		keep_run_line(p, line);
		return ret;
	}
	pid = prefix(line, &rest);
	if (pid > 0 && !p->in_live && strcmp(rest, MW_LINE_EXEC) == 0 &&
	    (pr = mw_procs_by_pid(p, pid))) {
		drop_attach(pr);
		return mw_stream_line(pr->st, rest);
	}
	if (pid < 0 || !(st = mw_procs_find(p, pid)) || rest[0] == MW_REC_DECLARE ||
	    rest[0] == MW_REC_PROCESS || rest[0] == '#' || rest[0] == 'M') {
		/* a live reading's record of a process that left: not garbled */
		if (p->in_live && pid > 0 && !st)
			return 0;
		garbled(p);
		return -1;
	}
	if (p->in_live)
		return live_record(mw_procs_by_pid(p, pid), rest);
	return mw_stream_line(st, rest);
}
