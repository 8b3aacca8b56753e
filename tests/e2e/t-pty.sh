#!/bin/sh
# Under sudo (SUDO_UID) with a terminal on stdin, the program runs on a
# pseudo-terminal of its own, relayed by mallocwatch: it must not reach
# root's terminal (TIOCSTI pushes input into the terminal it is run on;
# on root's terminal, root's shell would run it after mallocwatch), and
# an interactive program must still work: a typed line, ^C, the window
# size.  tests/lib/ptydrive.py plays root's terminal and shell.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v python3 >/dev/null || skip "python3 not installed (it plays the terminal)"
P=build/tests/fixtures/ttyprog
[ -x $P ] || { echo "$P not built (make $P)"; exit 99; }
drive() {
	env SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody \
		python3 tests/lib/ptydrive.py "$1" "$MW" "$PWD/$P" ${2:+"$2"} ||
		fail "case $1"
}

drive line
drive intr
drive winch
chmod 755 "$OUT"
drive redirect "$OUT/redirect.out"
drive nopty "$OUT/nopty.out"
drive term
drive susp
drive stop
command -v bash >/dev/null && drive shell

# TIOCSTI last: its skip must not hide the others.  Since Linux 6.2
# dev.tty.legacy_tiocsti=0 refuses TIOCSTI to all but CAP_SYS_ADMIN;
# where it is on (or the sysctl is older than the knob), the program
# could push a command into root's shell.
t=$(sysctl -n dev.tty.legacy_tiocsti 2>/dev/null || echo 1)
[ "$t" = 1 ] || skip "dev.tty.legacy_tiocsti=$t: TIOCSTI is refused anyway"
drive sti
