/* linger_int.h - what linger.c (the rendezvous, the messages, a run's
 * side) and linger_session.c (the session process and its arming) share.
 * Not a public interface: linger.h is. */
#ifndef MALLOCWATCH_LINGER_INT_H
#define MALLOCWATCH_LINGER_INT_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "linger.h"

/* The largest message: a script and its libc's identity. */
#define MSG_MAX (160 * 1024)
/* How long either side waits for the other's answer. */
#define ANSWER_MS 2000

/* The rendezvous directory: root's, 0700, checked from / down (fsutil.h);
 * made when create.  Its descriptor, or -1 with why. */
int mw_linger_rendezvous(int create, char *why, size_t len);
/* a's path: name in the directory dirfd, through /proc/self/fd. */
void mw_linger_sock_path(struct sockaddr_un *a, int dirfd, const char *name);
/* The other end of fd is root's (SO_PEERCRED)? */
int mw_linger_peer_root(int fd);
/* fd's send and receive timeouts: ANSWER_MS. */
void mw_linger_timeouts(int fd);
/* One message of len bytes with nfd descriptors fds. */
int mw_linger_send_msg(int fd, const char *buf, size_t len, const int *fds, int nfd);
/* One message into buf (NUL-terminated; at most len - 1 bytes), up to 2
 * descriptors into fds (-1 when none came).  Its length, 0 at EOF, -1 on
 * an error or a message too long. */
ssize_t mw_linger_recv_msg(int fd, char *buf, size_t len, int *fds);
/* "JOIN\nID\nSCRIPT" into a new buffer; its length in *len.  NULL when
 * the script cannot be read or is too long. */
char *mw_linger_request(const char *id, const char *script, size_t *len);
/* A run's hold on the session at the other end of fd (no tracer yet), and
 * its end: every descriptor closed, l freed. */
struct mw_linger *mw_linger_hold_new(int fd);
void mw_linger_hold_free(struct mw_linger *l);

/* What the run's side and the session share (linger.c and linger_session.c,
 * the only files that include this), by their short names there. */
#define rendezvous mw_linger_rendezvous
#define sock_path mw_linger_sock_path
#define peer_root mw_linger_peer_root
#define timeouts mw_linger_timeouts
#define send_msg mw_linger_send_msg
#define recv_msg mw_linger_recv_msg
#define request mw_linger_request
#define hold_new mw_linger_hold_new
#define hold_free mw_linger_hold_free

#endif /* MALLOCWATCH_LINGER_INT_H */
