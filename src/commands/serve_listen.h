/* serve_listen.h - the listening socket of `mallocwatch serve`, made by
 * serve (and handed to libmicrohttpd, MHD_OPTION_LISTEN_SOCKET):
 *
 *	--listen 9464                127.0.0.1:9464
 *	--listen [::1]:9464          IPv6 (IPV6_V6ONLY)
 *	--listen 10.0.0.5:9464       with --allow-remote only
 *	--listen unix:/run/mallocwatch/metrics.sock
 *
 * A unix socket is made in a directory only root can change (every
 * directory from / down owned by root and writable by no one else, as
 * mw_dir_open_safe checks; a sticky one such as /tmp refused as the
 * last), through that directory's descriptor: no link planted on the
 * way is followed.  A socket left at the name by a serve that is gone
 * (nothing accepts on it) is replaced; anything else there is refused.
 * The file gets the mode asked (default 0600: root alone may connect;
 * 0660: the directory's group too, so a directory of group prometheus
 * with the set-group-ID bit lets that group in) from the umask at
 * bind(2), so it never has more, and is removed at exit if it is still
 * the one made.
 */
#ifndef MALLOCWATCH_SERVE_LISTEN_H
#define MALLOCWATCH_SERVE_LISTEN_H

#include <limits.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct mw_listen {
	const char *arg;		/* as given */
	int fd;				/* -1 until open */
	int loopback;			/* a loopback TCP address */
	struct sockaddr_storage ss;	/* TCP */
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];	/* "": TCP */
	mode_t mode;
	int dirfd;			/* unix: the directory, and the name in it */
	char base[NAME_MAX + 1];
	dev_t dev;			/* unix: the file made */
	ino_t ino;
	char name[PATH_MAX + 64];	/* "127.0.0.1:9464", "[::1]:9464", the path */
};

/* Parse --listen arg (and --socket-mode mode, NULL: 0600) into *l.  0,
 * or -1 with a reason in err. */
int mw_listen_parse(const char *arg, const char *mode, struct mw_listen *l, char *err,
		    size_t errlen);

/* Make the socket and listen: 0 (l->fd, l->name with the port bound),
 * or -1 with a reason in err. */
int mw_listen_open(struct mw_listen *l, char *err, size_t errlen);

/* Close it; a unix socket's file is removed if it is still the one
 * made.  (libmicrohttpd, handed the descriptor, closes it itself at
 * MHD_stop_daemon: then call this with l->fd already -1.) */
void mw_listen_close(struct mw_listen *l);

#endif /* MALLOCWATCH_SERVE_LISTEN_H */
