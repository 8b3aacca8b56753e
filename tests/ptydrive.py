#!/usr/bin/env python3
"""ptydrive.py - root's terminal, for tests/t-pty.sh.

    ptydrive.py CASE MALLOCWATCH TTYPROG

Runs `MALLOCWATCH -q -c TTYPROG ...` (build/tests/fixtures/ttyprog) as
the session leader of a pseudo-terminal this script holds both ends of,
the way root's shell would run it: the master is the terminal emulator
(what is typed goes in, what is shown comes out), the slave is root's
shell's own stdin, read after mallocwatch exits.  The environment
(SUDO_UID, SUDO_GID) comes from the caller.

CASE is one of sti, line, intr, winch, redirect.  Prints "ok: ..." and
exits 0, or prints "FAIL: ..." and exits 1.  Timeouts only bound a
failure; nothing waits for time to pass.
"""
import fcntl
import os
import select
import struct
import sys
import termios
import time

LIMIT = 60		# seconds: a hung run fails instead of hanging the suite


def fail(msg):
	print("FAIL: " + msg)
	sys.exit(1)


def set_winsize(fd, rows, cols):
	fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Term:
	"""mallocwatch on a terminal of its own; stdout optionally a file."""

	def __init__(self, argv, stdout=None):
		self.master, self.slave = os.openpty()
		set_winsize(self.slave, 33, 101)
		self.modes = termios.tcgetattr(self.slave)
		self.shown = b""
		self.pid = os.fork()
		if self.pid == 0:
			try:
				os.setsid()
				fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
				os.dup2(self.slave, 0)
				os.dup2(self.slave if stdout is None else stdout, 1)
				os.dup2(self.slave, 2)
				os.execv(argv[0], argv)
			finally:
				os._exit(127)
		self.pidfd = os.pidfd_open(self.pid)

	def _take(self, timeout):
		"""Read what the terminal shows; False at a timeout."""
		r, _, _ = select.select([self.master], [], [], timeout)
		if not r:
			return False
		try:
			self.shown += os.read(self.master, 4096)
		except OSError:
			pass
		return True

	def expect(self, text):
		until = time.monotonic() + LIMIT
		while text.encode() not in self.shown:
			if os.waitid(os.P_PIDFD, self.pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT):
				while self._take(0):
					pass
				if text.encode() in self.shown:
					return
				fail("mallocwatch exited before %r was shown: %r" % (text, self.shown))
			left = until - time.monotonic()
			if left <= 0:
				fail("%r not shown in %d s: %r" % (text, LIMIT, self.shown))
			select.select([self.master, self.pidfd], [], [], left)
			self._take(0)

	def type(self, data):
		os.write(self.master, data)

	def wait(self):
		"""Wait for mallocwatch to exit, showing its output meanwhile;
		its exit status (128+N for signal N)."""
		until = time.monotonic() + LIMIT
		while True:
			r, _, _ = select.select([self.master, self.pidfd], [], [],
						max(0, until - time.monotonic()))
			if not r:
				os.kill(self.pid, 9)
				fail("mallocwatch did not exit in %d s: %r" % (LIMIT, self.shown))
			if self.master in r:
				self._take(0)
			if self.pidfd in r:
				break
		_, st = os.waitpid(self.pid, 0)
		while self._take(0):
			pass
		if termios.tcgetattr(self.slave) != self.modes:
			fail("the terminal's modes were not restored")
		return os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)

	def root_input(self):
		"""What root's shell reads next from its terminal: typed input
		(or input pushed with TIOCSTI) nobody has read yet."""
		got = b""
		while select.select([self.slave], [], [], 0)[0]:
			d = os.read(self.slave, 4096)
			if not d:
				break
			got += d
		return got


def main():
	case, mw, prog = sys.argv[1:4]
	run = [mw, "-q", "-c", prog]
	if case == "sti":
		t = Term(run + ["sti", "echo INJECTED"])
		t.expect("sti ")
		st = t.wait()
		if b"sti ok" not in t.shown:
			fail("TIOCSTI did not work at all: %r" % t.shown)
		typed = t.root_input()
		if b"INJECTED" in typed:
			fail("root's shell would read %r, pushed by the program with TIOCSTI" % typed)
		if st != 0:
			fail("exit status %d: %r" % (st, t.shown))
		print("ok: TIOCSTI reached only the program's own terminal")
	elif case == "line":
		t = Term(run + ["line"])
		t.expect("ready")
		t.type(b"typed line\r")
		t.expect("got: typed line")
		st = t.wait()
		if st != 0:
			fail("exit status %d: %r" % (st, t.shown))
		print("ok: a typed line reached the program")
	elif case == "intr":
		t = Term(run + ["wait"])
		t.expect("ready")
		t.type(b"\x03")
		st = t.wait()
		if st != 130:
			fail("exit status %d after ^C, expected 130: %r" % (st, t.shown))
		print("ok: ^C killed the program with SIGINT (exit status 130)")
	elif case == "winch":
		t = Term(run + ["winch"])
		t.expect("ready 33 101")
		set_winsize(t.slave, 40, 120)	# the kernel sends SIGWINCH
		t.expect("winch 40 120")
		st = t.wait()
		if st != 0:
			fail("exit status %d: %r" % (st, t.shown))
		print("ok: the program saw the window size and its change")
	elif case == "redirect":
		path = sys.argv[4]
		fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
		t = Term(run + ["fds"], stdout=fd)
		os.close(fd)
		st = t.wait()
		with open(path) as f:
			said = f.read()
		if st != 0:
			fail("exit status %d: %r %r" % (st, said, t.shown))
		if "tty 0 1 2: 1 0 1\n" not in said or "fds: 3\n" not in said:
			fail("the program's stdout is not the file, or it has more than fds "
			     "0 1 2: %r" % said)
		print("ok: stdout redirected to a file stays the file; fds 0 1 2 only")
	else:
		print("ptydrive.py: unknown case %r" % case)
		sys.exit(99)


main()
