/* unit-quiet.c - the proof that no thread of a process ran between two
 * instants (quiet.h): the decision as a table (the same threads, each
 * off its CPU with no child sharing its memory, the same counts: quiet;
 * any count changed, a thread running or made or gone, a sharing child:
 * not), the counts parsed from status text (garbage refused), and on
 * children of this test: one blocked in pause() is quiet across 20 ms;
 * one that wakes every 200 us and sleeps again (asleep whenever looked
 * at) is not; one spinning is not even begun; one with a clone(CLONE_VM)
 * child (its memory shared by a task that is not its thread) is not
 * begun either, nor one whose CLONE_VM task is its sibling (CLONE_PARENT:
 * this test's child, found only by the scan of every task); as root, nor
 * one whose CLONE_VM child kept root's credentials when it dropped them,
 * looked at by a user without capabilities (found only through the
 * children file: the scan takes a task kcmp refuses, with capabilities
 * beyond the user's, for one that cannot share the memory). */
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "quiet.h"
#include "unit.h"

#define T(tid, off, shares, v, nv) { (tid), (off), (shares), (v), (nv) }

static void table(void)
{
	static const struct mw_quiet_thread a[] = { T(10, 1, 0, 5, 1), T(12, 1, 0, 7, 0) };
	struct mw_quiet_thread b[2];
	static const struct {
		int i;		/* which of b's is changed */
		struct mw_quiet_thread t;
		int quiet;
	} rows[] = {
		{ 0, T(10, 1, 0, 5, 1), 1 },	/* as it was */
		{ 0, T(10, 1, 0, 6, 1), 0 },	/* blocked again after running */
		{ 1, T(12, 1, 0, 7, 1), 0 },	/* preempted */
		{ 1, T(12, 0, 0, 7, 0), 0 },	/* running now (or runnable) */
		{ 0, T(10, 1, 1, 5, 1), 0 },	/* a child shares its memory */
		{ 1, T(13, 1, 0, 7, 0), 0 },	/* another thread */
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(*rows); r++) {
		memcpy(b, a, sizeof(b));
		b[rows[r].i] = rows[r].t;
		CHECK(mw_quiet_same(a, 2, b, 2) == rows[r].quiet, "row %zu", r);
		CHECK(mw_quiet_same(b, 2, a, 2) == rows[r].quiet, "row %zu, reversed", r);
	}
	memcpy(b, a, sizeof(b));
	b[0].off = 0;
	CHECK(!mw_quiet_same(b, 2, b, 2), "running at both ends");
	CHECK(!mw_quiet_same(a, 2, a, 1), "a thread gone");
	CHECK(!mw_quiet_same(a, 1, a, 2), "a thread made");
	CHECK(!mw_quiet_same(a, 0, a, 0), "no threads: nothing shown");
}

static void counts(void)
{
	uint64_t v = 9, nv = 9;

	CHECK(mw_quiet_counts("Name:\tx\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t2\n"
			      "nonvoluntary_ctxt_switches:\t31\n", &v, &nv) == 0 && v == 2 &&
	      nv == 31);
	CHECK(mw_quiet_counts("Name:\tx\nvoluntary_ctxt_switches:\t2\n", &v, &nv) < 0);
	CHECK(mw_quiet_counts("Name:\tx\nvoluntary_ctxt_switches:\tx\n"
			      "nonvoluntary_ctxt_switches:\t1\n", &v, &nv) < 0);
	CHECK(mw_quiet_counts("Name:\tx\nvoluntary_ctxt_switches:\t2 3\n"
			      "nonvoluntary_ctxt_switches:\t1", &v, &nv) < 0);
	CHECK(mw_quiet_counts("", &v, &nv) < 0);
}

static void nap(long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
}

static int grandchild(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A child doing what: 0 pause, 1 tick, 2 spin, 3 a CLONE_VM child and
 * pause, 4 the same made its sibling (CLONE_PARENT: no children file of
 * its lists it) and pause; 5 (a CLONE_VM child) and 6 (none) become user
 * 65534 (nobody: no capabilities; dumpable again, as a daemon may make
 * itself) and pause, 5's child keeping root's credentials (a daemon's
 * helper made before it dropped them).  It writes that child's pid (else
 * 0) on fd once under way. */
static pid_t child(int what, int fd)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid = fork(), g = 0;

	char *m;

	if (pid)
		return pid;
	/* resident enough to be tried (quiet.h MW_QUIET_RSS_TASK a task) */
	if (!(m = malloc(64 << 20)))
		_exit(1);
	memset(m, 1, 64 << 20);
	if (what >= 3 && what <= 5 &&
	    (g = clone(grandchild, stack + sizeof(stack),
		       CLONE_VM | SIGCHLD | (what == 4 ? CLONE_PARENT : 0), NULL)) < 0)
		_exit(1);
	if ((what >= 5 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			   setresuid(65534, 65534, 65534) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)) ||
	    write(fd, &g, sizeof(g)) != sizeof(g)) {
		if (g > 0)
			kill(g, SIGKILL);	/* it holds fd open too */
		_exit(1);
	}
	for (volatile unsigned long n = 0;; n++)
		if (what == 1)
			nap(200000);
		else if (what != 2)
			pause();
	_exit(0);
}

static void live(void)
{
	int fd[2];

	/* the CLONE_VM child's, once its parent is killed, comes to us */
	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	CHECK(pipe(fd) == 0);
	for (int what = 0; what < 5; what++) {
		pid_t pid = child(what, fd[1]), g = 0;
		struct mw_quiet *q = NULL;

		CHECK(read(fd[0], &g, sizeof(g)) == sizeof(g));
		nap(20000000);	/* settled where it waits */
		/* the ticker is seen asleep nearly always, but on a loaded machine
		 * it waits for a CPU once woken (a stress round: 200 looks in a
		 * row saw it runnable): looked at a ms apart, for a second; the
		 * others as they are, tried again while a loaded machine has them
		 * still on their way to pause() (the sharing ones must never be
		 * begun) */
		for (int k = 0; k < (what == 1 ? 1000 : 20) && !q; k++)
			if (!(q = mw_quiet_begin(pid)))
				nap(what == 1 ? 1000000 : 5000000);
		if (what >= 2) {
			CHECK(!q, "%s was begun", what == 2 ? "a spinning child" : "a shared memory");
		} else {
			CHECK(q, "child %d not begun", what);
			nap(20000000);
			CHECK(mw_quiet_end(q) == !what, "child %d: quiet wrong", what);
			q = NULL;
		}
		mw_quiet_end(q);
		if (g > 0)
			kill(g, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (g > 0)
			waitpid(g, NULL, 0);
	}
}

/* The observer of dropped(), its parent (as Yama's ptrace_scope 1 wants):
 * makes a plain child and one with a root helper, becomes nobody, and
 * tries the proof on both (on the second 20 times once the first was
 * begun).  Writes the three pids on out for the caller
 * to kill.  Exits 0 when the one with a helper was not begun, 1 when it
 * was, 2 when the plain one was not begun either (a task here that this
 * user cannot compare fails every proof: nothing told), 3 when the
 * children could not be made. */
static int observer(int out)
{
	pid_t p[3] = { 0, 0, 0 }, g[2];
	int fd[2], r = 3;
	struct mw_quiet *q;

	if (pipe(fd) < 0)
		return 3;
	p[0] = child(6, fd[1]);
	p[1] = child(5, fd[1]);
	close(fd[1]);
	/* their answers in either order: the plain one's 0, the helper's pid */
	if (p[0] < 0 || p[1] < 0 || read(fd[0], &g[0], sizeof(g[0])) != sizeof(g[0]) ||
	    read(fd[0], &g[1], sizeof(g[1])) != sizeof(g[1]))
		goto out;
	p[2] = g[0] ? g[0] : g[1];
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		goto out;
	nap(20000000);	/* settled where they wait */
	/* a task that cannot be compared fails a proof only while it is
	 * there (one changing its credentials, say): tried up to 20 times */
	for (int k = 0; k < 20 && r != 0; k++) {
		if (!(q = mw_quiet_begin(p[0]))) {
			r = 2;
			nap(10000000);
			continue;
		}
		mw_quiet_end(q);
		r = 0;
	}
	for (int k = 0; k < 20 && r == 0; k++) {
		q = mw_quiet_begin(p[1]);
		r = q != NULL;
		mw_quiet_end(q);
	}
out:
	if (write(out, p, sizeof(p)) != sizeof(p))
		r = 3;
	return r;
}

static void dropped(void)
{
	pid_t o, p[3] = { 0, 0, 0 };
	int fd[2], st = 0;

	if (geteuid() != 0) {
		printf("not tried (needs root): a CLONE_VM child that kept root's credentials\n");
		return;
	}
	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);	/* the observer's children */
	CHECK(pipe(fd) == 0);
	if ((o = fork()) == 0)
		_exit(observer(fd[1]));
	CHECK(o > 0 && waitpid(o, &st, 0) == o && WIFEXITED(st));
	CHECK(read(fd[0], p, sizeof(p)) == sizeof(p));
	for (int i = 0; i < 3; i++)
		if (p[i] > 0)
			kill(p[i], SIGKILL);
	for (int i = 0; i < 3; i++)
		if (p[i] > 0)
			waitpid(p[i], NULL, 0);
	if (WEXITSTATUS(st) == 2)
		printf("not told: a task here that nobody cannot compare (kcmp) fails every proof\n");
	else
		CHECK(WEXITSTATUS(st) == 0, "a CLONE_VM child with root's credentials, seen by nobody: %s",
		      WEXITSTATUS(st) == 1 ? "begun" : "not made");
}

int main(void)
{
	table();
	counts();
	live();
	dropped();
	return failed ? 1 : 0;
}
