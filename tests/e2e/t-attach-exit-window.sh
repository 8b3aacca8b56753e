#!/bin/sh
# -p PID (no ptrace) sees an exec also by the address space it had at the
# start being gone while the process lives (src/live/procexec.c:
# mem_gone, settle).  An exiting process has no address space from
# exit_mm until its pidfd says it exited; an exit that waits there (in
# the trixie guest: t-attach-multi under the kernel runtime, on a slow
# machine) was refused as an exec (exit 3) until main 761ca74 (an exec
# leaves the process another address space, an exit none: its maps).
# Here the kernel holds that window open for as long as the test wants:
# tests/fixtures/fuse-flush serve mounts a FUSE file system whose FLUSH
# (the close that do_exit's exit_files makes, after exit_mm) it answers
# when told; fuse-flush hold 4 FILE (4 threads, 5 arenas, on the
# probe-enabled glibc) keeps FILE, the file on it, open and exits when
# told.  It is released under `mallocwatch -p PID --check 'arenas<=8'`,
# seen in the window (the FLUSH of its pid came, /proc/PID is there, its
# maps are empty), held there 3 s (mallocwatch looks every second), then
# let go.  Expected: nothing refused, the rule passes (exit 0), the
# report that of a process that exited (no snapshot at the end).  On
# 761ca74^ it was refused: "process PID replaced its program (exec)
# during the run", exit 3.  Skips where FUSE cannot be mounted.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -z "$MW_ROOT" ] || skip "the FUSE mount is the host's, not the root's"
FIX=./build/tests/fixtures/fuse-flush
[ -x $FIX ] || exit 99
WAIT=120	# s; the kernel runtime's first run compiles its module
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=1800
MNT=$OUT/mnt
mkdir -p "$MNT" || exit 99

srv='' pid='' mwpid=''
# the daemon answers a held FLUSH and unmounts on SIGTERM (the process
# waiting in it then exits); killed, its /dev/fuse closes, which ends
# every request; the lazy unmount is for a daemon that never got to it
cleanup() {
	[ -z "$mwpid" ] || kill -INT $mwpid 2>/dev/null
	[ -z "$srv" ] || { kill $srv 2>/dev/null; wait $srv 2>/dev/null; }
	[ -z "$pid" ] || { kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; }
	[ -z "$mwpid" ] || wait $mwpid 2>/dev/null
	! grep -q " $MNT fuse" /proc/mounts || umount -l "$MNT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# the file system, its stdin (answer a FLUSH: a line; unmount: the end)
# on fd 3
rm -f "$OUT/serve.in"
mkfifo "$OUT/serve.in" || exit 99
$FIX serve "$MNT" <"$OUT/serve.in" >"$OUT/serve.out" 2>"$OUT/serve.err" &
srv=$!
exec 3>"$OUT/serve.in"
_n=2400
until grep -q '^mounted$' "$OUT/serve.out"; do
	if ! kill -0 $srv 2>/dev/null; then
		wait $srv
		rc=$?
		srv=
		[ $rc = 77 ] && skip "FUSE cannot be mounted here: $(cat "$OUT/serve.err")"
		fail "fuse-flush serve exited $rc: $(cat "$OUT/serve.err")"
	fi
	_n=$((_n - 1))
	[ $_n -gt 0 ] || fail "fuse-flush serve never mounted: $(cat "$OUT/serve.err")"
	sleep 0.05
done

# the traced program, its stdin (exit: a line) on fd 4
rm -f "$OUT/hold.in"
mkfifo "$OUT/hold.in" || exit 99
(exec 3>&-; on_glibc $FIX hold 4 "$MNT/f") <"$OUT/hold.in" >"$OUT/hold.out" 2>&1 &
pid=$!
exec 4>"$OUT/hold.in"
wait_for "$OUT/hold.out" '^ready$' 120 $pid

"$MW" -p $pid --check 'arenas<=8' --json "$OUT/run.json" -o "$OUT/run.txt" \
	2>"$OUT/run.err" 3>&- 4>&- &
mwpid=$!
wait_for "$OUT/run.err" "^mallocwatch: tracing" $WAIT $mwpid

# let it exit; it stops in the window: its close of FILE waits for the
# FLUSH's answer, after exit_mm
echo go >&4
exec 4>&-
wait_for "$OUT/serve.out" "^flush $pid\$" 60 $pid
[ -d /proc/$pid ] || fail "process $pid is gone before its FLUSH was answered"
m=$(wc -c </proc/$pid/maps) || fail "no /proc/$pid/maps"
[ "$m" = 0 ] || fail "process $pid in its FLUSH still has an address space ($m bytes of maps)"
grep -q '^State:.*[RSD]' /proc/$pid/status || fail "process $pid: $(grep State /proc/$pid/status)"
kill -0 $mwpid 2>/dev/null || fail "mallocwatch ended while the process was in its exit: $(cat "$OUT/run.err")"
# snapshot -p in the window: the process is exiting, said as such (it
# was "has no memory mappings", a false reason, seen in the trixie guest
# on a process SIGKILLed while t-snapshot read it)
"$MW" snapshot -p $pid >/dev/null 2>"$OUT/snap.err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$OUT/snap.err")" = "mallocwatch: process $pid is exiting: its address space is gone" ] ||
	fail "snapshot -p in the exit window: exit $rc: $(cat "$OUT/snap.err")"
echo "ok: snapshot -p in the window: $(cat "$OUT/snap.err")"
"$MW" snapshot -p $pid,$srv --json "$OUT/snap2.json" >/dev/null 2>"$OUT/snap2.err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$OUT/snap2.err")" = "mallocwatch: process $pid is exiting: its address space is gone" ] &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); k = [p["error"] and p["error"]["kind"] for p in d["processes"]]; assert k == ["exited", None], k' \
	"$OUT/snap2.json" || fail "snapshot -p $pid,$srv in the exit window: exit $rc: $(cat "$OUT/snap2.err")"
echo "ok: snapshot -p A,B in the window: $(cat "$OUT/snap2.err")"
# the window held 3 s: mallocwatch looks for an exec every second (this
# is what the test is about, not a wait for something to happen)
sleep 3
[ "$(wc -c </proc/$pid/maps)" = 0 ] || fail "process $pid left the window early"
echo "process $pid held 3 s with no address space, in its exit"
echo answer >&3
wait_for "$OUT/serve.out" '^answered$' 60 $srv
wait $pid
rc=$?
pid=
[ $rc = 0 ] || fail "fuse-flush hold exited $rc: $(cat "$OUT/hold.out")"

wait $mwpid
rc=$?
mwpid=
[ $rc = 0 ] || fail "mallocwatch exited $rc, expected 0: $(cat "$OUT/run.err")"
grep -q "replaced its program" "$OUT/run.err" &&
	fail "the exit was taken for an exec: $(cat "$OUT/run.err")"
grep -q "^PASS arenas 5, limit <= 8" "$OUT/run.err" || fail "the rule: $(cat "$OUT/run.err")"
grep -q "REFUSED" "$OUT/run.txt" && fail "refused without an exec: $(grep -a REFUSED "$OUT/run.txt")"
grep -q "none at the end: the process had exited" "$OUT/run.txt" ||
	fail "its exit not said: $(cat "$OUT/run.txt")"
python3 - "$OUT/run.json" <<'PY' || fail "JSON: $(head -c 3000 "$OUT/run.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert not (r.get("unknown") or {}).get("reason"), r["unknown"]
assert r["arenas"] is not None and len(r["arenas"]) == 5, r["arenas"]
assert len(r["snapshots"]["attach"]["arenas"]) == 5, r["snapshots"]["attach"]
assert r["snapshots"]["end"] is None, r["snapshots"]["end"]
assert r["target"]["exit_status_unknown"].startswith("-p without -f does not ptrace"), r["target"]
PY

# the daemon unmounts at the end of its stdin
exec 3>&-
wait $srv
rc=$?
srv=
[ $rc = 0 ] || fail "fuse-flush serve exited $rc: $(cat "$OUT/serve.err")"
grep -q " $MNT fuse" /proc/mounts && fail "$MNT still mounted"
echo "an exit held 3 s without an address space: judged (PASS arenas 5), exit 0"
