#!/bin/sh
# bench/servebudget.sh [SCRAPES] - how long `mallocwatch serve --all
# --budget B` takes to answer a scrape, against B, over N more idle glibc
# processes (default 200: half /bin/sleep on Debian's libc, half on the
# probe-enabled glibc) and BUSY busy-alloc processes (default 3, 2
# threads each in malloc and free: read while they run, they never agree,
# so their reads last until the deadline).  SCRAPES scrapes (default
# 100), one after the other: curl's time_total for each, and serve's own
# mallocwatch_snapshot_duration_seconds; the distribution (median, p99,
# max) and how many passed B, and by how much.  Then the same for
# `snapshot --all` and `snapshot -p LIST` (the busy processes and 20 of
# the idle ones) with --read-timeout B, each run's wall time.
# Run as root, on a built tree; LOAD=1 starts `stress-ng --cpu 2` for
# the run (and stops it).  B is BUDGET (default 0.3).
set -eu
cd "$(dirname "$0")/.."
SCRAPES=${1:-100}
N=${N:-200}
BUSY=${BUSY:-3}
B=${BUDGET:-0.3}
RUNS=${RUNS:-30}
MW=${MW:-./build/mallocwatch}
P=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
OUT=build/bench/servebudget
rm -rf $OUT; mkdir -p $OUT

pids= spid= stress= busyin=
cleanup() {
	for p in $spid $stress $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
if [ "${LOAD:-0}" = 1 ]; then
	stress-ng --cpu 2 --quiet &
	stress=$!
fi
. bench/idleprocs.sh
idle_procs "$N"
idle=$pids
rm -f $OUT/busy.in; mkfifo $OUT/busy.in
busy=
for i in $(seq "$BUSY"); do
	./build/tests/fixtures/busy-alloc 2 $OUT/busy$i.xml <$OUT/busy.in >$OUT/busy$i.out 2>&1 &
	pids="$pids $!"; busy="$busy $!"
done
[ "$BUSY" = 0 ] || exec 3>$OUT/busy.in	# no reader: the open would wait for good
for i in $(seq "$BUSY"); do
	until grep -q READY $OUT/busy$i.out 2>/dev/null; do sleep 0.05; done
done

# stats FILE: median, p99, max of column 1 and how many passed B
stats() {
	sort -n "$1" | awk -v b="$B" '{ t[NR] = $1; if ($1 > b) { over++; if ($1 - b > m) m = $1 - b } }
	END { p = int(NR * 0.99 + 0.999); if (p > NR) p = NR
	      printf "n %d  median %.3f  p99 %.3f  max %.3f s  over %s: %d (by at most %.3f s)",
		NR, t[int((NR + 1) / 2)], t[p], t[NR], b, over, m }'
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "load at start: $(load); $N idle + $BUSY busy-alloc (2 threads) processes; budget $B s"
: >$OUT/serve.err
$MW serve --listen 127.0.0.1:0 --all --budget "$B" --min-interval 0.01 2>$OUT/serve.err &
spid=$!
until port=$(sed -n 's|^mallocwatch: serving http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' $OUT/serve.err) &&
	[ -n "$port" ]; do
	kill -0 $spid || { cat $OUT/serve.err; exit 1; }; sleep 0.05
done
: >$OUT/curl.t; : >$OUT/own.t; : >$OUT/proc.t; : >$OUT/nread.t
for k in $(seq "$SCRAPES"); do
	curl -sS -m 60 -o $OUT/m.txt -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >>$OUT/curl.t
	sed -n 's/^mallocwatch_snapshot_duration_seconds //p' $OUT/m.txt >>$OUT/own.t
	awk '/^mallocwatch_process_read_seconds/ { if ($2 > m) m = $2 } END { print m + 0 }' \
		$OUT/m.txt >>$OUT/proc.t
	sed -n 's/^mallocwatch_processes //p' $OUT/m.txt >>$OUT/nread.t
	[ "$k" != 1 ] || grep '^mallocwatch_processes\(_unread\)\? \|^mallocwatch_processes_unread' $OUT/m.txt |
		tr '\n' ' ' >$OUT/first.txt
done
kill $spid; wait $spid 2>/dev/null || true; spid=
echo "serve --all --budget $B, a scrape (curl): $(stats $OUT/curl.t)"
echo "serve --all --budget $B, its own duration metric: $(stats $OUT/own.t)"
echo "  the longest process read of each scrape: $(stats $OUT/proc.t)"
echo "  processes read in a scrape: $(sort -n $OUT/nread.t | awk '{ t[NR] = $1 } END { printf "min %d, median %d, max %d", t[1], t[int((NR + 1) / 2)], t[NR] }')"
echo "  first scrape's counts: $(cat $OUT/first.txt)"
echo "load now: $(load)"

# each process's read against --read-timeout B (snapshot --all's and
# -p's path, mw_psnap_read): serve with a budget that never ends first
: >$OUT/serve2.err
$MW serve --listen 127.0.0.1:0 --all --budget 60 --read-timeout "$B" --min-interval 0.01 \
	2>$OUT/serve2.err &
spid=$!
until port=$(sed -n 's|^mallocwatch: serving http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' $OUT/serve2.err) &&
	[ -n "$port" ]; do
	kill -0 $spid || { cat $OUT/serve2.err; exit 1; }; sleep 0.05
done
: >$OUT/rt.t
[ "$RUNS" -gt 0 ] || exit 0
for k in $(seq "$RUNS"); do
	curl -sS -m 120 -o $OUT/m2.txt "http://127.0.0.1:$port/metrics"
	awk '/^mallocwatch_process_read_seconds/ { print $2 }' $OUT/m2.txt >>$OUT/rt.t
done
kill $spid; wait $spid 2>/dev/null || true; spid=
echo "each process read (read ones), --read-timeout $B, $RUNS tables: $(stats $OUT/rt.t)"

# runs NAME ARGS: RUNS runs of mallocwatch ARGS, each one's wall time
runs() {
	_n=$1; shift
	: >$OUT/$_n.t
	for k in $(seq "$RUNS"); do
		s=$(date +%s.%N)
		$MW "$@" -o /dev/null >/dev/null 2>&1 || true
		echo "$(date +%s.%N) - $s" | bc -l >>$OUT/$_n.t
	done
}
runs all snapshot --all --read-timeout "$B"
echo "snapshot --all --read-timeout $B, the whole run: $(stats $OUT/all.t)"
list=$(echo $busy $(echo $idle | tr ' ' '\n' | head -20) | tr ' ' ',')
runs list snapshot --no-stop -p "$list" --read-timeout "$B"
echo "snapshot --no-stop -p (the $BUSY busy + 20 idle) --read-timeout $B, the whole run: $(stats $OUT/list.t)"
b1=$(echo $busy | cut -d' ' -f1)
runs one snapshot --no-stop -p "$b1" --read-timeout "$B"
echo "snapshot --no-stop -p (one busy process, never consistent) --read-timeout $B, the whole run (its libc loaded, mallocwatch's start): $(stats $OUT/one.t)"
echo "load at end: $(load)"
