#!/usr/bin/env python3
"""ptydrive.py - root's terminal, for tests/e2e/t-pty.sh.

    ptydrive.py CASE MALLOCWATCH TTYPROG

Runs `MALLOCWATCH -q -c TTYPROG ...` (build/tests/fixtures/ttyprog) as
the session leader of a pseudo-terminal this script holds both ends of,
the way root's shell would run it: the master is the terminal emulator
(what is typed goes in, what is shown comes out), the slave is root's
shell's own stdin, read after mallocwatch exits.  The environment
(SUDO_UID, SUDO_GID) comes from the caller.

CASE is one of sti, line, intr, winch, redirect, nopty, term, susp,
stop, shell.  Prints "ok: ..." and
exits 0, or prints "FAIL: ..." and exits 1.  Timeouts only bound a
failure; nothing waits for time to pass.
"""
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time

LIMIT = 60		# seconds: a hung run fails instead of hanging the suite


LEADER = []	# the session started here, killed on a failure


def fail(msg):
	"""Fail; first kill what is left of the session (mallocwatch, bash):
	its relay's end hangs the program's own terminal up, which ends
	the program (SIGHUP and SIGCONT to it)."""
	print("FAIL: " + msg)
	for d in os.listdir("/proc"):
		try:
			with open("/proc/%s/stat" % d) as f:
				sid = int(f.read().rsplit(")", 1)[1].split()[3])
			if LEADER and sid == LEADER[0]:
				os.kill(int(d), signal.SIGKILL)
		except (OSError, ValueError, IndexError):
			pass
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
		LEADER[:] = [self.pid]

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

	def expect(self, text, since=0):
		"""Wait until text is shown (after the first since bytes)."""
		until = time.monotonic() + LIMIT
		while text.encode() not in self.shown[since:]:
			if os.waitid(os.P_PIDFD, self.pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT):
				while self._take(0):
					pass
				if text.encode() in self.shown[since:]:
					return
				fail("mallocwatch exited before %r was shown: %r" % (text, self.shown))
			left = until - time.monotonic()
			if left <= 0:
				fail("%r not shown in %d s: %r" % (text, LIMIT, self.shown))
			select.select([self.master, self.pidfd], [], [], left)
			self._take(0)

	def expect_pid(self):
		"""The pid in ttyprog's "ready PID" line."""
		self.expect("ready ")
		self.expect("\n")
		m = re.search(rb"ready (\d+)\r*\n", self.shown)
		if not m:
			fail("no 'ready PID' line: %r" % self.shown)
		return int(m.group(1))

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
	# one family, few uprobes: quicker to attach and detach
	run = [mw, "-q", "-e", "arena", "-c", prog]
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
		if "name: %s\n" % os.ttyname(t.slave) in said:
			fail("the program is on root's terminal: %r" % said)
		print("ok: stdout redirected to a file stays the file; fds 0 1 2 only")
	elif case == "nopty":
		# root without sudo: nothing changes, the program is on root's terminal
		path = sys.argv[4]
		os.environ.pop("SUDO_UID", None)
		os.environ.pop("SUDO_GID", None)
		fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
		t = Term(run + ["fds"], stdout=fd)
		os.close(fd)
		st = t.wait()
		with open(path) as f:
			said = f.read()
		if st != 0 or "name: %s\n" % os.ttyname(t.slave) not in said:
			fail("exit status %d; without sudo the program is not on the terminal "
			     "mallocwatch has: %r" % (st, said))
		print("ok: without sudo the program has mallocwatch's terminal")
	elif case == "term":
		t = Term(run + ["wait"])
		t.expect("ready")
		os.kill(t.pid, signal.SIGTERM)	# mallocwatch passes it on
		st = t.wait()
		if st != 128 + signal.SIGTERM:
			fail("exit status %d after SIGTERM: %r" % (st, t.shown))
		print("ok: SIGTERM to mallocwatch ended the program; the terminal was restored")
	elif case == "susp":
		# ^Z: the program leads a session of its own, whose process group
		# has no parent in it (orphaned), so the kernel drops SIGTSTP from
		# its terminal; it must go on reading, not hang
		t = Term(run + ["line"])
		t.expect("ready")
		t.type(b"\x1a")
		t.type(b"after stop\r")
		t.expect("got: after stop")
		st = t.wait()
		if st != 0:
			fail("exit status %d: %r" % (st, t.shown))
		print("ok: ^Z does not hang the program")
	elif case == "stop":
		# the program stopped (SIGSTOP) with no job-control shell above
		# mallocwatch: it cannot suspend itself, so it continues the
		# program rather than leave the terminal raw and dead
		t = Term(run + ["line"])
		pid = t.expect_pid()
		os.kill(pid, signal.SIGSTOP)
		t.type(b"after stop\r")
		t.expect("got: after stop")
		st = t.wait()
		if st != 0:
			fail("exit status %d: %r" % (st, t.shown))
		print("ok: a stopped program is continued when mallocwatch cannot stop")
	elif case == "shell":
		# the program stopped in root's interactive shell: mallocwatch
		# gives the terminal back to the shell (Stopped), fg continues both
		os.environ["PS1"] = "$ "
		t = Term(["/bin/bash", "--norc", "--noprofile", "-i"])
		t.type((" ".join(run + ["line"]) + "\r").encode())
		pid = t.expect_pid()
		os.kill(pid, signal.SIGSTOP)
		t.expect("Stopped")
		t.type(b"fg\r")
		t.expect(" line\r\n")	# bash shows the job it continues
		t.type(b"after fg\r")
		t.expect("got: after fg")
		# the prompt after it: mallocwatch has exited
		t.expect("$ ", since=t.shown.index(b"got: after fg"))
		t.type(b"exit $?\r")
		st = t.wait()
		if st != 0:
			fail("bash exited %d: %r" % (st, t.shown))
		print("ok: a stopped program suspends mallocwatch in root's shell; fg continues it")
	else:
		print("ptydrive.py: unknown case %r" % case)
		sys.exit(99)


main()
