#!/bin/sh
# mallocwatch release PID: a -f run lets go of one process of its tree on
# request (src/tracer/release.c, ptrace_tree.c mw_ptree_let_go), so that
# gdb -p can attach to it while the run goes on.  Under -f -c
# tests/fixtures/release-tree (a parent, child A to release, child B;
# A forks a grandchild G only after it is released):
# 1. before: gdb -p A fails (A is under the run's ptrace).
# 2. refused, nothing changed (A still traced): a release as nobody
#    (setpriv) of a root run's process; nobody cannot even connect to
#    the run's socket (root's 0700 /run/mallocwatch/release; the run
#    would check SO_PEERCRED and answer nothing); a request that is not
#    one; the run's own program; a pid that is not
#    traced, or traced by another tracer (python3's PTRACE_SEIZE) or by
#    a run without -f.
# 3. A stopped (SIGSTOP) when released stays stopped, untraced.
# 4. released: exit 0, TracerPid 0, gdb -p A -batch attaches and
#    detaches while the run goes on.
# 5. the report: A's section says released and has no exit status, exit
#    snapshot nor ledger at exit (text and JSON); the tree says "rel"; G
#    (forked after the release) is not in it, nor A's thread started after
#    it (A left the tracer's set); the parent's and B's
#    figures equal their own malloc_info() exactly.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
RT=build/tests/fixtures/release-tree
[ -x $RT ] || skip "no $RT (make check-build builds it)"
command -v gdb >/dev/null || skip "no gdb"
command -v setpriv >/dev/null || skip "no setpriv"

D=$OUT/d
mkdir -p "$D" && chmod 755 "$OUT" "$D" || exit 99
"$MW" -f --json "$OUT/r.json" -o "$OUT/r.txt" -c $RT "$D" 2>"$OUT/r.err" &
mwpid=$!
finish() { touch "$D/go"; wait $mwpid; }
for i in $(seq 600); do
	[ -s "$D/a.pid" ] && [ -s "$D/b.pid" ] && break
	kill -0 $mwpid 2>/dev/null || fail "the run ended early: $(cat "$OUT/r.err")"
	sleep 0.1
done
[ -s "$D/a.pid" ] && [ -s "$D/b.pid" ] || { finish; fail "the tree did not start in 60 s"; }
A=$(cat "$D/a.pid") B=$(cat "$D/b.pid")
tracer_of() { awk '$1 == "TracerPid:" { print $2 }' "/proc/$1/status"; }
RUN=$(tracer_of "$A")
[ -n "$RUN" ] && [ "$RUN" != 0 ] || { finish; fail "A ($A) is not traced"; }
ROOT=$(awk '$1 == "PPid:" { print $2 }' "/proc/$A/status")
still() {	# WHAT: A is still the run's
	[ "$(tracer_of "$A")" = "$RUN" ] || { finish; fail "$1: A's tracer is now $(tracer_of "$A")"; }
}

# 1. gdb cannot attach meanwhile
gdb -nx -batch -p "$A" >"$OUT/gdb0.txt" 2>&1
grep -q "ptrace: Operation not permitted" "$OUT/gdb0.txt" || { finish; fail "gdb -p A before the release: $(cat "$OUT/gdb0.txt")"; }

# 2. refusals
$NOBODY "$MW" release "$A" >"$OUT/nobody.out" 2>"$OUT/nobody.err" && { finish; fail "nobody released A"; }
grep -q "^mallocwatch: process $A is traced by process $RUN (mallocwatch) of uid 0: only root or that user may release it$" \
	"$OUT/nobody.err" || { finish; fail "nobody's refusal: $(cat "$OUT/nobody.err")"; }
still "a release as nobody"
# asked directly, past the command's check: nobody cannot reach the socket
SOCK=/run/mallocwatch/release/$(stat -L -c %i "/proc/$RUN/ns/pid").$RUN/socket
[ -S "$SOCK" ] || { finish; fail "no socket $SOCK"; }
cat >"$OUT/ask.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    sys.exit("cannot connect: " + os.strerror(e.errno))
s.settimeout(5)
try:
    s.sendall(sys.argv[2].encode() + b"\n")
    got = s.recv(512)
except (ConnectionResetError, BrokenPipeError):	# closed, the request unread
    got = b""
print(got.decode(errors="replace").strip() or "(nothing)")
PY
$NOBODY /usr/bin/python3 "$OUT/ask.py" "$SOCK" "release $A" >"$OUT/hostile.out" 2>&1
[ "$(cat "$OUT/hostile.out")" = "cannot connect: Permission denied" ] ||
	{ finish; fail "nobody on the socket: $(cat "$OUT/hostile.out")"; }
still "a request of nobody's on the run's socket"
for req in "release" "release x$A" "release ${A}0000000000" "stop $A" "release $A extra"; do
	/usr/bin/python3 "$OUT/ask.py" "$SOCK" "$req" >"$OUT/bad.out" 2>&1
	case $(cat "$OUT/bad.out") in
	"no "*) ;;
	*) finish; fail "request '$req': $(cat "$OUT/bad.out")" ;;
	esac
	still "request '$req'"
done
"$MW" release "$ROOT" >"$OUT/root.out" 2>"$OUT/root.err" && { finish; fail "the run's program was released"; }
grep -q "^mallocwatch: run $RUN did not release process $ROOT: process $ROOT is the run's program" "$OUT/root.err" ||
	{ finish; fail "the program's refusal: $(cat "$OUT/root.err")"; }
[ "$(tracer_of "$ROOT")" = "$RUN" ] || { finish; fail "the program is no longer traced"; }
"$MW" release $$ 2>"$OUT/self.err" && { finish; fail "released an untraced process"; }
grep -q "^mallocwatch: process $$ is not traced$" "$OUT/self.err" || { finish; fail "untraced: $(cat "$OUT/self.err")"; }
"$MW" release 0 2>"$OUT/zero.err"
[ $? = 2 ] || { finish; fail "release 0 is not a usage error"; }
# a process another tracer holds
sleep 60 &
sl=$!
/usr/bin/python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:	# PTRACE_SEIZE
    sys.exit("seize: %s" % os.strerror(ctypes.get_errno()))
print("held", flush=True)
time.sleep(30)' $sl >"$OUT/holder.out" 2>&1 &
holder=$!
for i in $(seq 100); do [ -s "$OUT/holder.out" ] && break; sleep 0.1; done
"$MW" release $sl 2>"$OUT/other.err" && { kill $holder $sl; finish; fail "released another tracer's process"; }
kill $holder $sl
wait $holder $sl 2>/dev/null
grep -q "^mallocwatch: process $sl is traced by process $holder (python3), not by a mallocwatch -f run$" \
	"$OUT/other.err" || { finish; fail "another tracer's: $(cat "$OUT/other.err")"; }

# a run without -f, whose program it holds for its exit stop alone
"$MW" -q -o /dev/null -c sleep 60 2>/dev/null &
nof=$!
for i in $(seq 300); do
	sl=$(pgrep -x sleep -P $nof) && [ "$(tracer_of "$sl")" = $nof ] && break
	sleep 0.1
done
"$MW" release "$sl" 2>"$OUT/nof.err" && { kill $sl; finish; fail "a run without -f released"; }
kill $sl
wait $nof
grep -q "^mallocwatch: process $sl is traced by process $nof (mallocwatch), not by a mallocwatch -f run$" \
	"$OUT/nof.err" || { finish; fail "without -f: $(cat "$OUT/nof.err")"; }

# 3. stopped when released: stays stopped
kill -STOP "$A"
for i in $(seq 100); do
	case $(awk '$1 == "State:" { print $2 }' "/proc/$A/status") in [tT]) break ;; esac
	sleep 0.05
done
# 4. released
"$MW" release "$A" >"$OUT/rel.out" 2>"$OUT/rel.err" || { finish; fail "release exited $?: $(cat "$OUT/rel.err")"; }
grep -q "^process $A released by the mallocwatch run $RUN" "$OUT/rel.out" || { finish; fail "release said: $(cat "$OUT/rel.out")"; }
[ "$(tracer_of "$A")" = 0 ] || { finish; fail "A still traced by $(tracer_of "$A")"; }
state=$(awk '$1 == "State:" { print $2 $3 }' "/proc/$A/status")
[ "$state" = "T(stopped)" ] || { finish; fail "A stopped before its release is now '$state'"; }
kill -CONT "$A"
[ "$(tracer_of "$B")" = "$RUN" ] || { finish; fail "B was let go too"; }
gdb -nx -batch -p "$A" >"$OUT/gdb1.txt" 2>&1 || { finish; fail "gdb -p A exited $?: $(cat "$OUT/gdb1.txt")"; }
grep -q "process $A) detached" "$OUT/gdb1.txt" || { finish; fail "gdb -p A after the release: $(cat "$OUT/gdb1.txt")"; }
kill -0 $mwpid || fail "the run ended with the release"
"$MW" release "$A" 2>"$OUT/again.err" && { finish; fail "released twice"; }
grep -q "^mallocwatch: process $A is not traced$" "$OUT/again.err" || { finish; fail "twice: $(cat "$OUT/again.err")"; }

# 5. the run goes on to its end; A forks G now
finish
st=$?
[ $st = 0 ] || fail "the run exited $st: $(cat "$OUT/r.err")"
grep -q "^mallocwatch: process $A released by request (mallocwatch release)" "$OUT/r.err" || fail "no note of the release"
G=$(cat "$D/g.pid")
python3 - "$OUT/r.json" "$OUT" "$A" "$B" "$G" <<'PY' || fail "the report's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
a, b, g = (int(x) for x in sys.argv[3:6])
ps = {p["target"]["pid"]: p for p in r["processes"]}
assert g not in ps, "the grandchild forked after the release is in the report"
assert set(ps) == {r["target"]["pid"], a, b}, sorted(ps)
pa = ps[a]
assert pa["released"]["why"].startswith("released "), pa.get("released")
assert 0 <= pa["released"]["after_s"] < 120, pa["released"]
assert pa["target"]["exit_status"] is None, pa["target"]
assert "released" in pa["target"]["exit_status_unknown"], pa["target"]
assert not (pa.get("snapshots") or {}).get("exit"), pa.get("snapshots")
assert not (pa.get("snapshots") or {}).get("end"), pa.get("snapshots")
assert "ledger" not in pa or pa["ledger"] is None, pa.get("ledger")
# its thread after the release took an arena from the free list: not seen
assert not pa["threads"] and pa["events"]["total"] == 0, (pa["threads"], pa["events"])
for p in (r["processes"][0], ps[b]):
    assert "released" not in p, p["target"]
    assert p["target"]["exit_status"] == 0, p["target"]
    assert p["snapshots"]["exit"], p["target"]
    assert p["events"]["complete"] and p["events"]["lost"] == 0, p["events"]
json.dump(r["processes"][0], open(sys.argv[2] + "/parent.json", "w"))
json.dump(ps[b], open(sys.argv[2] + "/b.json", "w"))
PY
grep -q "^ *$A  *[0-9]*  *rel  " "$OUT/r.txt" || fail "the tree does not say A was released"
grep -q "exit status unknown: released [0-9.]* s into the run by request (mallocwatch release)" "$OUT/r.txt" ||
	fail "A's section does not say it was released"
grep -A2 "(pid $A)\$" "$OUT/r.txt" | grep -q "exit status unknown: released" || fail "A's head"
grep -q "^ *$G " "$OUT/r.txt" && fail "G in the tree"
for who in parent b; do
	expect_malloc_info "$D/$who.xml" "$OUT/$who.json" "$OUT/$who" "$who"
done
[ -e "$(dirname "$SOCK")" ] && fail "the run left its release socket: $(ls -la "$(dirname "$SOCK")")"
echo "released $A (stopped, left stopped), gdb attached after; G $G not followed; refusals: nobody, its socket, bad requests, the program, untraced, another tracer's, a run without -f"
