/* linger.c - the lingering tracer session (linger.h): the rendezvous,
 * the session process, and a run's side of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "hash.h"
#include "leftovers.h"
#include "linger.h"
#include "pidfd.h"
#include "protocol.h"
#include "runtime.h"
#include "spawn.h"
#include "unwind.h"
#include "uprobes.h"
#include "xalloc.h"

/* The largest message: a script and its libc's identity. */
#define MSG_MAX (160 * 1024)
/* How long either side waits for the other's answer. */
#define ANSWER_MS 2000

static int armed_here;

int mw_linger_armed(void)
{
	return armed_here;
}

/* The rendezvous directory: root's, 0700, checked from / down (fsutil.h);
 * made when create.  Its descriptor, or -1 with why. */
static int rendezvous(int create, char *why, size_t len)
{
	const char *env = getenv(MW_LINGER_DIR_ENV);
	int own = !(env && *env);	/* the default, under MW_RUN_DIR */
	const char *path = own ? MW_LINGER_DIR : env;
	char err[PATH_MAX + 128];
	struct stat sb;
	int fd;

	if (create && own && mkdir(MW_RUN_DIR, 0700) < 0 &&
	    errno != EEXIST) {
		snprintf(why, len, "cannot make '%s': %s", MW_RUN_DIR, strerror(errno));
		return -1;
	}
	if ((fd = mw_dir_open_safe(path, create, 0, err, sizeof(err))) < 0) {
		snprintf(why, len, "rendezvous: %s", err);
		return -1;
	}
	if (fstat(fd, &sb) < 0 || sb.st_uid != 0 || (sb.st_mode & 077)) {
		snprintf(why, len, "rendezvous '%s' is not root's alone (uid %d, mode %04o)", path,
			 (int)sb.st_uid, (unsigned)(sb.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

static void sock_path(struct sockaddr_un *a, int dirfd, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
}

/* The other end of fd is root's (SO_PEERCRED)? */
static int peer_root(int fd)
{
	struct ucred c;
	socklen_t n = sizeof(c);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) == 0 && c.uid == 0;
}

static void timeouts(int fd)
{
	struct timeval tv = { .tv_sec = ANSWER_MS / 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One message of len bytes with nfd descriptors fds. */
static int send_msg(int fd, const char *buf, size_t len, const int *fds, int nfd)
{
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr h;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfd) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
	}
	return sendmsg(fd, &m, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* One message into buf (NUL-terminated; at most len - 1 bytes), up to 2
 * descriptors into fds (-1 when none came).  Its length, 0 at EOF, -1 on
 * an error or a message too long. */
static ssize_t recv_msg(int fd, char *buf, size_t len, int *fds)
{
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr h;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	ssize_t n;

	fds[0] = fds[1] = -1;
	while ((n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (i < 2)
				fds[i] = f;
			else
				close(f);
		}
	}
	if (n < 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		fds[0] = fds[1] = -1;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

/* "JOIN\nID\nSCRIPT" into a new buffer; its length in *len.  NULL when
 * the script cannot be read or is too long. */
static char *request(const char *id, const char *script, size_t *len)
{
	char *buf = xmalloc(MSG_MAX);
	int fd = open(script, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t n = (size_t)snprintf(buf, MSG_MAX, "JOIN\n%s\n", id);
	ssize_t r = 0;

	while (fd >= 0 && n < MSG_MAX && (r = read(fd, buf + n, MSG_MAX - n)) > 0)
		n += (size_t)r;
	if (fd >= 0)
		close(fd);
	if (fd < 0 || r < 0 || n >= MSG_MAX) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int mw_linger_key(const char *script, const char *libc_path, char *key, char *id,
		  size_t idlen)
{
	char bid[64] = "", *req;
	struct stat sb;
	uint64_t h;
	size_t len;
	int fd = open(libc_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (mw_build_id_of_fd(fd, bid) < 0)
		snprintf(bid, sizeof(bid), "-");
	close(fd);
	snprintf(id, idlen, "LIBC %llu %llu %s", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino, bid);
	if (!(req = request(id, script, &len)))
		return -1;
	h = mw_fnv1a(MW_FNV1A_INIT, req, len);
	free(req);
	snprintf(key, 17, "%016llx", (unsigned long long)h);
	return 0;
}

static struct mw_linger *hold_new(int fd)
{
	struct mw_linger *l = xcalloc(1, sizeof(*l));

	l->fd = fd;
	l->out_fd = l->err_fd = -1;
	return l;
}

void mw_linger_pre(struct mw_linger *l, const char *line)
{
	XGROW(l->pre, l->npre, l->cpre);
	l->pre[l->npre++] = xstrdup(line);
}

static int module_ok(const char *m)
{
	size_t n = strspn(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	return n > 0 && n < 64 && !m[n];
}

/* The session's answer "OK TRACER MODULE\nLINE\n..." into l. */
static int take_answer(struct mw_linger *l, char *ans, char *why, size_t len)
{
	char *save = NULL, *line = strtok_r(ans, "\n", &save);
	int tracer;
	char module[64];

	if (!line || sscanf(line, "OK %d %63s", &tracer, module) != 2 || tracer <= 0 ||
	    !module_ok(module) || !mw_stapbpf_live(tracer)) {
		snprintf(why, len, "the session answered '%.40s'", line ? line : "");
		return -1;
	}
	l->tracer = tracer;
	snprintf(l->module, sizeof(l->module), "%s", module);
	while ((line = strtok_r(NULL, "\n", &save))) {
		if (line[0] != MW_REC_DECLARE && strcmp(line, MW_LINE_READY) != 0) {
			snprintf(why, len, "the session sent '%.40s'", line);
			return -1;
		}
		mw_linger_pre(l, line);
	}
	if (!l->npre || strcmp(l->pre[l->npre - 1], MW_LINE_READY) != 0) {
		snprintf(why, len, "the session sent no ready line");
		return -1;
	}
	return 0;
}

static void hold_free(struct mw_linger *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->out_fd >= 0)
		close(l->out_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	for (size_t i = 0; i < l->npre; i++)
		free(l->pre[i]);
	free(l->pre);
	free(l);
}

/* Connect to session key in dirfd; the socket, or -1 with why. */
static int dial(int dirfd, const char *key, char *why, size_t len)
{
	struct sockaddr_un a;
	struct stat sb;
	int s;

	if (fstatat(dirfd, key, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(why, len, "no session of this script");
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode) || sb.st_uid != 0) {
		snprintf(why, len, "the rendezvous is not a socket of root's");
		return -1;
	}
	sock_path(&a, dirfd, key);
	if ((s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(why, len, "no session listens (%s)", strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	if (!peer_root(s)) {
		snprintf(why, len, "the session is not root's");
		close(s);
		return -1;
	}
	timeouts(s);
	return s;
}

struct mw_linger *mw_linger_join(const char *key, const char *id, const char *script,
				 int *busy, char *why, size_t whylen)
{
	int dirfd = rendezvous(0, why, whylen), s = -1, fds[2];
	struct mw_linger *l = NULL;
	char *req = NULL, *ans = NULL;
	size_t len;

	*busy = 0;
	if (dirfd < 0 || (s = dial(dirfd, key, why, whylen)) < 0)
		goto fail;
	if (!(req = request(id, script, &len)) || send_msg(s, req, len, NULL, 0) < 0) {
		snprintf(why, whylen, "cannot ask the session: %s", strerror(errno));
		goto fail;
	}
	ans = xmalloc(MSG_MAX);
	if (recv_msg(s, ans, MSG_MAX, fds) <= 0) {
		snprintf(why, whylen, "the session did not answer");
		goto fail;
	}
	l = hold_new(s);
	s = -1;
	l->out_fd = fds[0];
	l->err_fd = fds[1];
	if (strncmp(ans, "OK ", 3) != 0) {
		*busy = strncmp(ans, "BUSY", 4) == 0;
		snprintf(why, whylen, "the session is %s", *busy ?
			 "serving another run" : "of another script or libc");
		goto fail;
	}
	if (l->out_fd < 0 || l->err_fd < 0) {
		snprintf(why, whylen, "the session sent no stream");
		goto fail;
	}
	if (take_answer(l, ans, why, whylen) < 0)
		goto fail;
	free(req);
	free(ans);
	close(dirfd);
	return l;
fail:
	if (l)
		hold_free(l);
	if (s >= 0)
		close(s);
	if (dirfd >= 0)
		close(dirfd);
	free(req);
	free(ans);
	return NULL;
}

void mw_linger_leave(struct mw_linger *l, int drained)
{
	if (!l)
		return;
	if (drained) {
		size_t cap = 64, n = 0;
		char *msg;

		for (size_t i = 0; i < l->npre; i++)
			cap += strlen(l->pre[i]) + 1;
		msg = xmalloc(cap);
		n += (size_t)snprintf(msg, cap, "DONE\n");
		for (size_t i = 0; l->armed && i < l->npre; i++)
			n += (size_t)snprintf(msg + n, cap - n, "%s\n", l->pre[i]);
		send_msg(l->fd, msg, n, NULL, 0);
		free(msg);
	}
	hold_free(l);
}

/* The session process's state. */
struct sess {
	int lsock, dirfd, ctl;		/* ctl: the run served, -1 when idle */
	char name[32];			/* the socket's name in dirfd */
	dev_t dev;
	ino_t ino;			/* its file, to remove only ours */
	pid_t tracer;
	int tfd, out_fd, err_fd;	/* the tracer's pidfd, stdout, stderr */
	char *req;			/* what a run must ask: JOIN, id, script */
	size_t reqlen;
	char *pre;			/* the declarations and ready line */
	long linger_ms;
	long long idle_until;
	const char *workdir, *module;
	const char *sites;		/* MW_UMULTI_SITES for the tracer, or NULL */
};

/* A run asks to join: served when idle and of the same libc and script. */
static void serve_join(struct sess *ss)
{
	int c = accept4(ss->lsock, NULL, NULL, SOCK_CLOEXEC), fds[2];
	char *buf, *ans;
	ssize_t n;

	if (c < 0)
		return;
	if (!peer_root(c)) {
		close(c);
		return;
	}
	timeouts(c);
	buf = xmalloc(MSG_MAX);
	n = recv_msg(c, buf, MSG_MAX, fds);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ss->ctl >= 0 || !ss->pre) {
		send_msg(c, "BUSY", 4, NULL, 0);
	} else if (n != (ssize_t)ss->reqlen || memcmp(buf, ss->req, ss->reqlen) != 0) {
		send_msg(c, "NO", 2, NULL, 0);
	} else {
		size_t len = strlen(ss->pre) + 128;

		ans = xmalloc(len);
		snprintf(ans, len, "OK %d %s\n%s", (int)ss->tracer, ss->module, ss->pre);
		fds[0] = ss->out_fd;
		fds[1] = ss->err_fd;
		if (send_msg(c, ans, strlen(ans), fds, 2) == 0) {
			ss->ctl = c;	/* busy until its DONE */
			c = -1;
		}
		free(ans);
	}
	free(buf);
	if (c >= 0)
		close(c);
}

/* The run served says DONE (idle again; the first run's declarations
 * kept), or went away: 0, or -1 when the session must end. */
static int serve_done(struct sess *ss)
{
	char *buf = xmalloc(MSG_MAX), *nl;
	int fds[2], ret = -1;
	ssize_t n = recv_msg(ss->ctl, buf, MSG_MAX, fds);

	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (n > 0 && strncmp(buf, "DONE\n", 5) == 0) {
		if (!ss->pre && (nl = buf + 5) && *nl)
			ss->pre = xstrdup(nl);
		ret = ss->pre ? 0 : -1;
	}
	free(buf);
	close(ss->ctl);
	ss->ctl = -1;
	ss->idle_until = mw_now_ms() + ss->linger_ms;
	return ret;
}

/* Idle: what the tracer writes goes nowhere (no process is in its set);
 * -1 at EOF. */
static int discard(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) ? -1 : 0;
}

static void serve(struct sess *ss)
{
	for (;;) {
		long long now = mw_now_ms();
		int idle = ss->ctl < 0;
		struct pollfd p[5] = {
			{ .fd = ss->lsock, .events = POLLIN },
			{ .fd = ss->ctl, .events = POLLIN },
			{ .fd = ss->tfd, .events = POLLIN },
			{ .fd = idle ? ss->out_fd : -1, .events = POLLIN },
			{ .fd = idle ? ss->err_fd : -1, .events = POLLIN },
		};

		if (idle && now >= ss->idle_until)
			return;
		if (poll(p, 5, idle ? (int)(ss->idle_until - now) : 1000) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[2].revents)	/* the tracer ended */
			return;
		if (p[1].revents && serve_done(ss) < 0)
			return;
		if (((p[3].revents & (POLLIN | POLLHUP)) && discard(ss->out_fd) < 0) ||
		    ((p[4].revents & (POLLIN | POLLHUP)) && discard(ss->err_fd) < 0))
			return;
		if (p[0].revents & POLLIN)
			serve_join(ss);
	}
}

/* The session is over: no one may join, the tracer stops and removes its
 * uprobes, and what it left goes (as the detach watcher does). */
static void __attribute__((noreturn)) sess_end(struct sess *ss)
{
	struct stat sb;

	if (fstatat(ss->dirfd, ss->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_dev == ss->dev &&
	    sb.st_ino == ss->ino)
		unlinkat(ss->dirfd, ss->name, 0);
	close(ss->lsock);
	if (ss->ctl >= 0)
		close(ss->ctl);
	prctl(PR_SET_NAME, "mw-detach");
	mw_pidfd_signal(ss->tfd, SIGINT);
	if (mw_wait_tracer(ss->tracer, ss->tfd, MW_STOP_GRACE_MS) < 0) {
		mw_pidfd_signal(ss->tfd, SIGKILL);
		mw_pidfd_wait(ss->tfd, MW_SWEEP_WAIT_MS);
	}
	waitpid(ss->tracer, NULL, 0);
	mw_sweep_uprobes(MW_SWEEP_WAIT_MS);	/* nothing when it ended normally */
	mw_runtime_procfs_remove(ss->module);
	mw_workdir_remove(ss->workdir);
	_exit(0);
}

/* The session process, forked: its own session, no descriptor of the
 * run's but the listening socket, the control socket, the rendezvous
 * and the work directory's lock; it starts the tracer and sends it to
 * the run (ctl), then serves. */
static void __attribute__((noreturn)) sess_main(struct sess *ss, char *const argv[],
						const char *preload)
{
	int null = open("/dev/null", O_RDWR), fds[2];
	char msg[64];
	sigset_t none;

	setsid();
	prctl(PR_SET_NAME, "mw-linger");
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	ss->lsock = fcntl(ss->lsock, F_DUPFD_CLOEXEC, 1000);
	ss->ctl = fcntl(ss->ctl, F_DUPFD_CLOEXEC, 1001);
	ss->dirfd = fcntl(ss->dirfd, F_DUPFD_CLOEXEC, 1002);
	fcntl(mw_workdir_lock_fd(), F_DUPFD_CLOEXEC, 1003);
	mw_runtime_procfs_lock_move(1004);	/* the FIFO directory's, for the tracer */
	syscall(SYS_close_range, 3U, 999U, 0U);
	syscall(SYS_close_range, 1005U, ~0U, 0U);
	ss->tracer = mw_tracer_spawn(argv, ss->workdir, preload, ss->sites, &ss->out_fd,
				     &ss->err_fd);
	if (ss->tracer < 0 || (ss->tfd = mw_pidfd_open(ss->tracer)) < 0) {
		snprintf(msg, sizeof(msg), "FAIL %d", errno);
		send_msg(ss->ctl, msg, strlen(msg), NULL, 0);
		_exit(1);
	}
	snprintf(msg, sizeof(msg), "ARMED %d", (int)ss->tracer);
	fds[0] = ss->out_fd;
	fds[1] = ss->err_fd;
	if (send_msg(ss->ctl, msg, strlen(msg), fds, 2) < 0)
		sess_end(ss);
	serve(ss);
	sess_end(ss);
}

/* Listen as key in dirfd: bound under a name of its own, then renamed
 * over key (a stale socket of a killed session is replaced).  0, or -1
 * with why. */
static int listen_as(struct sess *ss, const char *key, char *why, size_t len)
{
	struct sockaddr_un a;
	struct stat sb;
	char tmp[48];

	snprintf(tmp, sizeof(tmp), "%s.%d", key, (int)getpid());
	snprintf(ss->name, sizeof(ss->name), "%s", key);
	unlinkat(ss->dirfd, tmp, 0);
	sock_path(&a, ss->dirfd, tmp);
	if ((ss->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(ss->lsock, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ss->lsock, 8) < 0 ||
	    fstatat(ss->dirfd, tmp, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    renameat(ss->dirfd, tmp, ss->dirfd, key) < 0) {
		snprintf(why, len, "cannot listen in the rendezvous: %s", strerror(errno));
		unlinkat(ss->dirfd, tmp, 0);
		return -1;
	}
	ss->dev = sb.st_dev;
	ss->ino = sb.st_ino;
	return 0;
}

/* The session's answer to the run that armed it: the tracer and its
 * stdout and stderr, into l.  0, or -1 with why. */
static int armed_answer(struct mw_linger *l, char *why, size_t len)
{
	char msg[64];
	int fds[2], pid;
	ssize_t n = recv_msg(l->fd, msg, sizeof(msg), fds);

	if (n <= 0 || sscanf(msg, "ARMED %d", &pid) != 1 || fds[0] < 0 || fds[1] < 0) {
		snprintf(why, len, "the session could not start the tracer (%s)",
			 n > 0 ? msg : "no answer");
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return -1;
	}
	l->tracer = pid;
	l->out_fd = fds[0];
	l->err_fd = fds[1];
	return 0;
}

struct mw_linger *mw_linger_arm(const char *key, const char *id, const char *script,
				long linger_ms, const char *workdir, const char *module,
				char *const argv[], const char *preload, const char *sites,
				char *why, size_t whylen)
{
	struct sess ss = { .linger_ms = linger_ms, .workdir = workdir, .module = module,
			   .sites = sites, .lsock = -1, .ctl = -1, .tfd = -1 };
	struct mw_linger *l;
	int sp[2];
	pid_t pid;

	if ((ss.dirfd = rendezvous(1, why, whylen)) < 0)
		return NULL;
	if (!(ss.req = request(id, script, &ss.reqlen))) {
		snprintf(why, whylen, "the script is too long to share");
		close(ss.dirfd);
		return NULL;
	}
	if (listen_as(&ss, key, why, whylen) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		if (ss.lsock >= 0)
			close(ss.lsock);
		close(ss.dirfd);
		free(ss.req);
		return NULL;
	}
	ss.ctl = sp[1];
	if ((pid = fork()) == 0)
		sess_main(&ss, argv, preload);
	close(sp[1]);
	close(ss.lsock);
	close(ss.dirfd);
	free(ss.req);
	l = hold_new(sp[0]);
	timeouts(l->fd);
	snprintf(l->module, sizeof(l->module), "%s", module);
	if (pid < 0 || armed_answer(l, why, whylen) < 0) {
		if (pid < 0)
			snprintf(why, whylen, "cannot fork: %s", strerror(errno));
		hold_free(l);	/* the session, if any, ends */
		return NULL;
	}
	/* one socket for the run's DONE: the timeouts were for the answer */
	setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &(struct timeval){ .tv_sec = 2 },
		   sizeof(struct timeval));
	l->armed = 1;
	armed_here = 1;
	mw_runtime_procfs_release();	/* the session's tracer holds its module's lock */
	return l;
}
