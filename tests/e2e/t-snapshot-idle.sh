#!/bin/sh
# A snapshot of a process none of whose threads ran while it was read is
# read once (issue 44, item 3: src/live/quiet.c), and still exact; one
# whose thread ran is read again (or refused), never called idle.
# (idle) examples/hold-arenas 4 threads, 200,000 more fastbin chunks (a
#   read of some ms), every thread blocked (a barrier, read(2)): `snapshot
#   -p` exact against its own malloc_info(), "check": "idle", 1 try, no
#   stop; on the probe-enabled glibc and Debian's own libc (libc6-dbg).
# (tick) the same with HOLD_TICK=1: one more thread wakes every 200 us and
#   sleeps again, touching nothing of the allocator, so it is asleep
#   whenever looked at and still runs while the heap is read: exact, and
#   "check" "reread" with 2 tries or more (a proof from its state letter,
#   or from its counts not compared, calls it idle: this fails).
# (busy) tests/fixtures/busy-alloc, 4 threads mallocing and freeing
#   without pause, --no-stop: each snapshot refused (never consistent, or
#   not read within --read-timeout on a loaded machine), or kept by a later
#   read ("reread"), never "idle".
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=$PWD/build/tests/fixtures/busy-alloc
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
pid= holder=
trap '[ -z "$holder" ] || kill $holder 2>/dev/null; [ -z "$pid" ] || kill $pid 2>/dev/null' EXIT

# exact NAME CHECK: a snapshot of $pid, exact against its malloc_info, kept
# as CHECK says (idle: read once; reread: read again)
exact() {
	"$MW" snapshot -p $pid --json "$OUT/$1.json" -o "$OUT/$1.txt" 2>"$OUT/$1.err" ||
		fail "$1: snapshot exited $?: $(cat "$OUT/$1.err")"
	mkdir -p "$OUT/$1"
	python3 tests/lib/snapshot_compare.py "$OUT/$1.xml" "$OUT/$1.json" "$OUT/$1" || exit 99
	expect_same "$OUT/$1/expected.txt" "$OUT/$1/actual.txt"
	python3 - "$OUT/$1.json" "$2" <<'PY' || fail "$1: not read as $2"
import json, sys
s, want = json.load(open(sys.argv[1]))["snapshot"], sys.argv[2]
got = (s["check"], s["tries"], s["stops"])
if want == "idle":
    assert got == ("idle", 1, 0), got
else:
    assert s["check"] == "reread" and s["tries"] >= 2 and s["stops"] == 0, got
print("check %s, %d tries, %.1f ms" % (s["check"], s["tries"], s["duration_ns"] / 1e6))
PY
	echo "ok: $1: exact, $(tail -n 1 "$OUT/$1/actual.txt")"
}

for libc in probes system; do
	hold_arenas idle-$libc 4 200000 $libc
	exact idle-$libc idle
	release_hold
	HOLD_TICK=1 hold_arenas tick-$libc 4 200000 $libc
	exact tick-$libc reread
	release_hold
done
pid=

rm -f "$OUT/busy.in" && mkfifo "$OUT/busy.in" || exit 99
$FIX 4 "$OUT/dump" <"$OUT/busy.in" >"$OUT/busy.out" 2>&1 &
pid=$!
sleep 1000 >"$OUT/busy.in" &
holder=$!
wait_for "$OUT/busy.out" READY 30 $pid
for run in 1 2 3 4 5; do
	"$MW" snapshot -p $pid --no-stop --json "$OUT/busy-$run.json" -o /dev/null \
		2>"$OUT/busy-$run.err"
	rc=$?
	if [ $rc = 0 ]; then
		python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["snapshot"]
assert s["check"] == "reread" and s["tries"] >= 2, (s["check"], s["tries"])' \
			"$OUT/busy-$run.json" || fail "busy run $run: called idle"
		echo "ok: busy run $run: kept by a later read"
	else
		# refused as never consistent, or (a loaded machine) as not read
		# within --read-timeout: both say why, neither calls it idle
		[ $rc = 1 ] && grep -q -e "no consistent snapshot" \
			-e "process $pid's allocator was not read within" "$OUT/busy-$run.err" ||
			fail "busy run $run: exit $rc: $(cat "$OUT/busy-$run.err")"
		echo "ok: busy run $run: refused"
	fi
done
