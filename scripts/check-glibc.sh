#!/bin/sh
# check-glibc.sh - the end-to-end tests on another Debian release's glibc.
#
# Usage: scripts/check-glibc.sh ROOT [TEST...]
#
# ROOT is a root made by scripts/glibc-root.sh (make glibc-root SUITE=...):
# a Debian release whose own libc is its glibc rebuilt with SDT probes.
# The test programs (examples/ and the fixtures the tests use) are
# compiled inside it with its own gcc and put at ROOT/examples and
# ROOT/build/tests/fixtures, so that the names the tests give them
# (./examples/NAME, build/tests/fixtures/NAME) name them from chroot's
# working directory, the root's /.  Each test then runs with MW_ROOT=ROOT
# (tests/lib/lib.sh): its programs run inside the root (chroot), traced,
# snapshotted and trimmed from here by build/mallocwatch.  /proc is
# mounted inside the root while they run (glibc counts the CPUs through
# it) and unmounted after.
#
# The default tests: the end-to-end ones (arena storms, heap churn, sbrk
# and thresholds, knobs, setjmp), the exit snapshot and ledger, snapshot
# and explain -p (t-ledger), trim, snapshot, attach, the cost line
# (t-summary), explain's findings (t-findings), -p by name (t-procsel),
# attach across an exec (t-attach-exec, t-attach-exec-reuse), and the
# slow-math probes of a real libm (t-glibc-slowmath: glibc 2.31's; skipped
# where the libm has none).
# Logs: tests/out/NAME-SUITE.log.  Exits as tests/run does; one test at a
# time (tests/run -j 1): the tests have not been run side by side in a root.
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:?usage: check-glibc.sh ROOT [TEST...]}
shift
TESTS=${*:-e2e-arena-storm e2e-heap-churn e2e-sbrk-thresholds e2e-knobs e2e-setjmp ledger-exit ledger trim snapshot attach \
summary findings procsel attach-exec attach-exec-reuse glibc-slowmath}
say() { echo "check-glibc: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "needs root (chroot, uprobes)"; exit 1; }
[ -f "$ROOT/.mallocwatch-stamp" ] ||
	{ say "no probe-enabled root at '$ROOT' (make glibc-root SUITE=...)"; exit 1; }
[ -x build/mallocwatch ] || { say "build/mallocwatch is missing (make all)"; exit 1; }
say "$(cat "$ROOT/.mallocwatch-stamp") at $ROOT"

for d in examples build; do
	rm -rf --one-file-system "${ROOT:?}/$d"
done
mkdir -p "$ROOT/examples" "$ROOT/build/tests/fixtures"
cp examples/Makefile examples/*.c "$ROOT/examples/"
FIXTURES="busy-alloc slow-math held-kinds exec-later"
for f in $FIXTURES; do
	cp "tests/fixtures/$f.c" "$ROOT/build/tests/fixtures/"
done
chroot "$ROOT" make -s -C /examples >/dev/null
for f in $FIXTURES; do
	chroot "$ROOT" gcc -O2 -g -Wall -pthread -o "/build/tests/fixtures/$f" \
		"/build/tests/fixtures/$f.c" -lm
done

mounted=0
cleanup() {
	[ $mounted = 0 ] || umount "$ROOT/proc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
if ! mountpoint -q "$ROOT/proc"; then
	mount -t proc proc "$ROOT/proc"
	mounted=1
fi
rc=0
MW_ROOT=$ROOT sh tests/run -j 1 $TESTS || rc=$?
exit $rc
