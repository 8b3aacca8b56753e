/* pidfd.c - pidfd_open(2) and pidfd_send_signal(2); see pidfd.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd.h"

int mw_pidfd_open(pid_t pid)
{
	if (pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int mw_pidfd_signal(int pidfd, int sig)
{
	if (pidfd < 0) {
		errno = EBADF;
		return -1;
	}
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int mw_pidfd_wait(int pidfd, long ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n;

	if (pidfd < 0)
		return 1;
	while ((n = poll(&p, 1, ms > 0x7fffffffL ? 0x7fffffff : (int)ms)) < 0 && errno == EINTR)
		;
	return n > 0;
}

int mw_pidfd_exited(int pidfd)
{
	return mw_pidfd_wait(pidfd, 0);
}
