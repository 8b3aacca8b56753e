/* stacks_int.h - what stacks.c (the perf events and their rings) and
 * stacks_proc.c (the watched processes: their maps, files and unwinders,
 * and the probe arguments read from a sample) share.  Not for other
 * files.
 */
#ifndef MALLOCWATCH_STACKS_INT_H
#define MALLOCWATCH_STACKS_INT_H

#include <pthread.h>

#include "sdtarg.h"
#include "stacks.h"

#define MW_STACK_COPY 16384	/* bytes of user stack per sample */

/* One stacked probe site of the libc. */
struct stk_site {
	int probe;			/* enum mw_probe_id */
	uint64_t offset;		/* in the file (uprobe PMU config2) */
	struct mw_sdt_arg args[3];
	int nargs;			/* parsed, at most 3 */
};

/* One process seen in samples. */
struct stk_proc {
	pid_t pid;
	int watched;			/* 1 keep, 0 drop */
	char *maps;			/* its /proc/PID/maps, as last read */
	struct mw_unwind_file *files;	/* the files it maps, opened */
	size_t nfiles, cfiles;
	struct mw_unwinder *u;		/* over maps; NULL before the first */
	long long read_ms;		/* when maps was read */
};

struct mw_stacks {
	struct stk_site *sites;
	size_t nsites, csites;
	int *fds;			/* nsites * ncpus, -1 where none */
	uint64_t *ids;			/* their PERF_EVENT_IOC_IDs */
	int ncpus;
	void **rings;			/* per CPU, NULL where none */
	size_t ring_pages;		/* data pages of a ring */
	unsigned char *rec;		/* a record copied out of a ring's wrap */
	int stop_pipe[2];
	pthread_t reader;
	int running;
	pthread_mutex_t lock;		/* drains, the events, the processes */
	struct mw_stack_event *ev;
	size_t nev, cev;
	struct stk_proc *procs;
	size_t nprocs, cprocs;
	pid_t *watch;
	size_t nwatch, cwatch;
	struct mw_stacks_stats st;
	double unwind_us_sum;
};

/* The process pid's entry, made (its fate decided: watched or not) when
 * first seen.  Never NULL. */
struct stk_proc *stk_proc_get(struct mw_stacks *s, pid_t pid);

/* Unwind a sample of p's thread tid into e->pcs (reading p's maps and
 * opening its files when none is known, or when the stack runs into an
 * address no module holds). */
void stk_proc_unwind(struct mw_stacks *s, struct stk_proc *p, pid_t tid,
		     const uint64_t *regs, const unsigned char *stack, size_t len,
		     struct mw_stack_event *e);

/* The site's arguments into e->args from regs and the stack copy. */
void stk_read_args(const struct stk_site *site, const uint64_t *regs,
		   const unsigned char *stack, size_t len, struct mw_stack_event *e);

/* Free every process's maps, files and unwinder. */
void stk_procs_free(struct mw_stacks *s);

#endif /* MALLOCWATCH_STACKS_INT_H */
