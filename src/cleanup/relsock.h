/* relsock.h - where a -f run's `mallocwatch release` socket lives
 * (tracer/release.h), made, found and swept.
 *
 * A run of root's listens in root's directory, 0700 like every other
 * under MW_RUN_DIR; a run of another user in its $XDG_RUNTIME_DIR (when
 * that is the user's own directory, 0700: /run/user/1000), where strace
 * and gdb users find their session's sockets:
 *
 *	/run/mallocwatch/release/4026531836.4242/socket
 *	/run/user/1000/mallocwatch-release/4026531836.4242/socket
 *
 * 4026531836 being the inode of the run's pid namespace and 4242 its pid
 * there (a pid means something only in its namespace).  No other user
 * can create, link or bind anything in those directories, so no one can
 * take the name before the run does.  Everything is made and opened
 * through directory descriptors, never following a link; the socket is
 * bound as /proc/self/fd/DIR/socket.
 *
 * The run holds an flock(2) on its directory (NS.PID) for its life and
 * removes it on every exit it sees; one killed (SIGKILL) leaves it, and
 * every later run's sweep (leftovers.h) removes the directories whose
 * lock no one holds.  A run that finds its own name taken by an earlier
 * process of that pid whose lock is free replaces it.
 */
#ifndef MALLOCWATCH_RELSOCK_H
#define MALLOCWATCH_RELSOCK_H

#include <stddef.h>
#include <sys/types.h>

#include "uprobes.h"

/* Root's runs' directories. */
#define MW_RELSOCK_DIR MW_RUN_DIR "/release"
/* Another user's: under its $XDG_RUNTIME_DIR. */
#define MW_RELSOCK_USER_DIR "mallocwatch-release"
/* The socket, in a run's directory. */
#define MW_RELSOCK_SOCKET "socket"

/* The directory of the runs whose effective user is uid (xdg: that
 * user's $XDG_RUNTIME_DIR, for a uid other than 0; NULL or "" when it
 * has none), made when create: its descriptor (close-on-exec), or -1
 * with a one-line reason in why (no private directory for that user:
 * then release cannot reach its runs). */
int mw_relsock_base(uid_t uid, const char *xdg, int create, char *why, size_t len);

/* The name of the directory of the run that is process pid of the pid
 * namespace whose inode is ns: "NS.PID". */
void mw_relsock_name(unsigned long long ns, pid_t pid, char *buf, size_t len);

/* This process's name (its pid namespace, getpid()). */
void mw_relsock_self(char *buf, size_t len);

/* The run's side: its directory name in base, made 0700 and locked for
 * as long as the returned descriptor (close-on-exec) stays open; or -1
 * with why. */
int mw_relsock_make(int base, const char *name, char *why, size_t len);

/* The run's side: its socket and directory removed (when name in base is
 * still the directory open on dir), dir closed. */
void mw_relsock_remove(int base, const char *name, int dir);

/* The sweep: the directories of dead runs (no one holds their lock) in
 * the effective user's directory, removed; how many. */
int mw_relsock_sweep(void);

#endif /* MALLOCWATCH_RELSOCK_H */
