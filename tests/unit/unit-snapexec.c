/* unit-snapexec.c - a process that execs between the read of its libc's
 * layouts (mw_glibc_load) and the walk by them (mw_snapshot_read) is said
 * to have exec'd: the walk of the new program by the old program's
 * addresses fails (its reads fault: "cannot read the lock at 0x...: Bad
 * address", "no consistent snapshot"), and the image the walk compared
 * stops with was taken at the walk's start, after the exec, so the exec
 * went unseen and the refusal gave a false reason.
 *
 * A shell on the probe-enabled glibc waits on a pipe; its layouts are
 * read; it execs sleep (the same libc, mapped elsewhere); the snapshot
 * with the old layouts must be refused as an exec, and one with the new
 * layouts taken. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glibcinfo.h"
#include "snapshot.h"
#include "unit.h"

/* Until /proc/PID/FILE's first line begins with want (10 s at most). */
static int wait_line(pid_t pid, const char *file, const char *want)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "re");
		int ok = f && fgets(line, sizeof(line), f) && !strncmp(line, want, strlen(want));

		if (f)
			fclose(f);
		if (ok)
			return 1;
		usleep(10000);
	}
	return 0;
}

int main(void)
{
	const char *prefix = getenv("MW_GLIBC_PREFIX");
	char lib[4096], loader[4200], cmd[9000], err[8192];
	struct mw_glibc *old = calloc(1, sizeof(*old)), *now = calloc(1, sizeof(*now));
	struct mw_snapshot *s = NULL;
	int fds[2], r;
	pid_t pid;

	if (geteuid() != 0) {
		printf("needs root (ptrace, /proc/PID/auxv)\n");
		return 77;
	}
	if (!prefix || !*prefix)
		prefix = "/var/cache/mallocwatch/glibc";
	snprintf(lib, sizeof(lib), "%s/lib", prefix);
	snprintf(loader, sizeof(loader), "%s/ld-linux-x86-64.so.2", lib);
	if (access(loader, X_OK) != 0) {
		printf("no probe-enabled glibc at %s (make glibc)\n", prefix);
		return 77;
	}
	if (!old || !now || pipe(fds) < 0)
		return 99;
	snprintf(cmd, sizeof(cmd), "read x; exec %s --library-path %s /bin/sleep 30", loader, lib);
	if ((pid = fork()) == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		execl(loader, loader, "--library-path", lib, "/bin/sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	if (pid < 0 || !wait_line(pid, "syscall", "0 ")) {	/* the shell in read(2) */
		printf("the shell never waited on its pipe\n");
		kill(pid, SIGKILL);
		return 99;
	}
	CHECK(mw_glibc_load(pid, old, err, sizeof(err)) == 0, "the shell's libc: %s", err);
	CHECK(old->image != 0, "no image recorded with the layouts");
	if (write(fds[1], "\n", 1) != 1 ||
	    !wait_line(pid, "syscall", "230 ")) {	/* sleep in clock_nanosleep */
		printf("the shell never exec'd sleep\n");
		kill(pid, SIGKILL);
		return 99;
	}
	r = mw_snapshot_read(pid, old, 2000, &s, err, sizeof(err));
	CHECK(r != MW_SNAP_OK, "the new program read by the old one's layouts");
	if (r == MW_SNAP_OK)
		mw_snapshot_free(s);
	else
		CHECK(strstr(err, "exec") != NULL, "refused without the exec: %s", err);
	printf("old layouts: %s\n", r == MW_SNAP_OK ? "read" : err);

	CHECK(mw_glibc_load(pid, now, err, sizeof(err)) == 0, "sleep's libc: %s", err);
	r = mw_snapshot_read(pid, now, 2000, &s, err, sizeof(err));
	CHECK(r == MW_SNAP_OK, "sleep, by its own layouts: %s", err);
	if (r == MW_SNAP_OK)
		mw_snapshot_free(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(old);
	free(now);
	return failed ? 1 : 0;
}
