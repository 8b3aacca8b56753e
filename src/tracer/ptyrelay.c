/* ptyrelay.c - the program's own pseudo-terminal and its relay; see
 * ptyrelay.h.
 *
 * The real terminal's modes while relaying: raw input, as sudo's
 * sudo_term_raw() sets them, with output processing (opost, onlcr) kept;
 * stty's differences from the defaults, on the terminal tests/lib/ptydrive.py
 * makes, while `mallocwatch -c ttyprog line` waits for a line:
 *
 *	$ stty -F /dev/pts/2
 *	speed 38400 baud; line = 0;
 *	min = 1; time = 0;
 *	-brkint -icrnl -imaxbel
 *	-isig -icanon -iexten -echo
 *
 * and the slave has the modes the real terminal had before (icrnl, isig,
 * icanon, echo, ...): the line discipline the program talks to is the
 * pty's, the real terminal only carries bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ptyrelay.h"
#include "xalloc.h"

/* When the program has exited but something it left still holds the
 * slave open, the relay ends after this long without output, or this
 * long in all. */
#define DRAIN_QUIET_MS 1000
#define DRAIN_MAX_MS 3000

struct mw_pty {
	int master, slave;	/* slave: -1 once the program has it */
	int tty;		/* the real terminal: stdin */
	int out;		/* where the master's output goes; -1: nowhere */
	int out_owned;		/* out was opened here (by ttyname(0)) */
	int was_tty[3];		/* fds 0, 1, 2 were terminals */
	pthread_mutex_t lock;	/* saved and raw: the relay thread and
				 * mallocwatch's (suspend, exit) both switch */
	struct termios saved;	/* the real terminal's modes, while raw */
	int raw;		/* the real terminal is in raw mode */
	int ctl[2];		/* to the relay thread: 'w' size changed,
				 * 'c' continued, 'q' end */
	int running;		/* the relay thread exists */
	int quit;		/* mw_pty_close asks it to end (atomic) */
	pthread_t thread;
	struct sigaction old_winch, old_cont;
	char keys[4096];	/* typed, not yet taken by the master */
	size_t keys_len, keys_off;
};

/* The relay now running (for atexit and the SIGWINCH handler). */
static struct mw_pty *live;
static volatile int ctl_fd = -1;

/* SIGWINCH and SIGCONT, in mallocwatch's main thread: tell the relay. */
static void on_signal(int sig)
{
	int e = errno, fd = ctl_fd;

	if (fd >= 0 && write(fd, sig == SIGWINCH ? "w" : "c", 1) < 0) {
		/* the pipe is full: a size change is already queued */
	}
	errno = e;
}

/* tcsetattr() on the real terminal with SIGTTOU blocked, so that a
 * mallocwatch in the background (bg after ^Z) is not stopped for it. */
static int set_modes(struct mw_pty *p, const struct termios *t)
{
	sigset_t ttou, old;
	int ret;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &ttou, &old);
	while ((ret = tcsetattr(p->tty, TCSADRAIN, t)) < 0 && errno == EINTR)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static void term_raw(struct mw_pty *p)
{
	struct termios t;

	pthread_mutex_lock(&p->lock);
	if (!p->raw && tcgetattr(p->tty, &p->saved) == 0) {
		t = p->saved;
		t.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON |
			       IXOFF);
		t.c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		p->raw = set_modes(p, &t) == 0;
	}
	pthread_mutex_unlock(&p->lock);
}

static void term_restore(struct mw_pty *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->raw && set_modes(p, &p->saved) == 0)
		p->raw = 0;
	pthread_mutex_unlock(&p->lock);
}

static int foreground(const struct mw_pty *p)
{
	return tcgetpgrp(p->tty) == getpgrp();
}

static void restore_at_exit(void)
{
	if (live)
		term_restore(live);
}

/* The real terminal's window size to the pty; the kernel sends the
 * program's foreground process group SIGWINCH when it changed. */
static void sync_winsize(struct mw_pty *p)
{
	struct winsize ws;

	if (ioctl(p->tty, TIOCGWINSZ, &ws) == 0)
		ioctl(p->master, TIOCSWINSZ, &ws);
}

static void pty_free(struct mw_pty *p)
{
	int fds[] = { p->master, p->slave, p->ctl[0], p->ctl[1], p->out_owned ? p->out : -1 };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int set_cloexec(int fd)
{
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int mw_pty_open(struct mw_pty **out, uid_t uid, char *err, size_t errlen)
{
	struct mw_pty *p;
	struct termios t;
	struct winsize ws, *wsp = NULL;
	const char *name;

	*out = NULL;
	if (uid == (uid_t)-1 || !isatty(STDIN_FILENO))
		return 0;
	p = xcalloc(1, sizeof(*p));
	p->master = p->slave = p->out = p->ctl[0] = p->ctl[1] = -1;
	p->tty = STDIN_FILENO;
	pthread_mutex_init(&p->lock, NULL);
	for (int fd = 0; fd < 3; fd++)
		p->was_tty[fd] = isatty(fd);
	if (ioctl(p->tty, TIOCGWINSZ, &ws) == 0)
		wsp = &ws;
	/* openpty (glibc's, from libutil) gives descriptors without
	 * O_CLOEXEC; mallocwatch has no other thread that could fork now */
	if (tcgetattr(p->tty, &t) < 0 || openpty(&p->master, &p->slave, NULL, &t, wsp) < 0 ||
	    set_cloexec(p->master) < 0 || set_cloexec(p->slave) < 0 ||
	    fcntl(p->master, F_SETFL, O_NONBLOCK) < 0 ||
	    pipe2(p->ctl, O_CLOEXEC | O_NONBLOCK) < 0)
		goto fail;
	/* the program's own terminal, as sudo makes it: the user can open
	 * it by its name (/dev/tty, ttyname) like any terminal of theirs */
	if (fchown(p->slave, uid, (gid_t)-1) < 0)
		goto fail;
	if (p->was_tty[1]) {
		p->out = STDOUT_FILENO;
	} else if (p->was_tty[2]) {
		p->out = STDERR_FILENO;
	} else if ((name = ttyname(p->tty))) {	/* the echo of what is typed */
		p->out = open(name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		p->out_owned = p->out >= 0;
	}
	*out = p;
	return 0;
fail:
	snprintf(err, errlen, "cannot open a pseudo-terminal for the program: %s", strerror(errno));
	pty_free(p);
	return -1;
}

int mw_pty_child(const struct mw_pty *p)
{
	if (!p)
		return 0;
	if (setsid() < 0 || ioctl(p->slave, TIOCSCTTY, 0) < 0)
		return -1;
	for (int fd = 0; fd < 3; fd++)
		if (p->was_tty[fd] && dup2(p->slave, fd) < 0)
			return -1;
	return 0;
}

/* Typed keys to the master, as much as it takes now. */
static void keys_out(struct mw_pty *p)
{
	ssize_t n = write(p->master, p->keys + p->keys_off, p->keys_len - p->keys_off);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0)	/* EIO: the program's side is gone */
		p->keys_len = 0;
	else if ((p->keys_off += (size_t)n) == p->keys_len)
		p->keys_len = 0;
}

/* Read typed keys; 0 when the terminal gives no more (hung up). */
static int keys_in(struct mw_pty *p)
{
	ssize_t n = read(p->tty, p->keys, sizeof(p->keys));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return 0;
	p->keys_len = (size_t)n;
	p->keys_off = 0;
	keys_out(p);
	return 1;
}

/* The program's output to the real terminal; -1 at EIO (every slave
 * descriptor closed) or another error. */
static int master_out(struct mw_pty *p)
{
	char buf[4096];
	ssize_t n = read(p->master, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return -1;
	for (ssize_t off = 0, w; off < n && p->out >= 0; off += w) {
		w = write(p->out, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w < 0)
			p->out = -1;	/* the terminal is gone: output dropped */
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How long the relay may wait now: for ever while the program runs;
 * once it is ending, DRAIN_QUIET_MS, and never past DRAIN_MAX_MS. */
static int drain_wait(int quit, long long *until)
{
	long long left;

	if (!quit)
		return -1;
	if (!*until)
		*until = now_ms() + DRAIN_MAX_MS;
	left = *until - now_ms();
	return left <= 0 ? 0 : left < DRAIN_QUIET_MS ? (int)left : DRAIN_QUIET_MS;
}

/* The relay thread: keys in, output out, size changes, until asked to
 * end and then the master's last output (EIO), or the master's EIO
 * first. */
static void *relay(void *arg)
{
	struct mw_pty *p = arg;
	int keys_open = 1, quit = 0;
	long long until = 0;
	char c[64];

	for (;;) {
		struct pollfd f[3] = {
			{ .fd = keys_open && !quit && !p->keys_len ? p->tty : -1, .events = POLLIN },
			{ .fd = p->master, .events = POLLIN | (p->keys_len && !quit ? POLLOUT : 0) },
			{ .fd = quit ? -1 : p->ctl[0], .events = POLLIN },
		};
		int n = poll(f, 3, drain_wait(quit, &until));
		ssize_t k;

		if (n == 0)
			break;	/* ending, and no output for a while */
		if (n < 0 && errno != EINTR)
			break;
		if (n < 0)
			continue;
		while (f[2].revents && (k = read(p->ctl[0], c, sizeof(c))) > 0) {
			if (memchr(c, 'w', (size_t)k))
				sync_winsize(p);
			/* continued: fg after a background read stopped us */
			if (memchr(c, 'c', (size_t)k) && foreground(p))
				term_raw(p);
		}
		quit = __atomic_load_n(&p->quit, __ATOMIC_SEQ_CST);
		if (f[0].revents && !quit)	/* after the end: the shell's */
			keys_open = keys_in(p);
		if (f[1].revents & POLLOUT)
			keys_out(p);
		if ((f[1].revents & (POLLIN | POLLHUP | POLLERR)) && master_out(p) < 0)
			break;
	}
	return NULL;
}

int mw_pty_start(struct mw_pty *p)
{
	static int registered;
	struct sigaction sa;
	sigset_t mask, old;
	int e;

	if (!p)
		return 0;
	close(p->slave);	/* the program's now: EIO on the master when it is gone */
	p->slave = -1;
	if (!registered && atexit(restore_at_exit) == 0)
		registered = 1;
	live = p;
	ctl_fd = p->ctl[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, &p->old_winch);
	sigaction(SIGCONT, &sa, &p->old_cont);
	sync_winsize(p);	/* a change since mw_pty_open */
	/* raw only in the foreground (not under `mallocwatch ... &`); when
	 * it fails, the relay works cooked */
	if (foreground(p))
		term_raw(p);
	/* the thread takes no signal of mallocwatch's (SIGINT, SIGCHLD and
	 * SIGWINCH must interrupt the run loop's poll); SIGTTIN and SIGTTOU
	 * stay open so that a read from the background stops mallocwatch
	 * as it would any program, instead of failing with EIO */
	sigfillset(&mask);
	sigdelset(&mask, SIGTTIN);
	sigdelset(&mask, SIGTTOU);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	e = pthread_create(&p->thread, NULL, relay, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		term_restore(p);
		errno = e;
		return -1;
	}
	p->running = 1;
	return 0;
}

int mw_pty_suspend(struct mw_pty *p)
{
	if (!p || !p->running)
		return 0;
	term_restore(p);
	/* stops every thread of ours until the shell's fg or bg (its
	 * SIGCONT); the kernel drops it in an orphaned process group,
	 * where nobody could continue us */
	kill(0, SIGTSTP);
	if (foreground(p))	/* continued by fg, not bg */
		term_raw(p);
	return 1;
}

void mw_pty_close(struct mw_pty *p)
{
	if (!p)
		return;
	if (p->running) {
		__atomic_store_n(&p->quit, 1, __ATOMIC_SEQ_CST);
		/* wakes the thread; a full pipe (size changes) wakes it too */
		if (write(p->ctl[1], "q", 1) < 0) {
			/* full: the thread has bytes to wake for already */
		}
		pthread_join(p->thread, NULL);
		p->running = 0;
		ctl_fd = -1;
		sigaction(SIGWINCH, &p->old_winch, NULL);
		sigaction(SIGCONT, &p->old_cont, NULL);
	}
	term_restore(p);
	if (live == p)
		live = NULL;
	pty_free(p);
}
