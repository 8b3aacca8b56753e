/* unit-ptree-letgo.c - a process of a -f tree let go on request
 * (src/tracer/ptrace_tree.c, mw_ptree_let_go), in the stops where the
 * release may find it: a child of this test, seized as -f seizes the
 * program, is let go
 *  1. in a signal-delivery stop (it raised SIGUSR1, not yet waited for):
 *     the signal is passed on with the detach, its handler runs;
 *  2. in a fork event stop (not yet waited for): the grandchild, traced
 *     by us from its birth, is let go too and runs;
 * each giving no event (mw_ptree_next), counted out of mw_ptree_live;
 * and the refusals: a pid not traced, one let go already. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_tree.h"
#include "unit.h"

static int out[2];	/* the children's words to the test */

static void on_usr1(int sig)
{
	(void)sig;
	if (write(out[1], "u", 1) != 1)
		_exit(5);
}

/* The child: wait for the go byte on fd, then do what kind says. */
static void child(int fd, int kind)
{
	char c;
	pid_t g;
	int st;

	signal(SIGUSR1, on_usr1);
	if (read(fd, &c, 1) != 1)
		_exit(3);
	if (kind == 1) {
		raise(SIGUSR1);	/* a signal-delivery stop first */
		_exit(0);
	}
	if ((g = fork()) == 0) {
		if (write(out[1], "g", 1) != 1)
			_exit(5);
		_exit(0);
	}
	_exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 4);
}

/* pid's state letter from /proc/PID/stat; '?' unknown. */
static char state_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Drive t (never waiting for the child by hand) until the byte want came
 * on out[0], at most 5 s; 1 when it came.  *events counts what
 * mw_ptree_next gave meanwhile. */
static int until_word(struct mw_ptree *t, char want, int *events)
{
	struct mw_ptree_event ev;
	char c;

	for (int i = 0; i < 5000; i++) {
		while (mw_ptree_next(t, &ev))
			(*events)++;
		if (read(out[0], &c, 1) == 1 && c == want)
			return 1;
		usleep(1000);
	}
	return 0;
}

static void one(int kind, char want)
{
	struct mw_ptree *t;
	int go[2], busy = 1, events = 0, st = -1;
	char why[200];
	pid_t pid;

	if (pipe(go) < 0 || (pid = fork()) < 0) {
		CHECK(0, "pipe/fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		child(go[0], kind);
	t = mw_ptree_seize(pid, 1);
	CHECK(t != NULL, "seize: %s", strerror(errno));
	if (!t) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	CHECK(write(go[1], "g", 1) == 1);
	for (int i = 0; i < 5000 && state_of(pid) != 't'; i++)
		usleep(1000);
	CHECK(state_of(pid) == 't', "kind %d: the child never stopped (%c)", kind, state_of(pid));
	CHECK(mw_ptree_live(t) == 1);
	CHECK(mw_ptree_let_go(t, pid, &busy, why, sizeof(why)) == 0, "kind %d: %s", kind, why);
	CHECK(!busy);
	CHECK(mw_ptree_live(t) == 0, "kind %d: still counted", kind);
	if (!until_word(t, want, &events)) {
		CHECK(0, "kind %d: no '%c' from the released child", kind, want);
		kill(pid, SIGKILL);	/* not left waiting for it */
	}
	CHECK(events == 0, "kind %d: %d events of a released process", kind, events);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "kind %d: the child ended 0x%x", kind, st);
	CHECK(mw_ptree_let_go(t, pid, &busy, why, sizeof(why)) < 0 && !busy,
	      "kind %d: let go twice", kind);
	mw_ptree_free(t);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	struct mw_ptree *t;
	int busy = 1;
	char why[200];
	pid_t pid;

	if (pipe(out) < 0 || fcntl(out[0], F_SETFL, O_NONBLOCK) < 0)
		return 99;
	one(1, 'u');	/* its SIGUSR1 handler ran: the signal was passed on */
	one(2, 'g');	/* the grandchild ran: let go at its first stop */
	/* not ours */
	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	if ((t = mw_ptree_seize(pid, 1))) {
		CHECK(mw_ptree_let_go(t, getpid(), &busy, why, sizeof(why)) < 0 && !busy);
		CHECK(strstr(why, "not a process this run traces") != NULL, "%s", why);
		mw_ptree_free(t);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	return failed ? 1 : 0;
}
