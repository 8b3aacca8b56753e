/* cmd_trace.c - `mallocwatch [trace] -c CMD` / `-p PID`: the main job.
 *
 * Coordinates the pipeline: target (which libc) -> sdtnote (its probes)
 * -> gen (the script) -> runtime + tracer (stap) -> stream -> state ->
 * report.  Here: the options, checked, made into the run's process set
 * (procsel.h, procset.h), --cleanup and `mallocwatch replay`; the runs
 * are src/run/'s: which run the processes get in trace_procs.c, the work
 * directory around each in trace_runs.c, one run in trace_run.c, the
 * snapshots-only mode of -p in trace_snaps.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cmd.h"
#include "glibcinfo.h"
#include "leftovers.h"
#include "linger.h"
#include "metrics.h"
#include "fsutil.h"
#include "msg.h"
#include "output.h"
#include "probetab.h"
#include "procmem.h"
#include "procsel.h"
#include "report_snap.h"
#include "runtime.h"
#include "snapshot.h"
#include "state.h"
#include "stream.h"
#include "target.h"
#include "mapped.h"
#include "proclist.h"
#include "trace_multi.h"
#include "trace_run.h"
#include "trace_runs.h"
#include "trace_snaps.h"
#include "tracer.h"
#include "xalloc.h"

static const char usage[] =
"Usage: mallocwatch [OPTIONS] -c CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -- CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -p PID[,PID...] | --cgroup DIR\n"
"       mallocwatch --cleanup\n"
"       mallocwatch probes [--libc PATH | -p PID] [--libm PATH] [--json | --table]\n"
"       mallocwatch script [--runtime=auto|kernel|bpf] [--libc PATH] [--libm PATH]\n"
"       mallocwatch replay [-o FILE] [--json FILE] [--html FILE] STREAM\n"
"       mallocwatch snapshot -p PID[,PID...] | --cgroup DIR | --all [-o FILE] [--json FILE]\n"
"       mallocwatch explain -p PID[,PID...] | --cgroup DIR [-o FILE] [--json FILE]\n"
"       mallocwatch trim -p PID[,PID...] | --cgroup DIR [--dry-run | --no-stop] [-o FILE]\n"
"       mallocwatch tune [--repeat N] --try NAME=V1,V2,... [--waits] -c CMD [ARGS...]\n"
"       mallocwatch serve --listen [ADDR:]PORT | --textfile DIR -p PID[,PID...] | --cgroup DIR | --all\n"
"       mallocwatch check [--baseline BASE.json] --check RULE... REPORT.json\n"
"       mallocwatch check --metrics REPORT.json\n"
"       mallocwatch diff [--format text|json|markdown] BASE.json NEW.json\n"
"       mallocwatch flame [--probe NAME] [--width PX] [--bytes] [-o FILE] FOLDED\n"
"       mallocwatch setup glibc\n"
"       mallocwatch release PID\n"
"       (each command's own options: mallocwatch COMMAND --help)\n"
"\n"
"Trace glibc's SDT probes in a program with SystemTap and print a summary:\n"
"arenas, heaps, sbrk, thresholds, lock waits, retries, mallopt and tunables,\n"
"tcache double frees, setjmp/longjmp, and libm's slow math paths.\n"
"\n"
"Target:\n"
"  -c, --command CMD [ARGS...]  run CMD (never through a shell), traced\n"
"                       from its first instruction; everything after CMD is\n"
"                       its ARGS (also --command=CMD ARGS...).\n"
"                       CMD chroot NEWROOT PROG: PROG is traced on the\n"
"                       libc.so.6 inside NEWROOT (make glibc-root makes\n"
"                       Debian roots whose own glibc has the probes)\n"
"  -- CMD [ARGS...]     the same\n"
"  -f, --follow-forks   trace every process the program (-c) or the\n"
"                       process (-p PID) creates (fork, vfork, clone, and\n"
"                       the programs they exec) in the same session: a\n"
"                       report each (pid, parent, command line, the title\n"
"                       it gave itself at exit, exit status, exit\n"
"                       snapshot), the tree first (-p: the processes\n"
"                       already under PID, not followed, are named); the run\n"
"                       ends when the last of them exits (or ^C).  Each\n"
"                       stays under ptrace until it exits or tracing stops\n"
"                       (gdb -p on one fails meanwhile): ^C lets go of all,\n"
"                       mallocwatch release PID of one (no exit snapshot).\n"
"                       Without -f, -c notes how many were not traced\n"
"  -p, --pid PID        attach to a running process until it exits, or ^C\n"
"                       (or SIGTERM) stops tracing and reports; the process\n"
"                       is never signalled, and stopped (ptrace) only for a\n"
"                       snapshot or sample that cannot be read consistently\n"
"                       while it runs, within --max-stop and --max-stopped\n"
"                       (--no-stop: never).  Arenas made before\n"
"                       it are read from the process when the probes are\n"
"                       armed, and again at the end (needs the libc's debug\n"
"                       symbols); a libc without SDT probes is reported from\n"
"                       such snapshots alone\n"
"  -p PID,PID,...       several processes mapping the same libc file, one\n"
"                       tracer session: a report each, then their totals\n"
"                       (JSON: \"processes\", \"totals\"); ends when the last\n"
"                       exits; --check judges each process; -p may be\n"
"                       repeated; a pid given twice is traced once\n"
"  --cgroup DIR         the processes of a cgroup (v1 or v2 directory, and its\n"
"                       child cgroups), as with -p PID,PID,... (not with\n"
"                       -p); processes that join it during the run (and\n"
"                       map the same libc file) are traced from when they\n"
"                       are seen (it is looked at every 0.2 s)\n"
"  --duration SECONDS   with -p: stop after this long, as ^C would\n"
"  --interval SECONDS   read the allocator's state (arenas' bytes, heaps,\n"
"                       the main heap's extent, thresholds) this often, for\n"
"                       the timeline (--html) and --progress: default 0.1\n"
"                       with -c, 1 with -p, then spaced further when a\n"
"                       read takes over 1% of it; no probe cost.  With -p\n"
"                       on a libc without probes: the snapshots' period\n"
"  --read-timeout SECONDS  give up reading the allocator (a snapshot or a\n"
"                       sample) after this long: default 2; a sample not\n"
"                       read in time is skipped and counted.  -p's snapshot\n"
"                       at attach is tried again every 0.1 s within it while\n"
"                       a busy process refuses it; still refused, the\n"
"                       arenas, heaps, heap bytes and thresholds are reported\n"
"                       as unknown (the summary's header says why; '?' in\n"
"                       text and HTML, null and \"unknown\" in JSON)\n"
"  --no-stop            with -p: never stop the process for a consistent\n"
"                       snapshot (see mallocwatch snapshot --help); a\n"
"                       sample not read consistently is skipped and counted\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  --progress           one line per interval on stderr: elapsed, arenas,\n"
"                       heap bytes, the main heap (sbrk_base to the end of\n"
"                       its top), lock waits and retries since\n"
"                       the last line (default with -p, and with -c when\n"
"                       stderr is a terminal); --no-progress: never\n"
"  --libc PATH          trace this libc.so.6 instead of the one chosen\n"
"                       (system libc with probes, else the probe-enabled\n"
"                       glibc under $MW_GLIBC_PREFIX or\n"
"                       " MW_GLIBC_PREFIX ")\n"
"  --libm PATH          trace this libm's slow-math probes (default: the\n"
"                       libm.so.6 beside the libc)\n"
"\n"
"Output:\n"
"  -o, --output FILE    write the summary to FILE (default: stderr)\n"
"  --json FILE          write the report as JSON to FILE ('-' = stdout);\n"
"                       keys in docs/json.md\n"
"  --stacks             take the user call stack of each rare allocator event\n"
"                       (arena_new, arena_reuse*, heap_new, heap_free,\n"
"                       sbrk_more, threshold changes, mallopt, retries,\n"
"                       tcache double free; heap_more sampled, 1 in 64\n"
"                       hits) with a uprobe perf event beside the tracer,\n"
"                       unwound with libdwfl: per arena who created it, the\n"
"                       top stacks by sbrk and heap bytes and heap growths\n"
"                       (-c, -c -f, -p PID,...; bpf runtime for several).\n"
"                       Names are shown escaped (\\x1b).  A mapped file or\n"
"                       its debug file is read only when it is an ELF file\n"
"                       whose compressed sections come to at most\n"
"                       MALLOCWATCH_ELF_MB MiB (default 256) and 64 times\n"
"                       its size (else one warning, its frames by offset)\n"
"  --folded FILE        with --stacks: the stacks that grew the break or made\n"
"                       heaps, weighted by bytes (heap_more: by growths), in\n"
"                       the folded format flame graph tools read\n"
"  --html FILE          write a self-contained HTML report (no network): bytes\n"
"                       per arena over time, thread lanes, markers, tables\n"
"  --save-script FILE   also write the generated SystemTap script to FILE\n"
"  --save-stream FILE   also record the tracer's output (docs/protocol.md)\n"
"                       to FILE; `mallocwatch replay FILE` reports it again\n"
"  (each FILE is created before anything runs, as the invoking user under\n"
"  sudo; a symbolic link, a FIFO or a file with other hard links is refused)\n"
"  --check RULE         judge the run's report: METRIC OP VALUE, e.g.\n"
"                       'arenas<=4'; repeatable; exit 3 when one fails (see\n"
"                       mallocwatch check --help for the metrics); a rule on\n"
"                       a figure the report does not have, or has as unknown,\n"
"                       fails (with the reason)\n"
"  --baseline FILE      a report (--json) that relative rules ('+10%') use\n"
"  --strict-env         a baseline made with another glibc, CPU count or\n"
"                       arena tunables is an error (exit 2), not a warning\n"
"  --format F           the --check results as text, json, junit, github or\n"
"                       markdown: on stderr with the notes (and with -c the\n"
"                       program's own stderr), unless --format-output\n"
"  --format-output FILE  write the --check results, and nothing else, to FILE\n"
"                       ('-' = stdout, which a -c program shares): for a CI\n"
"                       step to parse; the summary and notes stay on stderr\n"
"  --repeat N           with -c: run the program N times (arena counts depend\n"
"                       on scheduling) and judge --check rules on every run's\n"
"                       figure, aggregated by --aggregate; -o/--json keep the\n"
"                       last run's report.  Without -f the runs share one\n"
"                       tracer session (armed once), each reported on its own;\n"
"                       with -f each process's figure per run is listed, and\n"
"                       its result names the run judged and that run's pid\n"
"  --linger SECONDS     with -c: the tracer session stays armed SECONDS (at\n"
"                       most 600) after the run and serves the next -c run of\n"
"                       the same script, which then arms nothing and waits\n"
"                       for no uprobe removal; then it removes its uprobes\n"
"                       and exits.  Default 0 (off), or MALLOCWATCH_LINGER.\n"
"                       bpf runtime; not with -f or --stacks\n"
"  --aggregate A        worst (default: the largest for <=, the smallest for\n"
"                       >=), max, median or min\n"
"  -q, --quiet          no notes or warnings, only errors\n"
"  -v, --verbose        show the tracer's own messages\n"
"\n"
"Events:\n"
"  -e, --events=LIST    which probe families to trace (default all): a comma-\n"
"                       separated list of arena, heap, sbrk, threshold,\n"
"                       mallopt, tunable, retry, tcache, setjmp, math,\n"
"                       unknown (memory_* probes not in mallocwatch's table),\n"
"                       memory (all memory_* families) and all; '!' leaves\n"
"                       one out: -e '!setjmp'.  Every traced probe site costs\n"
"                       every process using the same libc a trap per hit\n"
"\n"
"Tracer:\n"
"  --runtime=R          auto (default), kernel or bpf: SystemTap's kernel-module\n"
"                       runtime, or stapbpf.  auto picks kernel when modules can\n"
"                       load and /lib/modules/$(uname -r)/build exists\n"
"\n"
"Other:\n"
"  --cleanup            stop tracers, remove uprobe definitions and work\n"
"                       directories that runs killed with SIGKILL left (every\n"
"                       traced run does this first, too), after waiting for\n"
"                       tracers still removing their uprobes after -c runs\n"
"  -h, --help           this help\n"
"  -V, --version        the version\n"
"\n"
"Exit status: the program's own with -c (128+N if signal N killed it), 0 with\n"
"-p (also when ^C ended it); 1 on a runtime error (the tracer failed or died,\n"
"an output could not be written); 2 on a usage error; 3 when a --check rule\n"
"failed (and the program itself did not: its failure wins); 128+N when\n"
"signal N came before tracing started.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch -c ./app --threads 8\n"
"  sudo mallocwatch --json report.json -c xz -T2 -k big.tar\n"
"  sudo mallocwatch -p 4242 -o incident.txt\n"
"  sudo mallocwatch -p 4242 --duration 30 --json incident.json\n"
"  sudo mallocwatch snapshot -p 4242\n"
"  sudo mallocwatch explain -p 4242\n"
"  sudo mallocwatch -e '!setjmp' -c ./interpreter script.py\n"
"  sudo mallocwatch -c chroot /var/cache/mallocwatch/roots/bullseye /usr/bin/python3\n"
"  mallocwatch probes --libc /var/cache/mallocwatch/glibc/lib/libc.so.6\n";

enum { OPT_JSON = 256, OPT_RUNTIME, OPT_LIBC, OPT_LIBM, OPT_SAVE, OPT_STREAM, OPT_CLEANUP,
       OPT_DURATION, OPT_INTERVAL, OPT_CHECK, OPT_BASELINE, OPT_FORMAT, OPT_REPEAT,
       OPT_AGGREGATE, OPT_STRICT_ENV, OPT_HTML, OPT_PROGRESS, OPT_NO_PROGRESS,
       OPT_READ_TIMEOUT, OPT_FORMAT_OUTPUT, OPT_STACKS, OPT_FOLDED, OPT_LINGER };

/* --linger was given (not MALLOCWATCH_LINGER alone); --format was */
static int linger_opt, format_opt;
static struct mw_procsel sel;	/* -p, --cgroup, -f, --no-stop */
static struct mw_pidlist pids;	/* the processes at the start: o->procs's */

/* --linger's and MALLOCWATCH_LINGER's SECONDS (0 to MW_LINGER_MAX_S,
 * a fraction allowed) in ms; what names it (where) for the usage
 * error. */
static long linger_parse(const char *v, const char *where)
{
	char *end;
	double s = strtod(v, &end);

	if (end == v || *end || !(s >= 0 && s <= MW_LINGER_MAX_S))
		mw_usage_error("%s needs seconds from 0 to %d, not '%s'", where, MW_LINGER_MAX_S,
			       v);
	return (long)(s * 1000);
}

static const struct option longopts[] = {
	MW_PROCSEL_LONG_OPTIONS,
	{ "output", required_argument, NULL, 'o' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "libc", required_argument, NULL, OPT_LIBC },
	{ "libm", required_argument, NULL, OPT_LIBM },
	{ "save-script", required_argument, NULL, OPT_SAVE },
	{ "save-stream", required_argument, NULL, OPT_STREAM },
	{ "cleanup", no_argument, NULL, OPT_CLEANUP },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
	MW_STOP_LONG_OPTIONS,
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "format-output", required_argument, NULL, OPT_FORMAT_OUTPUT },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "aggregate", required_argument, NULL, OPT_AGGREGATE },
	{ "strict-env", no_argument, NULL, OPT_STRICT_ENV },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "events", required_argument, NULL, 'e' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

unsigned mw_events_option(const char *arg)
{
	char err[256];
	unsigned families;

	if (mw_events_parse(arg, &families, err, sizeof(err)) < 0)
		mw_usage_error("%s", err);
	if (!families)
		mw_usage_error("-e %s leaves nothing to trace", arg);
	return families;
}

static enum mw_runtime parse_runtime(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return MW_RT_AUTO;
	if (strcmp(s, "kernel") == 0)
		return MW_RT_KERNEL;
	if (strcmp(s, "bpf") == 0)
		return MW_RT_BPF;
	mw_usage_error("unknown runtime '%s' (auto, kernel or bpf)", s);
}

/* The command starts at the first "-c", "--command" or "--" (or is the
 * value of "--command=CMD"); options are before it. */
static int split_command(int argc, char **argv, struct trace_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--command=", 10) == 0) {
			if (!argv[i][10])
				mw_usage_error("--command needs a command");
			argv[i] += 10;
			o->cmd = argv + i;
			return i;
		}
		if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--") == 0 ||
		    strcmp(argv[i], "--command") == 0) {
			if (i + 1 >= argc)
				mw_usage_error("%s needs a command", argv[i]);
			o->cmd = argv + i + 1;
			return i;
		}
	}
	return argc;
}

/* The processes traced: -p's, or --cgroup's now (procsel.h; its
 * joiners are looked for while it runs), into pids, which o->procs
 * points into until cmd_trace frees it. */
static void take_pids(struct trace_opts *o)
{
	mw_procsel_pids(&sel, &pids);
	mw_procsel_set(&sel, &pids, &o->procs);
}

/* One option c (getopt_long's answer for argv) of the trace command into
 * o; a bad value is a usage error, -h and -V exit. */
static void parse_option(int c, char **argv, struct trace_opts *o)
{
	switch (c) {
	case 'e':
		o->families = mw_events_option(optarg);
		break;
	case 'o': o->out = optarg; break;
	case OPT_JSON: o->json = optarg; break;
	case OPT_SAVE: o->save_script = optarg; break;
	case OPT_STREAM: o->save_stream = optarg; break;
	case OPT_LIBC: o->libc = optarg; break;
	case OPT_LIBM: o->libm = optarg; break;
	case OPT_RUNTIME: o->runtime = parse_runtime(optarg); break;
	case OPT_CLEANUP: o->cleanup = 1; break;
	case OPT_DURATION: o->duration_ms = mw_seconds_option("--duration", optarg); break;
	case OPT_INTERVAL: o->interval_ms = mw_seconds_option("--interval", optarg); break;
	case OPT_READ_TIMEOUT:
		o->read_timeout_ms = mw_seconds_option("--read-timeout", optarg);
		break;
	case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
		mw_stop_option(c, optarg);
		break;
	case OPT_CHECK: {
		char err[256];

		xgrow((void **)&o->rules, o->nrules, &o->crules, sizeof(*o->rules));
		if (mw_rule_parse(optarg, &o->rules[o->nrules++], err, sizeof(err)) < 0)
			mw_usage_error("%s", err);
		break;
	}
	case OPT_BASELINE: o->baseline_path = optarg; break;
	case OPT_HTML: o->html = optarg; break;
	case OPT_STACKS: o->stacks = 1; break;
	case OPT_FOLDED: o->folded = optarg; break;
	case OPT_PROGRESS: o->progress = 1; break;
	case OPT_NO_PROGRESS: o->progress = 0; break;
	case OPT_STRICT_ENV: o->strict_env = 1; break;
	case OPT_REPEAT: {
		char *end;

		o->repeat = strtol(optarg, &end, 10);
		if (*end || o->repeat < 1 || o->repeat > 1000)
			mw_usage_error("--repeat needs a count from 1 to 1000, not '%s'", optarg);
		break;
	}
	case OPT_LINGER:
		o->linger_ms = linger_parse(optarg, "--linger");
		linger_opt = 1;
		break;
	case OPT_AGGREGATE:
		if (mw_aggregate_parse(optarg, &o->aggregate) < 0)
			mw_usage_error("unknown aggregate '%s' (worst, max, median, min)", optarg);
		break;
	case OPT_FORMAT:
		if (mw_format_parse(optarg, &o->format) < 0)
			mw_usage_error("unknown format '%s' (text, json, junit, github, "
				       "markdown)", optarg);
		format_opt = 1;
		break;
	case OPT_FORMAT_OUTPUT: o->format_output = optarg; break;
	case 'q': mw_quiet(1); break;
	case 'v': o->verbose = 1; break;
	case 'h': fputs(usage, stdout); exit(MW_EXIT_OK);
	case 'V': printf("mallocwatch %s\n", MW_VERSION); exit(MW_EXIT_OK);
	default: mw_bad_option(c, argv);
	}
}

static void parse_args(int argc, char **argv, struct trace_opts *o)
{
	int c, procs;	/* procs: -p or --cgroup given */

	argc = split_command(argc, argv, o);
	if (getenv("MALLOCWATCH_LINGER") && *getenv("MALLOCWATCH_LINGER"))
		o->linger_ms = linger_parse(getenv("MALLOCWATCH_LINGER"), "MALLOCWATCH_LINGER");
	while ((c = getopt_long(argc, argv, "+:" MW_PROCSEL_SHORT "e:o:qvhV", longopts, NULL)) != -1)
		if (!mw_procsel_option(&sel, c, optarg))
			parse_option(c, argv, o);
	if (optind < argc)
		mw_usage_error("unexpected argument '%s' (use -c CMD or -- CMD)", argv[optind]);
	o->procs.follow = sel.follow;	/* the rest once the options are good */
	procs = mw_procsel_given(&sel);
	mw_procsel_check(&sel, "trace", MW_SEL_PIDS | MW_SEL_CGROUP | MW_SEL_FOLLOW |
			 MW_SEL_NO_STOP);
	if (o->cleanup && (o->cmd || procs))
		mw_usage_error("--cleanup takes no -c or -p");
	if (!o->cmd && !procs && !o->cleanup)
		mw_usage_error("no command given: use -c CMD or -p PID");
	if (o->cmd && procs)
		mw_usage_error("-c and -p cannot be used together");
	if (o->procs.follow && (o->save_stream || o->interval_ms))
		mw_usage_error("--save-stream and --interval take one process; not yet with -f");
	if (o->folded && !o->stacks)
		mw_usage_error("--folded goes with --stacks (it writes the stacks taken)");
	if (o->stacks && (sel.cgroup || o->repeat > 1))
		mw_usage_error("--stacks takes -c, -c -f or -p PID,...; not yet with --cgroup "
			       "or --repeat");
	if (o->progress < 0)	/* quiet in CI logs; on for incidents */
		o->progress = procs || isatty(STDERR_FILENO);
	if (mw_is_quiet())	/* its lines are notes: none printed, no sample taken for them */
		o->progress = 0;
	if (o->duration_ms && !procs)
		mw_usage_error("--duration goes with -p (a -c run ends when the program does)");
	if (o->repeat > 1 && !o->cmd)
		mw_usage_error("--repeat goes with -c (a process can be attached to once)");
	/* --linger: -c runs of one process under the bpf runtime alone; the
	 * option says when it is not used, MALLOCWATCH_LINGER (set once for
	 * a CI job's every run) does not */
	if (o->linger_ms && (!o->cmd || o->procs.follow || o->stacks ||
			     mw_runtime_pick(o->runtime) != MW_RT_BPF)) {
		if (linger_opt)
			mw_note("--linger is not used %s: this run arms a tracer session of its "
				"own", !o->cmd ? "without -c" : o->procs.follow ? "with -f" :
				o->stacks ? "with --stacks" : "under the kernel runtime");
		o->linger_ms = 0;
	}
	if (o->cmd)	/* its processes are ours to ptrace (ptrace_tree.h): never stopped */
		mw_snapshot_no_stop(1);
	if (o->format_output && !o->nrules)
		mw_usage_error("--format-output goes with --check (it takes the checks' results)");
	if (format_opt && !o->nrules)
		mw_usage_error("--format goes with --check (it formats the checks' results)");
	if (o->format_output && o->json && strcmp(o->format_output, "-") == 0 &&
	    strcmp(o->json, "-") == 0)
		mw_usage_error("--json - and --format-output - both write to stdout; give one a file");
	for (size_t i = 0; i < o->nrules; i++)
		if (o->rules[i].relative && !o->baseline_path)
			mw_usage_error("rule '%s' is relative (+N, +N%%) and needs --baseline",
				       o->rules[i].text);
	take_pids(o);	/* once the options are good: --cgroup's are read */
	if (o->baseline_path) {	/* a bad baseline costs no run */
		char err[PATH_MAX + 256];
		int status;

		if (!(o->baseline = mw_report_load(o->baseline_path, err, sizeof(err), &status)))
			mw_die(status, "%s", err);
	}
}

static int cleanup_only(void)
{
	struct mw_sweep sw;
	int n = mw_wait_detaching(), ev;
	char what[256];
	long long limit;

	if (n)
		mw_note("waited for %d tracers removing their uprobes after their runs", n);
	mw_sweep(&sw, MW_SWEEP_WAIT_MS);
	mw_sweep_text(&sw, what, sizeof(what));
	mw_note("%s", what);
	/* the compiled scripts' bound (cache.h), which a run keeps after
	 * each compile, kept here too when it was lowered */
	limit = mw_cache_limit();
	if ((ev = mw_cache_evict(limit)) > 0)
		mw_note("%d least recently used compiled scripts removed from the cache "
			"(over %lld MiB)", ev, limit >> 20);
	return MW_EXIT_OK;
}

static const char replay_usage[] =
"Usage: mallocwatch replay [-o FILE] [--json FILE] [--html FILE] [--folded FILE]\n"
"                          [-q] STREAM\n"
"\n"
"Report again on a stream recorded with --save-stream: the same summary,\n"
"JSON, HTML and exit status as the run that recorded it.  A stream saved\n"
"with --stacks keeps the raw stacks and module maps: they are symbolized now,\n"
"from the files named when they are there with the same build-id (else\n"
"module+offset and build-id); --folded FILE writes their folded lines.  A\n"
"stream is data: a file it names is opened only when it is a regular file\n"
"every user may read (never a FIFO or a device), and read only when it is an\n"
"ELF file within the bounds --stacks sets (mallocwatch --help).\n"
"\n"
"  -o, --output FILE    the summary to FILE (default: stderr)\n"
"  --json FILE, --html FILE, --folded FILE  as a run writes them\n"
"  -q, --quiet          no notes or warnings\n"
"\n"
"EXAMPLES\n"
"  mallocwatch --save-stream run.mw -c ./app && mallocwatch replay --json r.json run.mw\n";

/* The snapshots a saved stream keeps (stream.h, MW_META_SNAPSHOT): an
 * attach snapshot seeds the model where it comes, as it did the run's. */
struct replay_snaps {
	struct mw_snapshot *attach, *end, *exit;
	int bad;
};

static void replay_snaps_free(struct replay_snaps *rs)
{
	mw_snapshot_free(rs->attach);
	mw_snapshot_free(rs->end);
	mw_snapshot_free(rs->exit);
}

static void replay_snapshot(void *ctx, struct mw_state *st, const char *which, const char *text)
{
	struct replay_snaps *rs = ctx;
	struct mw_snapshot **slot = strcmp(which, "attach") == 0 ? &rs->attach :
				    strcmp(which, "end") == 0 ? &rs->end :
				    strcmp(which, "exit") == 0 ? &rs->exit : NULL;
	json_t *j = slot && !*slot ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
	char err[256];
	int took = 0;

	if (j && (*slot = mw_snapshot_from_json(j, err, sizeof(err)))) {
		took = 1;
		if (slot == &rs->attach)
			mw_state_seed(st, *slot);
	}
	json_decref(j);
	if (!took) {	/* the report goes on without it */
		mw_state_garbled(st);
		if (!rs->bad++)
			mw_warn("a saved snapshot (%.16s) is garbled or repeated: ignored and counted",
				which);
	}
}

int cmd_replay(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct mw_trace_result r = { 0 };
	struct mw_run_info ri = { 0 };
	struct replay_snaps rs = { 0 };
	struct mw_stream_meta m = { .on_snapshot = replay_snapshot, .ctx = &rs };
	struct outputs out;
	char err[512];
	int c, status, folded_bad = 0;
	FILE *f;
	struct mw_state *st;

	while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case OPT_JSON: o.json = optarg; break;
		case OPT_HTML: o.html = optarg; break;
		case OPT_FOLDED: o.folded = optarg; break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(replay_usage, stdout); return MW_EXIT_OK;
		default: mw_bad_option(c, argv);
		}
	}
	if (optind + 1 != argc)
		mw_usage_error("replay takes one stream file");
	if (!(f = mw_fopen_input(argv[optind])))	/* never a FIFO that would hold us */
		mw_die(MW_EXIT_RUNTIME, "cannot open '%s': %s", argv[optind],
		       mw_input_strerror(errno));
	st = mw_state_new(0);
	if (mw_stream_replay(f, st, &m, err, sizeof(err)) < 0) {
		fclose(f);
		mw_state_free(st);
		mw_stream_meta_free(&m);
		replay_snaps_free(&rs);
		mw_die(MW_EXIT_RUNTIME, "'%s': %s", argv[optind], err);
	}
	fclose(f);
	if (o.folded && !m.stacks) {	/* the other reports are still written */
		mw_error("--folded: '%s' has no stacks (it was not saved with --stacks)",
			 argv[optind]);
		o.folded = NULL;
		folded_bad = 1;
	}
	if (mw_outputs_open(&o, &out, 0) < 0) {
		mw_outputs_close(&o, &out);
		status = MW_EXIT_RUNTIME;
		goto cleanup;
	}
	r = (struct mw_trace_result){ .ready = 1, .pid = m.pid, .have_status = m.have_status,
		.status = m.wait_status, .tracer_died = m.tracer_died, .stopped = m.stopped,
		.lost = m.tracer_lost };
	snprintf(r.tracer_msg, sizeof(r.tracer_msg), "%s", m.tracer_msg);
	ri = (struct mw_run_info){ .argv = (const char *const *)m.argv, .libc = m.libc,
		.runtime = m.runtime, .findings_text = m.findings, .stacks = m.stacks,
		.snap_attach = rs.attach, .snap_end = rs.end, .snap_exit = rs.exit,
		.comm = m.comm[0] ? m.comm : NULL, .stopped = m.stopped,
		.tracer_died = m.tracer_died, .traced_ns = m.traced_ns,
		.status_why = m.have_status ? NULL : mw_run_status_why(!m.argv, 0, m.stopped) };
	status = mw_run_conclude(&out, st, &r, &ri, NULL);
	if (folded_bad)
		status = MW_EXIT_RUNTIME;
	mw_run_write_folded(&out, m.stacks);
	if (mw_outputs_close(&o, &out) < 0)
		status = MW_EXIT_RUNTIME;
cleanup:
	mw_state_free(st);
	mw_stream_meta_free(&m);
	replay_snaps_free(&rs);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .runtime = MW_RT_AUTO, .progress = -1 };
	int status;

	parse_args(argc, argv, &o);
	mw_signals_catch();	/* from here on, ^C ends the run cleanly */
	if (o.cleanup)
		return cleanup_only();
	/* made before anything runs, kept until the checks are written */
	if (o.format_output && !(o.format_file = mw_output_create(o.format_output, 1)))
		status = MW_EXIT_RUNTIME;
	else
		status = mw_trace_procs(&o);
	if (o.format_file && mw_output_close(o.format_file, o.format_output, 0) < 0 &&
	    status == MW_EXIT_OK)
		status = MW_EXIT_RUNTIME;
	mw_pidlist_free(&pids);	/* -p's, --cgroup's (a leak ASan saw) */
	mw_procsel_free(&sel);
	return status;
}
