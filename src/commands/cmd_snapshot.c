/* cmd_snapshot.c - `mallocwatch snapshot`: the allocator state of a
 * running process (-p PID), of several (-p A,B,C; --cgroup DIR), or of
 * every process on the host that maps a glibc, as a table like top's
 * (--all, refreshed every --interval), now, without a tracer
 * (snapshot.h, snapmulti.h, report_top.h). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "explain.h"
#include "glibcinfo.h"
#include "msg.h"
#include "output.h"
#include "procmem.h"
#include "procsel.h"
#include "proclist.h"
#include "procwhere.h"
#include "report.h"
#include "report_ledger.h"
#include "report_snap.h"
#include "report_top.h"
#include "snapmulti.h"
#include "snapshot.h"
#include "xalloc.h"

static const char snapshot_usage[] =
"Usage: mallocwatch snapshot -p PID[,PID...] [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"       mallocwatch snapshot --cgroup DIR [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"       mallocwatch snapshot --all [--stop] [--interval SECONDS] [--count N] [-o FILE] [--json FILE] [-q]\n"
"\n"
"Read glibc's allocator state from a running process, now, without a\n"
"tracer or SDT probes: every\n"
"arena (system bytes, in use, free but retained, what malloc_trim(0)\n"
"could give back at most, top chunk, heaps, attached threads, free list),\n"
"every heap (heap_info), the main heap's sbrk extent, the mmap and trim\n"
"thresholds, arena limits and mmapped chunks; and where the process\n"
"lives: its pid and mount namespaces, its pid in its own pid namespace,\n"
"its cgroup.  With one -p PID, also its RSS ledger, each arena's\n"
"fragmentation and the findings (see mallocwatch explain --help).  Needs\n"
"the libc's symbols and DWARF: built in, or its debug package (Debian:\n"
"libc6-dbg; Fedora: glibc-debuginfo), found by build-id, or under\n"
"$MW_DEBUGINFO_PATH.  A libc or debug file is read only when it is a\n"
"regular ELF file whose compressed sections come to at most\n"
"$MALLOCWATCH_ELF_MB MiB (default 256) and 64 times its size; one that a\n"
"user other than root can change is read from a private copy.\n"
"\n"
"A process is read while it runs, twice, and kept when both reads agree\n"
"and no thread held an arena's lock; else every thread is stopped with\n"
"ptrace for the read (the report says how long), after the threads inside\n"
"libc's code have finished what they were doing: each stop at most\n"
"--max-stop, a snapshot's at most --max-stopped in all (a stop cut there\n"
"is not read: the snapshot is refused, saying which bound).\n"
"A process traced by another (gdb, strace) is not stopped.  --all never\n"
"stops a process (one whose allocator changed while it was read has its\n"
"row refused, with the reason) unless --stop is given.  A snapshot that\n"
"cannot be had consistently is refused, never printed.  Several\n"
"processes are read at once (2 x the CPUs, at most 16), each within\n"
"--read-timeout.\n"
"\n"
"Which processes:\n"
"  -p, --pid PID[,PID...]  these processes (-p may be repeated); with one, the\n"
"                       report of one process (JSON {\"snapshot\": ...})\n"
"  --cgroup DIR         every process in the cgroup directory DIR (v1 or v2,\n"
"                       e.g. /sys/fs/cgroup/unified/system.slice) and in its\n"
"                       child cgroups: one report each and a total\n"
"  --all                every process on the host that maps a glibc (but\n"
"                       mallocwatch), one line each, most free-but-retained\n"
"                       bytes first; those not read (also those whose maps\n"
"                       may not be read) with the reason\n"
"  --interval SECONDS   --all: a fresh table every SECONDS until ^C or\n"
"                       SIGTERM (exit 0)\n"
"  --count N            --all: N tables, then exit (--interval default 1)\n"
"\n"
"Output:\n"
"  -o, --output FILE    the summary to FILE (default: stdout)\n"
"  --json FILE          as JSON ('-' = stdout); docs/json.md; with --interval,\n"
"                       one document a line\n"
"  --read-timeout SECONDS  give up on a process after this long (default 2);\n"
"                       the walk is also bounded in steps, and a loop in the\n"
"                       arena ring, a heap chain, a bin or a fastbin stops it\n"
"  --no-stop            never stop a process: only the reads while it runs\n"
"                       (--all's default)\n"
"  --stop               --all: stop a process whose reads while it runs did\n"
"                       not agree, as -p does (ptrace, a millisecond or so;\n"
"                       other users' processes too, when run as root)\n"
"  --leave-stopped      with one -p PID: read it stopped, and leave it stopped\n"
"                       (SIGSTOP) at that point, where no thread is inside\n"
"                       malloc, for gdb or gcore; resume it with kill -CONT\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0, 1 when a process named by -p or in the\n"
"cgroup cannot be read - it exited, it is not ours to read, no consistent\n"
"read could be had (the message says why, and how long it was stopped), it maps no\n"
"glibc, its libc's debug symbols are missing, its allocator is corrupt\n"
"or hostile (a loop: the message names the structure and the address) or\n"
"is not read within --read-timeout: one line each on stderr, the others\n"
"are still reported (-p PID: no file is made) - or the cgroup has no\n"
"process; --all: 0 once the table is written (a process not read is a\n"
"row with its reason), 1 when /proc cannot be listed or the output not\n"
"written; 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch snapshot -p $(pidof myserver)\n"
"  sudo mallocwatch snapshot -p 4242 --json state.json -o /dev/null\n"
"  sudo mallocwatch snapshot -p $(pidof -d, php-fpm8.2)\n"
"  sudo mallocwatch snapshot --cgroup /sys/fs/cgroup/unified/system.slice/nginx.service\n"
"  sudo mallocwatch snapshot --all --interval 5\n";

enum { OPT_READ_TIMEOUT = 256, OPT_INTERVAL, OPT_COUNT, OPT_LEAVE_STOPPED, OPT_STOP };

struct snap_opts {
	struct mw_procsel sel;	/* -p, --cgroup, --all, --no-stop */
	struct mw_pidlist pids;	/* -p's, or --cgroup's */
	const char *cgroup, *out, *json;
	int all, no_stop, leave_stopped, stop;
	long timeout_ms, interval_ms, count;	/* count 0: until a signal */
	FILE *fo, *fj;
};

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static long count_option(const char *s)
{
	pid_t n;	/* a positive int, as a pid is */

	if (mw_parse_pid(s, &n) < 0)
		mw_usage_error("--count needs a number of tables above 0, not '%s'", s);
	return n;
}

static void parse(int argc, char **argv, struct snap_opts *o)
{
	static const struct option lo[] = {
		MW_PROCSEL_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "stop", no_argument, NULL, OPT_STOP },
		MW_STOP_LONG_OPTIONS,
		{ "leave-stopped", no_argument, NULL, OPT_LEAVE_STOPPED },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
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
		case OPT_INTERVAL: o->interval_ms = mw_seconds_option("--interval", optarg); break;
		case OPT_COUNT: o->count = count_option(optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case OPT_LEAVE_STOPPED: o->leave_stopped = 1; mw_snapshot_leave_stopped(1); break;
		case OPT_STOP: o->stop = 1; break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(snapshot_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	mw_procsel_check(&o->sel, "snapshot", MW_SEL_PIDS | MW_SEL_CGROUP | MW_SEL_ALL |
			 MW_SEL_NO_STOP | MW_SEL_NEEDED);
	o->cgroup = o->sel.cgroup;
	o->all = o->sel.all;
	o->no_stop = o->sel.no_stop;
	o->pids = o->sel.pids;	/* the cgroup's are read once the options are good */
	o->sel.pids = (struct mw_pidlist){ 0 };
	if ((o->interval_ms || o->count) && !o->all)
		mw_usage_error("--interval and --count go with --all");
	if (o->count && !o->interval_ms)
		o->interval_ms = 1000;
	if (o->leave_stopped && (o->pids.n != 1 || o->no_stop))
		mw_usage_error("--leave-stopped takes one -p PID, and stops it (not with --no-stop)");
	if (o->stop && (!o->all || o->no_stop))
		mw_usage_error("--stop goes with --all (not with --no-stop)");
	if (o->all && !o->stop)	/* a whole-host view stops no one unasked */
		mw_snapshot_no_stop(1);
}

static int open_outputs(struct snap_opts *o)
{
	return mw_output_open_pair(o->out, o->json, &o->fo, &o->fj);
}

/* Close what open_outputs opened; json_err: the JSON writer's errno. */
static int close_outputs(struct snap_opts *o, int json_err)
{
	return mw_output_close_pair(o->fo, o->out, o->fj, o->json, json_err) < 0 ?
	       MW_EXIT_RUNTIME : MW_EXIT_OK;
}

/* The text goes out unless the JSON took stdout. */
static int want_text(const struct snap_opts *o)
{
	return mw_output_pair_text(o->fo, o->fj);
}

/* -p PID: one process, the report as it has always been, plus where it
 * lives when that can still be read; the files made once it is read. */
static int snapshot_one(struct snap_opts *o)
{
	char err[PATH_MAX + 512], comm[64];
	pid_t pid = o->pids.pids[0];
	struct mw_explained e;
	struct mw_glibc g;
	struct mw_snapshot *s;
	struct mw_where w;
	int json_err = 0, have_where, status;

	/* read first: a process that cannot be read leaves no empty file
	 * (the reading is brief and changes nothing) */
	if (mw_glibc_load(pid, &g, err, sizeof(err)) < 0 ||
	    mw_explain_read(pid, &g, o->timeout_ms, &e, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	s = e.s;
	if (!e.l)
		mw_warn("process %d: no RSS ledger: %s", (int)pid, e.lerr);
	if (open_outputs(o) < 0) {
		mw_explained_free(&e);
		return MW_EXIT_RUNTIME;
	}
	mw_process_comm(pid, comm, sizeof(comm));
	if (!comm[0])
		snprintf(comm, sizeof(comm), "?");
	have_where = mw_proc_where(pid, &w, err, sizeof(err)) == 0;
	if (want_text(o)) {	/* an error is found at the close */
		mw_snapshot_text_where(o->fo, s, comm, have_where ? &w : NULL);
		if (e.l) {
			mw_ledger_text(o->fo, s, e.l);
			mw_findings_text(o->fo, e.f, e.nf);
		}
	}
	if (o->fj && mw_snapshot_json_ledger(o->fj, s, comm, have_where ? &w : NULL, e.l, e.f,
					     e.nf) < 0)
		json_err = errno;
	/* a JSON that could not be made (ENOMEM) fails the run like a write */
	status = close_outputs(o, json_err);
	mw_explained_free(&e);
	if (o->leave_stopped)	/* it stays so: say how it goes on */
		mw_note("process %d is left stopped (SIGSTOP), as read: `kill -CONT %d` lets it "
			"go on", (int)pid, (int)pid);
	return status;
}

static int stop_signalled(void)
{
	return stop_signal != 0;
}

/* Read every process of l into a new array (*n entries), several at
 * once (snapmulti.h); NULL when a stop signal came. */
static struct mw_psnap *read_all(const struct mw_pidlist *l, long timeout_ms, size_t *n)
{
	struct mw_psnap_opts po = { .timeout_ms = timeout_ms, .cancelled = stop_signalled };

	*n = l->n;
	return mw_psnap_read_all(l->pids, l->n, &po);
}

static void release_all(struct mw_psnap *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mw_psnap_release(&v[i]);
	free(v);
}

/* -p A,B,C or --cgroup DIR: a report each, a total; exit 1 when one
 * could not be read. */
static int snapshot_many(struct snap_opts *o)
{
	struct mw_top_info info = { .mode = o->cgroup ? "cgroup" : "processes",
				    .cgroup = o->cgroup };
	struct mw_psnap *v;
	size_t n, failed = 0;
	int json_err = 0, status;
	double start;

	if (o->cgroup)
		mw_procsel_pids(&o->sel, &o->pids);
	if (open_outputs(o) < 0)
		return MW_EXIT_RUNTIME;
	info.taken_ns = mw_realtime_ns();
	start = mw_now_s();
	v = read_all(&o->pids, o->timeout_ms, &n);
	info.seconds = mw_now_s() - start;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].snap) {
			failed++;
			mw_error("%s", v[i].err);
		}
	}
	if (want_text(o))
		mw_top_reports_text(o->fo, v, n);
	if (o->fj && mw_top_json(o->fj, v, n, &info, JSON_INDENT(2)) < 0)
		json_err = errno;
	status = close_outputs(o, json_err);
	release_all(v, n);
	return status != MW_EXIT_OK || failed ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}

/* A row's reason: a process listed and then gone says so; one refused
 * says it was not stopped, when --stop was not given. */
static void row_reason(const struct snap_opts *o, struct mw_psnap *ps)
{
	size_t len = strlen(ps->err);

	if (ps->fail == MW_PSNAP_EXITED && !ps->have_where)
		snprintf(ps->err, sizeof(ps->err), "process %d exited before it was read",
			 (int)ps->pid);
	else if (ps->fail == MW_PSNAP_INCONSISTENT && !o->stop && !o->no_stop)
		snprintf(ps->err + len, sizeof(ps->err) - len, " (not stopped: --all stops a "
			 "process only with --stop)");
}

/* One --all table (and JSON document); 1 when a stop signal came first,
 * -1 on an error (after a message). */
static int top_round(struct snap_opts *o)
{
	struct mw_top_info info = { .mode = "all" };
	struct mw_pidlist l = { 0 };
	char err[256];
	struct mw_psnap *v;
	size_t n;
	double start = mw_now_s();

	info.taken_ns = mw_realtime_ns();
	if (mw_pidlist_all(&l, &info.seen, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	v = read_all(&l, o->timeout_ms, &n);
	mw_pidlist_free(&l);
	if (!v)
		return 1;
	for (size_t i = 0; i < n; i++)	/* what each row's reason leaves unsaid */
		row_reason(o, &v[i]);
	info.seconds = mw_now_s() - start;
	mw_psnap_sort_by_free(v, n);
	if (want_text(o))
		mw_top_table_text(o->fo, v, n, &info);
	if (o->fj && mw_top_json(o->fj, v, n, &info, o->interval_ms ? JSON_COMPACT :
				 JSON_INDENT(2)) < 0) {
		mw_error("cannot write the JSON report: %s", strerror(errno));
		release_all(v, n);
		return -1;
	}
	release_all(v, n);
	return ferror(o->fo) ? -1 : 0;
}

/* Sleep ms milliseconds, or less when a stop signal comes. */
static void pause_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (!stop_signal && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* --all: a table, or one every --interval until ^C, SIGTERM or --count. */
static int snapshot_top(struct snap_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART */
	int r = 0;

	if (o->interval_ms) {	/* first: a signal from now on ends the loop */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	if (open_outputs(o) < 0)
		return MW_EXIT_RUNTIME;
	for (long round = 1; r == 0; round++) {
		if (round > 1 && want_text(o))
			fputc('\n', o->fo);
		if (round > 1)	/* a libc may have been replaced meanwhile */
			mw_glibc_cache_reset();
		r = top_round(o);
		if (r || !o->interval_ms || (o->count && round >= o->count))
			break;
		fflush(o->fo);
		pause_ms(o->interval_ms);
		if (stop_signal)
			break;
	}
	return close_outputs(o, 0) != MW_EXIT_OK || r < 0 ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}

int cmd_snapshot(int argc, char **argv)
{
	struct snap_opts o = { .timeout_ms = MW_SNAP_TIMEOUT_MS };
	int status;

	parse(argc, argv, &o);
	if (o.all)
		status = snapshot_top(&o);
	else if (o.pids.n == 1 && !o.cgroup)
		status = snapshot_one(&o);
	else
		status = snapshot_many(&o);
	mw_pidlist_free(&o.pids);
	mw_procsel_free(&o.sel);
	return status;
}
