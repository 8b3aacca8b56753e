/* release.c - `mallocwatch release PID`'s socket, both sides; see release.h.
 * The run of pid 4242 (of the initial pid namespace, inode 4026531836), a
 * root's, listens on
 *
 *	/run/mallocwatch/release/4026531836.4242/socket
 *
 * and `mallocwatch release 4250` finds it from 4250's TracerPid, 4242:
 * /proc/4242/ns/pid's inode, the last pid of /proc/4242/status's NSpid,
 * its effective uid (and, for a run not root's, its XDG_RUNTIME_DIR).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
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
#include "procmem.h"
#include "release.h"
#include "relsock.h"
#include "xalloc.h"

/* The address of the socket in the directory open on dir: through
 * /proc/self/fd, so nothing on the way is looked up by name again. */
static void addr_in(int dir, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/" MW_RELSOCK_SOCKET, dir);
}

/* The address of the socket file open (O_PATH) on sfd itself. */
static void addr_of(int sfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d", sfd);
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

/* The last number of the line of buf that starts with key ("\nNSpid:"),
 * or -1. */
static long last_of(const char *buf, const char *key)
{
	const char *p = strstr(buf, key), *end;
	long v = -1;

	if (!p)
		return -1;
	p += strlen(key);
	end = p + strcspn(p, "\n");
	while (p < end) {
		char *e;
		long x = strtol(p, &e, 10);

		if (e == p)
			break;
		v = x;
		p = e;
	}
	return v;
}

/* run's XDG_RUNTIME_DIR, from its environment (its user's bytes: the
 * directory is checked to be that user's alone, and opened without
 * following links); NULL when it has none. */
static const char *xdg_of(pid_t run, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)run);
	if ((n = mw_read_small(path, 0, buf, len)) <= 0)
		return NULL;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strncmp(buf + i, "XDG_RUNTIME_DIR=", 16) == 0)
			return buf + i + 16;
	return NULL;
}

/* The directory of run's socket (relsock.h), found from /proc/RUN and
 * opened; its effective uid into *euid.  The descriptor, or -1 with *res
 * and why set. */
static int run_dir(pid_t run, long *euid, enum mw_release_answer *res, char *why, size_t len)
{
	char path[64], buf[4096], name[64], env[32768], err[512];
	const char *uid_line;
	struct stat sb;
	long inner;
	int base, dir;

	*res = MW_RELEASE_FAILED;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)run);
	if (mw_read_small(path, 0, buf, sizeof(buf)) <= 0 || (inner = last_of(buf, "\nNSpid:")) <= 0 ||
	    !(uid_line = strstr(buf, "\nUid:")) || sscanf(uid_line + 5, "%*d %ld", euid) != 1) {
		snprintf(why, len, "cannot read '%s'", path);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)run);
	if (stat(path, &sb) < 0) {
		snprintf(why, len, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	mw_relsock_name((unsigned long long)sb.st_ino, (pid_t)inner, name, sizeof(name));
	base = mw_relsock_base((uid_t)*euid, *euid ? xdg_of(run, env, sizeof(env)) : NULL, 0,
			       err, sizeof(err));
	if (base < 0 && *euid == 0 && access(MW_RELSOCK_DIR, F_OK) < 0 && errno == ENOENT)
		*res = MW_RELEASE_NO_RUN;	/* no -f run of root's listens */
	if (base < 0) {
		snprintf(why, len, "cannot reach run %d: %s", (int)run, err);
		return -1;
	}
	dir = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 && errno == ENOENT)
		*res = MW_RELEASE_NO_RUN;
	if (dir < 0)
		snprintf(why, len, "cannot reach run %d: %s", (int)run, strerror(errno));
	close(base);
	return dir;
}

/* Connect fd to the socket in dir, the run's (its user uid bound it),
 * waiting while the run's queue is full until the time until
 * (mw_now_ms()).  The socket is opened once (O_PATH, not through a link)
 * and connected to as that file, /proc/self/fd/N: its name, in a
 * directory of the run's user, may be made a link to another socket
 * meanwhile (root's, elsewhere) while we wait; a socket of another user
 * there (a hard link, where the kernel allows them) is not connected to.
 * 0, -1 with errno set, or -2 for a socket of another user's. */
static int connect_in(int fd, int dir, uid_t uid, long long until)
{
	struct sockaddr_un a;
	struct stat sb;
	int sfd = openat(dir, MW_RELSOCK_SOCKET, O_PATH | O_NOFOLLOW | O_CLOEXEC), r, e;

	if (sfd < 0)
		return -1;
	if (fstat(sfd, &sb) < 0 || !S_ISSOCK(sb.st_mode) || sb.st_uid != uid) {
		r = fstat(sfd, &sb) == 0 && S_ISSOCK(sb.st_mode) ? -2 : -1;
		close(sfd);
		errno = ENOTSOCK;
		return r;
	}
	addr_of(sfd, &a);
	while ((r = connect(fd, (struct sockaddr *)&a, sizeof(a))) < 0) {
		if ((errno != EAGAIN && errno != EINTR) || mw_now_ms() >= until)
			break;
		usleep(20000);	/* its queue is full: a moment */
	}
	e = errno;
	close(sfd);
	errno = e;
	return r;
}

/* A connection to run's socket, its listener checked: the fd, or -1 with
 * *res and why set. */
static int connect_run(pid_t run, long long until, enum mw_release_answer *res, char *why,
		       size_t len)
{
	socklen_t cl = sizeof(struct ucred);
	struct ucred cr = { 0 };
	long euid;
	int dir = run_dir(run, &euid, res, why, len), fd, r;

	if (dir < 0)
		return -1;
	*res = MW_RELEASE_FAILED;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(why, len, "cannot make a socket: %s", strerror(errno));
		close(dir);
		return -1;
	}
	if ((r = connect_in(fd, dir, (uid_t)euid, until)) < 0) {
		if (errno == ECONNREFUSED || errno == ENOENT)
			*res = MW_RELEASE_NO_RUN;
		if (r == -2)
			snprintf(why, len, "the release socket of run %d is not its user's (uid %ld): "
				 "not asked", (int)run, euid);
		else
			snprintf(why, len, "cannot reach run %d: %s", (int)run, strerror(errno));
		close(dir);
		close(fd);
		return -1;
	}
	close(dir);
	/* the kernel's word on the listener: that run, as its user */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.pid != run ||
	    (long)cr.uid != euid) {
		snprintf(why, len, "the release socket of run %d is not that run's (its listener "
			 "is process %d, user %d): not asked", (int)run, (int)cr.pid, (int)cr.uid);
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
		if ((fd = connect_run(run, until, &res, why, len)) < 0 && again) {
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
		if (n <= 0 && mw_now_ms() < until) {
			snprintf(why, len, "run %d closed the connection without an answer", (int)run);
			return MW_RELEASE_FAILED;
		}
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

/* A connection waiting for its request line. */
struct pending {
	int fd;
	long long until;	/* closed unanswered then (mw_now_ms()) */
	size_t got;
	char line[64];
};

struct mw_release_srv {
	int lfd, base, dir;	/* the listening socket, its directories */
	pid_t owner;		/* the process that removes them */
	char name[64];		/* the run's directory's (relsock.h) */
	int np;
	struct pending p[MW_RELEASE_PENDING];
};

/* The server whose socket goes when this process calls exit(). */
static struct mw_release_srv *live_srv;

static void remove_at_exit(void)
{
	if (live_srv && live_srv->owner == getpid())	/* not a forked child's */
		mw_release_close(live_srv);
}

struct mw_release_srv *mw_release_listen(char *why, size_t len)
{
	static int registered;
	struct mw_release_srv *s = xcalloc(1, sizeof(*s));
	struct sockaddr_un a;

	s->lfd = s->dir = -1;
	mw_relsock_self(s->name, sizeof(s->name));
	s->base = mw_relsock_base(geteuid(), getenv("XDG_RUNTIME_DIR"), 1, why, len);
	if (s->base >= 0 && (s->dir = mw_relsock_make(s->base, s->name, why, len)) >= 0) {
		addr_in(s->dir, &a);
		if ((s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
		    bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->lfd, 8) < 0)
			snprintf(why, len, "cannot listen in '%s': %s", s->name, strerror(errno));
		else
			s->owner = getpid();
	}
	if (!s->owner) {
		mw_release_close(s);
		return NULL;
	}
	live_srv = s;
	if (!registered++)
		atexit(remove_at_exit);
	return s;
}

int mw_release_fd(const struct mw_release_srv *s)
{
	return s ? s->lfd : -1;
}

int mw_release_waiting(const struct mw_release_srv *s)
{
	return s && s->np > 0;
}

/* New connections, at most MW_RELEASE_ACCEPTS: root's and the run's own
 * (real) user's wait for their line; others are closed without a word
 * (the kernel's word on who they are, not the peer's). */
static void take_new(struct mw_release_srv *s)
{
	for (int k = 0; k < MW_RELEASE_ACCEPTS && s->np < MW_RELEASE_PENDING; k++) {
		int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		socklen_t cl = sizeof(struct ucred);
		struct ucred cr;

		if (c < 0)
			break;
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
		    (cr.uid != 0 && cr.uid != getuid())) {
			close(c);
			continue;
		}
		s->p[s->np++] = (struct pending){ .fd = c,
						  .until = mw_now_ms() + MW_RELEASE_LINE_MS };
	}
}

/* The request line on c: 1 with *pid set, else 0 (c answered "no"). */
static int request_of(int c, const char *line, pid_t *pid)
{
	char *end;
	long v;

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

/* What the waiting connection p has sent, read without waiting: its
 * request served once its line is whole.  1 when p is done with
 * (served, refused, gone, silent too long, a line too long for ours). */
static int look(struct pending *p, mw_release_fn fn, void *ctx)
{
	ssize_t n = read(p->fd, p->line + p->got, sizeof(p->line) - 1 - p->got);
	char *nl;
	pid_t pid;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return mw_now_ms() >= p->until;
	if (n <= 0)
		return 1;
	p->got += (size_t)n;
	p->line[p->got] = '\0';
	if (!(nl = memchr(p->line, '\n', p->got)))
		return p->got == sizeof(p->line) - 1 || mw_now_ms() >= p->until;
	*nl = '\0';
	if (request_of(p->fd, p->line, &pid))
		fn(ctx, p->fd, pid);
	return 1;
}

void mw_release_step(struct mw_release_srv *s, mw_release_fn fn, void *ctx)
{
	if (!s)
		return;
	take_new(s);
	for (int i = 0; i < s->np;) {
		if (!look(&s->p[i], fn, ctx)) {
			i++;
			continue;
		}
		close(s->p[i].fd);
		s->p[i] = s->p[--s->np];
	}
}

void mw_release_close(struct mw_release_srv *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->np; i++)
		close(s->p[i].fd);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->dir >= 0)
		mw_relsock_remove(s->base, s->name, s->dir);
	if (s->base >= 0)
		close(s->base);
	if (live_srv == s)
		live_srv = NULL;
	free(s);
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
