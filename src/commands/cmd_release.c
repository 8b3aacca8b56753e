/* cmd_release.c - `mallocwatch release PID`: the -f run that traces
 * process PID lets go of it (release.h), so that gdb -p or strace -p can
 * attach to it while the run goes on with the others. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"
#include "procmem.h"
#include "release.h"

static const char release_usage[] =
"Usage: mallocwatch release PID\n"
"\n"
"Ask the mallocwatch -f run that traces process PID (the TracerPid of\n"
"/proc/PID/status) to let go of it while the run goes on: each of its\n"
"threads is detached from ptrace (a signal pending in its stop passed on,\n"
"a stopped process left stopped), it leaves the run's tracer set, and it\n"
"runs on untraced, so that gdb -p PID or strace -p PID can attach.  Its\n"
"later forks and execs are not followed (the processes it created before\n"
"stay traced); its report says when it was released and has no exit\n"
"status, exit snapshot nor ledger at exit.  The run's own program (-c) or\n"
"process (-p) is not released: ^C lets go of every process.  Only root\n"
"or the user the run runs as may ask: the run checks the asker's\n"
"credentials as the kernel gives them.\n"
"\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 once the run has let go of PID; 1 when PID is not traced\n"
"by a mallocwatch -f run, the caller may not ask, or the run refused\n"
"(the reason is said); 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"  sudo mallocwatch -f -o report.txt -c ./server &\n"
"  sudo mallocwatch release 4250 && sudo gdb -p 4250\n";

/* From /proc/PID/status: its Tgid, TracerPid and real Uid.  0, or -1
 * when it cannot be read (no such process). */
static int status_of(pid_t pid, long *tgid, long *tracer, long *uid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0)
		return -1;
	*tgid = (p = strstr(buf, "\nTgid:")) ? strtol(p + 6, NULL, 10) : -1;
	*tracer = (p = strstr(buf, "\nTracerPid:")) ? strtol(p + 11, NULL, 10) : -1;
	*uid = (p = strstr(buf, "\nUid:")) ? strtol(p + 5, NULL, 10) : -1;
	return *tgid > 0 && *tracer >= 0 && *uid >= 0 ? 0 : -1;
}

/* pid's command name, quoted as another process's bytes. */
static const char *comm_of(pid_t pid, char *q, size_t len)
{
	char path[64], buf[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((n = mw_read_small(path, 0, buf, sizeof(buf))) <= 0)
		return "?";
	buf[strcspn(buf, "\n")] = '\0';
	return mw_quote(buf, q, len);
}

/* The run said it let go of pid: wait (at most 10 s) until pid's tracer
 * is no longer run (its threads are detached at their next stop, at
 * once).  0, or -1. */
static int let_go(pid_t pid, pid_t run)
{
	long tgid, tracer, uid;

	for (int i = 0; i < 1000; i++) {
		if (status_of(pid, &tgid, &tracer, &uid) < 0 || tracer != run)
			return 0;
		usleep(10000);
	}
	return -1;
}

static pid_t pid_arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v <= 0 || v > 0x3fffffff)
		mw_usage_error("release needs a process id, not '%s'", s);
	return (pid_t)v;
}

int cmd_release(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long tgid, run, uid, run_uid, x, y;
	char why[512], q[200];
	pid_t pid;
	int c;

	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c != 'h')
			mw_bad_option(c, argv);
		fputs(release_usage, stdout);
		exit(MW_EXIT_OK);
	}
	if (optind + 1 != argc)
		mw_usage_error(optind < argc ? "one PID, not several" : "release needs a PID");
	pid = pid_arg(argv[optind]);
	if (status_of(pid, &tgid, &run, &uid) < 0) {
		mw_error("no process %d", (int)pid);
		return MW_EXIT_RUNTIME;
	}
	if (tgid != pid) {
		mw_error("%d is a thread of process %ld: release the process", (int)pid, tgid);
		return MW_EXIT_RUNTIME;
	}
	if (!run) {
		mw_error("process %d is not traced", (int)pid);
		return MW_EXIT_RUNTIME;
	}
	if (status_of((pid_t)run, &x, &y, &run_uid) < 0) {
		mw_error("process %d's tracer (process %ld) is gone", (int)pid, run);
		return MW_EXIT_RUNTIME;
	}
	if (getuid() != 0 && (long)getuid() != run_uid) {
		mw_error("process %d is traced by process %ld (%s) of uid %ld: only root or that "
			 "user may release it", (int)pid, run, comm_of((pid_t)run, q, sizeof(q)),
			 run_uid);
		return MW_EXIT_RUNTIME;
	}
	switch (mw_release_ask((pid_t)run, pid, why, sizeof(why))) {
	case MW_RELEASE_OK:
		if (let_go(pid, (pid_t)run) < 0) {
			mw_error("run %ld said it let go of process %d, which it still traces", run,
				 (int)pid);
			return MW_EXIT_RUNTIME;
		}
		printf("process %d released by the mallocwatch run %ld: no longer traced, its "
		       "later forks and execs not followed\n", (int)pid, run);
		return fflush(stdout) == 0 ? MW_EXIT_OK : MW_EXIT_RUNTIME;
	case MW_RELEASE_REFUSED:
		mw_error("run %ld did not release process %d: %s", run, (int)pid, why);
		return MW_EXIT_RUNTIME;
	case MW_RELEASE_NO_RUN:
		mw_error("process %d is traced by process %ld (%s), not by a mallocwatch -f run",
			 (int)pid, run, comm_of((pid_t)run, q, sizeof(q)));
		return MW_EXIT_RUNTIME;
	default:
		mw_error("%s", why);
		return MW_EXIT_RUNTIME;
	}
}
