#!/bin/sh
# The stop bounds (issue 44, item 2): a process is held by ptrace at most
# --max-stop (default 100 ms) at a time, a snapshot's stops at most
# --max-stopped (200 ms) in all, and a run's stops of one process at most
# --max-stopped plus --max-stopped-share (1%) of the time since the first
# of them.  Measured from outside: tests/fixtures/stopwatch (SCHED_FIFO
# when it may) samples every thread's state every ~0.1 ms, and the
# process is held while one of them is in a tracing stop.  No stop
# overruns its bound, whatever the load: while it holds a process,
# mallocwatch's thread is real-time (SCHED_FIFO; at nice -20 alone it
# waited up to 40 ms for a CPU under load from other sessions, whose
# autogroups nice does not reach: stops of 170 ms against 100 at load
# 20).  What is allowed beyond a bound is the measurement's own error:
# a stop is counted from the sample before it began to the one after it
# ended, 2 sampling gaps and 3 ms (the gap is the longest seen, printed).
#  - stuck (tests/fixtures/trim-hostile stuck: a thread waits inside
#    malloc for a lock never let go, so the threads never all leave
#    malloc): 4 snapshots, each refused, saying how long it held the
#    process (not less than measured, within the sampling's error, nor
#    more than the command ran: under load it counts a thread asked to
#    stop and waiting for a CPU as held), each stop <= 100 ms, each snapshot <= 200 ms.  The same with
#    --max-stop 30 --max-stopped 60.
#  - tests/fixtures/busy-alloc (8 threads in malloc and free): 4
#    snapshots, made or refused, within the same bounds.
#  - serve -p stuck, a reading every 0.2 s for 5 s: every stop of the run
#    together <= 200 ms + 1% of 5 s (a sampling gap per stop), none over
#    100 ms.
#    Before: 28 stops, 739 ms, each the whole settling budget (101 ms).
# needs: root serial
. tests/lib/lib.sh
need_root
F=$PWD/build/tests/fixtures
for f in trim-hostile stopwatch busy-alloc; do
	[ -x $F/$f ] || { echo "no $F/$f (make check builds it)"; exit 99; }
done
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
[ -f "$dbg" ] || skip "libc6-dbg is not installed (a snapshot needs the libc's symbols)"
RT="chrt -f 10"
$RT true 2>/dev/null || { RT=; echo "note: the stopwatch runs without SCHED_FIFO"; }
pid=
trap '[ -z "$pid" ] || kill -9 $pid 2>/dev/null' EXIT

# measure NAME [-t SECONDS] CMD...: CMD run in the background while the
# stopwatch watches $pid (for SECONDS, then SIGTERM, when given); sets
# stops, total, max (ms) for CMD's process alone (a run of mallocwatch
# elsewhere on the machine may stop $pid too), gap (ms), rc from CMD and
# wall, CMD's time from start to end (ms)
measure() {
	_n=$1 _t=
	shift
	[ "$1" = -t ] && { _t=$2; shift 2; }
	rm -f "$OUT/$_n.sw.in"
	mkfifo "$OUT/$_n.sw.in"
	$RT $F/stopwatch $pid <"$OUT/$_n.sw.in" >"$OUT/$_n.sw" &
	_sw=$!
	exec 4>"$OUT/$_n.sw.in"
	sleep 0.1
	_t0=$(date +%s%N)
	"$@" &
	_cmd=$!
	[ -z "$_t" ] || { sleep $_t; kill $_cmd; }
	wait $_cmd
	rc=$?
	wall=$(( ($(date +%s%N) - _t0) / 1000000 ))
	sleep 0.1
	exec 4>&-
	wait $_sw
	set -- $(grep "^tracer $_cmd " "$OUT/$_n.sw") x x x x x x x x
	stops=0 total=0 max=0
	[ "$1" = tracer ] && stops=$4 total=$6 max=$8
	gap=$(sed -n 's/^gap //p' "$OUT/$_n.sw")
	[ -n "$gap" ] || fail "$_n: no stopwatch line"
}
# within MS BOUND: MS (a decimal) <= BOUND (ms) and the measurement's
# error (2 sampling gaps and 3 ms; N gaps more for a sum of N stops)
within() { awk -v v="$1" -v b="$2" -v g="$gap" -v n="${3:-0}" 'BEGIN { exit !(v <= b + (2 + n) * g + 3) }'; }

# snapshots NAME N STOP STOPPED [OPTIONS]: N snapshots of $pid, each
# stop <= STOP ms and each snapshot's <= STOPPED ms (within); a refusal
# says how long it held it, as measured
snapshots() {
	_name=$1 _n=$2 _stop=$3 _stopped=$4
	shift 4
	_all= _made=0 _gap=0
	for r in $(seq $_n); do
		f=$_name-$r
		measure $f "$MW" snapshot -p $pid -o "$OUT/$f.txt" --json "$OUT/$f.json" "$@" 2>"$OUT/$f.err"
		within $max $_stop || fail "$f: a stop of $max ms (bound $_stop, sampling gap $gap ms): $(cat "$OUT/$f.err")"
		within $total $_stopped $stops || fail "$f: stopped $total ms in $stops stops (bound $_stopped): $(cat "$OUT/$f.err")"
		if [ $rc = 1 ]; then
			said=$(sed -n 's/.*no consistent snapshot ([0-9]* reads*, [0-9]* stops* in \([0-9.]*\) ms).*/\1/p' "$OUT/$f.err")
			[ -n "$said" ] || fail "$f: $(cat "$OUT/$f.err")"
			# never less than measured; more by what it cannot tell
			# apart on a loaded machine (it counts from the poll
			# before it saw a thread held, to the one after: a thread
			# asked to stop that waits for a CPU counts as held; under
			# stress-ng --cpu 2 it said 261.9 ms where 97.5 ms were
			# measured), but never more than the command ran
			awk -v s="$said" -v t="$total" -v g="$gap" -v w="$wall" 'BEGIN { exit !(s >= t - 5 - 2 * g && s <= w + 2) }' ||
				fail "$f: says $said ms stopped, measured $total ms, ran $wall ms (sampling gap $gap ms)"
		else
			[ $rc = 0 ] || fail "$f: exit $rc: $(cat "$OUT/$f.err")"
			_made=$((_made + 1))
		fi
		_all="$_all $max/$total"
		_gap=$(awk -v a="$gap" -v b="$_gap" 'BEGIN { print (a > b ? a : b) }')
	done
}

# stuck: never all out of malloc
$F/trim-hostile stuck >"$OUT/stuck.out" 2>&1 &
pid=$!
i=0
until grep -qs READY "$OUT/stuck.out"; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "stuck never got ready"; sleep 0.05
done
sleep 0.2	# it waits in malloc by now
snapshots stuck 4 100 200
echo "ok: stuck, defaults: longest stop / all stops, ms:$_all (sampling gap <= $_gap ms)"
echo "    $(sed 's/^mallocwatch: process [0-9]*: //' "$OUT/stuck-4.err")"
snapshots stuck-tight 4 30 60 --max-stop 30 --max-stopped 60
echo "ok: stuck, --max-stop 30 --max-stopped 60: longest stop / all stops, ms:$_all (gap <= $_gap ms)"

# the run's bound: serve reads it every 0.2 s
mkdir -p "$OUT/tf"
measure serve -t 5 "$MW" serve -p $pid --textfile "$OUT/tf" --interval 0.2 2>"$OUT/serve.err"
[ $rc = 0 ] || fail "serve exited $rc: $(cat "$OUT/serve.err")"
within $total 250 $stops || fail "serve, 5 s: stopped $total ms in $stops stops (bound 200 + 50 ms, sampling gap $gap ms)"
within $max 100 || fail "serve, 5 s: a stop of $max ms (sampling gap $gap ms)"
echo "ok: serve, a reading every 0.2 s for 5 s: $stops stops, $total ms in all, the longest $max ms (sampling gap $gap ms)"
kill $pid
wait $pid 2>/dev/null
pid=

# busy: 8 threads in malloc
rm -f "$OUT/busy.in"
mkfifo "$OUT/busy.in"
$F/busy-alloc 8 "$OUT/busy.xml" <"$OUT/busy.in" >"$OUT/busy.out" 2>&1 &
pid=$!
exec 3>"$OUT/busy.in"
i=0
until grep -qs READY "$OUT/busy.out"; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "busy-alloc never got ready"; sleep 0.05
done
snapshots busy 4 100 200
echo "ok: busy-alloc: longest stop / all stops, ms:$_all ($_made of 4 made; gap <= $_gap ms)"
exec 3>&-
wait $pid
pid=
