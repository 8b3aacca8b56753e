/* cmd_snapshot.c - `mallocwatch snapshot -p PID`: the allocator state of
 * a running process, now, without a tracer (snapshot.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "glibcinfo.h"
#include "msg.h"
#include "output.h"
#include "procmem.h"
#include "report.h"
#include "snapshot.h"
#include "target.h"

static const char snapshot_usage[] =
"Usage: mallocwatch snapshot -p PID [-o FILE] [--json FILE] [--read-timeout SECONDS] [-q]\n"
"\n"
"Read glibc's allocator state from a running process, now, without\n"
"stopping or signalling it and without a tracer or SDT probes: every\n"
"arena (system bytes, in use, free but retained, what malloc_trim(0)\n"
"could give back at most, top chunk, heaps, attached threads, free list),\n"
"every heap (heap_info), the main heap's sbrk extent, the mmap and trim\n"
"thresholds, arena limits and mmapped chunks.  Needs the libc's symbols\n"
"and DWARF: built in, or its debug package (Debian: libc6-dbg; Fedora:\n"
"glibc-debuginfo), found by build-id, or under $MW_DEBUGINFO_PATH.\n"
"\n"
"  -p PID               the process\n"
"  -o FILE              the summary to FILE (default: stdout)\n"
"  --json FILE          the snapshot as JSON ('-' = stdout); docs/json.md\n"
"  --read-timeout SECONDS  give up after this long (default 2); the walk is\n"
"                       also bounded in steps, and a loop in the arena ring,\n"
"                       a heap chain, a bin or a fastbin stops it at once\n"
"  -q, --quiet          no notes or warnings\n"
"\n"
"Exit status: 0 (also for a snapshot marked inconsistent: the allocator\n"
"changed while it was read), 1 when the process cannot be read, when its\n"
"allocator is corrupt or hostile (a loop: the message names the structure\n"
"and the address) or is not read within --read-timeout; 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch snapshot -p $(pidof myserver)\n"
"  sudo mallocwatch snapshot -p 4242 --json state.json -o /dev/null\n";

enum { OPT_READ_TIMEOUT = 256 };

int cmd_snapshot(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "read-timeout", required_argument, NULL, OPT_READ_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *json = NULL;
	char err[PATH_MAX + 512], comm[64];
	struct mw_glibc g;
	struct mw_snapshot *s;
	pid_t pid = 0;
	FILE *fo, *fj = NULL;
	int c, status = MW_EXIT_OK, json_err = 0;
	long timeout_ms = MW_SNAP_TIMEOUT_MS;

	while ((c = getopt_long(argc, argv, "p:o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (mw_parse_pid(optarg, &pid) < 0)
				mw_usage_error("-p needs a process id, not '%s'", optarg);
			break;
		case 'o': out = optarg; break;
		case 'j': json = optarg; break;
		case OPT_READ_TIMEOUT: timeout_ms = mw_seconds_option("--read-timeout", optarg); break;
		case 'q': mw_quiet(1); break;
		case 'h': fputs(snapshot_usage, stdout); return MW_EXIT_OK;
		default: mw_usage_error("bad option");
		}
	}
	if (optind < argc)
		mw_usage_error("unexpected argument '%s'", argv[optind]);
	if (!pid)
		mw_usage_error("snapshot needs -p PID");
	fo = out ? mw_output_create(out, 1) : stdout;
	if (!fo || (json && !(fj = mw_output_create(json, 1))))
		return MW_EXIT_RUNTIME;
	if (mw_glibc_load(pid, &g, err, sizeof(err)) < 0 ||
	    mw_snapshot_read(pid, &g, timeout_ms, &s, err, sizeof(err)) < 0)
		mw_die(MW_EXIT_RUNTIME, "%s", err);
	mw_process_comm(pid, comm, sizeof(comm));
	if (!comm[0])
		snprintf(comm, sizeof(comm), "?");
	if (!s->consistent)
		mw_warn("process %d's allocator changed while it was read (%s); the snapshot is "
			"marked inconsistent", (int)pid, s->why);
	if (!(json && fj == stdout && fo == stdout))
		mw_snapshot_text(fo, s, comm);	/* an error is found at the close */
	if (fj && mw_snapshot_json(fj, s, comm) < 0)
		json_err = errno;
	/* a JSON that could not be made (ENOMEM) fails the run like a write */
	if (mw_output_close(fo, out ? out : "stdout", fj == fo ? json_err : 0) < 0 ||
	    (fj && fj != fo && mw_output_close(fj, json, json_err) < 0))
		status = MW_EXIT_RUNTIME;
	mw_snapshot_free(s);
	return status;
}
