/* unit-images.c - a process -p watches (trace_images.h) that maps another
 * libc file than the one traced when the watch begins is refused at once:
 * it replaced its program (exec) after the run found its libc and before
 * the watch, and the program it runs is not traced (nobody's process did
 * so 0.06 s after root's mallocwatch -p appeared, and the report said
 * "retries 0", rule passed, exit 0).  A child running /bin/sleep (the
 * system's libc) watched as if the probe-enabled glibc were traced:
 * refused, with the reason; watched with its own libc: not. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mapped.h"
#include "procs.h"
#include "state.h"
#include "trace_images.h"
#include "unit.h"

/* Watch pid as traced on libc_path: the reason it is refused, or NULL. */
static const char *watched(pid_t pid, const char *libc_path, char *why, size_t whylen)
{
	int pids[1] = { (int)pid };
	struct mw_procs *procs = mw_procs_new(pids, 1);
	struct mw_images_watch *w = mw_images_watch_new(NULL);
	const char *r;

	mw_images_watch_add(w, mw_procs_process(procs, 0), pid, libc_path);
	r = mw_state_images_refused(mw_procs_process(procs, 0)->st, NULL);
	snprintf(why, whylen, "%s", r ? r : "");
	mw_images_watch_free(w);
	mw_procs_free(procs);
	return r ? why : NULL;
}

int main(void)
{
	const char *probes = MW_GLIBC_PREFIX "/lib/libc.so.6";
	char why[PATH_MAX + 600], err[PATH_MAX + 128], exe[PATH_MAX] = "", path[64];
	struct mw_mapped m;
	struct stat sb;
	pid_t pid;
	int status;

	if (stat(probes, &sb) < 0) {
		printf("skip: no probe-enabled glibc at %s\n", probes);
		return 77;
	}
	if ((pid = fork()) == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 500 && !strstr(exe, "sleep"); i++) {	/* 5 s to exec */
		ssize_t n = readlink(path, exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		usleep(10000);
	}
	CHECK(strstr(exe, "sleep"), "the child did not exec sleep");
	CHECK(mw_mapped_find(pid, MW_LIB_LIBC, &m, err, sizeof(err)) == 1, "%s", err);
	CHECK(watched(pid, probes, why, sizeof(why)) &&
	      strstr(why, "maps another libc") && strstr(why, "before it was watched"),
	      "sleep watched as traced on %s: '%s'", probes, why);
	printf("on %s: %s\n", probes, why);
	CHECK(!watched(pid, m.name, why, sizeof(why)), "sleep watched on its own libc %s: '%s'",
	      m.name, why);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return failed ? 1 : 0;
}
