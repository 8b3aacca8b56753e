#!/bin/sh
# -p PID without -f does not ptrace the process (it is never stopped), so
# an exec is not held for the tracer to empty the old program's totals as
# under -c and -f (t-e2e-exec, t-exec-refused).  mallocwatch watches for
# one instead (src/live/procexec.h: the kernel's sched_process_exec
# event, counted on its threads; the address space it had at the start,
# gone while it lives): a process that exec'd during the run has its
# figures from the tracer refused with the true reason (text REFUSED,
# JSON "unknown", the saved stream's replay too), every --check rule on
# them fails (exit 3), and it has no snapshot at the end (the layouts
# read at attach are the old program's).  tests/fixtures/exec-later makes
# 5 arenas with 4 threads, then execs when told:
# 1. it execs /bin/sleep; ^C once it runs sleep;
# 2. it execs /bin/true, which exits: the run ends by itself (an exec
#    that no look at /proc at the end could see);
# 3. -p A,B: A execs, B does not: A refused, B judged (it passes);
# 4. no exec: nothing refused, the rule passes, exit 0;
# 5. on Debian's libc (no SDT probes: snapshots alone, with libc6-dbg)
#    it execs sleep: no snapshot after the exec, the figures unknown with
#    the reason, the rule fails (exit 3).
# The rule 'arenas<=8' passes on the old program's 5 arenas: before this
# was caught (main 7c6f3db), cases 1 to 3 reported them and exited 0.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=./build/tests/fixtures/exec-later
[ -x "${MW_ROOT:-.}/$FIX" ] || exit 99
WAIT=120	# s; the kernel runtime's first run compiles its module
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=1800

# start NAME FD PROGRAM...: exec-later 4 PROGRAM... held on the FIFO
# $OUT/NAME.in, open here on FD (3 or 4), until it made its arenas; sets
# pid.  On the probe-enabled glibc, or Debian's own with SYSTEM=1.
start() {
	_n=$1 _fd=$2
	shift 2
	rm -f "$OUT/$_n.in"
	mkfifo "$OUT/$_n.in" || exit 99
	if [ -n "${SYSTEM:-}" ]; then
		(exec 3>&- 4>&- $FIX 4 "$@") <"$OUT/$_n.in" >"$OUT/$_n.out" 2>&1 &
	else
		(exec 3>&- 4>&-; on_glibc $FIX 4 "$@") <"$OUT/$_n.in" >"$OUT/$_n.out" 2>&1 &
	fi
	pid=$!
	eval "exec $_fd>\"\$OUT/\$_n.in\""
	wait_for "$OUT/$_n.out" '^ready$' 120 $pid
}
# trace NAME PIDS [OPTION]: mallocwatch -p PIDS in the background
# (mwpid), once it says it is tracing
trace() {
	"$MW" -p "$2" --check 'arenas<=8' --json "$OUT/$1.json" -o "$OUT/$1.txt" ${3:-} \
		2>"$OUT/$1.err" &
	mwpid=$!
	wait_for "$OUT/$1.err" "^mallocwatch: tracing" $WAIT $mwpid
}
# ended NAME RC: mallocwatch's run NAME ended with exit status RC
ended() {
	wait $mwpid
	_rc=$?
	[ $_rc = "$2" ] || fail "$1: mallocwatch exited $_rc, expected $2: $(cat "$OUT/$1.err")"
}
# refused NAME PID [JSON]: process PID's report (JSON: NAME's, or the
# file given) refuses its figures from the tracer for its exec, and has
# its attach snapshot (5 arenas) but none at the end
refused() {
	python3 - "${3:-$OUT/$1.json}" "$2" <<'PY' || fail "$1: JSON: $(head -c 3000 "${3:-$OUT/$1.json}")"
import json, sys
r = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
p = [x for x in r.get("processes", [r]) if x["target"]["pid"] == pid][0]
u = p["unknown"]
assert u["reason"].startswith("process %d replaced its program (exec) during the run" % pid), u
assert "arenas" in u["figures"], u
for k in ("arenas", "heaps", "sbrk", "threads"):
    assert p[k] is None, (k, p[k])
assert p["snapshots"]["end"] is None, p["snapshots"]["end"]
assert len(p["snapshots"]["attach"]["arenas"]) == 5, p["snapshots"]["attach"]
print(sys.argv[1], pid, "refused:", u["reason"])
PY
	grep -q "its figures from the tracer are REFUSED (found at [0-9.]* s): process $2 replaced its program (exec) during the run" \
		"$OUT/$1.txt" || fail "$1: the summary does not refuse: $(head -12 "$OUT/$1.txt")"
	grep -q "^FAIL .*arenas: unknown: process $2 replaced its program (exec)" "$OUT/$1.err" ||
		fail "$1: the rule did not fail on the refusal: $(cat "$OUT/$1.err")"
}

# 1. exec'd sleep, which still runs at ^C
start one 3 /bin/sleep 120
one=$pid
trace one $one "--save-stream=$OUT/one.mw --html=$OUT/one.html"
echo go >&3
exec 3>&-
wait_for /proc/$one/comm '^sleep$' 60 $one
kill -INT $mwpid
ended one 3
kill $one
wait $one 2>/dev/null
refused one $one
grep -q "none at the end: the process replaced its program (exec)" "$OUT/one.txt" ||
	fail "one: why there is no snapshot at the end: $(cat "$OUT/one.txt")"
grep -q "process $one replaced its program (exec) during the run" "$OUT/one.html" ||
	fail "one: the page does not say it"
# the saved stream replays to the same refusal
"$MW" replay --json "$OUT/replay.json" -o "$OUT/replay.txt" "$OUT/one.mw" 2>"$OUT/replay.err" ||
	fail "replay exited $?: $(cat "$OUT/replay.err")"
python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["unknown"]
assert u["reason"].startswith("process %s replaced its program (exec)" % sys.argv[2]), u
' "$OUT/replay.json" $one || fail "replay: not refused: $(head -c 2000 "$OUT/replay.json")"
echo "1: exec'd sleep: refused, exit 3, replay refused"

# 2. exec'd true, which exits: the run ends by itself
start two 3 /bin/true
two=$pid
trace two $two
echo go >&3
exec 3>&-
if grep -q "its execs cannot be counted" "$OUT/two.err"; then
	wait $mwpid
	wait $two
	echo "2: skipped: execs not counted here: $(cat "$OUT/two.err")"
else
	ended two 3
	wait $two 2>/dev/null
	refused two $two
	echo "2: exec'd a program that exited: refused, exit 3"
fi

# 3. -p A,B: A exec's, B does not
start a 3 /bin/sleep 120
a=$pid
start b 4 /bin/true
b=$pid
trace ab $a,$b
echo go >&3
exec 3>&-
wait_for /proc/$a/comm '^sleep$' 60 $a
kill -INT $mwpid
ended ab 3
kill $a
wait $a 2>/dev/null
refused ab $a
grep -q "^PASS process $b (.*): arenas 5, limit <= 8" "$OUT/ab.err" ||
	fail "ab: process $b (no exec) not judged on its figures: $(cat "$OUT/ab.err")"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
p = [x for x in r["processes"] if x["target"]["pid"] == int(sys.argv[2])][0]
assert not p.get("unknown") and p["arenas"] is not None and p["snapshots"]["end"], p
' "$OUT/ab.json" $b || fail "ab: process $b refused: $(head -c 3000 "$OUT/ab.json")"
exec 4>&-
wait $b
echo "3: -p A,B: A refused, B judged"

# 4. no exec: nothing refused
start four 3 /bin/true
four=$pid
trace four $four
kill -INT $mwpid
ended four 0
grep -q "^PASS arenas 5, limit <= 8" "$OUT/four.err" || fail "four: $(cat "$OUT/four.err")"
grep -q "REFUSED" "$OUT/four.txt" && fail "four: refused without an exec: $(cat "$OUT/four.txt")"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert not r.get("unknown") and r["snapshots"]["end"] and len(r["arenas"]) == 5, r
' "$OUT/four.json" || fail "four: JSON: $(head -c 3000 "$OUT/four.json")"
exec 3>&-
wait $four
echo "4: no exec: judged, exit 0"

# 5. snapshots alone (Debian's libc, no probes): none after the exec
L=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$L" | sed -n 's/.*Build ID: *//p')
if [ -n "$MW_ROOT" ] || readelf -n "$L" | grep -q memory_arena_new ||
	! [ -f "/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug" ]; then
	echo "5: skipped (the system libc has probes, or no libc6-dbg for it)"
	exit 0
fi
SYSTEM=1 start five 3 /bin/sleep 120
five=$pid
"$MW" -p $five --check 'arenas<=8' --json "$OUT/five.json" -o "$OUT/five.txt" 2>"$OUT/five.err" &
mwpid=$!
wait_for "$OUT/five.err" "from snapshots alone" $WAIT $mwpid
echo go >&3
exec 3>&-
wait_for /proc/$five/comm '^sleep$' 60 $five
kill -INT $mwpid
ended five 3
kill $five
wait $five 2>/dev/null
grep -q "^FAIL arenas: unknown: process $five replaced its program (exec) during the run" \
	"$OUT/five.err" || fail "five: the rule did not fail on the exec: $(cat "$OUT/five.err")"
grep -q "no snapshot at the end, nor after its exec: process $five replaced its program" \
	"$OUT/five.txt" || fail "five: the summary does not say: $(cat "$OUT/five.txt")"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["snapshots"]["end"] is None and "arenas" in r["unknown"]["figures"], r
assert all(s["arenas"] == 5 for s in r["samples"]), r["samples"]
' "$OUT/five.json" || fail "five: JSON: $(head -c 3000 "$OUT/five.json")"
echo "5: snapshots alone: none after the exec, refused, exit 3"
