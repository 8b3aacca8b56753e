#!/bin/sh
# -p A,B without -f, and A's pid given to a stranger that execs in it
# while the run goes on for B (tests/fixtures/pid-reuse, run as nobody,
# forks until a child gets A's pid, and that child execs /bin/true).
# An exec is counted per task of A's (src/live/procexec.c: the kernel's
# sched_process_exec event opened on each of A's threads, inherited by
# the threads they make), so another process's exec is never A's:
# 1. A (tests/fixtures/exec-later, 5 arenas) exits without an exec, then
#    nobody takes its pid and execs: A keeps its figures up to its exit,
#    like any process that exits during a -p run: not refused, its
#    rule judged (PASS), exit 0.  Before, the event was counted for A's
#    pid on every CPU and A was refused "... or exited and a process
#    given its pid since did": any local user could have root's report
#    of a process that exited during the run refused (this fails there).
# 2. A execs /bin/true, which exits, then nobody takes its pid and
#    execs: A did exec, and is refused for it (exit 3), also with its
#    pid reused after.
# In both, B (no exec) is judged on its figures.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=$PWD/build/tests/fixtures/pid-reuse
LATER=./build/tests/fixtures/exec-later
[ -x $FIX ] && [ -x "${MW_ROOT:-.}/$LATER" ] || skip "no $FIX or $LATER (make check-build builds them)"
WAIT=120	# s; the kernel runtime's first run compiles its module
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=1800
a= b= mwpid=
trap 'for p in $a $b $mwpid; do kill $p 2>/dev/null; done' EXIT

# run NAME WHAT: A held on the FIFO $OUT/NAME.in (fd 3) until told to exec
# /bin/true (WHAT exec) or killed (WHAT exit); B a sleep; mallocwatch -p
# A,B; A ends so, nobody takes its pid and execs; then ^C.  Sets a, b, rc.
run() {
	rm -f "$OUT/$1.in"
	mkfifo "$OUT/$1.in" || exit 99
	(exec 3>&-; on_glibc $LATER 4 /bin/true) <"$OUT/$1.in" >"$OUT/$1.a" 2>&1 &
	a=$!
	exec 3>"$OUT/$1.in"
	wait_for "$OUT/$1.a" '^ready$' 120 $a
	(exec 3>&-; on_glibc /bin/sleep 1000) &
	b=$!
	# B runs the probe-enabled glibc's sleep (in clock_nanosleep, 230), not
	# the subshell before its exec, nor the loader
	wait_held $b 30 230
	"$MW" -p $a,$b --check 'arenas<=8' --json "$OUT/$1.json" -o "$OUT/$1.txt" \
		2>"$OUT/$1.err" &
	mwpid=$!
	wait_for "$OUT/$1.err" "^mallocwatch: tracing" $WAIT $mwpid
	grep -q "its execs cannot be counted" "$OUT/$1.err" &&
		skip "execs not counted here: $(cat "$OUT/$1.err")"
	if [ $2 = exec ]; then
		echo go >&3
		exec 3>&-
		wait $a
		_st=$?
		[ $_st = 0 ] || fail "$1: A did not exec /bin/true (exit $_st): $(cat "$OUT/$1.a")"
	else
		exec 3>&-
		kill $a
		wait $a 2>/dev/null
	fi
	# A is reaped (by this shell): its pid is free for nobody's process
	$NOBODY $FIX $a /bin/true >"$OUT/$1.reuse" 2>&1 ||
		skip "pid $a not given to nobody's process: $(cat "$OUT/$1.reuse")"
	cat "$OUT/$1.reuse"
	kill -INT $mwpid
	wait $mwpid
	rc=$?
	mwpid=
	kill $b
	wait $b 2>/dev/null
}
# b_judged NAME: B is not refused, and its rule was judged on its figures
b_judged() {
	grep -q "^PASS process $b (.*): arenas 1, limit <= 8" "$OUT/$1.err" ||
		fail "$1: process $b (no exec) not judged on its figures: $(cat "$OUT/$1.err")"
}

# 1. A exits, its pid reused by an exec: A's figures up to its exit
run exit exit
[ $rc = 0 ] || fail "exit: mallocwatch exited $rc, expected 0: $(cat "$OUT/exit.err")"
python3 - "$OUT/exit.json" $a $b <<'PY' || fail "exit: JSON: $(head -c 3000 "$OUT/exit.json")"
import json, sys
r = json.load(open(sys.argv[1]))
a, b = int(sys.argv[2]), int(sys.argv[3])
p = {x["target"]["pid"]: x for x in r["processes"]}
for pid in (a, b):
    assert not (p[pid].get("unknown") or {}).get("reason"), (pid, p[pid]["unknown"])
    assert p[pid]["arenas"] is not None, (pid, p[pid])
assert len(p[a]["snapshots"]["attach"]["arenas"]) == 5, p[a]["snapshots"]["attach"]
# as any process that exits during the run: no snapshot at the end
assert p[a]["snapshots"]["end"] is None, p[a]["snapshots"]["end"]
assert p[a]["target"]["exit_status_unknown"].startswith("-p without -f does not ptrace"), p[a]["target"]
print("A: not refused, its figures up to its exit; B: not refused")
PY
grep -q "none at the end: the process had exited" "$OUT/exit.txt" ||
	fail "exit: A's exit not said: $(cat "$OUT/exit.txt")"
grep -q "REFUSED" "$OUT/exit.txt" && fail "exit: refused without an exec: $(grep -a REFUSED "$OUT/exit.txt")"
grep -q "^PASS process $a (.*): arenas 5, limit <= 8" "$OUT/exit.err" ||
	fail "exit: process $a (exited, no exec) not judged on its figures: $(cat "$OUT/exit.err")"
b_judged exit
echo "1: A exited, its pid reused by an exec: A's figures kept, exit 0"

# 2. A execs a program that exits, its pid then reused by an exec
run exec exec
[ $rc = 3 ] || fail "exec: mallocwatch exited $rc, expected 3: $(cat "$OUT/exec.err")"
python3 - "$OUT/exec.json" $a <<'PY' || fail "exec: JSON: $(head -c 3000 "$OUT/exec.json")"
import json, sys
r = json.load(open(sys.argv[1]))
a = int(sys.argv[2])
p = {x["target"]["pid"]: x for x in r["processes"]}
why = p[a]["unknown"]["reason"]
print("A:", why)
assert why.startswith("process %d replaced its program (exec) during the run" % a), why
assert p[a]["arenas"] is None
PY
grep -q "REFUSED (found at [0-9.]* s): process $a replaced its program (exec) during the run" \
	"$OUT/exec.txt" || fail "exec: text: $(grep -a REFUSED "$OUT/exec.txt")"
grep -q "^FAIL .*arenas: unknown: process $a replaced its program (exec)" \
	"$OUT/exec.err" || fail "exec: the rule did not fail on the exec: $(cat "$OUT/exec.err")"
b_judged exec
echo "2: A exec'd and exited, its pid reused by an exec: A refused, exit 3"
