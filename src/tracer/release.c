/* release.c - `mallocwatch release PID`'s socket, both sides; see release.h. */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "msg.h"
#include "release.h"

/* The request line may take this long to come after the connection, ms
 * (the run waits for nothing else meanwhile; only root or its user gets
 * this far). */
#define REQUEST_WAIT_MS 1000

/* Run's address in the abstract namespace: a NUL, then the name (no NUL
 * after it: the length counts). */
static socklen_t addr_of(pid_t run, struct sockaddr_un *a)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, MW_RELEASE_NAME, (int)run);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* A line from fd (its newline dropped) into buf, until the time until
 * (mw_now_ms()): its length, 0 at EOF or time out without one, -1 on an
 * error. */
static ssize_t read_line(int fd, char *buf, size_t len, long long until)
{
	size_t got = 0;

	while (got < len - 1) {
		long long left = until - mw_now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *nl;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return 0;
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		got += (size_t)n;
		buf[got] = '\0';
		if ((nl = memchr(buf, '\n', got))) {
			*nl = '\0';
			return nl - buf;
		}
	}
	return 0;	/* too long: not a line of ours */
}

/* A connection to run's socket, its listener checked: the fd, or -1 with
 * *res and why set. */
static int connect_run(pid_t run, enum mw_release_answer *res, char *why, size_t len)
{
	struct sockaddr_un a;
	socklen_t alen = addr_of(run, &a), cl = sizeof(struct ucred);
	struct ucred cr = { 0 };
	struct stat sb;
	char proc[32];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*res = MW_RELEASE_FAILED;
	if (fd < 0) {
		snprintf(why, len, "cannot make a socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, alen) < 0) {
		if (errno == ECONNREFUSED || errno == ENOENT)
			*res = MW_RELEASE_NO_RUN;
		snprintf(why, len, "cannot reach run %d: %s", (int)run, strerror(errno));
		close(fd);
		return -1;
	}
	/* the pid alone is not enough: SO_PEERCRED gives the pid of the
	 * process that called listen(), which another user's process may
	 * have done before that pid was the run's (passing the socket on and
	 * exiting): the listener's user must be the run's */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)run);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.pid != run ||
	    stat(proc, &sb) < 0 || cr.uid != sb.st_uid) {
		snprintf(why, len, "the socket @" MW_RELEASE_NAME " is not that run's (its "
			 "listener is process %d, user %d): not asked", (int)run, (int)cr.pid,
			 (int)cr.uid);
		close(fd);
		return -1;
	}
	return fd;
}

enum mw_release_answer mw_release_ask(pid_t run, pid_t pid, char *why, size_t len)
{
	long long until = mw_now_ms() + MW_RELEASE_WAIT_MS;
	enum mw_release_answer res;
	char req[64], line[512], q[600];

	snprintf(req, sizeof(req), "release %d\n", (int)pid);
	for (int again = 0;; again = 1) {
		char said[600];
		int fd;
		ssize_t n;

		snprintf(said, sizeof(said), "%s", again ? why : "");
		if ((fd = connect_run(run, &res, why, len)) < 0 && again) {
			/* it answered "again", then ended */
			snprintf(why, len, "the run ended after it said: %s", said);
			return MW_RELEASE_REFUSED;
		}
		if (fd < 0)
			return res;
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
			snprintf(why, len, "cannot ask run %d: %s", (int)run, strerror(errno));
			close(fd);
			return MW_RELEASE_FAILED;
		}
		n = read_line(fd, line, sizeof(line), until);
		close(fd);
		if (n <= 0) {
			snprintf(why, len, "run %d gave no answer in %d s", (int)run,
				 MW_RELEASE_WAIT_MS / 1000);
			return MW_RELEASE_FAILED;
		}
		if (strcmp(line, "ok") == 0 || strncmp(line, "ok ", 3) == 0)
			return MW_RELEASE_OK;
		/* the run's words: printable, quoted where they are not */
		snprintf(why, len, "%s", mw_quote(line + strcspn(line, " ") + (strchr(line, ' ') != NULL),
						  q, sizeof(q)));
		if (strncmp(line, "again ", 6) != 0 || mw_now_ms() + 100 >= until)
			return MW_RELEASE_REFUSED;
		usleep(100000);
	}
}

int mw_release_listen(void)
{
	struct sockaddr_un a;
	socklen_t alen = addr_of(getpid(), &a);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, alen) < 0 || listen(fd, 8) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int mw_release_request(int c, pid_t *pid)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	char line[64], *end;
	long v;

	/* only root and the run's own user: the kernel's word, not the
	 * peer's */
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
	    (cr.uid != 0 && cr.uid != getuid()))
		return 0;
	if (read_line(c, line, sizeof(line), mw_now_ms() + REQUEST_WAIT_MS) <= 0)
		return 0;
	if (strncmp(line, "release ", 8) != 0 || !isdigit((unsigned char)line[8])) {
		mw_release_answer(c, "no", "not a request ('release PID')");
		return 0;
	}
	errno = 0;
	v = strtol(line + 8, &end, 10);
	if (*end || errno || v <= 0 || v > 0x3fffffff) {
		mw_release_answer(c, "no", "not a process id");
		return 0;
	}
	*pid = (pid_t)v;
	return 1;
}

void mw_release_answer(int c, const char *word, const char *why)
{
	char line[400];
	int n = snprintf(line, sizeof(line), "%s%s%s\n", word, why ? " " : "", why ? why : "");

	if (n > 0 && send(c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1,
			  MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the asker is gone: nothing to tell */
	}
}
