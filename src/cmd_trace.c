/* cmd_trace.c - `mallocwatch [trace] -c CMD` / `-p PID`: the main job.
 *
 * Coordinates the pipeline: target (which libc) -> sdtnote (its probes)
 * -> gen (the script) -> runtime + tracer (stap) -> stream -> state ->
 * report.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "gen.h"
#include "glibcinfo.h"
#include "leftovers.h"
#include "metrics.h"
#include "jsonout.h"
#include "msg.h"
#include "output.h"
#include "probetab.h"
#include "procmem.h"
#include "protocol.h"
#include "report.h"
#include "runtime.h"
#include "snapshot.h"
#include "state.h"
#include "stream.h"
#include "target.h"
#include "tracer.h"
#include "xalloc.h"

#define MW_VERSION "0.1"

static const char usage[] =
"Usage: mallocwatch [OPTIONS] -c CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -- CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -p PID\n"
"       mallocwatch --cleanup\n"
"       mallocwatch probes [--libc PATH | -p PID] [--libm PATH] [--json | --table]\n"
"       mallocwatch script [--runtime=kernel|bpf] [--libc PATH] [--libm PATH]\n"
"       mallocwatch replay [-o FILE] [--json FILE] [--html FILE] STREAM\n"
"       mallocwatch snapshot -p PID [-o FILE] [--json FILE]\n"
"       mallocwatch check [--baseline BASE.json] --check RULE... REPORT.json\n"
"       mallocwatch check --metrics REPORT.json\n"
"       mallocwatch diff [--format text|json|markdown] BASE.json NEW.json\n"
"\n"
"Trace glibc's SDT probes in a program with SystemTap and print a summary:\n"
"arenas, heaps, sbrk, thresholds, lock waits, retries, mallopt and tunables,\n"
"tcache double frees, setjmp/longjmp, and libm's slow math paths.\n"
"\n"
"Target:\n"
"  -c CMD [ARGS...]     run CMD (never through a shell), traced from its\n"
"                       first instruction; everything after CMD is its ARGS\n"
"  -- CMD [ARGS...]     the same\n"
"  -p PID               attach to a running process until it exits, or ^C\n"
"                       (or SIGTERM) stops tracing and reports; the process\n"
"                       is never stopped or signalled.  Arenas made before\n"
"                       it are read from the process when the probes are\n"
"                       armed, and again at the end (needs the libc's debug\n"
"                       symbols); a libc without SDT probes is reported from\n"
"                       such snapshots alone\n"
"  --duration SECONDS   with -p: stop after this long, as ^C would\n"
"  --interval SECONDS   read the allocator's state (arenas' bytes, heaps,\n"
"                       the main heap's extent, thresholds) this often, for\n"
"                       the timeline (--html) and --progress: default 0.1\n"
"                       with -c, 1 with -p; no probe cost.  With -p on a\n"
"                       libc without probes: the snapshots' period\n"
"  --read-timeout SECONDS  give up reading the allocator (a snapshot or a\n"
"                       sample) after this long: default 2; a sample not\n"
"                       read in time is skipped and counted\n"
"  --progress           one line per interval on stderr: elapsed, arenas,\n"
"                       heap bytes, sbrk net, lock waits and retries since\n"
"                       the last line (default with -p, and with -c when\n"
"                       stderr is a terminal); --no-progress: never\n"
"  --libc PATH          trace this libc.so.6 instead of the one chosen\n"
"                       (system libc with probes, else the probe-enabled\n"
"                       glibc under $MW_GLIBC_PREFIX or " MW_GLIBC_PREFIX ")\n"
"  --libm PATH          trace this libm's slow-math probes (default: the\n"
"                       libm.so.6 beside the libc)\n"
"\n"
"Output:\n"
"  -o FILE              write the summary to FILE (default: stderr)\n"
"  --json FILE          write the report as JSON to FILE ('-' = stdout);\n"
"                       keys in docs/json.md\n"
"  --html FILE          write a self-contained HTML report (no network): bytes\n"
"                       per arena over time, thread lanes, markers, tables\n"
"  --save-script FILE   also write the generated SystemTap script to FILE\n"
"  --save-stream FILE   also record the tracer's output (docs/protocol.md)\n"
"                       to FILE; `mallocwatch replay FILE` reports it again\n"
"  (each FILE is created before anything runs, as the invoking user under\n"
"  sudo; a symbolic link, a FIFO or a file with other hard links is refused)\n"
"  --check RULE         judge the run's report: METRIC OP VALUE, e.g.\n"
"                       'arenas<=4'; repeatable; exit 3 when one fails (see\n"
"                       mallocwatch check --help for the metrics)\n"
"  --baseline FILE      a report (--json) that relative rules ('+10%') use\n"
"  --strict-env         a baseline made with another glibc, CPU count or\n"
"                       arena tunables is an error (exit 2), not a warning\n"
"  --format F           the --check results as text, json, junit, github or\n"
"                       markdown (on stderr)\n"
"  --repeat N           with -c: run the program N times (arena counts depend\n"
"                       on scheduling) and judge --check rules on every run's\n"
"                       figure, aggregated by --aggregate; -o/--json keep the\n"
"                       last run's report\n"
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
"an output could not be written); 2 on a usage error; 128+N when signal N\n"
"came before tracing started.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch -c ./app --threads 8\n"
"  sudo mallocwatch --json report.json -c xz -T2 -k big.tar\n"
"  sudo mallocwatch -p 4242 -o incident.txt\n"
"  sudo mallocwatch -p 4242 --duration 30 --json incident.json\n"
"  sudo mallocwatch snapshot -p 4242\n"
"  sudo mallocwatch -e '!setjmp' -c ./interpreter script.py\n"
"  mallocwatch probes --libc /var/cache/mallocwatch/glibc/lib/libc.so.6\n";

struct trace_opts {
	char **cmd;			/* -c / -- */
	pid_t pid;			/* -p */
	const char *libc, *libm;
	const char *out, *json, *save_script, *save_stream;
	enum mw_runtime runtime;
	unsigned families;		/* -e; 0 = all */
	int verbose;
	int cleanup;			/* --cleanup */
	long duration_ms;		/* --duration, -p only; 0 = until it exits */
	struct mw_rule *rules;		/* --check */
	size_t nrules, crules;
	const char *baseline_path;	/* --baseline */
	enum mw_format format;		/* --format of the --check results */
	long repeat;			/* --repeat: -c runs; 0 = once */
	enum mw_aggregate aggregate;	/* --aggregate of repeated runs' figures */
	int strict_env;			/* --strict-env */
	json_t *baseline;		/* loaded before anything runs */
	long interval_ms;		/* --interval; 0 = the default */
	long read_timeout_ms;		/* --read-timeout; 0 = MW_SNAP_TIMEOUT_MS */
	const char *html;		/* --html */
	int progress;			/* --progress 1, --no-progress 0, else -1 */
};

/* The files a run writes, opened before anything is traced so that an
 * unwritable path fails at once instead of after the run. */
struct outputs {
	FILE *summary;			/* -o, else stderr */
	FILE *json;			/* --json; NULL when not asked */
	FILE *stream;			/* --save-stream; NULL when not asked */
	FILE *html;			/* --html; NULL when not asked */
	FILE *script;			/* --save-script; NULL when not asked */
	int summary_errno, json_errno, html_errno;	/* the first write error of each */
};

enum { OPT_JSON = 256, OPT_RUNTIME, OPT_LIBC, OPT_LIBM, OPT_SAVE, OPT_STREAM, OPT_CLEANUP,
       OPT_DURATION, OPT_INTERVAL, OPT_CHECK, OPT_BASELINE, OPT_FORMAT, OPT_REPEAT,
       OPT_AGGREGATE, OPT_STRICT_ENV, OPT_HTML, OPT_PROGRESS, OPT_NO_PROGRESS,
       OPT_READ_TIMEOUT };

static const struct option longopts[] = {
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
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "aggregate", required_argument, NULL, OPT_AGGREGATE },
	{ "strict-env", no_argument, NULL, OPT_STRICT_ENV },
	{ "html", required_argument, NULL, OPT_HTML },
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

long mw_seconds_option(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > 86400)
		mw_usage_error("%s needs a number of seconds (up to 86400), not '%s'", opt, s);
	return (long)(v * 1000 + 0.5) ? (long)(v * 1000 + 0.5) : 1;
}

/* The command starts at the first "-c" or "--"; options are before it. */
static int split_command(int argc, char **argv, struct trace_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--") == 0) {
			if (i + 1 >= argc)
				mw_usage_error("%s needs a command", argv[i]);
			o->cmd = argv + i + 1;
			return i;
		}
	}
	return argc;
}

static void parse_args(int argc, char **argv, struct trace_opts *o)
{
	int c;

	argc = split_command(argc, argv, o);
	while ((c = getopt_long(argc, argv, "+e:o:p:qvhV", longopts, NULL)) != -1) {
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
		case OPT_CHECK: {
			char err[256];

			xgrow((void **)&o->rules, o->nrules, &o->crules, sizeof(*o->rules));
			if (mw_rule_parse(optarg, &o->rules[o->nrules++], err, sizeof(err)) < 0)
				mw_usage_error("%s", err);
			break;
		}
		case OPT_BASELINE: o->baseline_path = optarg; break;
		case OPT_HTML: o->html = optarg; break;
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
		case OPT_AGGREGATE:
			if (mw_aggregate_parse(optarg, &o->aggregate) < 0)
				mw_usage_error("unknown aggregate '%s' (worst, max, median, min)", optarg);
			break;
		case OPT_FORMAT:
			if (mw_format_parse(optarg, &o->format) < 0)
				mw_usage_error("unknown format '%s' (text, json, junit, github, "
					       "markdown)", optarg);
			break;
		case 'q': mw_quiet(1); break;
		case 'v': o->verbose = 1; break;
		case 'p':
			if (mw_parse_pid(optarg, &o->pid) < 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'h': fputs(usage, stdout); exit(MW_EXIT_OK);
		case 'V': printf("mallocwatch %s\n", MW_VERSION); exit(MW_EXIT_OK);
		default: mw_usage_error("bad option");
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s' (use -c CMD or -- CMD)", argv[optind]);
	if (o->cleanup && (o->cmd || o->pid))
		mw_usage_error("--cleanup takes no -c or -p");
	if (!o->cmd && !o->pid && !o->cleanup)
		mw_usage_error("no command given: use -c CMD or -p PID");
	if (o->cmd && o->pid)
		mw_usage_error("-c and -p cannot be used together");
	if (o->progress < 0)	/* quiet in CI logs; on for incidents */
		o->progress = o->pid || isatty(STDERR_FILENO);
	if (o->duration_ms && !o->pid)
		mw_usage_error("--duration goes with -p (a -c run ends when the program does)");
	if (o->repeat > 1 && !o->cmd)
		mw_usage_error("--repeat goes with -c (a process can be attached to once)");
	for (size_t i = 0; i < o->nrules; i++)
		if (o->rules[i].relative && !o->baseline_path)
			mw_usage_error("rule '%s' is relative (+N, +N%%) and needs --baseline",
				       o->rules[i].text);
	if (o->baseline_path) {	/* a bad baseline costs no run */
		char err[PATH_MAX + 256];
		int status;

		if (!(o->baseline = mw_report_load(o->baseline_path, err, sizeof(err), &status)))
			mw_die(status, "%s", err);
	}
}

/* Every output file, before anything runs (with_script: --save-script
 * too, when a script will be made). */
static int open_outputs(const struct trace_opts *o, struct outputs *out, int with_script)
{
	*out = (struct outputs){ .summary = stderr };
	if (o->out && !(out->summary = mw_output_create(o->out, 0)))
		return -1;
	if (o->json && !(out->json = mw_output_create(o->json, 1)))
		return -1;
	if (o->save_stream && !(out->stream = mw_output_create(o->save_stream, 0)))
		return -1;
	if (o->html && !(out->html = mw_output_create(o->html, 0)))
		return -1;
	if (with_script && o->save_script && !(out->script = mw_output_create(o->save_script, 0)))
		return -1;
	return 0;
}

static int close_outputs(const struct trace_opts *o, struct outputs *out)
{
	int ret = 0;

	if (out->summary && out->summary != stderr)
		ret |= mw_output_close(out->summary, o->out, out->summary_errno);
	if (out->json)
		ret |= mw_output_close(out->json, o->json, out->json_errno);
	if (out->stream)
		ret |= mw_output_close(out->stream, o->save_stream, 0);
	if (out->html)
		ret |= mw_output_close(out->html, o->html, out->html_errno);
	if (out->script)
		ret |= mw_output_close(out->script, o->save_script, 0);
	*out = (struct outputs){ 0 };
	return ret;
}

/* Where tracer lines go: the state, and the --save-stream file. */
struct sink {
	struct mw_state *st;
	FILE *save;
	pid_t attach_pid;	/* -p: say when tracing has started */
	struct mw_glibc *g;	/* -p: the layouts for snapshots; NULL: none */
	struct mw_snapshot *at_attach;	/* taken when the probes were armed */
	struct mw_snapshot *at_exit;	/* -c: taken at the program's exit */
	/* --interval samples (sample()) */
	int progress;		/* print a line per sample */
	struct mw_glibc sg;	/* -c: the layouts, loaded at the first sample
				 * or at the exit, whichever comes first */
	int have_sg, sg_failed;
	struct mw_proc proc;	/* the process's mappings, refreshed per sample */
	int have_proc;
	uint64_t prev_waits, prev_retries;	/* at the last progress line */
	long read_timeout_ms;	/* --read-timeout; 0 = the default */
	unsigned long samples, skipped;	/* samples tried; not read (timed out,
					 * or the allocator is corrupt) */
	char skip_why[PATH_MAX + 512];	/* the first skipped sample's reason */
	uint64_t main_sym;	/* main_arena's link-time address; 0 unknown */
	int bias_sent;		/* a B record from a snapshot went out */
};

#define SAMPLE_LOAD_TRIES 20	/* samples that may find no libc mapped yet */

static void on_line(void *ctx, const char *line);

/* --progress: one vmstat-like line: the sample just taken (s, at ns),
 * the newest lock-wait count the script answered, retries so far. */
static void progress_line(struct sink *k, const struct mw_snapshot *s, uint64_t ns)
{
	size_t nt;
	const struct mw_thread *t = mw_state_threads(k->st, &nt);
	uint64_t heap = 0, retries = 0, origin = mw_state_origin(k->st);
	uint64_t waits = mw_state_waits_latest(k->st);
	char hb[16], sb[16];

	for (size_t i = 0; i < s->narenas; i++)
		heap += s->arenas[i].heap_bytes;
	for (size_t i = 0; i < nt; i++)
		retries += t[i].retries;
	mw_note("%7.1fs  arenas %3zu  heaps %9s  sbrk net %9s  waits +%-6" PRIu64
		"  retries +%" PRIu64, origin && ns > origin ? (double)(ns - origin) / 1e9 : 0.0,
		s->narenas, mw_human_bytes(heap, hb, sizeof(hb)),
		mw_human_bytes(s->main_end > s->sbrk_base ? s->main_end - s->sbrk_base : 0, sb,
			       sizeof(sb)), waits - k->prev_waits, retries - k->prev_retries);
	k->prev_waits = waits;
	k->prev_retries = retries;
}

/* A snapshot's figures as Y and U lines, into the stream like the
 * tracer's (so --save-stream keeps them), timed now; returns that time. */
static uint64_t emit_sample(struct sink *k, const struct mw_snapshot *s)
{
	char line[256];
	uint64_t ns = mw_now_ns();

	snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		 " %zu", MW_REC_SAMPLE, ns, s->mmap_threshold, s->trim_threshold,
		 s->sbrk_base, s->main_end, s->narenas);
	on_line(k, line);
	for (size_t i = 0; i < s->narenas; i++) {
		const struct mw_snap_arena *a = &s->arenas[i];

		snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %zu %" PRIu64,
			 MW_REC_SARENA, a->addr, a->system_mem, a->nheaps, a->heap_bytes);
		on_line(k, line);
		/* the libc's load bias, as the script's B gives it once an
		 * event saw the libc: main_arena is named by its address in
		 * the trace tables even when no probe did */
		if (a->is_main && k->main_sym && !k->bias_sent && a->addr > k->main_sym) {
			snprintf(line, sizeof(line), "%c %" PRIu64, MW_REC_BIAS,
				 a->addr - k->main_sym);
			k->bias_sent = 1;
			on_line(k, line);
		}
	}
	return ns;
}

/* --interval: read the allocator (headers only, snapshot.h) and give the
 * sample to the stream as Y and U lines, so that --save-stream keeps it.
 * 0; -1 when there is none (a sample not read within --read-timeout, or
 * of a corrupt allocator, is counted as skipped). */
static int sample(void *ctx, pid_t pid)
{
	struct sink *k = ctx;
	const struct mw_glibc *g = k->g;
	struct mw_snapshot *s;
	char err[PATH_MAX + 512];
	uint64_t ns;

	if (!g && k->have_sg)
		g = &k->sg;
	if (!g) {	/* -c: the libc is mapped once the loader has run */
		if (k->sg_failed >= SAMPLE_LOAD_TRIES)
			return -1;
		if (mw_glibc_load(pid, &k->sg, err, sizeof(err)) < 0) {
			if (++k->sg_failed == SAMPLE_LOAD_TRIES)
				mw_warn("no allocator samples: %s", err);
			return -1;
		}
		k->have_sg = 1;
		g = &k->sg;
	}
	if (!k->have_proc) {
		if (mw_proc_open(&k->proc, pid, err, sizeof(err)) < 0)
			return -1;
		k->have_proc = 1;
	} else if (mw_proc_refresh(&k->proc, err, sizeof(err)) < 0) {
		return -1;
	}
	k->samples++;
	switch (mw_snapshot_sample(&k->proc, g, k->read_timeout_ms, &s, err, sizeof(err))) {
	case MW_SNAP_OK:
		break;
	case MW_SNAP_TIMEOUT:
	case MW_SNAP_CORRUPT:	/* skipped, not drawn; said once at the end */
		if (!k->skipped++)
			snprintf(k->skip_why, sizeof(k->skip_why), "%s", err);
		return -1;
	default:
		return -1;
	}
	ns = emit_sample(k, s);
	if (k->progress)
		progress_line(k, s, ns);
	mw_snapshot_free(s);
	return 0;
}

/* -c, the program is exiting (held in its ptrace exit stop): read the
 * allocator while its memory is still there. */
static void exit_snapshot(void *ctx, pid_t pid)
{
	struct sink *k = ctx;
	char err[PATH_MAX + 512];

	if (!k->have_sg && mw_glibc_load(pid, &k->sg, err, sizeof(err)) == 0)
		k->have_sg = 1;
	if (!k->have_sg || mw_snapshot_read(pid, &k->sg, k->read_timeout_ms, &k->at_exit, err,
					    sizeof(err)) < 0)
		mw_note("no snapshot at exit: %s", err);
	else	/* the timeline's last sample */
		emit_sample(k, k->at_exit);
}

/* -p, probes armed: read the allocator as it is, and start from it. */
static void attach_snapshot(struct sink *k)
{
	char err[512];

	if (!k->g || k->at_attach)
		return;
	if (mw_snapshot_read(k->attach_pid, k->g, k->read_timeout_ms, &k->at_attach, err,
			     sizeof(err)) < 0) {
		mw_warn("no snapshot at attach: %s", err);
		return;
	}
	mw_state_seed(k->st, k->at_attach);
}

static void on_line(void *ctx, const char *line)
{
	static int warned;
	struct sink *k = ctx;

	if (k->save)
		fprintf(k->save, "%s\n", line);
	if (k->attach_pid && strcmp(line, MW_LINE_READY) == 0) {
		attach_snapshot(k);
		mw_note("tracing process %d; ^C or SIGTERM stops and reports", (int)k->attach_pid);
	}
	if (mw_stream_line(k->st, line) < 0 && !warned++) {
		char q[200];

		mw_warn("garbled tracer line ignored and counted: '%s'", mw_quote(line, q, sizeof(q)));
	}
	if (strcmp(line, MW_LINE_READY) == 0 && !mw_state_origin(k->st)) {
		/* the program starts now (-c: released; -p: traced from now) */
		char o[64];

		snprintf(o, sizeof(o), "%c %" PRIu64, MW_REC_ORIGIN, mw_now_ns());
		on_line(k, o);
	}
}

static unsigned long long missing(void *ctx)
{
	return mw_state_missing(((struct sink *)ctx)->st);
}

/* Write the script into the work directory, and to save (--save-script,
 * already open; closed by close_outputs) unless NULL. */
static int write_script(const struct mw_elf *libc, const struct mw_gen_opts *g,
			const char *dir, char *script, size_t len, FILE *save,
			struct mw_gen_stats *st)
{
	char err[PATH_MAX + 256];
	FILE *f;

	snprintf(script, len, "%s/mallocwatch.stp", dir);
	if (!(f = fopen(script, "we"))) {
		mw_error("cannot create '%s': %s", script, strerror(errno));
		return -1;
	}
	if (mw_gen_script(libc, g, f, st, err, sizeof(err)) < 0 ||
	    (save && mw_gen_script(libc, g, save, st, err, sizeof(err)) < 0)) {
		fclose(f);
		mw_error("%s", err);
		return -1;
	}
	if (fclose(f) != 0) {
		mw_error("cannot write '%s': %s", script, strerror(errno));
		return -1;
	}
	return 0;
}

/* Write the summary and the JSON.  A write error is found and named
 * (path and errno) when the file is closed (close_outputs); -1 here only
 * for the summary on stderr, which is not closed. */
static int write_reports(struct outputs *out, const struct mw_state *st,
			 const struct mw_run_info *ri)
{
	if (mw_report_text(out->summary, st, ri) < 0)
		out->summary_errno = errno ? errno : EIO;
	if (out->json && mw_report_json(out->json, st, ri) < 0)
		out->json_errno = errno ? errno : EIO;
	if (out->html && mw_report_html(out->html, st, ri) < 0)
		out->html_errno = errno ? errno : EIO;
	return out->summary == stderr && out->summary_errno ? -1 : 0;
}

/* The exit status, and the one-line notes about how things ended. */
static int finish_status(const char *name, const struct mw_trace_result *r,
			 struct mw_run_info *ri, const struct mw_state *st)
{
	uint64_t total, lost, garbled;
	int ended, status = MW_EXIT_OK;

	mw_state_totals(st, &total, &lost, &garbled, &ended);
	if (lost)
		mw_warn("%" PRIu64 " events lost (see the summary)", lost);
	if (mw_state_full_tables(st)[0])
		mw_warn("the script's tables were full, later entries dropped: %s",
			mw_state_full_tables(st));
	if (r->have_status) {
		ri->have_status = 1;
		if (WIFSIGNALED(r->status)) {
			ri->term_signal = WTERMSIG(r->status);
			ri->exit_status = -1;
			char q[256];

			mw_error("'%s' killed by signal %d (%s)", mw_quote(name, q, sizeof(q)),
				 ri->term_signal, strsignal(ri->term_signal));
			status = 128 + ri->term_signal;
		} else {
			ri->exit_status = WEXITSTATUS(r->status);
			status = ri->exit_status;
		}
	}
	if (r->tracer_died || !ended) {
		char q[600];

		mw_error("the tracer ended early%s%s; the report is incomplete",
			 r->tracer_msg[0] ? ": " : "", mw_quote(r->tracer_msg, q, sizeof(q)));
		status = MW_EXIT_RUNTIME;
	}
	return status;
}

/* The libm whose slow-math probes to trace (into path): --libm, else the
 * one beside the libc; NULL when there is none or the math family is not
 * selected.  *bad is set for an unusable --libm. */
static struct mw_elf *open_libm(const struct trace_opts *o, const char *libc,
				char *path, size_t len, int *bad)
{
	char err[PATH_MAX + 256];
	struct mw_elf *e;

	path[0] = '\0';
	if (o->families && !(o->families & (1u << MW_FAM_MATH)))
		return NULL;
	if (mw_choose_libm(o->libm, libc, path, len, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		*bad = 1;
		return NULL;
	}
	if (!path[0])
		return NULL;
	if (!(e = mw_elf_open(path, err, sizeof(err))))
		mw_warn("%s; slow-math probes not traced", err);
	return e;
}

/* After the stream: finish the model, say how it ended, write reports.
 * Shared by a live run and a replay.  Returns the exit status. */
static int conclude(struct outputs *out, struct mw_state *st,
		    const struct mw_trace_result *r, struct mw_run_info *ri)
{
	int status;

	mw_state_set_pid(st, r->pid);
	mw_state_tracer_lost(st, r->lost);
	mw_state_finish(st);
	ri->pid = r->pid;
	ri->tracer_died = r->tracer_died;
	status = finish_status(ri->argv && ri->argv[0] ? ri->argv[0] : "process", r, ri, st);
	if (write_reports(out, st, ri) < 0)
		status = MW_EXIT_RUNTIME;
	return status;
}

/* --check: judge the runs' own reports (one per -c run with --repeat);
 * lines on stderr.  A failed rule makes a successful run exit
 * MW_EXIT_CHECK; the program's own failure (or mallocwatch's) keeps its
 * status.  n is how many runs gave a report. */
static int judge(const struct trace_opts *o, json_t *const *reports, size_t n, int status)
{
	struct mw_verdict *v;
	size_t failed;

	if (!o->nrules || !n)
		return status;
	if (o->baseline && mw_check_env(o->baseline, reports[n - 1], o->strict_env) < 0)
		return MW_EXIT_USAGE;
	if (n == 1)
		failed = mw_rules_report(stderr, o->format, o->rules, o->nrules, reports[0],
					 o->baseline);
	else {
		v = xcalloc(o->nrules, sizeof(*v));
		for (size_t i = 0; i < o->nrules; i++)
			v[i] = mw_rule_judge_runs(&o->rules[i], reports, n, o->aggregate,
						  o->baseline, stderr);
		failed = mw_verdicts_write(stderr, o->format, o->rules, v, o->nrules);
		free(v);
	}
	return failed && status == MW_EXIT_OK ? MW_EXIT_CHECK : status;
}

/* "K=V" of the variables in a NUL- or newline-separated block that arena
 * counts depend on, into malloc_vars / tunables. */
static void env_vars(const char *block, size_t len, struct mw_environment *e)
{
	size_t n = 0;

	for (const char *p = block; p < block + len; p += strlen(p) + 1) {
		if (strncmp(p, "GLIBC_TUNABLES=", 15) == 0)
			snprintf(e->tunables, sizeof(e->tunables), "%s", p + 15);
		else if (strncmp(p, "MALLOC_", 7) == 0 && n < sizeof(e->malloc_vars) - 2)
			n += (size_t)snprintf(e->malloc_vars + n, sizeof(e->malloc_vars) - n, "%s%s",
					      n ? " " : "", p);
	}
}

/* What decides arena counts in this run (struct mw_environment). */
static void environment(const struct trace_opts *o, const struct mw_elf *libc,
			const char *runtime, struct mw_environment *e)
{
	cpu_set_t set;

	memset(e, 0, sizeof(*e));
	e->glibc_minor = mw_elf_glibc_minor(libc);
	e->nproc = sysconf(_SC_NPROCESSORS_ONLN);
	e->cpus = sched_getaffinity(o->pid, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : e->nproc;
	e->runtime = runtime;
	e->version = MW_VERSION;
	if (o->pid) {	/* the target's own environment */
		char path[64], *buf = xmalloc(1 << 16);
		int fd;
		ssize_t len = 0;

		snprintf(path, sizeof(path), "/proc/%d/environ", (int)o->pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			len = read(fd, buf, (1 << 16) - 1);
			close(fd);
		}
		if (len > 0) {
			buf[len] = '\0';
			env_vars(buf, (size_t)len, e);
		}
		free(buf);
	} else {	/* -c: the program gets ours */
		for (char **v = environ; *v; v++)
			env_vars(*v, strlen(*v) + 1, e);
	}
}

/* Record how the run ended at the end of a saved stream. */
static void save_footer(FILE *f, const struct mw_trace_result *r)
{
	struct mw_stream_meta m = { .pid = r->pid, .have_status = r->have_status,
		.wait_status = r->status, .tracer_died = r->tracer_died,
		.stopped = r->stopped, .tracer_lost = r->lost };

	snprintf(m.tracer_msg, sizeof(m.tracer_msg), "%s", r->tracer_msg);
	mw_stream_write_footer(f, &m);
}

/* Everything from the libc's probes to the reports, in the work
 * directory dir.  Returns the exit status. */
/* -p: the snapshot at the end, when the process is still there. */
static struct mw_snapshot *end_snapshot(pid_t pid, struct mw_glibc *g, long timeout_ms)
{
	struct mw_snapshot *s = NULL;
	char err[512];

	if (!g || !mw_process_alive(pid))
		return NULL;
	if (mw_snapshot_read(pid, g, timeout_ms, &s, err, sizeof(err)) < 0) {
		mw_warn("no snapshot at the end: %s", err);
		return NULL;
	}
	return s;
}

static int trace(const struct trace_opts *o, struct outputs *out,
		 const struct mw_target *t, const char *libc_path, const char *dir,
		 struct mw_glibc *g, json_t **report, pid_t *detaching)
{
	char err[PATH_MAX + 512], script[PATH_MAX + 64], libm_path[PATH_MAX];
	struct mw_runtime_env env;
	struct mw_elf *libc = NULL, *libm = NULL;
	struct mw_gen_stats gst;
	struct mw_snapshot *at_end = NULL;
	struct mw_environment menv;
	struct sink k = { .save = out->stream, .attach_pid = o->pid, .g = g,
			  .progress = o->progress > 0, .read_timeout_ms = o->read_timeout_ms };
	struct mw_trace_result r;
	struct mw_run_info ri = { 0 };
	uint64_t sym = 0;
	int status = MW_EXIT_RUNTIME, bad_libm = 0;

	if (!(libc = mw_elf_open(libc_path, err, sizeof(err)))) {
		mw_error("%s", err);
		goto cleanup;
	}
	if (mw_runtime_prepare(o->runtime, 1, dir, &env, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		goto cleanup;
	}
	mw_note("%s runtime%s%s", mw_runtime_name(env.rt), env.did[0] ? ": " : "", env.did);
	libm = open_libm(o, libc_path, libm_path, sizeof(libm_path), &bad_libm);
	if (bad_libm || write_script(libc, &(struct mw_gen_opts){ .runtime = env.rt,
			 .libc_path = libc_path, .families = o->families, .libm = libm,
			 .libm_path = libm_path }, dir, script, sizeof(script), out->script,
			 &gst) < 0)
		goto cleanup;
	k.st = mw_state_new(0);
	if (libm)
		mw_state_set_libm(k.st, libm_path, gst.math_sites);
	if (mw_elf_symbol(libc, "main_arena", &sym) == 0) {
		mw_state_set_main_arena_sym(k.st, sym);
		k.main_sym = sym;
	}
	else
		mw_warn("'main_arena' not found in '%s' (stripped?); main_arena's address "
			"will be unknown", libc_path);
	if (k.save) {
		struct mw_stream_meta m = { .main_arena = sym, .libm_sites = gst.math_sites,
					    .argv = o->cmd };

		snprintf(m.libc, sizeof(m.libc), "%s", libc_path);
		snprintf(m.runtime, sizeof(m.runtime), "%s", mw_runtime_name(env.rt));
		snprintf(m.libm, sizeof(m.libm), "%s", libm ? libm_path : "");
		mw_stream_write_header(k.save, &m);
	}
	if (mw_signal_pending()) {
		r = (struct mw_trace_result){ .interrupted = mw_signal_take() };
		snprintf(err, sizeof(err), "interrupted by signal %d (%s) before tracing started",
			 r.interrupted, strsignal(r.interrupted));
	} else if (mw_trace_run(&(struct mw_tracer_opts){ .env = &env, .script = script,
				.workdir = dir, .target = t, .attach_pid = o->pid,
				.verbose = o->verbose, .duration_ms = o->duration_ms,
				.at_exit = t ? exit_snapshot : NULL, .flush = t != NULL,
				.missing = missing, .sample = sample, .sample_ms = o->interval_ms ?
				o->interval_ms : o->pid ? 1000 : 100 }, on_line, &k, &r, err,
				sizeof(err)) == 0) {
		if (r.detaching) {
			*detaching = r.detaching;
			if (o->verbose)
				mw_note("report complete %lld ms after the program's exit",
					r.flush_ms);
			/* (not counted from uprobe_events: reading it waits
			 * behind every removal under way on the machine; a
			 * detail for -v: the report is complete) */
			if (o->verbose)
				mw_note("the tracer (pid %d) goes on removing the uprobes of %d "
					"probe sites in the background%s; the program has exited "
					"and nothing is traced", (int)r.detaching, gst.sites,
					env.rt == MW_RT_BPF ? " (about 0.11 s each)" : "");
		}
		if (r.ptrace_msg[0])
			mw_note("%s", r.ptrace_msg);
		if (k.skipped)
			mw_warn("%lu of %lu allocator samples skipped (not in the timeline); the "
				"first: %s", k.skipped, k.samples, k.skip_why);
		if (o->pid && (at_end = end_snapshot(o->pid, g, o->read_timeout_ms)))
			emit_sample(&k, at_end);	/* the timeline's last */
		if (k.save)
			save_footer(k.save, &r);
		environment(o, libc, mw_runtime_name(env.rt), &menv);
		ri = (struct mw_run_info){ .argv = (const char *const *)o->cmd, .libc = libc_path,
			.runtime = mw_runtime_name(env.rt), .stopped = r.stopped,
			.snap_attach = k.at_attach, .snap_end = at_end, .snap_exit = k.at_exit,
			.env = &menv };
		status = conclude(out, k.st, &r, &ri);
		if (report && !(*report = mw_report_json_value(k.st, &ri))) {
			mw_error("cannot judge the run: %s", strerror(ENOMEM));
			status = MW_EXIT_RUNTIME;
		}
		goto cleanup;
	}
	mw_error("%s", err);
	if (r.interrupted)
		status = 128 + r.interrupted;
cleanup:
	if (k.have_proc)
		mw_proc_close(&k.proc);
	mw_snapshot_free(k.at_exit);
	mw_snapshot_free(k.at_attach);
	mw_snapshot_free(at_end);
	mw_state_free(k.st);
	mw_elf_close(libm);
	mw_elf_close(libc);
	return status;
}

/* Work directory, sweep, trace, clean.  Returns the exit status; the
 * report as a jansson value in *report when report is not NULL (NULL
 * when the run gave none). */
static int run(const struct trace_opts *o, const struct mw_target *t, const char *libc_path,
	       struct mw_glibc *g, json_t **report)
{
	char dir[PATH_MAX], err[PATH_MAX + 256], module[64];
	struct outputs out;
	struct mw_sweep sw;
	int status = MW_EXIT_RUNTIME;
	pid_t detaching = 0;

	mw_tracer_reap();
	if (open_outputs(o, &out, 1) < 0) {
		close_outputs(o, &out);
		return MW_EXIT_RUNTIME;
	}
	mw_sweep(&sw, MW_SWEEP_RUN_MS);
	if (sw.tracers || sw.uprobes || sw.dirs)
		mw_note("cleaned up after an earlier run that was killed: %d tracers stopped, "
			"%d uprobe definitions and %d work directories removed", sw.tracers,
			sw.uprobes, sw.dirs);
	if (mw_workdir_make(dir, sizeof(dir), err, sizeof(err)) < 0)
		mw_error("%s", err);
	else
		status = trace(o, &out, t, libc_path, dir, g, report, &detaching);
	if (!detaching || mw_tracer_hand_off(detaching, dir,
					     mw_runtime_module(dir, module, sizeof(module))) < 0)
		mw_workdir_remove(dir);
	if (close_outputs(o, &out) < 0 && (status == MW_EXIT_OK || !t))
		status = MW_EXIT_RUNTIME;
	return status;
}

/* One periodic snapshot's figures (snapshots-only mode). */
struct sample {
	double t;		/* seconds since the first snapshot */
	size_t arenas;
	uint64_t system, in_use, free;
};

#define MAX_SAMPLES 100000
#define SAMPLE_ROWS 32

static void samples_text(FILE *f, const struct sample *s, size_t n)
{
	char a[16], b[16], c[16];

	fprintf(f, "\nSamples: %zu%s\n  %9s %6s %10s %10s %10s\n", n,
		n > SAMPLE_ROWS ? " (the last shown)" : "", "SECONDS", "ARENAS", "SYSTEM",
		"IN USE", "FREE");
	for (size_t i = n > SAMPLE_ROWS ? n - SAMPLE_ROWS : 0; i < n; i++)
		fprintf(f, "  %9.1f %6zu %10s %10s %10s\n", s[i].t, s[i].arenas,
			mw_human_bytes(s[i].system, a, sizeof(a)),
			mw_human_bytes(s[i].in_use, b, sizeof(b)),
			mw_human_bytes(s[i].free, c, sizeof(c)));
}

/* The snapshots-only JSON; 0, or -1 with errno (mw_json_write). */
static int samples_json(FILE *f, pid_t pid, const char *libc, const struct mw_snapshot *a,
			const struct mw_snapshot *b, const struct sample *s, size_t n)
{
	json_t *arr = json_array(), *root;
	int ret;

	for (size_t i = 0; i < n; i++)
		mw_json_append(&arr, json_pack("{s:f, s:I, s:I, s:I, s:I}", "t", s[i].t,
			"arenas", (json_int_t)s[i].arenas, "system_bytes", (json_int_t)s[i].system,
			"in_use_bytes", (json_int_t)s[i].in_use, "free_bytes", (json_int_t)s[i].free));
	root = json_pack("{s:i, s:s, s:{s:i, s:o}, s:{s:o, s:o}, s:o}", "version", 1,
		"mode", "snapshots", "target", "pid", (int)pid, "libc", mw_json_str(libc),
		"snapshots", "attach", mw_snapshot_json_value(a, "?"),
		"end", b ? mw_snapshot_json_value(b, "?") : json_null(), "samples", arr);
	ret = mw_json_write(root, f, JSON_INDENT(2));
	json_decref(root);
	return ret;
}

static void add_sample(struct sample **s, size_t *n, size_t *cap, const struct mw_snapshot *x,
		       uint64_t t0)
{
	if (*n == MAX_SAMPLES)
		return;
	if (*n == *cap)
		xgrow((void **)s, *n, cap, sizeof(**s));
	(*s)[(*n)++] = (struct sample){ .t = (double)(x->taken_ns - t0) / 1e9,
		.arenas = x->narenas, .system = x->system_bytes, .in_use = x->in_use_bytes,
		.free = x->free_bytes };
}

/* The snapshots-only report: the last snapshot, how it changed since
 * the first, the samples; JSON when asked. */
static void snapshots_report(const struct trace_opts *o, struct outputs *out, const char *libc,
			     const struct mw_snapshot *first, const struct mw_snapshot *last,
			     const struct sample *samples, size_t n)
{
	char comm[64], q[4 * PATH_MAX + 8];

	mw_process_comm(o->pid, comm, sizeof(comm));
	mw_snapshot_text(out->summary, last ? last : first, comm[0] ? comm : "?");
	fprintf(out->summary, "  (snapshots only: %s has no SDT probes)\n",
		mw_quote(libc, q, sizeof(q)));
	mw_snapshot_diff_text(out->summary, first, last);
	samples_text(out->summary, samples, n);
	if (out->json && samples_json(out->json, o->pid, libc, first, last, samples, n) < 0)
		out->json_errno = errno;
}

/* -p on a libc without SDT probes: snapshots at attach, every interval
 * (default 1 s) and at the end, until the process exits, a signal, or
 * --duration.  The process is never stopped or signalled. */
static int snapshots_only(const struct trace_opts *o, const char *libc, struct mw_glibc *g)
{
	struct mw_snapshot *first = NULL, *last = NULL, *x;
	struct sample *samples = NULL;
	size_t n = 0, cap = 0;
	struct outputs out;
	char err[512];
	long interval = o->interval_ms ? o->interval_ms : 1000;
	unsigned long skipped = 0;
	char why[512];
	long long stop_at;
	int pidfd, status = MW_EXIT_OK;
	uint64_t t0;

	if (open_outputs(o, &out, 0) < 0) {
		close_outputs(o, &out);
		return MW_EXIT_RUNTIME;
	}
	if (mw_snapshot_read(o->pid, g, o->read_timeout_ms, &first, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		close_outputs(o, &out);
		return MW_EXIT_RUNTIME;
	}
	mw_note("'%s' has no SDT probes: reporting process %d from snapshots alone (at attach, "
		"every %.1f s, at the end); events (who created which arena, lock waits, retries) "
		"need a libc built with --enable-systemtap", libc, (int)o->pid, interval / 1000.0);
	t0 = first->taken_ns;
	add_sample(&samples, &n, &cap, first, t0);
	pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	stop_at = o->duration_ms ? mw_now_ms() + o->duration_ms : 0;
	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		int r = poll(&p, pidfd >= 0 ? 1 : 0, (int)interval);

		if (mw_signal_take() || (r > 0 && (p.revents & POLLIN)) || !mw_process_alive(o->pid))
			break;
		if (mw_snapshot_read(o->pid, g, o->read_timeout_ms, &x, err, sizeof(err)) == 0) {
			add_sample(&samples, &n, &cap, x, t0);
			mw_snapshot_free(last);
			last = x;
		} else if (!skipped++) {
			snprintf(why, sizeof(why), "%s", err);
		}
		if (stop_at && mw_now_ms() >= stop_at)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (skipped)
		mw_warn("%lu snapshots skipped; the first: %s", skipped, why);
	if ((x = end_snapshot(o->pid, g, o->read_timeout_ms))) {
		add_sample(&samples, &n, &cap, x, t0);
		mw_snapshot_free(last);
		last = x;
	}
	snapshots_report(o, &out, libc, first, last, samples, n);
	if (close_outputs(o, &out) < 0)
		status = MW_EXIT_RUNTIME;
	free(samples);
	mw_snapshot_free(first);
	mw_snapshot_free(last);
	return status;
}

/* -p PID: trace from a snapshot; or, when its libc has no SDT probes,
 * report from snapshots alone. */
static int attach(const struct trace_opts *o)
{
	char err[PATH_MAX + 512], libc[PATH_MAX];
	struct mw_glibc g;
	int have_g, probes;

	if (kill(o->pid, 0) < 0 && errno == ESRCH)
		mw_die(MW_EXIT_RUNTIME, "no process %d", (int)o->pid);
	if (mw_choose_libc(o->libc, o->pid, libc, sizeof(libc), err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	have_g = mw_glibc_load(o->pid, &g, err, sizeof(err)) == 0;
	probes = mw_libc_has_probes(libc);
	if (probes != 1) {
		if (!have_g)
			mw_die(MW_EXIT_RUNTIME, "'%s' has no SDT probes to trace, and snapshots "
			       "cannot be taken either: %s", libc, err);
		return snapshots_only(o, libc, &g);
	}
	if (!have_g)
		mw_warn("%s; no snapshots at attach and at the end: arenas made before "
			"tracing are not shown", err);
	{
		json_t *report = NULL;
		int status = run(o, NULL, libc, have_g ? &g : NULL, o->nrules ? &report : NULL);

		status = judge(o, &report, report ? 1 : 0, status);
		json_decref(report);
		return status;
	}
}

static int cleanup_only(void)
{
	struct mw_sweep sw;
	int n = mw_wait_detaching();

	if (n)
		mw_note("waited for %d tracers removing their uprobes after their runs", n);
	mw_sweep(&sw, MW_SWEEP_WAIT_MS);
	mw_note("%d orphaned tracers stopped, %d uprobe definitions and %d work directories "
		"removed", sw.tracers, sw.uprobes, sw.dirs);
	return MW_EXIT_OK;
}

static const char replay_usage[] =
"Usage: mallocwatch replay [-o FILE] [--json FILE] [--html FILE] [-q] STREAM\n"
"\n"
"Report again on a stream recorded with --save-stream: the same summary,\n"
"JSON, HTML and exit status as the run that recorded it.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch --save-stream run.mw -c ./app && mallocwatch replay --json r.json run.mw\n";

int cmd_replay(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct mw_trace_result r = { 0 };
	struct mw_run_info ri = { 0 };
	struct mw_stream_meta m;
	struct outputs out;
	char err[512];
	int c, status;
	FILE *f;
	struct mw_state *st;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case OPT_JSON: o.json = optarg; break;
		case OPT_HTML: o.html = optarg; break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(replay_usage, stdout); return MW_EXIT_OK;
		default: mw_usage_error("bad option");
		}
	}
	if (optind + 1 != argc)
		mw_usage_error("replay takes one stream file");
	if (!(f = fopen(argv[optind], "re")))
		mw_die(MW_EXIT_RUNTIME, "cannot open '%s': %s", argv[optind], strerror(errno));
	st = mw_state_new(0);
	if (mw_stream_replay(f, st, &m, err, sizeof(err)) < 0) {
		fclose(f);
		mw_state_free(st);
		mw_stream_meta_free(&m);
		mw_die(MW_EXIT_RUNTIME, "'%s': %s", argv[optind], err);
	}
	fclose(f);
	if (open_outputs(&o, &out, 0) < 0) {
		close_outputs(&o, &out);
		status = MW_EXIT_RUNTIME;
		goto cleanup;
	}
	r = (struct mw_trace_result){ .ready = 1, .pid = m.pid, .have_status = m.have_status,
		.status = m.wait_status, .tracer_died = m.tracer_died, .stopped = m.stopped,
		.lost = m.tracer_lost };
	snprintf(r.tracer_msg, sizeof(r.tracer_msg), "%s", m.tracer_msg);
	ri = (struct mw_run_info){ .argv = (const char *const *)m.argv, .libc = m.libc,
		.runtime = m.runtime };
	status = conclude(&out, st, &r, &ri);
	if (close_outputs(&o, &out) < 0)
		status = MW_EXIT_RUNTIME;
cleanup:
	mw_state_free(st);
	mw_stream_meta_free(&m);
	return status;
}

/* -c: run the program once, or --repeat times, and judge --check. */
static int run_program(const struct trace_opts *o, const struct mw_target *t)
{
	size_t n = o->repeat ? (size_t)o->repeat : 1, done = 0;
	json_t **reports = xcalloc(n, sizeof(*reports));
	int status = MW_EXIT_OK;

	for (size_t i = 0; i < n; i++) {
		if (n > 1)
			mw_note("run %zu of %zu", i + 1, n);
		status = run(o, t, t->libc, NULL, o->nrules ? &reports[done] : NULL);
		done += reports[done] != NULL;
		if (status != MW_EXIT_OK || mw_signal_pending())
			break;	/* the program's failure ends the series */
	}
	status = judge(o, reports, done, status);
	for (size_t i = 0; i < done; i++)
		json_decref(reports[i]);
	free(reports);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .runtime = MW_RT_AUTO, .progress = -1 };
	struct mw_target t;
	char err[PATH_MAX + 256];
	int status;

	parse_args(argc, argv, &o);
	mw_signals_catch();	/* from here on, ^C ends the run cleanly */
	if (o.cleanup)
		return cleanup_only();
	if (o.pid)
		return attach(&o);
	if (mw_target_resolve((const char *const *)o.cmd, o.libc, &t, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (t.loader[0]) {
		char q[256];

		mw_note("running '%s' under the probe-enabled glibc (%s)",
			mw_quote(o.cmd[0], q, sizeof(q)), t.loader);
	}
	status = run_program(&o, &t);
	mw_target_free(&t);
	return status;
}
