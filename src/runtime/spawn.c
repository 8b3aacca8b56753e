/* spawn.c - starting the helper processes a run needs (spawn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"
#include "signals.h"
#include "spawn.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Every descriptor past stderr close-on-exec (spawn.h). */
void mw_cloexec_from_3(void)
{
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	for (int fd = 3; fd < 1024; fd++)	/* kernels before 5.11 */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* In a spawned child: name set to value, or unset when value is NULL. */
static void child_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

/* fork+exec argv with stdout/stderr on new pipes (spawn.h). */
pid_t mw_tracer_spawn(char *const argv[], const char *cwd, const char *preload,
		       const char *sites, int *out_fd, int *err_fd)
{
	int po[2], pe[2];
	pid_t pid, parent;
	sigset_t none;

	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		/* default actions first: a SIGTERM from here on must end
		 * this child, not reach mallocwatch's handler */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* a tracer left detaching after the flush writes to a pipe
		 * nobody reads: EPIPE, not death halfway through */
		signal(SIGPIPE, SIG_IGN);
		/* and none blocked: serve's thread runs this with SIGINT and
		 * SIGTERM blocked (its signalfd takes them), which a tracer
		 * would inherit and never see the stop */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* the tracer must not outlive mallocwatch, even a SIGKILLed one:
		 * SIGTERM makes stap and stapbpf detach and exit */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		if (out_fd) {
			dup2(po[1], 1);
		} else {
			int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

			dup2(null, 1);
		}
		dup2(pe[1], 2);
		mw_cloexec_from_3();
		/* stapbpf holds its module's lock (runtime.h) */
		if (strcmp(argv[0], "stapbpf") == 0 && mw_runtime_procfs_lock_fd() >= 0)
			fcntl(mw_runtime_procfs_lock_fd(), F_SETFD, 0);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		child_env("LD_PRELOAD", preload);
		child_env("MW_UMULTI_SITES", sites);
		/* stapbpf's /var/tmp: root's own (runtime.h) */
		if (strcmp(argv[0], "stapbpf") == 0 && mw_runtime_vartmp_enter() < 0) {
			fprintf(stderr, "ERROR: cannot give stapbpf a private /var/tmp ('%s'): "
				"%s\n", MW_STAPBPF_TMP, strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "ERROR: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid > 0 && strcmp(argv[0], "stapbpf") == 0)
		mw_runtime_procfs_release();	/* the tracer's now */
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	if (out_fd)
		*out_fd = po[0];
	else
		close(po[0]);
	*err_fd = pe[0];
	return pid;
}

/* Run a command to completion, its stderr collected (spawn.h). */
int mw_run_capture(char *const argv[], const char *cwd, char *msg, size_t len)
{
	int errfd, st;
	char buf[4096];
	size_t got = 0;
	ssize_t n = 1;
	pid_t pid = mw_tracer_spawn(argv, cwd, NULL, NULL, NULL, &errfd);

	if (pid < 0) {
		snprintf(msg, len, "cannot start '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	while (n != 0 && !mw_signal_pending()) {
		struct pollfd p = { .fd = errfd, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(errfd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			break;
		if (n > 0 && (got += (size_t)n) == sizeof(buf) - 1)
			got = 0;	/* keep the tail */
	}
	buf[got] = '\0';
	close(errfd);
	if (mw_signal_pending())
		kill(-pid, SIGTERM);	/* stap and what it started: a group
					 * pidfds cannot name; its leader is
					 * our child, not reaped yet */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (mw_signal_pending())
		return -2;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	/* the first line that says what went wrong */
	char *e = strstr(buf, "error");
	char *line = e ? e : buf;

	while (line > buf && line[-1] != '\n')
		line--;
	line[strcspn(line, "\n")] = '\0';
	snprintf(msg, len, "%.300s", *line ? line : "failed without a message");
	return -1;
}

