#!/bin/sh
# -p A,B without -f: process A exits, and nobody is then given A's pid
# (tests/fixtures/pid-reuse forks until a child gets it) and execs
# /bin/true in it while the run goes on for B.  The kernel's
# sched_process_exec event, counted for A's pid (src/live/procexec.c),
# counts that stranger's exec: A's figures are refused (never shown
# wrong), but A never exec'd, so its reason must not say it did alone:
# "... during the run, or exited and a process given its pid since did
# ...".  Before, it said "process A replaced its program (exec) during
# the run": a local user could make root's report of any process that
# exited during the run say it exec'd (this fails).  B is not refused.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=$PWD/build/tests/fixtures/pid-reuse
[ -x $FIX ] || skip "no $FIX (make check-build builds it)"
WAIT=120	# s; the kernel runtime's first run compiles its module
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=1800
a= b= mwpid=
trap 'for p in $a $b $mwpid; do kill $p 2>/dev/null; done' EXIT

(on_glibc /bin/sleep 1000) &
a=$!
(on_glibc /bin/sleep 1000) &
b=$!
# each runs the probe-enabled glibc's sleep, not the subshell before its exec
wait_for /proc/$a/maps "$GLIBC_PREFIX/lib/libc" 30 $a
wait_for /proc/$b/maps "$GLIBC_PREFIX/lib/libc" 30 $b
"$MW" -p $a,$b --json "$OUT/run.json" -o "$OUT/run.txt" 2>"$OUT/run.err" &
mwpid=$!
wait_for "$OUT/run.err" "^mallocwatch: tracing" $WAIT $mwpid
kill $a
wait $a
$NOBODY $FIX $a /bin/true >"$OUT/reuse.out" 2>&1 ||
	skip "pid $a not given to nobody's process: $(cat "$OUT/reuse.out")"
cat "$OUT/reuse.out"
sleep 2	# a sample tick
kill -INT $mwpid
wait $mwpid
rc=$?
mwpid=
[ $rc = 0 ] || fail "mallocwatch exited $rc: $(cat "$OUT/run.err")"
python3 - "$OUT/run.json" $a $b <<'PY' || fail "JSON: $(head -c 3000 "$OUT/run.json")"
import json, sys
r = json.load(open(sys.argv[1]))
a, b = int(sys.argv[2]), int(sys.argv[3])
p = {x["target"]["pid"]: x for x in r["processes"]}
why = p[a]["unknown"]["reason"]
print("A:", why)
assert why.startswith("process %d replaced its program (exec) during the run, or exited and "
                      "a process given its pid since did" % a), why
assert p[a]["arenas"] is None
assert not (p[b].get("unknown") or {}).get("reason"), p[b]["unknown"]
PY
grep -q "REFUSED (found at [0-9.]* s): process $a replaced its program (exec) during the run, or exited" \
	"$OUT/run.txt" || fail "text: $(grep -a REFUSED "$OUT/run.txt")"
kill $b
echo "ok: A refused, its reason says which exec cannot be told; B not refused"
