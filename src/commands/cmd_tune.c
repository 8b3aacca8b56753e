/* cmd_tune.c - `mallocwatch tune --try glibc.malloc.arena_max=1,2,4 -c
 * CMD`: run the program under each setting of glibc's malloc tunables
 * (GLIBC_TUNABLES; every combination when --try is given more than once,
 * and the baseline, nothing added), --repeat times each, and set their
 * peak RSS, RSS and free memory at exit, wall and CPU time side by side
 * (tune_run.h, report_tune.h). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "msg.h"
#include "output.h"
#include "report_tune.h"
#include "snapshot.h"
#include "tune_run.h"
#include "xalloc.h"

#define TUNE_MAX_SETTINGS 256
#define TUNE_MAX_REPEAT 100

static const char tune_usage[] =
"Usage: mallocwatch tune [--repeat N] --try NAME=V1,V2,... [--try ...] [--waits] [-o FILE]\n"
"                        [--json FILE] [--markdown FILE] [--show-output] [-q] -c CMD [ARGS...]\n"
"\n"
"Run CMD under each setting of glibc's malloc tunables and measure what\n"
"each costs: GLIBC_TUNABLES gets NAME=V for each value of each --try\n"
"(every combination when --try is given more than once), and a baseline\n"
"run adds nothing.  Each run is measured: its peak RSS (VmHWM), and, read\n"
"from the process in its exit stop (ptrace, as -c does; no tracer), its\n"
"RSS, malloc's memory in use and free but resident, its arenas; its wall\n"
"and CPU time.  A setting is marked best (*) where its spread (min-max)\n"
"of peak RSS or wall time lies wholly below another's and no other's lies\n"
"wholly below its own (noise floors 64 KiB, 0.02 s); \"no difference\"\n"
"otherwise.  The table sets the baseline's findings (mallocwatch explain)\n"
"that name a tried setting beside what was measured with it.  Lock waits\n"
"need the tracer: --waits runs each setting once more under it\n"
"(mallocwatch -e arena -c, on the probe-enabled glibc where the system's\n"
"has no probes) for its arena lock waits; the other figures come from\n"
"the runs without it.\n"
"\n"
"  --try NAME=V1,V2,... a tunable (glibc.malloc.arena_max, ...) and its values\n"
"  --repeat N           run each setting N times (default 3; median and\n"
"                       min-max shown); runs are interleaved: all\n"
"                       settings, then again\n"
"  -o, --output FILE    the table to FILE (default: stdout)\n"
"  --json FILE          every run and the medians as JSON ('-' = stdout)\n"
"  --markdown FILE      the table as markdown ('-' = stdout)\n"
"  --waits              also count each setting's arena lock waits, in one\n"
"                       more run under the tracer (root)\n"
"  --show-output        the program keeps its stdout and stderr (default:\n"
"                       /dev/null; stdin is always /dev/null)\n"
"  --read-timeout SECONDS  give up reading the allocator at exit (default 2)\n"
"  -q, --quiet          no progress notes\n"
"  -c, --command CMD [ARGS...]  the program, and its arguments: the rest of\n"
"                       the command line (also after --; --command=CMD)\n"
"\n"
"The program runs as mallocwatch does (root under sudo).\n"
"Exit status: 0 once every run was made and the outputs written; 1 when\n"
"the program could not be started or an output not written; 2 on a\n"
"usage error.\n"
"\n"
"EXAMPLES\n"
"  mallocwatch tune --try glibc.malloc.arena_max=1,2,4,8 -c ./server --bench\n"
"  mallocwatch tune --repeat 3 --try glibc.malloc.arena_max=1,4 \\\n"
"      --try glibc.malloc.trim_threshold=131072,33554432 --markdown - -c pbzip2 -k -f big\n";

enum { OPT_TRY = 256, OPT_REPEAT, OPT_JSON, OPT_MARKDOWN, OPT_SHOW, OPT_READ_TIMEOUT, OPT_WAITS };

struct tune_opts {
	char **names;		/* --try: NAME, and its values */
	char ***values;
	size_t *nvalues, ntries;
	long repeat, timeout_ms;
	const char *out, *json, *markdown;
	int show, waits;
	char **cmd;
};

static int tunable_name_ok(const char *s)
{
	if (strncmp(s, "glibc.", 6) != 0 || !s[6])
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_' &&
		    *s != '.')
			return 0;
	return 1;
}

static int tunable_value_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return 0;
	return 1;
}

/* --try NAME=V1,V2,...: checked, kept in o. */
static void add_try(struct tune_opts *o, const char *arg)
{
	char *s = xstrdup(arg), *eq = strchr(s, '='), *save = NULL;
	size_t cap = 0, n = 0;
	char **v = NULL;

	if (!eq)
		mw_usage_error("--try needs NAME=V1,V2,..., not '%s'", arg);
	*eq = '\0';
	if (!tunable_name_ok(s))
		mw_usage_error("--try: '%s' is not a glibc tunable's name (glibc.malloc.arena_max, "
			       "...)", s);
	for (char *t = strtok_r(eq + 1, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!tunable_value_ok(t))
			mw_usage_error("--try %s: '%s' is not a value (letters, digits, '_', '-', "
				       "'.')", s, t);
		if (n == cap)
			XGROW(v, n, cap);
		v[n++] = t;
	}
	if (!n)
		mw_usage_error("--try %s: no value", s);
	o->names = realloc(o->names, (o->ntries + 1) * sizeof(*o->names));
	o->values = realloc(o->values, (o->ntries + 1) * sizeof(*o->values));
	o->nvalues = realloc(o->nvalues, (o->ntries + 1) * sizeof(*o->nvalues));
	if (!o->names || !o->values || !o->nvalues)
		mw_die(MW_EXIT_RUNTIME, "out of memory");
	o->names[o->ntries] = s;
	o->values[o->ntries] = v;
	o->nvalues[o->ntries++] = n;
}

static void parse(int argc, char **argv, struct tune_opts *o)
{
	static const struct option lo[] = {
		{ "try", required_argument, NULL, OPT_TRY },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "markdown", required_argument, NULL, OPT_MARKDOWN },
		{ "show-output", no_argument, NULL, OPT_SHOW },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "waits", no_argument, NULL, OPT_WAITS },
		{ "output", required_argument, NULL, 'o' },
		{ "command", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "+:o:c:qh", lo, NULL)) != -1) {
		switch (c) {
		case OPT_TRY: add_try(o, optarg); break;
		case OPT_REPEAT:
			errno = 0;
			o->repeat = strtol(optarg, &end, 10);
			if (errno || *end || o->repeat < 1 || o->repeat > TUNE_MAX_REPEAT)
				mw_usage_error("--repeat needs a number from 1 to %d, not '%s'",
					       TUNE_MAX_REPEAT, optarg);
			break;
		case 'o': o->out = optarg; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_MARKDOWN: o->markdown = optarg; break;
		case OPT_SHOW: o->show = 1; break;
		case OPT_WAITS: o->waits = 1; break;
		case OPT_READ_TIMEOUT: o->timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(tune_usage, stdout); exit(MW_EXIT_OK);
		case 'c':	/* -c CMD, --command CMD, --command=CMD: CMD starts it */
			argv[optind - 1] = optarg;
			o->cmd = &argv[optind - 1];
			optind = argc;
			break;
		default: mw_bad_option(c, argv);
		}
	}
	if (!o->cmd && optind < argc)
		o->cmd = &argv[optind];	/* after "--" */
	if (!o->cmd || !o->cmd[0])
		mw_usage_error("tune needs a program: -c CMD [ARGS...]");
	if (!o->ntries)
		mw_usage_error("tune needs at least one --try NAME=V1,V2,...");
}

/* Every combination of the tries' values, the baseline ("") first, into
 * new rows (*n). */
static struct mw_tune_row *settings(const struct tune_opts *o, size_t *n)
{
	size_t total = 1;
	struct mw_tune_row *rows;

	for (size_t i = 0; i < o->ntries; i++) {
		total *= o->nvalues[i];
		if (total > TUNE_MAX_SETTINGS)
			mw_usage_error("more than %d settings to try", TUNE_MAX_SETTINGS);
	}
	rows = xcalloc(total + 1, sizeof(*rows));
	for (size_t k = 0; k < total; k++) {
		char *p = rows[k + 1].setting;
		size_t left = sizeof(rows[k + 1].setting), r = k;

		for (size_t i = 0; i < o->ntries; i++) {
			int w = snprintf(p, left, "%s%s=%s", i ? ":" : "", o->names[i],
					 o->values[i][r % o->nvalues[i]]);

			r /= o->nvalues[i];
			if (w < 0 || (size_t)w >= left)
				mw_usage_error("the tunables of a setting are too long");
			p += w;
			left -= (size_t)w;
		}
	}
	*n = total + 1;
	return rows;
}

static int write_outputs(const struct tune_opts *o, struct mw_tune_row *rows, size_t n)
{
	FILE *fo = o->out ? mw_output_create(o->out, 1) : stdout, *fj = NULL, *fm = NULL;
	int bad = 0, json_err = 0;

	if (!fo || (o->json && !(fj = mw_output_create(o->json, 1))) ||
	    (o->markdown && !(fm = mw_output_create(o->markdown, 1))))
		return -1;
	if (fo != fj && fo != fm)
		mw_tune_text(fo, rows, n, o->cmd);
	if (fm)
		mw_tune_markdown(fm, rows, n, o->cmd);
	if (fj && mw_tune_json(fj, rows, n, o->cmd) < 0)
		json_err = errno;
	if (fm && fm != fo && mw_output_close(fm, o->markdown, 0) < 0)
		bad = 1;
	if (fj && fj != fo && mw_output_close(fj, o->json, json_err) < 0)
		bad = 1;
	if (mw_output_close(fo, o->out ? o->out : "stdout", fj == fo ? json_err : 0) < 0)
		bad = 1;
	return bad ? -1 : 0;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_opts o = { .repeat = 3, .timeout_ms = MW_SNAP_TIMEOUT_MS };
	char err[PATH_MAX + 512];
	struct mw_tune_row *rows;
	size_t n, done = 0;
	int status = MW_EXIT_OK;

	parse(argc, argv, &o);
	rows = settings(&o, &n);
	for (size_t i = 0; i < n; i++)
		rows[i].runs = xcalloc((size_t)o.repeat, sizeof(*rows[i].runs));
	for (long rep = 0; rep < o.repeat && status == MW_EXIT_OK; rep++)
		for (size_t i = 0; i < n; i++) {
			struct mw_tune_row *r = &rows[i];
			int first = !r->nruns;

			mw_note("run %zu of %zu: %s", ++done, n * (size_t)o.repeat,
				r->setting[0] ? r->setting : "baseline (no tunable added)");
			if (mw_tune_run(o.cmd, r->setting, o.show, o.timeout_ms, &r->runs[r->nruns],
					first ? &r->findings : NULL, first ? &r->nfindings : NULL,
					err, sizeof(err)) < 0) {
				mw_error("%s", err);
				status = MW_EXIT_RUNTIME;
				break;
			}
			if (o.waits && first && mw_tune_waits(o.cmd, r->setting, &r->runs[0].waits,
							     err, sizeof(err)) < 0)
				mw_warn("%s", err);
			r->nruns++;
		}
	if (status == MW_EXIT_OK) {
		mw_tune_finish(rows, n);
		if (write_outputs(&o, rows, n) < 0)
			status = MW_EXIT_RUNTIME;
	}
	for (size_t i = 0; i < n; i++) {
		free(rows[i].runs);
		free(rows[i].findings);
	}
	free(rows);
	for (size_t i = 0; i < o.ntries; i++) {
		free(o.names[i]);
		free(o.values[i]);
	}
	free(o.names);
	free(o.values);
	free(o.nvalues);
	return status;
}
