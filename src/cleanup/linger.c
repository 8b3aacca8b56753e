/* linger.c - the lingering tracer session (linger.h): the rendezvous,
 * the messages, and a run's side of it; the session process, and its
 * arming, are in linger_session.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fsutil.h"
#include "hash.h"
#include "linger.h"
#include "linger_int.h"
#include "protocol.h"
#include "unwind.h"
#include "uprobes.h"
#include "xalloc.h"

/* The rendezvous directory: root's, 0700, checked from / down (fsutil.h);
 * made when create.  Its descriptor, or -1 with why. */
int mw_linger_rendezvous(int create, char *why, size_t len)
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

void mw_linger_sock_path(struct sockaddr_un *a, int dirfd, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
}

/* The other end of fd is root's (SO_PEERCRED)? */
int mw_linger_peer_root(int fd)
{
	struct ucred c;
	socklen_t n = sizeof(c);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) == 0 && c.uid == 0;
}

void mw_linger_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = ANSWER_MS / 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One message of len bytes with nfd descriptors fds. */
int mw_linger_send_msg(int fd, const char *buf, size_t len, const int *fds, int nfd)
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
ssize_t mw_linger_recv_msg(int fd, char *buf, size_t len, int *fds)
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
char *mw_linger_request(const char *id, const char *script, size_t *len)
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

struct mw_linger *mw_linger_hold_new(int fd)
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

void mw_linger_hold_free(struct mw_linger *l)
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
