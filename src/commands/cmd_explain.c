/* cmd_explain.c - `mallocwatch explain -p PID`: where a process's
 * resident memory is (in use, free but kept by glibc, given back, not
 * malloc's), how fragmented each arena is, and the findings, ranked,
 * each with its evidence and a quantified suggestion (ledger.h,
 * findings.h), read by explain.c.  -p A,B,C and --cgroup DIR (procsel.h):
 * each in turn, the text parted by a blank line, the JSON one document a
 * line. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "explain.h"
#include "glibcinfo.h"
#include "jsonout.h"
#include "snapshot.h"
#include "msg.h"
#include "output.h"
#include "proclist.h"
#include "procmem.h"
#include "procsel.h"
#include "report_ledger.h"
#include "report_snap.h"

static const char explain_usage[] =
"Usage: mallocwatch explain -p PID[,PID...] [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"       mallocwatch explain --cgroup DIR [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"\n"
"Where process PID's resident memory is, and what glibc's malloc keeps:\n"
"an RSS ledger - malloc's memory in use, free and resident, free and\n"
"already given back, top chunks, mmapped chunks, heap slack, and what is\n"
"not malloc's (stacks, shared memory, files, other anonymous memory) -\n"
"counted page by page from /proc/PID/pagemap and set against\n"
"smaps_rollup's Rss; each arena's fragmentation (free chunk sizes, the\n"
"largest, free bytes that share pages with chunks in use, what\n"
"malloc_trim(0) would give back now); and the findings, largest first,\n"
"each with the figures it rests on and what gives the memory back (a\n"
"call, a setting and the `mallocwatch tune` command that measures it,\n"
"or only the program's free()).  Reads the process the way `snapshot`\n"
"does, needing the libc's debug symbols; a ledger that does not add up\n"
"(the process moved) is read again with the process held (the stop\n"
"bounds leave time for it), and the report says how it was read.\n"
"\n"
"  -p, --pid PID[,PID...]  the process; several (-p may be repeated): one\n"
"                       after the other, each explained or refused with its\n"
"                       reason (one line), the others still explained\n"
"  --cgroup DIR         every process in the cgroup directory DIR and its\n"
"                       child cgroups, so (for every process on the host:\n"
"                       mallocwatch snapshot --all)\n"
"  -o, --output FILE    the text to FILE (default: stdout); several\n"
"                       processes' texts parted by a blank line\n"
"  --json FILE          the snapshot with \"ledger\", \"fragmentation\" and\n"
"                       \"findings\" as JSON ('-' = stdout); docs/json.md;\n"
"                       of several processes, one document a line\n"
"  --read-timeout SECONDS  give up after this long (default 2)\n"
"  --no-stop            never stop the process for a consistent read (see\n"
"                       mallocwatch snapshot --help)\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0; 1 when the process cannot be read (as snapshot), or its\n"
"ledger cannot be made (its smaps or pagemap not readable) - of several,\n"
"when one of them could not be explained - or the cgroup has no process;\n"
"2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch explain -p $(pidof memcached)\n"
"  sudo mallocwatch explain -p 4242 --json why.json -o /dev/null\n"
"  sudo mallocwatch explain -p $(pidof -d, php-fpm8.2)\n";

enum { OPT_READ_TIMEOUT = 256 };

struct explain_opts {
	struct mw_procsel sel;	/* -p, --cgroup, --no-stop */
	const char *out, *json;
	long timeout_ms;
	FILE *fo, *fj;
};

static void parse(int argc, char **argv, struct explain_opts *o)
{
	static const struct option lo[] = {
		MW_PROCSEL_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		MW_STOP_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":" MW_PROCSEL_SHORT "o:qh", lo, NULL)) != -1) {
		if (mw_procsel_option(&o->sel, c, optarg))
			continue;
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'j': o->json = optarg; break;
		case OPT_READ_TIMEOUT: o->timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(explain_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	mw_procsel_check(&o->sel, "explain", MW_SEL_PIDS | MW_SEL_CGROUP | MW_SEL_NO_STOP |
			 MW_SEL_NEEDED);
}

/* Read pid into e: 0, or -1 after its one line (the process not read,
 * or no ledger). */
static int read_one(const struct explain_opts *o, pid_t pid, struct mw_explained *e)
{
	char err[PATH_MAX + 512];
	struct mw_glibc g;

	if (mw_glibc_load(pid, &g, err, sizeof(err)) < 0 ||
	    mw_explain_read(pid, &g, o->timeout_ms, e, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	if (!e->l) {
		mw_error("process %d: no RSS ledger: %s", (int)pid, e->lerr);
		mw_explained_free(e);
		return -1;
	}
	if (!e->s->consistent)
		mw_warn("process %d's allocator changed while it was read (%s); the figures are "
			"its last try's", (int)pid, e->s->why);
	return 0;
}

static int open_outputs(struct explain_opts *o)
{
	return mw_output_open_pair(o->out, o->json, &o->fo, &o->fj);
}

/* One process's document on one line of f (several processes: JSON
 * Lines), from the indented one: 0, or -1 with errno set. */
static int json_line(FILE *f, const struct mw_explained *e, const char *comm)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	json_t *doc = NULL;
	int r = -1, made;

	if (!m)
		return -1;
	made = mw_snapshot_json_ledger(m, e->s, comm, NULL, e->l, e->f, e->nf) == 0;
	if (fclose(m) == 0 && made) {
		if ((doc = json_loadb(buf, len, 0, NULL)))
			r = mw_json_write(doc, f, JSON_COMPACT);
		else
			errno = ENOMEM;
	}
	json_decref(doc);
	free(buf);
	return r;
}

/* Write pid's report (e read) to the outputs: text, and JSON (of one
 * process indented, of several one document a line); a JSON not made
 * sets *json_err. */
static void write_one(struct explain_opts *o, pid_t pid, const struct mw_explained *e,
		      int several, int *json_err)
{
	char comm[64];

	mw_process_comm(pid, comm, sizeof(comm));
	if (!comm[0])
		snprintf(comm, sizeof(comm), "?");
	if (mw_output_pair_text(o->fo, o->fj))
		mw_explain_text(o->fo, e->s, e->l, e->f, e->nf, comm);
	if (o->fj && (several ? json_line(o->fj, e, comm) :
		      mw_snapshot_json_ledger(o->fj, e->s, comm, NULL, e->l, e->f, e->nf)) < 0)
		*json_err = errno;
}

/* Each process, one after the other: its report, or its one line (the
 * others go on); the texts parted by a blank line.  -1 when one was not
 * explained. */
static int explain_each(struct explain_opts *o, const struct mw_pidlist *l, int *json_err)
{
	int failed = 0, written = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct mw_explained e;

		if (read_one(o, l->pids[i], &e) < 0) {
			failed = 1;
			continue;
		}
		if (written++ && mw_output_pair_text(o->fo, o->fj))
			fputc('\n', o->fo);
		write_one(o, l->pids[i], &e, 1, json_err);
		mw_explained_free(&e);
	}
	return failed ? -1 : 0;
}

int cmd_explain(int argc, char **argv)
{
	struct explain_opts o = { .timeout_ms = MW_SNAP_TIMEOUT_MS };
	struct mw_pidlist l = { 0 };
	struct mw_explained e;
	int json_err = 0, failed = 0, bad;

	parse(argc, argv, &o);
	mw_procsel_pids(&o.sel, &l);
	if (l.n == 1 && !o.sel.cgroup) {
		/* read first: a process not read leaves no empty file */
		if (read_one(&o, l.pids[0], &e) < 0)
			exit(MW_EXIT_RUNTIME);
		if (open_outputs(&o) < 0) {
			mw_explained_free(&e);
			return MW_EXIT_RUNTIME;
		}
		write_one(&o, l.pids[0], &e, 0, &json_err);
		mw_explained_free(&e);
	} else {
		if (open_outputs(&o) < 0)
			return MW_EXIT_RUNTIME;
		failed = explain_each(&o, &l, &json_err) < 0;
	}
	bad = mw_output_close_pair(o.fo, o.out, o.fj, o.json, json_err) < 0;
	mw_pidlist_free(&l);
	mw_procsel_free(&o.sel);
	return bad || failed ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
