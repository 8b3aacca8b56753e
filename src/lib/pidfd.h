/* pidfd.h - signal and wait for a process through a pidfd.
 *
 * A pid names a process only until it is reaped; after that the kernel
 * may give it to any new process, and a kill(2) on it signals a
 * stranger.  A pidfd (pidfd_open(2), Linux 5.3) names one process for
 * its whole life: pidfd_send_signal(2) on it fails with ESRCH once that
 * process has exited, and poll(2) reports it readable (POLLIN) then.
 * mallocwatch signals its tracers, watchers and the orphans of killed
 * runs only this way.
 *
 * To learn something about a pid from /proc and then act on it safely:
 * open the pidfd first, read /proc, then check mw_pidfd_exited() is 0 -
 * while the process behind the pidfd lives, its pid is not reused, so
 * what was read was about it.
 */
#ifndef MALLOCWATCH_PIDFD_H
#define MALLOCWATCH_PIDFD_H

#include <sys/types.h>

/* A pidfd for pid (close-on-exec, as pidfd_open always makes it); -1
 * with errno (ESRCH: no such process) when there is none. */
int mw_pidfd_open(pid_t pid);

/* Send sig to the process behind pidfd.  0, or -1 with errno (ESRCH: it
 * has exited; EBADF: pidfd is -1). */
int mw_pidfd_signal(int pidfd, int sig);

/* Has the process behind pidfd exited (a zombie has)?  1 or 0; 1 for a
 * pidfd of -1. */
int mw_pidfd_exited(int pidfd);

/* Wait up to ms milliseconds (ms >= 0) for it to exit.  1 when it has,
 * 0 when the time passed first. */
int mw_pidfd_wait(int pidfd, long ms);

#endif /* MALLOCWATCH_PIDFD_H */
