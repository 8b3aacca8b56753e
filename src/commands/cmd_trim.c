/* cmd_trim.c - mallocwatch trim: make a running process call
 * malloc_trim(0), at a safe point, and measure what it gave back against
 * what the RSS ledger predicted (issue 20, item 5).
 *
 * What people do with gdb today:
 *
 *	gdb -p 4242 -batch -ex 'call (int) malloc_trim(0)'
 *
 * but only where no thread is inside malloc: the process is held
 * (snapshot.h, mw_snapshot_hold: every thread stopped by ptrace, those
 * inside malloc's code let finish first, every arena lock free), the
 * ledger is read while it is held (ledger.h: trim_now, the resident
 * bytes malloc_trim(0) would give back by its own rule), one thread
 * makes the call (ptstop.h, mw_ptstop_call), and the process goes on.
 * RSS is /proc/PID/statm's, before the call and after it, both while
 * the process is held (no other thread moved meanwhile).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cmd.h"
#include "explain.h"
#include "glibcinfo.h"
#include "jsonout.h"
#include "ledger.h"
#include "msg.h"
#include "output.h"
#include "proclist.h"
#include "procmem.h"
#include "ptstop.h"
#include "snapshot.h"
#include "units.h"

static const char trim_usage[] =
"Usage: mallocwatch trim -p PID [--dry-run] [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"\n"
"Make process PID call malloc_trim(0), which gives back to the system the\n"
"whole free pages inside its arenas' free chunks (and main_arena's top\n"
"beyond the break), and say what it gave back against what was predicted.\n"
"The call is made only at a safe point: every thread held with ptrace,\n"
"those inside malloc's code let finish first, every arena lock free (as\n"
"mallocwatch snapshot's stopped read); else it is refused, with the\n"
"reason, and the process goes on untouched.  While it is held, the RSS\n"
"ledger predicts what malloc_trim(0) would give back now (resident whole\n"
"free pages, from /proc/PID/pagemap); then one thread makes the call, and\n"
"the RSS before and after are set against the prediction.  The process\n"
"is held for the reading and the call: milliseconds, and as long as\n"
"malloc_trim takes on a large heap.  x86_64 only.\n"
"\n"
"  -p PID               the process\n"
"  --dry-run            only the prediction (read as explain does); no call\n"
"  -o FILE              the text to FILE (default: stdout)\n"
"  --json FILE          {\"trim\": {...}} as JSON ('-' = stdout); docs/json.md\n"
"  --read-timeout SECONDS  give up reading after this long (default 2)\n"
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0; 1 when the process cannot be read, its libc has no\n"
"symbols, no safe point came (the reason is said), or the call failed;\n"
"2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch trim -p $(pidof myserver) --dry-run\n"
"  sudo mallocwatch trim -p 4242 --json trim.json\n";

enum { OPT_READ_TIMEOUT = 256, OPT_DRY_RUN };

struct trim {
	pid_t pid;
	char comm[64];
	int dry_run;
	uint64_t predicted, rss_before, rss_after, held_ns, call_ns, returned;
};

static void trim_text(FILE *f, const struct trim *t)
{
	char q[256], a[32], b[32], c[32];

	fprintf(f, "mallocwatch: process %d (%s): ", (int)t->pid,
		mw_quote(t->comm, q, sizeof(q)));
	if (t->dry_run) {
		fprintf(f, "malloc_trim(0) would give back %s of resident pages now (RSS %s); "
			"nothing called (--dry-run)\n", mw_human_bytes(t->predicted, a, sizeof(a)),
			mw_human_bytes(t->rss_before, b, sizeof(b)));
		return;
	}
	fprintf(f, "malloc_trim(0) returned %llu in %.1f ms; the process was held for %.1f ms\n",
		(unsigned long long)t->returned, (double)t->call_ns / 1e6,
		(double)t->held_ns / 1e6);
	fprintf(f, "  RSS before %s, after %s: %s given back\n",
		mw_human_bytes(t->rss_before, a, sizeof(a)), mw_human_bytes(t->rss_after, b, sizeof(b)),
		mw_human_bytes(t->rss_before > t->rss_after ? t->rss_before - t->rss_after : 0, c,
			       sizeof(c)));
	fprintf(f, "  predicted %s (the ledger's resident whole free pages)", mw_human_bytes(
		t->predicted, a, sizeof(a)));
	if (t->predicted)
		fprintf(f, ": measured %.1f%% of it", 100.0 * (double)(t->rss_before > t->rss_after ?
			t->rss_before - t->rss_after : 0) / (double)t->predicted);
	fputc('\n', f);
}

static int trim_json(FILE *f, const struct trim *t)
{
	json_t *o = json_pack("{s:{s:i, s:o, s:b, s:I, s:I, s:o, s:o, s:o, s:o}}", "trim",
		"pid", (int)t->pid, "comm", mw_json_str(t->comm), "dry_run", t->dry_run,
		"predicted", (json_int_t)t->predicted, "rss_before", (json_int_t)t->rss_before,
		"rss_after", t->dry_run ? json_null() : json_integer((json_int_t)t->rss_after),
		"returned", t->dry_run ? json_null() : json_integer((json_int_t)t->returned),
		"held_ns", t->dry_run ? json_null() : json_integer((json_int_t)t->held_ns),
		"call_ns", t->dry_run ? json_null() : json_integer((json_int_t)t->call_ns));

	int r;

	if (!o) {
		errno = ENOMEM;
		return -1;
	}
	r = mw_json_write(o, f, JSON_INDENT(2));
	json_decref(o);
	return r < 0 ? -1 : 0;
}

/* --dry-run: the prediction, read as explain reads. */
static void predict(struct trim *t, const struct mw_glibc *g, long timeout_ms)
{
	struct mw_explained e;
	char err[PATH_MAX + 512];

	if (mw_explain_read(t->pid, g, timeout_ms, &e, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (!e.l) {
		mw_explained_free(&e);
		mw_die(MW_EXIT_RUNTIME, "process %d: no RSS ledger: %s", (int)t->pid, e.lerr);
	}
	t->predicted = e.l->frag.trim_now;
	t->rss_before = mw_process_rss(t->pid);
	mw_explained_free(&e);
}

/* Held at a safe point: the prediction, RSS, the call, let go. */
static void call_trim(struct trim *t, const struct mw_glibc *g, long timeout_ms)
{
	char err[PATH_MAX + 512];
	struct mw_ledger *l = NULL;
	struct mw_snapshot *s;
	struct mw_ptstop *st;
	struct mw_proc p;
	uint64_t t0, ret = 0;
	int r;

	if (mw_proc_open(&p, t->pid, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (mw_snapshot_hold(&p, g, timeout_ms, &s, &st, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s; malloc_trim not called", err);
	if (mw_ledger_read(&p, s, &l, err, sizeof(err)) < 0) {
		mw_ptstop_resume(st);
		mw_die(MW_EXIT_RUNTIME, "process %d: no RSS ledger: %s; malloc_trim not called",
		       (int)t->pid, err);
	}
	t->predicted = l->frag.trim_now;
	t->rss_before = mw_process_rss(t->pid);
	t0 = mw_now_ns();
	r = mw_ptstop_call(st, g->malloc_trim, 0, &ret, err, sizeof(err));
	t->call_ns = mw_now_ns() - t0;
	t->rss_after = mw_process_rss(t->pid);	/* still held: nothing else moved */
	t->held_ns = mw_ptstop_resume(st);
	t->returned = ret & 0xffffffff;	/* an int */
	mw_ledger_free(l);
	mw_snapshot_free(s);
	mw_proc_close(&p);
	if (r < 0)
		mw_die(MW_EXIT_RUNTIME, "process %d: malloc_trim(0): %s", (int)t->pid, err);
}

int cmd_trim(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *json = NULL;
	long timeout_ms = MW_SNAP_TIMEOUT_MS;
	char err[PATH_MAX + 512];
	struct trim t = { 0 };
	struct mw_glibc g;
	FILE *fo, *fj = NULL;
	int c, json_err = 0, bad;

	while ((c = getopt_long(argc, argv, ":p:o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (mw_parse_pid(optarg, &t.pid) < 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'o': out = optarg; break;
		case 'j': json = optarg; break;
		case OPT_READ_TIMEOUT: timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case OPT_DRY_RUN: t.dry_run = 1; break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(trim_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	if (!t.pid)
		mw_usage_error("trim needs -p PID");
	if (mw_glibc_load(t.pid, &g, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (!g.malloc_trim)
		mw_die(MW_EXIT_RUNTIME, "process %d: no symbol for malloc_trim in '%s'", (int)t.pid,
		       g.module);
	mw_process_comm(t.pid, t.comm, sizeof(t.comm));
	if (!t.comm[0])
		snprintf(t.comm, sizeof(t.comm), "?");
	fo = out ? mw_output_create(out, 1) : stdout;	/* before the call: no half-done run */
	if (!fo || (json && !(fj = mw_output_create(json, 1))))
		return MW_EXIT_RUNTIME;
	if (t.dry_run)
		predict(&t, &g, timeout_ms);
	else
		call_trim(&t, &g, timeout_ms);
	if (!(fj == stdout && fo == stdout))
		trim_text(fo, &t);
	if (fj && trim_json(fj, &t) < 0)
		json_err = errno;
	bad = mw_output_close(fo, out ? out : "stdout", fj == fo ? json_err : 0) < 0;
	if (fj && fj != fo && mw_output_close(fj, json, json_err) < 0)
		bad = 1;
	return bad ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
