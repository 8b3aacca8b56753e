/* release.h - `mallocwatch release PID`: a -f run lets go of one process
 * of its tree on request, so that another tracer (gdb -p, strace -p) can
 * attach to it while the run goes on.
 *
 * A -f run (the mallocwatch process whose ptrace holds the tree: the
 * TracerPid of /proc/PID/status) listens on a Unix stream socket in a
 * directory only its user can write (relsock.h), named by its pid:
 *
 *	/run/mallocwatch/release/4026531836.4242/socket
 *
 * One request a connection, one line each way:
 *
 *	release 4250            (the request)
 *	ok 4250                 (let go)
 *	no process 4250 is ...  (refused, and why)
 *	again process 4250 ...  (busy for a moment: ask again)
 *
 * Both sides check who is at the other end with SO_PEERCRED, which the
 * kernel fills in and no process can forge: the run serves only root
 * and its own (real) user and closes other connections without a word;
 * the command talks only to a socket whose listener is that run's pid
 * and user.  The run takes at most MW_RELEASE_ACCEPTS connections each
 * time its loop wakes, and reads what each has sent without waiting for
 * it (up to MW_RELEASE_PENDING connections wait for their line, each at
 * most MW_RELEASE_LINE_MS): a flood of connections cannot keep the loop
 * from the tree's ptrace stops.
 */
#ifndef MALLOCWATCH_RELEASE_H
#define MALLOCWATCH_RELEASE_H

#include <stddef.h>
#include <sys/types.h>

/* How long the command waits for the run's answer, asking again while
 * it says "again", ms. */
#define MW_RELEASE_WAIT_MS 10000

/* What mw_release_ask found. */
enum mw_release_answer {
	MW_RELEASE_OK,		/* the run let go of the process */
	MW_RELEASE_REFUSED,	/* the run said no (why: its reason) */
	MW_RELEASE_NO_RUN,	/* no -f run listens as run (not one, or gone) */
	MW_RELEASE_FAILED,	/* no answer, a squatter, a socket error (why) */
};

/* Ask run (a mallocwatch -f run's pid) to let go of process pid; why gets
 * the run's reason, or what failed, printable. */
enum mw_release_answer mw_release_ask(pid_t run, pid_t pid, char *why, size_t len);

/* Connections taken each time the run's loop wakes; connections
 * waiting for their request line; how long one may take to send it, ms;
 * how often the loop looks at those waiting, ms. */
#define MW_RELEASE_ACCEPTS 4
#define MW_RELEASE_PENDING 8
#define MW_RELEASE_LINE_MS 1000
#define MW_RELEASE_LOOK_MS 10

/* The run's side: its socket and the connections waiting. */
struct mw_release_srv;

/* The run's listening socket (non-blocking, close-on-exec), in its
 * directory (relsock.h), removed by mw_release_close() or, at exit(), by
 * this process: the server, or NULL with a one-line reason in why. */
struct mw_release_srv *mw_release_listen(char *why, size_t len);

/* The descriptor to poll for connections. */
int mw_release_fd(const struct mw_release_srv *s);

/* 1 while a connection waits for its request line: the loop looks again
 * within MW_RELEASE_LOOK_MS. */
int mw_release_waiting(const struct mw_release_srv *s);

/* A request: the process the asker (root, or the run's real user) wants
 * let go, on connection c; the callback answers (mw_release_answer). */
typedef void (*mw_release_fn)(void *ctx, int c, pid_t pid);

/* One wake-up of the run's loop: up to MW_RELEASE_ACCEPTS connections
 * taken (others' closed unanswered), the requests that came served
 * through fn (bad ones answered "no"), those done, silent past
 * MW_RELEASE_LINE_MS or gone closed. */
void mw_release_step(struct mw_release_srv *s, mw_release_fn fn, void *ctx);

/* The socket and its directory removed, every connection closed. */
void mw_release_close(struct mw_release_srv *s);

/* The run's side: the answer ("ok", "no", "again" and the reason) on c. */
void mw_release_answer(int c, const char *word, const char *why);

#endif /* MALLOCWATCH_RELEASE_H */
