/* unit-procexec.c - an exec told from everything else (procexec.h), on
 * children of this test that run /bin/true when told (a byte on a pipe):
 * an exec counts whichever thread makes it - the main one, one that ran
 * before the watch began, one made after, the main thread gone
 * (pthread_exit), one made by a thread that has exited since and whose
 * count was closed - also once the process has exited; a plain exit, and a
 * child process's exec (fork, then exec), are no exec of the process.
 * Needs what the count needs (root: perf_event_open, tracefs); skips
 * (77) without. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* Watch a child doing how; 1 when it was seen to exec (after it exited
 * and was reaped), 0 not, 77 not counted here. */
static int watch(enum how how, char *why, size_t whylen)
{
	struct mw_procexec *w;
	int ready[2], status, r;
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
	if (write(go[1], "go", 2) != 2)
		r = -1;
	waitpid(pid, &status, 0);
	close(go[0]);
	close(go[1]);
	if (r == 0) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x", names[how],
		      status);
		r = mw_procexec_check(w, why, whylen);
	}
	mw_procexec_free(w);
	return r;
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
	return failed ? 1 : 0;
}
