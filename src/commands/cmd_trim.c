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
 *
 * Several processes (-p A,B,C, --cgroup DIR: procsel.h) are trimmed one
 * after the other, each held for its own call alone, each trimmed or
 * refused in one line.  --no-stop stops none: the prediction alone, as
 * --dry-run (malloc_trim can be called in a held process only).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdnoreturn.h>
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
#include "procsel.h"
#include "ptstop.h"
#include "snapshot.h"
#include "units.h"
#include "xalloc.h"

#define TRIM_MAX_STOP_MS 1000	/* trim's --max-stop and --max-stopped */
#define TRIM_MAX_STOPPED_MS 2000

static const char trim_usage[] =
"Usage: mallocwatch trim -p PID[,PID...] | --cgroup DIR [--dry-run | --no-stop] [-o FILE]\n"
"                        [--json FILE] [--read-timeout SECONDS] [--call-timeout SECONDS]\n"
"                        [--max-stop MS] [-q]\n"
"\n"
"Make process PID call malloc_trim(0), which gives back to the system the\n"
"whole free pages inside its arenas' free chunks (and main_arena's top\n"
"beyond the break), and say what it gave back against what was predicted.\n"
"The call is made only at a safe point: every thread held with ptrace,\n"
"those inside malloc's code let finish first, every arena lock free (as\n"
"mallocwatch snapshot's stopped read, within --max-stop and\n"
"--max-stopped); else it is refused, with the reason, and the process\n"
"goes on untouched.  While it is held, the RSS ledger predicts what\n"
"malloc_trim(0) would give back now (resident whole free pages, from\n"
"/proc/PID/pagemap); then one thread makes the call, and the RSS before\n"
"and after are set against the prediction.  The process is held for the\n"
"reading and the call: milliseconds, and as long as malloc_trim takes on\n"
"a large heap, up to --call-timeout.  x86_64 only.\n"
"\n"
"The call is bounded and undone on every path.  Past --call-timeout the\n"
"thread is interrupted, put back where it was held (registers and vector\n"
"state), the arena locks the call had taken are let go, and the process\n"
"is let go: it runs on from where it was, but what malloc_trim had half\n"
"done stays so (exit 1, saying where it was cut).  A signal that would end\n"
"mallocwatch (^C, SIGTERM, SIGHUP, ...) is held back during the call: the\n"
"call gets 0.5 s more, then is cut short the same way, the process is let\n"
"go, and mallocwatch ends by that signal.  Should the process exec during\n"
"the call, nothing is written into the new program, which is let go from\n"
"its start (exit 1).  Only SIGKILL cannot be held back: a mallocwatch\n"
"killed during the call kills the process with it (PTRACE_O_EXITKILL),\n"
"which could not return from the call without it.\n"
"\n"
"  -p, --pid PID[,PID...]  the process; several (-p may be repeated): one\n"
"                       after the other, each trimmed or refused with its\n"
"                       reason (one line), the others still trimmed\n"
"  --cgroup DIR         every process in the cgroup directory DIR and its\n"
"                       child cgroups, so\n"
"  --dry-run            only the prediction (read as explain does); no call\n"
"  --no-stop            never stop a process: malloc_trim(0) is not called\n"
"                       (it is called in a held process alone); only the\n"
"                       prediction, read as explain --no-stop reads\n"
"  -o, --output FILE    the text to FILE (default: stdout)\n"
"  --json FILE          {\"trim\": {...}} as JSON ('-' = stdout); docs/json.md;\n"
"                       of several processes, one document a line\n"
"  --read-timeout SECONDS  give up reading after this long (default 2)\n"
"  --call-timeout SECONDS  cut the call short after this long (default 5)\n"
MW_STOP_HELP(MW_XSTR(TRIM_MAX_STOP_MS), MW_XSTR(TRIM_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0; 1 when the process cannot be read, its libc has no\n"
"symbols, no safe point came (the reason is said), or the call failed,\n"
"was cut short, or the process exec'd during it - of several, when one of\n"
"them was refused so - or the cgroup has no process; 2 on a usage error;\n"
"a signal's own status when one came during the call.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch trim -p $(pidof myserver) --dry-run\n"
"  sudo mallocwatch trim -p 4242 --json trim.json\n"
"  sudo mallocwatch trim --cgroup /sys/fs/cgroup/system.slice/php8.2-fpm.service\n";

enum { OPT_READ_TIMEOUT = 256, OPT_DRY_RUN, OPT_CALL_TIMEOUT };
#define CALL_TIMEOUT_MS 5000

struct trim_opts {
	struct mw_procsel sel;	/* -p, --cgroup, --no-stop */
	const char *out, *json;
	long timeout_ms, call_ms;
	int dry_run;		/* --dry-run, or --no-stop */
	FILE *fo, *fj;
};

struct trim {
	pid_t pid;
	char comm[64];
	int dry_run, no_stop;
	uint64_t image;		/* mw_ptstop_image before its libc was read */
	uint64_t predicted, rss_before, rss_after, held_ns, call_ns, returned;
};

static void trim_text(FILE *f, const struct trim *t)
{
	char q[256], a[32], b[32], c[32];

	fprintf(f, "mallocwatch: process %d (%s): ", (int)t->pid,
		mw_quote(t->comm, q, sizeof(q)));
	if (t->dry_run) {
		fprintf(f, "malloc_trim(0) would give back %s of resident pages now (RSS %s); "
			"nothing called (%s)\n", mw_human_bytes(t->predicted, a, sizeof(a)),
			mw_human_bytes(t->rss_before, b, sizeof(b)),
			t->no_stop ? "--no-stop" : "--dry-run");
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

/* t as {"trim": {...}}, written with jansson's flags. */
static int trim_json(FILE *f, const struct trim *t, size_t flags)
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
	r = mw_json_write(o, f, flags);
	json_decref(o);
	return r < 0 ? -1 : 0;
}

/* --dry-run: the prediction, read as explain reads; 0, or -1 (said). */
static int predict(struct trim *t, const struct mw_glibc *g, long timeout_ms)
{
	struct mw_explained e;
	char err[PATH_MAX + 512];

	if (mw_explain_read(t->pid, g, timeout_ms, &e, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	if (!e.l) {
		mw_error("process %d: no RSS ledger: %s", (int)t->pid, e.lerr);
		mw_explained_free(&e);
		return -1;
	}
	t->predicted = e.l->frag.trim_now;
	t->rss_before = mw_process_rss(t->pid);
	mw_explained_free(&e);
	return 0;
}

/* The signals a mallocwatch killed during the call would leave the
 * thread to return to address 0 with no one to catch it: every one that
 * can be blocked but the faults (defer); those whose default ends
 * mallocwatch wind the call down (wind): it is finished within
 * MW_PTSTOP_GRACE_MS or cut short, put back, let go, and then the signal
 * is taken (the exit status is its own); not one this mallocwatch
 * ignores (SIGHUP under nohup), which would not end it. */
static void call_signals(sigset_t *defer, sigset_t *wind)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT };
	static const int keep_on[] = { SIGTSTP, SIGTTIN, SIGTTOU, SIGCHLD, SIGCONT, SIGURG,
				       SIGWINCH };

	sigfillset(defer);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(defer, faults[i]);
	*wind = *defer;
	for (size_t i = 0; i < sizeof(keep_on) / sizeof(keep_on[0]); i++)
		sigdelset(wind, keep_on[i]);
	for (int sig = 1; sig < NSIG; sig++) {	/* ignored (nohup's SIGHUP): ends nothing */
		struct sigaction sa;

		if (sigismember(wind, sig) == 1 && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			sigdelset(wind, sig);
	}
}

/* The arenas' locks, each free now (the process is held at a safe
 * point): a call cut short lets go of those it left taken. */
static uint64_t *arena_locks(const struct mw_snapshot *s, const struct mw_glibc *g, size_t *n)
{
	uint64_t *v = xcalloc(s->narenas + 1, sizeof(*v));

	*n = 0;
	if (g->ms_mutex.off >= 0 && g->ms_mutex.size == 4)
		for (size_t i = 0; i < s->narenas; i++)
			v[(*n)++] = s->arenas[i].addr + (uint64_t)g->ms_mutex.off;
	return v;
}

/* How a call that did not return ended, in one line; then the signal
 * that came, if any, is taken (it ends mallocwatch). */
static void call_failed(const struct trim *t, int r, const struct mw_ptstop_call *c,
				 long call_ms, const char *err)
{
	char what[PATH_MAX + 600];

	if (r == MW_PTSTOP_ABANDONED && c->signo)
		snprintf(what, sizeof(what), "did not return within %d ms of SIG%s: cut short at "
			 "0x%llx", MW_PTSTOP_GRACE_MS, sigabbrev_np(c->signo) ?
			 sigabbrev_np(c->signo) : "?", (unsigned long long)c->at);
	else if (r == MW_PTSTOP_ABANDONED)
		snprintf(what, sizeof(what), "did not return within %g s (--call-timeout): cut "
			 "short at 0x%llx", call_ms / 1000.0, (unsigned long long)c->at);
	else
		snprintf(what, sizeof(what), "%s", err);
	if (r == MW_PTSTOP_EXECD)
		mw_error("process %d: the process exec'd during the call; what malloc_trim(0) did "
			 "is unknown, nothing was written into the new program, which was let go "
			 "from its start", (int)t->pid);
	else if (r == MW_PTSTOP_ABANDONED || (r == MW_PTSTOP_FAULT && c->started))
		mw_error("process %d: malloc_trim(0)%s%s; the thread was put back where it was held "
			 "(registers and vector state), %d arena lock%s the call had taken let go, "
			 "and the process let go; what the call had half done stays so",
			 (int)t->pid, r == MW_PTSTOP_FAULT ? ": " : " ", what, c->locks_freed,
			 c->locks_freed == 1 ? "" : "s");
	else
		mw_error("process %d: malloc_trim(0): %s", (int)t->pid, what);
	sigprocmask(SIG_UNBLOCK, c->wind_down, NULL);	/* a signal that came ends us */
}

/* Held at a safe point: the prediction, RSS, the call (the signals
 * deferred), let go.  0, or -1 (said): not held, or the call failed. */
static int call_trim(struct trim *t, const struct mw_glibc *g, long timeout_ms, long call_ms)
{
	char err[PATH_MAX + 512];
	struct mw_ptstop_call c = { .fn = g->malloc_trim };
	struct mw_ledger *l = NULL;
	struct mw_snapshot *s;
	struct mw_ptstop *st;
	sigset_t defer, wind, old;
	struct mw_proc p;
	uint64_t t0, *locks;
	int r;

	if (mw_proc_open(&p, t->pid, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	if (mw_snapshot_hold(&p, g, timeout_ms, &s, &st, err, sizeof(err)) < 0) {
		mw_error("%s; malloc_trim not called", err);
		mw_proc_close(&p);
		return -1;
	}
	if (mw_ptstop_image(t->pid) != t->image) {	/* not the one read */
		mw_ptstop_resume(st);
		mw_error("process %d exec'd before it was held (it is another program now); "
			 "malloc_trim not called", (int)t->pid);
		goto refused;
	}
	if (mw_ledger_read(&p, s, &l, err, sizeof(err)) < 0) {
		mw_ptstop_resume(st);
		mw_error("process %d: no RSS ledger: %s; malloc_trim not called", (int)t->pid, err);
		goto refused;
	}
	t->predicted = l->frag.trim_now;
	t->rss_before = mw_process_rss(t->pid);
	call_signals(&defer, &wind);
	sigprocmask(SIG_BLOCK, &defer, &old);
	c.locks = locks = arena_locks(s, g, &c.nlocks);
	c.wind_down = &wind;
	t0 = mw_now_ns();
	c.deadline = t0 + (uint64_t)call_ms * 1000000;
	r = mw_ptstop_call(st, &c, err, sizeof(err));
	t->call_ns = mw_now_ns() - t0;
	if (r == 0)
		t->rss_after = mw_process_rss(t->pid);	/* still held: nothing else moved */
	t->held_ns = mw_ptstop_resume(st);	/* after an exec: the new program, as it starts */
	t->returned = c.ret & 0xffffffff;	/* an int */
	free(locks);
	mw_ledger_free(l);
	mw_snapshot_free(s);
	mw_proc_close(&p);
	if (r < 0)
		call_failed(t, r, &c, call_ms, err);
	else if (c.signo) {
		mw_error("process %d: malloc_trim(0) returned %llu after SIG%s came; the process "
			 "was let go", (int)t->pid, (unsigned long long)t->returned,
			 sigabbrev_np(c.signo) ? sigabbrev_np(c.signo) : "?");
		sigprocmask(SIG_UNBLOCK, &wind, NULL);	/* it ends us */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r < 0 ? -1 : 0;
refused:
	mw_snapshot_free(s);
	mw_proc_close(&p);
	return -1;
}

static void parse(int argc, char **argv, struct trim_opts *o)
{
	static const struct option lo[] = {
		MW_PROCSEL_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "call-timeout", required_argument, NULL, OPT_CALL_TIMEOUT },
		MW_STOP_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/* the call holds the process up to --call-timeout: its read may too */
	mw_snapshot_stop_bounds(TRIM_MAX_STOP_MS, TRIM_MAX_STOPPED_MS, -1);
	while ((c = getopt_long(argc, argv, ":" MW_PROCSEL_SHORT "o:qh", lo, NULL)) != -1) {
		if (mw_procsel_option(&o->sel, c, optarg))
			continue;
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'j': o->json = optarg; break;
		case OPT_READ_TIMEOUT: o->timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case OPT_CALL_TIMEOUT: o->call_ms = mw_seconds_option("--call-timeout", optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(trim_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	mw_procsel_check(&o->sel, "trim", MW_SEL_PIDS | MW_SEL_CGROUP | MW_SEL_NO_STOP |
			 MW_SEL_NEEDED);
	/* malloc_trim(0) is called in a stopped process alone: what never
	 * stops one can only say what the call would give back */
	if (o->sel.no_stop)
		o->dry_run = 1;
}

/* t (its pid set) made ready: the program it runs, its libc, its name.
 * 0, or -1 (said). */
static int prepare(const struct trim_opts *o, struct trim *t, struct mw_glibc *g)
{
	char err[PATH_MAX + 512];

	t->dry_run = o->dry_run;
	t->no_stop = o->sel.no_stop;
	t->image = mw_ptstop_image(t->pid);	/* before its libc is read: an exec after */
	if (mw_glibc_load(t->pid, g, err, sizeof(err)) < 0) {
		mw_error("%s", err);
		return -1;
	}
	if (!t->image && !t->dry_run) {
		mw_error("cannot read process %d's auxiliary vector (/proc/%d/auxv), which tells "
			 "an exec; malloc_trim not called", (int)t->pid, (int)t->pid);
		return -1;
	}
	if (!g->malloc_trim) {
		mw_error("process %d: no symbol for malloc_trim in '%s'", (int)t->pid, g->module);
		return -1;
	}
	mw_process_comm(t->pid, t->comm, sizeof(t->comm));
	if (!t->comm[0])
		snprintf(t->comm, sizeof(t->comm), "?");
	return 0;
}

/* The prediction alone, or the call: 0, or -1 (said). */
static int trim_one(const struct trim_opts *o, struct trim *t, const struct mw_glibc *g)
{
	return t->dry_run ? predict(t, g, o->timeout_ms) :
			    call_trim(t, g, o->timeout_ms, o->call_ms);
}

/* t's text and JSON (of several processes: one document a line). */
static void write_one(const struct trim_opts *o, const struct trim *t, int several,
		      int *json_err)
{
	if (mw_output_pair_text(o->fo, o->fj))
		trim_text(o->fo, t);
	if (o->fj && trim_json(o->fj, t, several ? JSON_COMPACT : JSON_INDENT(2)) < 0)
		*json_err = errno;
}

static int open_outputs(struct trim_opts *o)
{
	return mw_output_open_pair(o->out, o->json, &o->fo, &o->fj);
}

/* Several processes (-p A,B, --cgroup), one after the other, each
 * trimmed or refused with its reason; -1 when one was refused. */
static int trim_each(const struct trim_opts *o, const struct mw_pidlist *l, int *json_err)
{
	int failed = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct trim t = { .pid = l->pids[i] };
		struct mw_glibc g;

		if (prepare(o, &t, &g) < 0 || trim_one(o, &t, &g) < 0) {
			failed = 1;
			continue;
		}
		write_one(o, &t, 1, json_err);
	}
	return failed ? -1 : 0;
}

int cmd_trim(int argc, char **argv)
{
	struct trim_opts o = { .timeout_ms = MW_SNAP_TIMEOUT_MS, .call_ms = CALL_TIMEOUT_MS };
	struct mw_pidlist l = { 0 };
	int json_err = 0, failed = 0, bad;

	parse(argc, argv, &o);
	mw_procsel_pids(&o.sel, &l);
	if (l.n == 1 && !o.sel.cgroup) {
		struct trim t = { .pid = l.pids[0] };
		struct mw_glibc g;

		if (prepare(&o, &t, &g) < 0)
			exit(MW_EXIT_RUNTIME);
		if (open_outputs(&o) < 0)	/* before the call: no half-done run */
			return MW_EXIT_RUNTIME;
		if (trim_one(&o, &t, &g) < 0)
			exit(MW_EXIT_RUNTIME);
		write_one(&o, &t, 0, &json_err);
	} else {
		if (open_outputs(&o) < 0)
			return MW_EXIT_RUNTIME;
		failed = trim_each(&o, &l, &json_err) < 0;
	}
	bad = mw_output_close_pair(o.fo, o.out, o.fj, o.json, json_err) < 0;
	mw_pidlist_free(&l);
	mw_procsel_free(&o.sel);
	return bad || failed ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
