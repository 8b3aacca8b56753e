/* unit-relsock.c - the release socket's directory for a run that is not
 * root's (src/cleanup/relsock.c): its $XDG_RUNTIME_DIR taken only when it
 * is the user's alone (0700, not a link on the way), the run's directory
 * made and locked, a link planted at its name replaced (its target left
 * alone), a live run's directory left by the sweep, a dead one's swept,
 * a run's directory made again when a sweep took it as it was made.
 * As root, acting as uid 65534 (seteuid) where the user would. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "relsock.h"
#include "unit.h"

#define USER 65534

static int is_dir(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The refusals: no directory, a relative one, one of root's, one others
 * may read, a link to the user's own. */
static void refusals(const char *top, const char *xdg)
{
	char why[512], path[600];
	int fd;

	CHECK(mw_relsock_base(USER, NULL, 1, why, sizeof(why)) < 0 && strstr(why, "XDG_RUNTIME_DIR"),
	      "%s", why);
	CHECK(mw_relsock_base(USER, "run/user/65534", 1, why, sizeof(why)) < 0, "relative");
	CHECK(mw_relsock_base(USER, top, 1, why, sizeof(why)) < 0 && strstr(why, "(uid 0, mode 0755)"),
	      "root's: %s", why);
	chmod(xdg, 0755);
	CHECK(mw_relsock_base(USER, xdg, 1, why, sizeof(why)) < 0 && strstr(why, "mode 0755"),
	      "0755: %s", why);
	chmod(xdg, 0700);
	snprintf(path, sizeof(path), "%s/link", top);
	CHECK(symlink(xdg, path) == 0, "symlink");
	fd = mw_relsock_base(USER, path, 1, why, sizeof(why));
	CHECK(fd < 0 && strstr(why, "symbolic links"), "through a link: %s", why);
	if (fd >= 0)
		close(fd);
}

/* As the user: the run's directory made, held, a planted link replaced,
 * the sweep. */
static void as_user(const char *top, const char *xdg)
{
	char why[512], path[700], target[600];
	int base, run, again;

	base = mw_relsock_base(USER, xdg, 1, why, sizeof(why));
	CHECK(base >= 0, "the user's own 0700 directory: %s", why);
	if (base < 0)
		return;
	run = mw_relsock_make(base, "1.2", why, sizeof(why));
	CHECK(run >= 0, "made: %s", why);
	snprintf(path, sizeof(path), "%s/" MW_RELSOCK_USER_DIR "/1.2", xdg);
	CHECK(is_dir(path), "no %s", path);
	again = mw_relsock_make(base, "1.2", why, sizeof(why));
	CHECK(again < 0 && strstr(why, "held by another process"), "a live run's name: %s", why);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	CHECK(mw_relsock_sweep() == 0 && is_dir(path), "the sweep took a live run's directory");
	close(run);	/* killed: the lock is free, the directory left */
	CHECK(mw_relsock_sweep() == 1 && !is_dir(path), "the sweep left a dead run's directory");
	/* a link at a run's name (the base is the user's alone: the user's
	 * own, or what a killed run left) is replaced, its target kept */
	snprintf(target, sizeof(target), "%s/target", xdg);
	mkdir(target, 0700);
	snprintf(path, sizeof(path), "%s/" MW_RELSOCK_USER_DIR "/3.4", xdg);
	CHECK(symlink(target, path) == 0, "symlink");
	run = mw_relsock_make(base, "3.4", why, sizeof(why));
	CHECK(run >= 0 && is_dir(path) && is_dir(target), "a link at the name: %s", why);
	if (run >= 0)
		mw_relsock_remove(base, "3.4", run);
	CHECK(!is_dir(path), "removed");
	close(base);
	(void)top;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A run's directory made while another run of the user sweeps (every
 * traced run sweeps as it starts): the sweep may take the new directory,
 * unlocked yet, between its mkdir and its lock (it found no lock: a dead
 * run's), or hold its lock for a moment; the run makes it again.  Each of
 * 2000 makes beside a sweep in a loop must work (the user's XDG dir). */
static void beside_sweep(const char *xdg)
{
	char why[512];
	int base = mw_relsock_base(USER, xdg, 1, why, sizeof(why)), failures = 0, st;
	pid_t sweeper;

	CHECK(base >= 0, "base: %s", why);
	if (base < 0)
		return;
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	if ((sweeper = fork()) == 0) {
		for (double end = now_s() + 30; now_s() < end;)
			mw_relsock_sweep();
		_exit(0);
	}
	for (int i = 0; i < 2000 && sweeper > 0; i++) {
		int run = mw_relsock_make(base, "5.6", why, sizeof(why));

		if (run < 0 && !failures++)
			printf("make %d beside a sweep: %s\n", i, why);
		if (run >= 0)
			mw_relsock_remove(base, "5.6", run);
	}
	if (sweeper > 0) {
		kill(sweeper, SIGKILL);
		waitpid(sweeper, &st, 0);
	}
	CHECK(sweeper > 0 && failures == 0, "%d of 2000 makes failed beside a sweep", failures);
	close(base);
}

int main(void)
{
	char top[] = "/tmp/unit-relsock.XXXXXX", xdg[64];

	if (geteuid() != 0) {
		printf("needs root (to act as uid %d)\n", USER);
		return 77;
	}
	if (!mkdtemp(top))
		return 99;
	snprintf(xdg, sizeof(xdg), "%s/xdg", top);
	if (mkdir(xdg, 0700) < 0 || chown(xdg, USER, USER) < 0 || chmod(top, 0755) < 0)
		return 99;
	refusals(top, xdg);
	if (seteuid(USER) < 0)
		return 99;
	as_user(top, xdg);
	beside_sweep(xdg);
	if (seteuid(0) < 0)
		return 99;
	snprintf(xdg, sizeof(xdg), "rm -rf '%s'", top);
	if (system(xdg) != 0)
		return 99;
	return failed ? 1 : 0;
}
