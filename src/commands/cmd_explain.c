/* cmd_explain.c - `mallocwatch explain -p PID`: where a process's
 * resident memory is (in use, free but kept by glibc, given back, not
 * malloc's), how fragmented each arena is, and the findings, ranked,
 * each with its evidence and a quantified suggestion (ledger.h,
 * findings.h), read by explain.c. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "explain.h"
#include "snapshot.h"
#include "msg.h"
#include "output.h"
#include "proclist.h"
#include "procmem.h"
#include "report_ledger.h"
#include "report_snap.h"

static const char explain_usage[] =
"Usage: mallocwatch explain -p PID [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
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
"  -p PID               the process\n"
"  -o FILE              the text to FILE (default: stdout)\n"
"  --json FILE          the snapshot with \"ledger\", \"fragmentation\" and\n"
"                       \"findings\" as JSON ('-' = stdout); docs/json.md\n"
"  --read-timeout SECONDS  give up after this long (default 2)\n"
"  --no-stop            never stop the process for a consistent read (see\n"
"                       mallocwatch snapshot --help)\n"
MW_STOP_HELP(MW_XSTR(MW_SNAP_MAX_STOP_MS), MW_XSTR(MW_SNAP_MAX_STOPPED_MS))
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0; 1 when the process cannot be read (as snapshot), or its\n"
"ledger cannot be made (its smaps or pagemap not readable); 2 on a usage\n"
"error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch explain -p $(pidof memcached)\n"
"  sudo mallocwatch explain -p 4242 --json why.json -o /dev/null\n";

enum { OPT_READ_TIMEOUT = 256, OPT_NO_STOP };

int cmd_explain(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "no-stop", no_argument, NULL, OPT_NO_STOP },
		MW_STOP_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *json = NULL;
	long timeout_ms = MW_SNAP_TIMEOUT_MS;
	char err[PATH_MAX + 512], comm[64];
	struct mw_explained e;
	struct mw_glibc g;
	pid_t pid = 0;
	FILE *fo, *fj = NULL;
	int c, json_err = 0, bad;

	while ((c = getopt_long(argc, argv, ":p:o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (mw_parse_pid(optarg, &pid) < 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'o': out = optarg; break;
		case 'j': json = optarg; break;
		case OPT_READ_TIMEOUT: timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case MW_OPT_MAX_STOP: case MW_OPT_MAX_STOPPED: case MW_OPT_STOP_SHARE:
			mw_stop_option(c, optarg);
			break;
		case OPT_NO_STOP: mw_snapshot_no_stop(1); break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(explain_usage, stdout); exit(MW_EXIT_OK);
		default: mw_bad_option(c, argv);
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	if (!pid)
		mw_usage_error("explain needs -p PID");
	if (mw_glibc_load(pid, &g, err, sizeof(err)) < 0 ||
	    mw_explain_read(pid, &g, timeout_ms, &e, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	if (!e.l) {
		mw_explained_free(&e);
		mw_die(MW_EXIT_RUNTIME, "process %d: no RSS ledger: %s", (int)pid, e.lerr);
	}
	if (!e.s->consistent)
		mw_warn("process %d's allocator changed while it was read (%s); the figures are "
			"its last try's", (int)pid, e.s->why);
	mw_process_comm(pid, comm, sizeof(comm));
	fo = out ? mw_output_create(out, 1) : stdout;
	if (!fo || (json && !(fj = mw_output_create(json, 1)))) {
		mw_explained_free(&e);
		return MW_EXIT_RUNTIME;
	}
	if (!(fj == stdout && fo == stdout))
		mw_explain_text(fo, e.s, e.l, e.f, e.nf, comm[0] ? comm : "?");
	if (fj && mw_snapshot_json_ledger(fj, e.s, comm[0] ? comm : "?", NULL, e.l, e.f, e.nf) < 0)
		json_err = errno;
	bad = mw_output_close(fo, out ? out : "stdout", fj == fo ? json_err : 0) < 0;
	if (fj && fj != fo && mw_output_close(fj, json, json_err) < 0)
		bad = 1;
	mw_explained_free(&e);
	return bad ? MW_EXIT_RUNTIME : MW_EXIT_OK;
}
