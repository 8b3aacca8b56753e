/* serve_listen.c - serve's listening socket (serve_listen.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "serve_listen.h"

#define BACKLOG 128

static int is_loopback(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (ss->ss_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24 == 127;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* "[ADDR:]PORT", ADDR a numeric IPv4 address, "[IPv6]" or "localhost"
 * (127.0.0.1 when left out). */
static int parse_tcp(const char *arg, struct mw_listen *l, char *err, size_t errlen)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&l->ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&l->ss;
	const char *colon = strrchr(arg, ':'), *port = colon ? colon + 1 : arg;
	char host[64] = "127.0.0.1", *end;
	size_t hl = colon ? (size_t)(colon - arg) : 0;
	unsigned long p;

	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || port[0] == '-' || port[0] == '+') {
		snprintf(err, errlen, "--listen needs [ADDR:]PORT with PORT 0 to 65535, or "
			 "unix:PATH, not '%s'", arg);
		return -1;
	}
	if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']')
		arg++, hl -= 2;
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--listen: the address in '%s' is too long", arg);
		return -1;
	}
	if (hl) {
		memcpy(host, arg, hl);
		host[hl] = '\0';
	}
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)p);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
	} else {
		snprintf(err, errlen, "--listen needs a numeric address (or localhost), not '%s'", host);
		return -1;
	}
	l->loopback = is_loopback(&l->ss);
	return 0;
}

int mw_listen_parse(const char *arg, const char *mode, struct mw_listen *l, char *err,
		    size_t errlen)
{
	const char *path = arg + 5, *slash;
	char *end;
	unsigned long m = 0600;

	memset(l, 0, sizeof(*l));
	l->fd = l->dirfd = -1;
	l->arg = arg;
	if (mode) {
		errno = 0;
		m = strtoul(mode, &end, 8);
		if (!*mode || *end || errno || m > 0777 || mode[0] == '-' || mode[0] == '+') {
			snprintf(err, errlen, "--socket-mode needs an octal mode such as 0660, not '%s'",
				 mode);
			return -1;
		}
	}
	l->mode = (mode_t)m;
	if (strncmp(arg, "unix:", 5)) {
		if (mode) {
			snprintf(err, errlen, "--socket-mode is for --listen unix:PATH");
			return -1;
		}
		return parse_tcp(arg, l, err, errlen);
	}
	slash = strrchr(path, '/');
	if (path[0] != '/' || !slash[1] || strlen(path) >= sizeof(l->unix_path) ||
	    !strcmp(slash + 1, ".") || !strcmp(slash + 1, "..")) {
		snprintf(err, errlen, "--listen unix:PATH needs an absolute PATH to a file, of at "
			 "most %zu bytes, not '%s'", sizeof(l->unix_path) - 1, path);
		return -1;
	}
	snprintf(l->unix_path, sizeof(l->unix_path), "%s", path);
	snprintf(l->base, sizeof(l->base), "%s", slash + 1);
	return 0;
}

static int open_tcp(struct mw_listen *l, char *err, size_t errlen)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	char host[INET6_ADDRSTRLEN] = "?";
	int one = 1, v6 = l->ss.ss_family == AF_INET6;
	int fd = socket(l->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (struct sockaddr *)&l->ss, v6 ? sizeof(struct sockaddr_in6) :
		 sizeof(struct sockaddr_in)) < 0 ||
	    listen(fd, BACKLOG) < 0 || getsockname(fd, (struct sockaddr *)&got, &len) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot listen on '%s': %s", l->arg, strerror(e));
		return -1;
	}
	inet_ntop(got.ss_family, v6 ? (const void *)&((struct sockaddr_in6 *)&got)->sin6_addr :
		  (const void *)&((struct sockaddr_in *)&got)->sin_addr, host, sizeof(host));
	snprintf(l->name, sizeof(l->name), v6 ? "[%s]:%u" : "%s:%u", host,
		 ntohs(v6 ? ((struct sockaddr_in6 *)&got)->sin6_port :
		       ((struct sockaddr_in *)&got)->sin_port));
	l->fd = fd;
	return 0;
}

/* A socket at the name that nothing accepts on: removed.  0 when the
 * name is free now, else -1 with the reason. */
static int clear_stale(struct mw_listen *l, const struct sockaddr_un *sa, char *err,
		       size_t errlen)
{
	struct stat sb;
	int fd, live;

	if (fstatat(l->dirfd, l->base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "cannot look at '%s': %s",
							l->unix_path, strerror(errno)), -1);
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen, "cannot listen on '%s': it exists and is not a socket",
			 l->unix_path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	live = fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	if (fd >= 0)
		close(fd);
	if (live) {
		snprintf(err, errlen, "cannot listen on '%s': another server accepts on it",
			 l->unix_path);
		return -1;
	}
	unlinkat(l->dirfd, l->base, 0);
	return 0;
}

static int open_unix(struct mw_listen *l, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(l->unix_path)], why[PATH_MAX + 128];
	struct stat sb;
	mode_t old;
	int fd, r;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(l->unix_path) - strlen(l->base)),
		 l->unix_path);
	if ((l->dirfd = mw_dir_open_safe(dir, 0, 0, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "--listen unix:%s: %s: the socket's directory must be one "
			 "only root can change", l->unix_path, why);
		return -1;
	}
	/* bind through the directory's descriptor: nothing on the path is
	 * looked up again */
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", l->dirfd,
			     l->base) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--listen unix:%s: the name is too long", l->unix_path);
		return -1;
	}
	if (clear_stale(l, &sa, err, errlen) < 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		goto fail;
	old = umask(~l->mode & 0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || fstatat(l->dirfd, l->base, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    listen(fd, BACKLOG) < 0)
		goto fail;
	l->dev = sb.st_dev;
	l->ino = sb.st_ino;
	l->fd = fd;
	snprintf(l->name, sizeof(l->name), "%s", l->unix_path);
	return 0;
fail:
	snprintf(err, errlen, "cannot listen on '%s': %s", l->unix_path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

int mw_listen_open(struct mw_listen *l, char *err, size_t errlen)
{
	return l->unix_path[0] ? open_unix(l, err, errlen) : open_tcp(l, err, errlen);
}

void mw_listen_close(struct mw_listen *l)
{
	struct stat sb;

	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->dirfd < 0)
		return;
	if (l->ino && fstatat(l->dirfd, l->base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    sb.st_ino == l->ino && sb.st_dev == l->dev)
		unlinkat(l->dirfd, l->base, 0);
	close(l->dirfd);
	l->dirfd = -1;
}
