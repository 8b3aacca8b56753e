/* release.h - `mallocwatch release PID`: a -f run lets go of one process
 * of its tree on request, so that another tracer (gdb -p, strace -p) can
 * attach to it while the run goes on.
 *
 * A -f run (the mallocwatch process whose ptrace holds the tree: the
 * TracerPid of /proc/PID/status) listens on a Unix stream socket in the
 * abstract namespace (unix(7)), named by its pid:
 *
 *	@mallocwatch-release-4242
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
 * (an abstract name can be taken by anyone first: the run then has no
 * socket, warned, and the command refuses the squatter).
 */
#ifndef MALLOCWATCH_RELEASE_H
#define MALLOCWATCH_RELEASE_H

#include <stddef.h>
#include <sys/types.h>

/* The socket's name (after the abstract namespace's NUL), of run pid. */
#define MW_RELEASE_NAME "mallocwatch-release-%d"

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

/* The run's side: a listening socket, non-blocking and close-on-exec, of
 * this process (getpid()): its descriptor, or -1 with errno set. */
int mw_release_listen(void);

/* The run's side: the request on connection c (accepted), when it comes
 * from root or this process's real user and within 1 s: 1 with *pid
 * set, 0 when there is none to answer (c then gets nothing). */
int mw_release_request(int c, pid_t *pid);

/* The run's side: the answer ("ok", "no", "again" and the reason) on c. */
void mw_release_answer(int c, const char *word, const char *why);

#endif /* MALLOCWATCH_RELEASE_H */
