#!/bin/sh
# stress-check.sh - the test suite N times in a row (default 5) while
# `stress-ng --cpu 2` keeps both cores busy: tests must assert what glibc
# guarantees, not what an idle scheduler happened to do.  Stops at the
# first failing round.  Needs root (it installs stress-ng when missing,
# and the tests trace).
#
# Usage: scripts/stress-check.sh [ROUNDS]
set -u
cd "$(dirname "$0")/.." || exit 99
rounds=${1:-5}
if ! command -v stress-ng >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends stress-ng \
		>/dev/null || { echo "stress-check: cannot install stress-ng" >&2; exit 1; }
fi
make -s all || exit 1
stress-ng --cpu 2 --timeout 0 --quiet &
load=$!
trap 'kill $load 2>/dev/null' EXIT INT TERM
for i in $(seq 1 "$rounds"); do
	start=$(date +%s)
	if ! make -s check >"tests/out-stress-$i.log" 2>&1; then
		tail -n 30 "tests/out-stress-$i.log"
		echo "stress-check: round $i of $rounds FAILED under load"
		exit 1
	fi
	echo "stress-check: round $i of $rounds: $(tail -n 1 "tests/out-stress-$i.log") ($(( $(date +%s) - start )) s)"
done
echo "stress-check: $rounds of $rounds rounds passed under stress-ng --cpu 2"
