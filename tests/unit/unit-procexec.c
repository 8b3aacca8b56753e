/* unit-procexec.c - an exec told from everything else (procexec.h), on
 * children of this test that run /bin/true when told (a byte on a pipe):
 * an exec counts whichever thread makes it - the main one, one that ran
 * before the watch began, one made after, the main thread gone
 * (pthread_exit), one made by a thread that has exited since and whose
 * count was closed - also once the process has exited; a plain exit, and a
 * child process's exec (fork, then exec), are no exec of the process.
 * And, looked at while the new program runs, in a process that keeps its
 * old address space alive in a clone(CLONE_VM) sibling (blinding the
 * address-space witness): an exec from an old thread, seen at the first
 * look (the count of its thread, gone, closed by that look); one from a
 * thread past the descriptors allowed (the process not counted), seen by
 * its main thread's replacement, also when another process watched
 * before it holds all 512.  And a process of 600 threads (not counted
 * whole) that exits without an exec: which it did cannot be told (2);
 * and 20 processes, counted whole, whose threads churn until they exit:
 * no exec (0).
 * Needs what the count needs (root: perf_event_open, tracefs); skips
 * (77) without. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procexec.h"
#include "unit.h"

enum how { LEADER, OLD_THREAD, NEW_THREAD, LEADER_GONE, MAKER_GONE, EXIT, FORK_EXEC };

static const char *const names[] = { "leader", "old thread", "new thread", "leader gone",
				     "maker gone", "exit", "fork+exec" };
static int go[2];

static void run_true(void)
{
	execl("/bin/true", "true", (char *)NULL);
	_exit(127);
}

static void *thread_exec(void *arg)
{
	char c;

	if (arg && read(go[0], &c, 1) != 1)	/* made before the watch: wait */
		_exit(126);
	run_true();
	return NULL;
}

/* MAKER_GONE's thread, made before the watch: told, it makes one that
 * waits to be told again and execs, and exits */
static void *thread_maker(void *arg)
{
	pthread_t t;
	char c;

	(void)arg;
	if (read(go[0], &c, 1) != 1 || pthread_create(&t, NULL, thread_exec, (void *)1))
		_exit(126);
	return NULL;
}

/* The child: made ready (its threads made), says so on ready, then told
 * on go. */
static void child(enum how how, int ready)
{
	pthread_t t;
	char c;

	if ((how == OLD_THREAD || how == LEADER_GONE) &&
	    pthread_create(&t, NULL, thread_exec, (void *)1))
		_exit(125);
	if (how == MAKER_GONE && pthread_create(&t, NULL, thread_maker, NULL))
		_exit(125);
	if (write(ready, "r", 1) != 1)
		_exit(125);
	if (how == MAKER_GONE && (pthread_join(t, NULL) || write(ready, "m", 1) != 1))
		_exit(125);
	if (how == MAKER_GONE)
		pause();
	if (how == LEADER_GONE)
		pthread_exit(NULL);	/* the thread waits on go, and execs */
	if (how == OLD_THREAD)
		pause();
	if (read(go[0], &c, 1) != 1)
		_exit(126);
	if (how == LEADER)
		run_true();
	if (how == NEW_THREAD && !pthread_create(&t, NULL, thread_exec, NULL))
		pause();
	if (how == FORK_EXEC) {
		pid_t g = fork();

		if (g == 0)
			run_true();
		waitpid(g, NULL, 0);
	}
	_exit(0);
}

/* Tell the child go (one byte of say for each thread that waits on
 * it), reap it and look at it a last time: mw_procexec_check's answer
 * when it exited 0, r when r was not 0 (-1 when go could not be told). */
static int finish(pid_t pid, struct mw_procexec *w, int r, const char *say, const char *what,
		  char *why, size_t whylen)
{
	int status;

	if (write(go[1], say, strlen(say)) != (ssize_t)strlen(say))
		r = -1;
	waitpid(pid, &status, 0);
	close(go[0]);
	close(go[1]);
	if (r == 0) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", what, status);
		r = mw_procexec_check(w, why, whylen);
	}
	mw_procexec_free(w);
	return r;
}

/* Watch a child doing how; 1 when it was seen to exec (after it exited
 * and was reaped), 0 not, 77 not counted here. */
static int watch(enum how how, char *why, size_t whylen)
{
	struct mw_procexec *w;
	int ready[2], r;
	pid_t pid;
	char c;

	if (pipe(go) < 0 || pipe(ready) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		close(ready[0]);
		child(how, ready[1]);
	}
	close(ready[1]);
	r = read(ready[0], &c, 1) == 1 ? 0 : -1;
	w = mw_procexec_open(pid);
	if (!mw_procexec_counted(w)) {
		kill(pid, SIGKILL);
		r = 77;
	}
	CHECK(r == 77 || mw_procexec_check(w, why, whylen) == 0, "%s: %s", names[how], why);
	if (r == 0 && how == MAKER_GONE) {
		/* its maker made it, and is gone: looked at (its count closed) */
		CHECK(write(go[1], "g", 1) == 1 && read(ready[0], &c, 1) == 1);
		CHECK(mw_procexec_check(w, why, whylen) == 0, "%s: %s", names[how], why);
	}
	close(ready[0]);
	return finish(pid, w, r, "go", names[how], why, whylen);
}

/* The sibling: shares the child's address space, keeps it after the
 * child's exec (clone(CLONE_VM) without CLONE_THREAD). */
static int sibling(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void *thread_idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *thread_sleep(void *arg)
{
	char c;

	(void)arg;
	if (read(go[0], &c, 1) != 1)
		_exit(126);
	execl("/bin/sleep", "sleep", "30", (char *)NULL);
	_exit(127);
}

/* Is the child's main thread a zombie (it called pthread_exit)? */
static int leader_zombie(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int z = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			z = p[1] == ' ' && p[2] == 'Z';
		fclose(f);
	}
	return z;
}

/* A child with a sibling and nthreads threads besides the one that execs
 * sleep when told (made last), seen to exec while sleep runs?  1 seen, 0
 * not, -1 the child not made; *counted as the watch says.  nthreads -1:
 * no exec, its main thread gone (pthread_exit) after the watch began,
 * looked at then. */
static int watch_live(int nthreads, int *counted, char *why, size_t whylen)
{
	static char stack[65536];
	struct mw_procexec *w;
	pthread_attr_t small;
	pthread_t t;
	int ready[2], status, r = -1;
	pid_t pid, sib;

	if (pipe(go) < 0 || pipe(ready) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		sib = clone(sibling, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
		if (sib < 0 || pthread_attr_init(&small) ||
		    pthread_attr_setstacksize(&small, PTHREAD_STACK_MIN))
			_exit(125);
		for (int i = 0; i < nthreads; i++)
			if (pthread_create(&t, &small, thread_idle, NULL))
				_exit(125);
		if (pthread_create(&t, NULL, nthreads < 0 ? thread_idle : thread_sleep, NULL) ||
		    write(ready[1], &sib, sizeof(sib)) != (ssize_t)sizeof(sib))
			_exit(125);
		if (nthreads < 0 && read(go[0], &sib, 1) == 1)
			pthread_exit(NULL);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &sib, sizeof(sib)) != (ssize_t)sizeof(sib))
		sib = -1;
	close(ready[0]);
	w = mw_procexec_open(pid);
	*counted = mw_procexec_counted(w);
	if (sib > 0 && nthreads < 0 && write(go[1], "g", 1) == 1) {
		for (int i = 0; i < 500 && !leader_zombie(pid); i++)
			usleep(10000);
		CHECK(leader_zombie(pid), "leader gone: its main thread did not exit");
		r = mw_procexec_check(w, why, whylen);
	} else if (sib > 0 && write(go[1], "g", 1) == 1) {
		char path[64], exe[PATH_MAX];
		ssize_t n = 0;

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		for (int i = 0; i < 500 && n <= 0; i++) {	/* 5 s for sleep to run */
			n = readlink(path, exe, sizeof(exe) - 1);
			if (n > 0 && (exe[n] = '\0', !strstr(exe, "sleep")))
				n = 0;
			usleep(10000);
		}
		CHECK(n > 0, "%d threads: the child did not exec sleep", nthreads);
		r = mw_procexec_check(w, why, whylen);
	}
	if (sib > 0)
		kill(sib, SIGKILL);	/* the child's, unreaped: its pid is its own */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(go[0]);
	close(go[1]);
	mw_procexec_free(w);
	return r;
}

static void *thread_none(void *arg)
{
	return arg;
}

/* A thread that makes threads and joins them, over and over: the
 * process's threads change faster than they can be listed. */
static void *thread_churn(void *arg)
{
	pthread_t t;

	(void)arg;
	for (;;)
		if (pthread_create(&t, NULL, thread_none, NULL) == 0)
			pthread_join(t, NULL);
	return NULL;
}

/* A child of nthreads threads that exits (no exec) once watched: what
 * the check says after it was reaped; *counted as the watch says.  With
 * churn, that many threads churn (thread_churn) from once it was
 * watched until it exits, and it is looked at 3 times meanwhile. */
static int watch_exit(int nthreads, int churn, int *counted, char *why, size_t whylen)
{
	struct mw_procexec *w;
	int ready[2], r;
	char what[32];
	pid_t pid;
	char c;

	if (pipe(go) < 0 || pipe(ready) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		pthread_attr_t small;
		pthread_t t;

		if (pthread_attr_init(&small) || pthread_attr_setstacksize(&small, PTHREAD_STACK_MIN))
			_exit(125);
		for (int i = 0; i < nthreads && !churn; i++)
			if (pthread_create(&t, &small, thread_idle, NULL))
				_exit(125);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(125);
		for (int i = 0; i < nthreads && churn; i++)
			if (pthread_create(&t, &small, thread_churn, NULL))
				_exit(125);
		if (churn && read(go[0], &c, 1) != 1)
			_exit(125);
		_exit(0);
	}
	close(ready[1]);
	r = read(ready[0], &c, 1) == 1 ? 0 : -1;
	close(ready[0]);
	w = mw_procexec_open(pid);
	*counted = mw_procexec_counted(w);
	if (r == 0 && churn && write(go[1], "c", 1) != 1)
		r = -1;
	for (int i = 0; r == 0 && i < (churn ? 3 : 1); i++) {
		CHECK(mw_procexec_check(w, why, whylen) == 0, "%d threads, alive: %s", nthreads, why);
		usleep(churn ? 10000 : 0);
	}
	snprintf(what, sizeof(what), "%d threads%s", nthreads, churn ? " churning" : "");
	return finish(pid, w, r, "g", what, why, whylen);
}

/* The soft RLIMIT_NOFILE raised to n, or as far as the hard limit
 * allows: 1 when it is at least n. */
static int nofile(rlim_t n)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return 0;
	if (r.rlim_cur < n) {
		r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max >= n ? n : r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	return getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur >= n;
}

int main(void)
{
	char why[4096];

	for (enum how how = LEADER; how <= FORK_EXEC; how++) {
		int r;

		why[0] = '\0';
		r = watch(how, why, sizeof(why));
		if (r == 77 && how == LEADER) {
			printf("skip: execs not counted here (not root, or no tracefs)\n");
			return 77;
		}
		CHECK(r != 77, "%s: not counted, the first was", names[how]);
		if (how <= MAKER_GONE)
			CHECK(r == 1 && strstr(why, "replaced its program (exec) during the run") &&
			      strstr(why, "counted on its threads"), "%s: %d '%s'", names[how], r,
			      why);
		else
			CHECK(r == 0, "%s: %d '%s'", names[how], r, why);
		printf("%s: %s\n", names[how], r == 1 ? why : "no exec");
	}
	/* an old thread's exec, then 600 threads: more than the 512 counts;
	 * no exec, its main thread gone */
	for (int i = 0; i < 2; i++) {
		int nthreads = i ? 600 : 0, counted = 0, r;

		why[0] = '\0';
		r = watch_live(nthreads, &counted, why, sizeof(why));
		CHECK(counted == !i, "sibling, %d threads: counted %d", nthreads, counted);
		CHECK(r == 1 && strstr(why, "replaced its program (exec) during the run"),
		      "sibling, %d threads: %d '%s'", nthreads, r, why);
		printf("sibling, %d threads: %s\n", nthreads, r == 1 ? why : "no exec");
	}
	/* another process watched first that holds the 512 counts (511
	 * threads): an old thread's exec seen all the same (the counts
	 * allowed are also at most a quarter of RLIMIT_NOFILE: raised to its
	 * hard limit, 2048 at least, or the case is skipped) */
	if (!nofile(2048)) {
		printf("sibling, after 511 threads: skipped (RLIMIT_NOFILE below 2048)\n");
	} else {
		int ready[2], status, counted = 0, r;
		struct mw_procexec *hog = NULL;
		pid_t pid;
		char c;

		if (pipe(ready) < 0)
			return 1;
		if ((pid = fork()) == 0) {
			pthread_attr_t small;
			pthread_t t;

			if (pthread_attr_init(&small) ||
			    pthread_attr_setstacksize(&small, PTHREAD_STACK_MIN))
				_exit(125);
			for (int i = 0; i < 510; i++)
				if (pthread_create(&t, &small, thread_idle, NULL))
					_exit(125);
			if (write(ready[1], "r", 1) != 1)
				_exit(125);
			for (;;)
				pause();
		}
		close(ready[1]);
		if (read(ready[0], &c, 1) == 1)
			hog = mw_procexec_open(pid);
		close(ready[0]);
		CHECK(mw_procexec_counted(hog), "the process of 511 threads: not counted");
		why[0] = '\0';
		r = watch_live(0, &counted, why, sizeof(why));
		CHECK(r == 1, "sibling, after 511 threads: %d '%s'", r, why);
		printf("sibling, after 511 threads: %s\n", r == 1 ? why : "no exec");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		mw_procexec_free(hog);
	}
	{
		int counted = 0, r = watch_live(-1, &counted, why, sizeof(why));

		CHECK(counted && r == 0, "sibling, leader gone: counted %d, %d '%s'", counted, r,
		      why);
		printf("sibling, leader gone: %s\n", r == 1 ? why : "no exec");
	}
	{
		int counted = 1, r;

		why[0] = '\0';
		r = watch_exit(600, 0, &counted, why, sizeof(why));
		CHECK(!counted && r == 2 && strstr(why, "an exec before its exit cannot be ruled out"),
		      "600 threads, exit: counted %d, %d '%s'", counted, r, why);
		printf("600 threads, exit: %s\n", r == 2 ? why : "no exec");
	}
	/* counted whole at the start, then its threads made and gone faster
	 * than they are listed until it exits: each is counted by the count
	 * it inherits, so its exit is told from an exec.  (A look that lists
	 * a thread gone by then is not whole; before, the last look's said
	 * 2, at load 28 in t-attach-multi, and here in most of 20.) */
	for (int i = 0; i < 20; i++) {
		int counted = 0, r;

		why[0] = '\0';
		r = watch_exit(32, 1, &counted, why, sizeof(why));
		CHECK(counted && r == 0, "32 threads churning, exit (%d): counted %d, %d '%s'", i,
		      counted, r, why);
		if (i == 19)
			printf("32 threads churning, exit, 20 times: %s\n", failed ? "seen" : "no exec");
	}
	return failed ? 1 : 0;
}
