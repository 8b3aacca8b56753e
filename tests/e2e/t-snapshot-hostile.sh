#!/bin/sh
# A corrupt or hostile allocator must not stall the walker (snapshot.h):
# tests/fixtures/corrupt-arena, run as nobody, damages its own glibc
# malloc on purpose and waits - (ring) main_arena.next to a fake arena
# whose next is itself, with a 1024-long heap_info chain; (bin) a 2-chunk
# cycle in small bin 5; (fastbin) a cycle in fastbin 1.  `mallocwatch
# snapshot -p` must end well within its 2 s deadline (< 5 s wall, to be
# safe under load), exit 1, print one line naming the loop (structure and
# address) and no snapshot, in bounded memory (< 64 MB RSS).  (shared) No
# loop, but every bin heading the same list of 65536 chunks: the step
# budget ends it, or the deadline.  The deadline on a real state too big
# to read in time (a million free chunks, --read-timeout 0.01; read in full
# with a longer one).  `-p --interval` of a process that turns corrupt
# while it is watched: the samples are skipped and counted, the run ends
# on time.  Under Debian's own libc (layouts from libc6-dbg); the same
# under the probe-enabled glibc, traced, when it is there.
# needs: root serial
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures/corrupt-arena
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
[ -f "$dbg" ] || skip "libc6-dbg is not installed: Debian's libc cannot be read"
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null' EXIT	# a failed check leaves none behind

# hostile NAME MODE [later [probes]]: start the fixture as nobody and
# return once it has printed READY (or WAITING, with later; its stdin on
# the FIFO $OUT/NAME.in, held open on fd 3).  Sets pid, main, a, b.
hostile() {
	if [ "${3:-}" = later ]; then
		rm -f "$OUT/$1.in"
		mkfifo "$OUT/$1.in"
		if [ "${4:-}" = probes ]; then
			$NOBODY "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path \
				"$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" $FIX $2 later \
				<"$OUT/$1.in" >"$OUT/$1.ready" 2>"$OUT/$1.fixerr" &
		else
			$NOBODY $FIX $2 later <"$OUT/$1.in" >"$OUT/$1.ready" 2>"$OUT/$1.fixerr" &
		fi
		pid=$!
		exec 3>"$OUT/$1.in"
	else
		$NOBODY $FIX $2 >"$OUT/$1.ready" 2>"$OUT/$1.fixerr" &
		pid=$!
	fi
	wait_for "$OUT/$1.ready" '^\(READY\|WAITING\)' 60 || { cat "$OUT/$1.fixerr"; exit 99; }
}
ready() { read -r _ main _ a b <<-EOF
	$(grep '^READY' "$OUT/$1.ready")
	EOF
}
# timed NAME CMD...: run CMD, killed after 30 s; rc, secs (wall), kb (max RSS)
timed() {
	_n=$1
	shift
	/usr/bin/time -f '%e %M' -o "$OUT/$_n.time" timeout -k 5 30 "$@" >"$OUT/$_n.out" 2>"$OUT/$_n.err"
	rc=$?
	set -- $(tail -n 1 "$OUT/$_n.time")
	secs=$1 kb=$2
	[ $rc != 124 ] || fail "$_n: still running after 30 s: killed ($(cat "$OUT/$_n.err"))"
}
within() { awk -v s="$1" -v m="$2" 'BEGIN { exit !(s < m) }'; }

for mode in ring bin fastbin; do
	hostile $mode $mode
	ready $mode
	case $mode in
	ring) what="the arena ring loops at arena 0x$a, never back to main_arena 0x$main" ;;
	bin) what="arena 0x$main: bin 5 list loops at chunk 0x($a|$b)" ;;
	fastbin) what="arena 0x$main: fastbin 1 list loops at chunk 0x($a|$b)" ;;
	esac
	timed $mode "$MW" snapshot -p $pid
	kill $pid
	wait $pid 2>/dev/null
	[ $rc = 1 ] || fail "$mode: snapshot exited $rc: $(cat "$OUT/$mode.err")"
	within $secs 5 || fail "$mode: took $secs s (the deadline is 2 s)"
	[ $kb -lt 65536 ] || fail "$mode: $kb KB"
	[ ! -s "$OUT/$mode.out" ] || fail "$mode: a snapshot was printed"
	[ "$(wc -l <"$OUT/$mode.err")" = 1 ] && grep -Eq "^mallocwatch: process $pid: $what: the allocator is corrupt or hostile; no snapshot\$" \
		"$OUT/$mode.err" || fail "$mode: $(cat "$OUT/$mode.err")"
	echo "ok: $mode: $secs s, $kb KB: $(cat "$OUT/$mode.err")"
done

# no loop, but every bin heads the same list of 65536 chunks (8 million
# steps): the step budget ends it (given time), or the deadline
hostile shared shared
ready shared
timed shared "$MW" snapshot -p $pid --read-timeout 25
timed shared-time "$MW" snapshot -p $pid --read-timeout 0.01
kill $pid
wait $pid 2>/dev/null
grep -Eq "^mallocwatch: process $pid: more than [0-9]+ arenas, heaps and free chunks in [0-9]+ readable bytes: the allocator is corrupt or hostile; no snapshot\$" \
	"$OUT/shared.err" || fail "the step budget: $(cat "$OUT/shared.err")"
echo "ok: the step budget: $(cat "$OUT/shared.err")"
grep -q "^mallocwatch: process $pid's allocator was not read within 0.01 s (--read-timeout); no snapshot\$" \
	"$OUT/shared-time.err" && within $secs 2 || fail "the deadline: $secs s: $(cat "$OUT/shared-time.err")"
echo "ok: the deadline: $secs s: $(cat "$OUT/shared-time.err")"

# the deadline: a real state that takes longer to read than it allows
hold_arenas big 0 1000000 system
timed big "$MW" snapshot -p $pid --read-timeout 0.01
[ $rc = 1 ] && within $secs 2 &&
	grep -q "^mallocwatch: process $pid's allocator was not read within 0.01 s (--read-timeout); no snapshot\$" \
	"$OUT/big.err" || fail "deadline: exit $rc in $secs s: $(cat "$OUT/big.err")"
echo "ok: deadline: $secs s: $(cat "$OUT/big.err")"
timed big-read "$MW" snapshot -p $pid --read-timeout 25 --json "$OUT/big.json"
release_hold
[ $rc = 0 ] && grep -q '"consistent": true' "$OUT/big.json" ||
	fail "a longer --read-timeout: exit $rc: $(cat "$OUT/big-read.err")"
echo "ok: the same state read in full with --read-timeout 25: $secs s"
for bad in 0 -1 abc 86401; do
	"$MW" snapshot -p 1 --read-timeout $bad >/dev/null 2>"$OUT/usage.err"
	[ $? = 2 ] && grep -q "^mallocwatch: --read-timeout needs a number of seconds" "$OUT/usage.err" ||
		fail "--read-timeout $bad: $(cat "$OUT/usage.err")"
done
echo "ok: --read-timeout 0, -1, abc, 86401: usage errors"

# watch NAME SECS [probes]: -p with --interval 0.1 --duration 3 on a process
# that turns corrupt (ring) once watched: the samples keep their schedule
# (at least 15 of about 30 taken, and skipped; one that followed the ring
# took over a minute before), the run ends within SECS of the damage (the
# tracer's teardown included, 5-25 s on a busy machine), no garbled line
watch() {
	hostile $1 ring later ${3:-}
	timeout -k 5 90 "$MW" -p $pid --interval 0.1 --duration 3 -o "$OUT/$1.txt" 2>"$OUT/$1.err" &
	mw=$!
	if [ "${3:-}" = probes ]; then
		wait_for "$OUT/$1.err" "tracing process $pid" 60 || fail "$1: $(cat "$OUT/$1.err")"
	else
		wait_for "$OUT/$1.err" "reporting process $pid from snapshots alone" 60 ||
			fail "$1: $(cat "$OUT/$1.err")"
	fi
	start=$(date +%s.%N)
	printf x >&3
	wait_for "$OUT/$1.ready" '^READY' 60 || exit 99
	ready $1
	wait $mw
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	exec 3>&-
	kill $pid
	wait $pid 2>/dev/null
	[ $rc = 0 ] && within $secs $2 || fail "$1: exit $rc after $secs s: $(cat "$OUT/$1.err")"
	! grep -q "garbled" "$OUT/$1.err" || fail "$1: $(cat "$OUT/$1.err")"
	n=$(sed -n "s/^mallocwatch: warning: \([0-9]*\) \(of [0-9]* allocator samples\|snapshots\) skipped.*: process $pid: the arena ring loops at arena 0x$a, .*/\1/p" \
		"$OUT/$1.err")
	[ "${n:-0}" -ge 15 ] || fail "$1: ${n:-no} skipped samples: $(cat "$OUT/$1.err")"
	grep "skipped" "$OUT/$1.err"
	echo "ok: $1: -p --interval 0.1 --duration 3 ended $secs s after the damage"
}
watch attach-system 10
if [ -f "$GLIBC_PREFIX/lib/libc.so.6" ]; then
	watch attach-probes 60 probes
else
	echo "note: no probe-enabled glibc at $GLIBC_PREFIX: traced samples not checked"
fi
