/* tracer_detach.c - a tracer left removing its uprobes after a flushed
 * -c run (tracer.h, mw_tracer_hand_off): the watcher process that waits
 * for it and then cleans up, and the reaping of both.  Split out of
 * tracer.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leftovers.h"
#include "pidfd.h"
#include "runtime.h"
#include "tracer.h"
#include "uprobes.h"

/* Tracers left detaching and their watchers: children of this process
 * until they end; reaped by mw_tracer_reap(). */
static pid_t left[64];
static size_t nleft;

void mw_tracer_reap(void)
{
	for (size_t i = 0; i < nleft;) {
		if (waitpid(left[i], NULL, WNOHANG) != 0) {	/* reaped, or not ours */
			left[i] = left[--nleft];
			continue;
		}
		i++;
	}
}

static void keep(pid_t pid)
{
	mw_tracer_reap();
	if (nleft < sizeof(left) / sizeof(left[0]))
		left[nleft++] = pid;
}

/* The watcher: own session, no descriptor of mallocwatch's but the
 * tracer's pidfd and the work directory's lock (a reader of its stdout must see EOF when mallocwatch
 * exits), the work directory renamed to its own pid so that sweeps see
 * a live run. */
static void watch(pid_t tracer, int tracer_fd, int ready, const char *workdir,
		  const char *module)
{
	char dir[PATH_MAX], marker[PATH_MAX + 16];
	const char *dot = strrchr(workdir, '.');
	int null = open("/dev/null", O_RDWR), fd;
	const char *slash = strrchr(workdir, '/');
	ssize_t w;

	setsid();
	prctl(PR_SET_NAME, "mw-detach");	/* in ps: not a run still going */
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	/* keep the tracer's pidfd, the work directory's lock (its holder
	 * is a live run for sweeps: leftovers.h) and the pipe that says the
	 * marker is there, nothing else */
	tracer_fd = fcntl(tracer_fd, F_DUPFD_CLOEXEC, 1000);
	fcntl(mw_workdir_lock_fd(), F_DUPFD_CLOEXEC, 1001);
	ready = fcntl(ready, F_DUPFD_CLOEXEC, 1002);
	syscall(SYS_close_range, 3U, 999U, 0U);
	syscall(SYS_close_range, 1003U, ~0U, 0U);
	snprintf(dir, sizeof(dir), "%.*s/mallocwatch.%d%s", (int)(slash - workdir), workdir,
		 (int)getpid(), dot ? dot : "");
	if (rename(workdir, dir) < 0)
		snprintf(dir, sizeof(dir), "%s", workdir);
	snprintf(marker, sizeof(marker), "%s/" MW_DETACHING_FILE, dir);
	if ((fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
		dprintf(fd, "%d\n", (int)tracer);
		close(fd);
	}
	/* from here --cleanup finds this directory and waits for us (a
	 * failed write: the parent's wait ends at its timeout) */
	w = write(ready, "r", 1);
	(void)w;
	close(ready);
	if (mw_wait_tracer(tracer, tracer_fd, MW_STOP_GRACE_MS) < 0) {
		mw_pidfd_signal(tracer_fd, SIGKILL);	/* stuck: the sweep below */
		mw_pidfd_wait(tracer_fd, MW_SWEEP_WAIT_MS);
	}
	mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* nothing when it ended normally */
	mw_sweep_kmods(MW_SWEEP_WAIT_MS);	/* a stapio killed above: its module */
	mw_runtime_procfs_remove(module);
	mw_workdir_remove(dir);
	_exit(0);
}

int mw_tracer_hand_off(pid_t tracer, const char *workdir, const char *module)
{
	/* our child, not reaped yet (keep() reaps only earlier ones): the
	 * pidfd is of the tracer itself */
	int tfd = mw_pidfd_open(tracer), ready[2];
	struct pollfd p;
	sigset_t none;
	pid_t pid;

	keep(tracer);
	if (tfd < 0)
		return -1;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(tfd);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_IGN);
		signal(SIGCHLD, SIG_DFL);
		sigemptyset(&none);	/* serve's thread blocks SIGINT, SIGTERM */
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(ready[0]);
		watch(tracer, tfd, ready[1], workdir, module);
	}
	close(tfd);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -1;
	}
	keep(pid);
	mw_workdir_unlock();	/* the watcher holds the lock now */
	/* until the watcher has marked the directory, a --cleanup started
	 * right after we exit would not know to wait for it (bounded: the
	 * watcher only renames a directory and writes a line; 5 s, as a
	 * loaded machine may take over 1 s to run a new process: with 1 s
	 * t-leftovers found the watcher's directory after --cleanup at a
	 * load of 15) */
	p = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	while (poll(&p, 1, 5000) < 0 && errno == EINTR)
		;
	close(ready[0]);
	return 0;
}
