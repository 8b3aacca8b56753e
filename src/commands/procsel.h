/* procsel.h - which processes a command is about, spelled the same way
 * by every command that takes processes (trace, snapshot, explain, trim,
 * serve), and validated once, as perf's struct target is by
 * target__validate:
 *
 *	-p, --pid PID[,PID...]	these processes (repeatable; a pid given
 *				twice is taken once)
 *	--cgroup DIR		every process in the cgroup directory DIR
 *				and its child cgroups (one DIR)
 *	--all			every process on the host that maps a glibc
 *	-f, --follow-forks	and the processes they create (trace)
 *	--no-stop		never stop a process (ptrace) for a read
 *
 * Every command's getopt table holds all five (MW_PROCSEL_LONG_OPTIONS,
 * MW_PROCSEL_SHORT in its short options); what a command cannot do is
 * refused by mw_procsel_check in one line that says what it takes.
 * Errors here are usage errors (exit 2), but a cgroup that cannot be
 * read or has no process, which is a runtime error (exit 1).
 */
#ifndef MALLOCWATCH_PROCSEL_H
#define MALLOCWATCH_PROCSEL_H

#include "proclist.h"
#include "procset.h"

/* What a command takes (mw_procsel_check's can). */
enum {
	MW_SEL_PIDS = 1 << 0,		/* -p PID[,PID...] */
	MW_SEL_CGROUP = 1 << 1,		/* --cgroup DIR */
	MW_SEL_ALL = 1 << 2,		/* --all */
	MW_SEL_FOLLOW = 1 << 3,		/* -f */
	MW_SEL_NO_STOP = 1 << 4,	/* --no-stop */
	MW_SEL_NEEDED = 1 << 5,		/* one of -p, --cgroup, --all must be given */
};

/* The selection as given; start it zeroed ({0}).  Owns pids. */
struct mw_procsel {
	struct mw_pidlist pids;		/* -p's, in the order given */
	const char *cgroup;		/* --cgroup's DIR, or NULL */
	int all, follow, no_stop;
	int ncgroups;			/* --cgroup given this many times */
};

enum { MW_OPT_SEL_CGROUP = 0x4d60, MW_OPT_SEL_ALL, MW_OPT_SEL_NO_STOP };
#define MW_PROCSEL_SHORT "fp:"
#define MW_PROCSEL_LONG_OPTIONS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "cgroup", required_argument, NULL, MW_OPT_SEL_CGROUP }, \
	{ "all", no_argument, NULL, MW_OPT_SEL_ALL }, \
	{ "follow-forks", no_argument, NULL, 'f' }, \
	{ "no-stop", no_argument, NULL, MW_OPT_SEL_NO_STOP }

/* Take option c (getopt_long's answer) with its argument arg into sel
 * when it is one of the selection's: 1; else 0 (the command's own).  A
 * bad -p list is a usage error ("-p needs process ids separated by
 * commas, not 'abc'"). */
int mw_procsel_option(struct mw_procsel *sel, int c, const char *arg);

/* Check sel against what command cmd ("snapshot") can take (MW_SEL_*):
 * an option it does not take, -p, --cgroup and --all together, two
 * --cgroup, or none of them when MW_SEL_NEEDED, is a usage error naming
 * what cmd takes.  Then --no-stop is applied (snapshot.h,
 * mw_snapshot_no_stop). */
void mw_procsel_check(const struct mw_procsel *sel, const char *cmd, unsigned can);

/* Has sel named processes (-p, --cgroup or --all)? */
int mw_procsel_given(const struct mw_procsel *sel);

/* -p's pids, or --cgroup's now, appended to l (--all's are the caller's:
 * mw_pidlist_all).  A cgroup that cannot be read, or has no process,
 * ends mallocwatch with one line, exit 1. */
void mw_procsel_pids(const struct mw_procsel *sel, struct mw_pidlist *l);

/* The selection as a run's process set (procset.h) in *s: --cgroup's
 * (MW_PROCS_CGROUP), --all's (MW_PROCS_LISTED: read again by whoever
 * runs it), -p's (MW_PROCS_PIDS), or with none of them a program to be
 * started (MW_PROCS_COMMAND, its cmd the run's to fill); l's pids
 * (mw_procsel_pids) are the processes at the start, and must outlive s;
 * follow is -f's. */
void mw_procsel_set(const struct mw_procsel *sel, const struct mw_pidlist *l,
		    struct mw_procset *s);

/* Release sel's memory. */
void mw_procsel_free(struct mw_procsel *sel);

#endif /* MALLOCWATCH_PROCSEL_H */
