/* cmd_trace.c - `mallocwatch [trace] -c CMD` / `-p PID`: the main job.
 *
 * Coordinates the pipeline: target (which libc) -> sdtnote (its probes)
 * -> gen (the script) -> runtime + tracer (stap) -> stream -> state ->
 * report.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "gen.h"
#include "msg.h"
#include "probetab.h"
#include "report.h"
#include "runtime.h"
#include "state.h"
#include "stream.h"
#include "target.h"
#include "tracer.h"

#define MW_VERSION "0.1"

static const char usage[] =
"Usage: mallocwatch [OPTIONS] -c CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -- CMD [ARGS...]\n"
"       mallocwatch [OPTIONS] -p PID\n"
"       mallocwatch probes [--libc PATH | -p PID] [--libm PATH] [--json | --table]\n"
"       mallocwatch script [--runtime=kernel|bpf] [--libc PATH] [--libm PATH]\n"
"       mallocwatch replay [-o FILE] [--json FILE] STREAM\n"
"\n"
"Trace glibc's SDT probes in a program with SystemTap and print a summary:\n"
"arenas, heaps, sbrk, thresholds, lock waits, retries, mallopt and tunables,\n"
"tcache double frees, setjmp/longjmp, and libm's slow math paths.\n"
"\n"
"Target:\n"
"  -c CMD [ARGS...]     run CMD (never through a shell), traced from its\n"
"                       first instruction; everything after CMD is its ARGS\n"
"  -- CMD [ARGS...]     the same\n"
"  -p PID               attach to a running process until it exits or ^C\n"
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
"  --save-script FILE   also write the generated SystemTap script to FILE\n"
"  --save-stream FILE   also record the tracer's output (docs/protocol.md)\n"
"                       to FILE; `mallocwatch replay FILE` reports it again\n"
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
"  -h, --help           this help\n"
"  -V, --version        the version\n"
"\n"
"Exit status: the program's own with -c (128+N if signal N killed it), 0 with\n"
"-p; 1 on a runtime error (the tracer failed or died); 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch -c ./app --threads 8\n"
"  sudo mallocwatch --json report.json -c xz -T2 -k big.tar\n"
"  sudo mallocwatch -p 4242 -o incident.txt\n"
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
};

enum { OPT_JSON = 256, OPT_RUNTIME, OPT_LIBC, OPT_LIBM, OPT_SAVE, OPT_STREAM };

static const struct option longopts[] = {
	{ "json", required_argument, NULL, OPT_JSON },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "libc", required_argument, NULL, OPT_LIBC },
	{ "libm", required_argument, NULL, OPT_LIBM },
	{ "save-script", required_argument, NULL, OPT_SAVE },
	{ "save-stream", required_argument, NULL, OPT_STREAM },
	{ "events", required_argument, NULL, 'e' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

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
	char *end;

	argc = split_command(argc, argv, o);
	while ((c = getopt_long(argc, argv, "+e:o:p:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': {
			char err[256];

			if (mw_events_parse(optarg, &o->families, err, sizeof(err)) < 0)
				mw_usage_error("%s", err);
			if (!o->families)
				mw_usage_error("-e %s leaves nothing to trace", optarg);
			break;
		}
		case 'o': o->out = optarg; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_SAVE: o->save_script = optarg; break;
		case OPT_STREAM: o->save_stream = optarg; break;
		case OPT_LIBC: o->libc = optarg; break;
		case OPT_LIBM: o->libm = optarg; break;
		case OPT_RUNTIME: o->runtime = parse_runtime(optarg); break;
		case 'q': mw_quiet(1); break;
		case 'v': o->verbose = 1; break;
		case 'p':
			o->pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || o->pid <= 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'h': fputs(usage, stdout); exit(MW_EXIT_OK);
		case 'V': printf("mallocwatch %s\n", MW_VERSION); exit(MW_EXIT_OK);
		default: mw_usage_error("bad option");
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s' (use -c CMD or -- CMD)", argv[optind]);
	if (!o->cmd && !o->pid)
		mw_usage_error("no command given: use -c CMD or -p PID");
	if (o->cmd && o->pid)
		mw_usage_error("-c and -p cannot be used together");
}

/* Where tracer lines go: the state, and the --save-stream file. */
struct sink {
	struct mw_state *st;
	FILE *save;
};

static void on_line(void *ctx, const char *line)
{
	static int warned;
	struct sink *k = ctx;

	if (k->save)
		fprintf(k->save, "%s\n", line);
	if (mw_stream_line(k->st, line) < 0 && !warned++)
		mw_warn("garbled tracer line ignored and counted: '%.80s'", line);
}

/* Metadata of a saved stream, "# KEY VALUE" lines (docs/protocol.md). */
static void save_header(FILE *f, const struct trace_opts *o, const char *libc,
			const char *runtime, uint64_t main_sym, const char *libm, int math_sites)
{
	fprintf(f, "# mallocwatch-stream 1\n# libc %s\n# runtime %s\n# main_arena %" PRIu64 "\n",
		libc, runtime, main_sym);
	if (libm)
		fprintf(f, "# libm %d %s\n", math_sites, libm);
	for (char **a = o->cmd; a && *a; a++)
		fprintf(f, "# arg %s\n", *a);
}

static void save_footer(FILE *f, const struct mw_trace_result *r)
{
	fprintf(f, "# pid %d\n", (int)r->pid);
	if (r->have_status)
		fprintf(f, "# wait_status %d\n", r->status);
	fprintf(f, "# tracer_died %d\n# tracer_lost %llu\n", r->tracer_died, r->lost);
	if (r->tracer_msg[0])
		fprintf(f, "# tracer_msg %s\n", r->tracer_msg);
}

/* Write the script into a fresh work directory; its path into script. */
static int write_script(const struct mw_elf *libc, const struct mw_gen_opts *g,
			char *dir, char *script, size_t len, const char *save,
			struct mw_gen_stats *st)
{
	char err[512];
	FILE *f;

	snprintf(dir, len, "%s/mallocwatch.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		mw_error("cannot create a work directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	snprintf(script, len, "%s/mallocwatch.stp", dir);
	for (int pass = 0; pass < (save ? 2 : 1); pass++) {
		const char *path = pass ? save : script;

		if (!(f = fopen(path, "w"))) {
			mw_error("cannot create '%s': %s", path, strerror(errno));
			return -1;
		}
		if (mw_gen_script(libc, g, f, st, err, sizeof(err)) < 0) {
			fclose(f);
			mw_error("%s", err);
			return -1;
		}
		if (fclose(f) != 0) {
			mw_error("cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void remove_workdir(const char *dir)
{
	static const char *const files[] = { "mallocwatch.stp", "mallocwatch.bo" };
	char p[4200];

	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

static int write_reports(const struct trace_opts *o, const struct mw_state *st,
			 const struct mw_run_info *ri)
{
	FILE *f = stderr;
	int ret = 0;

	if (o->out && !(f = fopen(o->out, "w"))) {
		mw_error("cannot create '%s': %s", o->out, strerror(errno));
		return -1;
	}
	if (mw_report_text(f, st, ri) < 0) {
		mw_error("cannot write the summary");
		ret = -1;
	}
	if (f != stderr && fclose(f) != 0)
		ret = -1;
	if (!o->json)
		return ret;
	f = strcmp(o->json, "-") == 0 ? stdout : fopen(o->json, "w");
	if (!f) {
		mw_error("cannot create '%s': %s", o->json, strerror(errno));
		return -1;
	}
	if (mw_report_json(f, st, ri) < 0 || (f != stdout && fclose(f) != 0)) {
		mw_error("cannot write '%s'", o->json);
		ret = -1;
	}
	return ret;
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
			mw_error("'%s' killed by signal %d (%s)", name, ri->term_signal,
				 strsignal(ri->term_signal));
			status = 128 + ri->term_signal;
		} else {
			ri->exit_status = WEXITSTATUS(r->status);
			status = ri->exit_status;
		}
	}
	if (r->tracer_died || !ended) {
		mw_error("the tracer ended early%s%s; the report is incomplete",
			 r->tracer_msg[0] ? ": " : "", r->tracer_msg);
		status = MW_EXIT_RUNTIME;
	}
	return status;
}

/* The libm whose slow-math probes to trace: --libm, else the one beside
 * the libc; NULL when there is none or the math family is not selected. */
static struct mw_elf *open_libm(const struct trace_opts *o, const char *libc,
				char *path, size_t len)
{
	char err[512];
	struct mw_elf *e;

	if (o->families && !(o->families & (1u << MW_FAM_MATH)))
		return NULL;
	if (o->libm) {	/* stap's process("...") wants an absolute path */
		char abs[PATH_MAX];

		snprintf(path, len, "%s", realpath(o->libm, abs) ? abs : o->libm);
	}
	else if (mw_libm_beside(libc, path, len) < 0)
		return NULL;
	if (!(e = mw_elf_open(path, err, sizeof(err))))
		mw_warn("%s; slow-math probes not traced", err);
	return e;
}

/* After the stream: finish the model, say how it ended, write reports.
 * Shared by a live run and a replay.  Returns the exit status. */
static int conclude(const struct trace_opts *o, struct mw_state *st,
		    const struct mw_trace_result *r, struct mw_run_info *ri)
{
	int status;

	mw_state_set_pid(st, r->pid);
	mw_state_tracer_lost(st, r->lost);
	mw_state_finish(st);
	ri->pid = r->pid;
	ri->tracer_died = r->tracer_died;
	status = finish_status(ri->argv && ri->argv[0] ? ri->argv[0] : "process", r, ri, st);
	if (write_reports(o, st, ri) < 0)
		status = MW_EXIT_RUNTIME;
	return status;
}

static int run(struct trace_opts *o, const struct mw_target *t, const char *libc_path)
{
	char err[1024], dir[4096], script[4200], libm_path[4096];
	struct mw_runtime_env env;
	struct mw_elf *libc = NULL, *libm = NULL;
	struct mw_gen_stats gst;
	struct sink k = { 0 };
	struct mw_trace_result r;
	struct mw_run_info ri = { 0 };
	uint64_t sym = 0;
	int status = MW_EXIT_RUNTIME;

	dir[0] = '\0';
	if (!(libc = mw_elf_open(libc_path, err, sizeof(err)))) {
		mw_error("%s", err);
		goto cleanup;
	}
	if (mw_runtime_prepare(o->runtime, 1, &env, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		goto cleanup;
	}
	mw_note("%s runtime%s%s", mw_runtime_name(env.rt), env.did[0] ? ": " : "", env.did);
	libm = open_libm(o, libc_path, libm_path, sizeof(libm_path));
	if (write_script(libc, &(struct mw_gen_opts){ .runtime = env.rt, .libc_path = libc_path,
			 .families = o->families, .libm = libm, .libm_path = libm_path },
			 dir, script, sizeof(dir), o->save_script, &gst) < 0)
		goto cleanup;
	if (!(k.st = mw_state_new(0))) {
		mw_error("out of memory");
		goto cleanup;
	}
	if (libm)
		mw_state_set_libm(k.st, libm_path, gst.math_sites);
	if (mw_elf_symbol(libc, "main_arena", &sym) == 0)
		mw_state_set_main_arena_sym(k.st, sym);
	else
		mw_warn("'main_arena' not found in '%s' (stripped?); main_arena's address "
			"will be unknown", libc_path);
	if (o->save_stream) {
		if (!(k.save = fopen(o->save_stream, "w"))) {
			mw_error("cannot create '%s': %s", o->save_stream, strerror(errno));
			goto cleanup;
		}
		save_header(k.save, o, libc_path, mw_runtime_name(env.rt), sym,
			    libm ? libm_path : NULL, gst.math_sites);
	}
	if (mw_trace_run(&(struct mw_tracer_opts){ .env = &env, .script = script,
			 .workdir = dir, .target = t, .attach_pid = o->pid,
			 .verbose = o->verbose }, on_line, &k, &r, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		goto cleanup;
	}
	if (k.save)
		save_footer(k.save, &r);
	ri = (struct mw_run_info){ .argv = (const char *const *)o->cmd, .libc = libc_path,
		.runtime = mw_runtime_name(env.rt) };
	status = conclude(o, k.st, &r, &ri);
cleanup:
	if (k.save && fclose(k.save) != 0) {
		mw_error("cannot write '%s'", o->save_stream);
		status = MW_EXIT_RUNTIME;
	}
	if (dir[0])
		remove_workdir(dir);
	mw_state_free(k.st);
	mw_elf_close(libm);
	mw_elf_close(libc);
	return status;
}

static const char replay_usage[] =
"Usage: mallocwatch replay [-o FILE] [--json FILE] [-q] STREAM\n"
"\n"
"Report again on a stream recorded with --save-stream: the same summary,\n"
"JSON and exit status as the run that recorded it.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch --save-stream run.mw -c ./app && mallocwatch replay --json r.json run.mw\n";

/* One "# KEY VALUE" metadata line of a saved stream. */
static void replay_meta(const char *line, struct mw_state *st, struct mw_trace_result *r,
			char **argv, int *argc, char *libc, char *rt)
{
	char key[32];
	int used = 0;
	const char *val;

	if (sscanf(line, "# %31s %n", key, &used) != 1 || !used)
		return;
	val = line + used;
	if (strcmp(key, "libc") == 0)
		snprintf(libc, 4096, "%s", val);
	else if (strcmp(key, "runtime") == 0)
		snprintf(rt, 16, "%s", val);
	else if (strcmp(key, "main_arena") == 0)
		mw_state_set_main_arena_sym(st, strtoull(val, NULL, 10));
	else if (strcmp(key, "libm") == 0) {
		char *path;
		int sites = (int)strtol(val, &path, 10);

		mw_state_set_libm(st, path + (*path == ' '), sites);
	}
	else if (strcmp(key, "arg") == 0 && *argc < 255)
		argv[(*argc)++] = strdup(val);
	else if (strcmp(key, "pid") == 0)
		r->pid = atoi(val);
	else if (strcmp(key, "wait_status") == 0) {
		r->have_status = 1;
		r->status = atoi(val);
	} else if (strcmp(key, "tracer_died") == 0)
		r->tracer_died = atoi(val);
	else if (strcmp(key, "tracer_lost") == 0)
		r->lost = strtoull(val, NULL, 10);
	else if (strcmp(key, "tracer_msg") == 0)
		snprintf(r->tracer_msg, sizeof(r->tracer_msg), "%s", val);
}

int cmd_replay(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct mw_trace_result r = { 0 };
	struct mw_run_info ri = { 0 };
	char *args[256] = { 0 }, libc[4096] = "?", rt[16] = "?", *line = NULL;
	int nargs = 0, c, status;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	struct mw_state *st;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case OPT_JSON: o.json = optarg; break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(replay_usage, stdout); return MW_EXIT_OK;
		default: mw_usage_error("bad option");
		}
	}
	if (optind + 1 != argc)
		mw_usage_error("replay takes one stream file");
	if (!(f = fopen(argv[optind], "r")))
		mw_die(MW_EXIT_RUNTIME, "cannot open '%s': %s", argv[optind], strerror(errno));
	if (!(st = mw_state_new(0)))
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	while ((n = getline(&line, &cap, f)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#')
			replay_meta(line, st, &r, args, &nargs, libc, rt);
		else
			on_line(&(struct sink){ .st = st }, line);
	}
	free(line);
	fclose(f);
	r.ready = 1;
	ri = (struct mw_run_info){ .argv = nargs ? (const char *const *)args : NULL,
		.libc = libc, .runtime = rt };
	status = conclude(&o, st, &r, &ri);
	mw_state_free(st);
	for (int i = 0; i < nargs; i++)
		free(args[i]);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .runtime = MW_RT_AUTO };
	struct mw_target t;
	char err[1024], libc[4096];
	int status;

	parse_args(argc, argv, &o);
	if (o.pid) {
		if (mw_cmd_pick_libc(o.libc, o.pid, libc, sizeof(libc)) < 0)
			return MW_EXIT_RUNTIME;
		return run(&o, NULL, libc);
	}
	if (mw_target_resolve((const char *const *)o.cmd, o.libc, &t, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (t.loader[0])
		mw_note("running '%s' under the probe-enabled glibc (%s)", o.cmd[0], t.loader);
	status = run(&o, &t, t.libc);
	mw_target_free(&t);
	return status;
}
