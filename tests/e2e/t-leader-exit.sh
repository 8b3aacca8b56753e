#!/bin/sh
# A process whose main thread called pthread_exit lives on in its other
# threads, but /proc/PID shows a zombie with no mappings: nobody's such
# process must not be reported to root as exited (snapshot, trim, explain
# said "process N has exited" while it ran), nor as a static binary.
# The refusal names what is so: its main thread has exited, the others run;
# and snapshot --all, which lists the processes whose maps name a glibc,
# lists it (it was left out: its maps are empty), with that reason.
# needs: root
. tests/lib/lib.sh
need_root
command -v setpriv >/dev/null || skip "no setpriv"
PY=/usr/bin/python3
[ -x $PY ] || skip "no $PY"
chmod 755 "$OUT"
cat >"$OUT/leader.py" <<'PY'
import ctypes, threading, time
keep = [bytearray(200) for _ in range(1000)]
def run():
    time.sleep(0.2)
    print("ready", flush=True)
    time.sleep(600)
threading.Thread(target=run).start()
ctypes.CDLL(None).pthread_exit(None)
PY
chmod 644 "$OUT/leader.py"
$NOBODY $PY "$OUT/leader.py" >"$OUT/ready" 2>&1 &
pid=$!
kill_at_exit pid
wait_for "$OUT/ready" '^ready' 20 $pid
wait_for /proc/$pid/status '^State:.Z' 20 $pid	# (its pthread_exit may come later under load)
grep -q '^Threads:.2' /proc/$pid/status || fail "not 2 threads: $(grep Threads /proc/$pid/status)"
want="mallocwatch: process $pid's main thread has exited while its other threads run: its memory is not read through them"
for c in "snapshot" "trim --dry-run" "explain"; do
	"$MW" $c -p $pid >"$OUT/out" 2>"$OUT/err"
	rc=$?
	[ $rc = 1 ] || fail "$c -p: exit $rc: $(cat "$OUT/err")"
	[ "$(cat "$OUT/err")" = "$want" ] || fail "$c -p: '$(cat "$OUT/err")'"
done
kill -0 $pid || fail "the process is gone"
echo "ok: snapshot, trim --dry-run and explain -p: its main thread exited, not the process"

# --all and -p A,B: listed (its maps, empty, name no glibc), unreadable,
# with that reason: not hidden, not said to have exited
"$MW" snapshot --all >"$OUT/all" 2>"$OUT/all.err" || fail "--all exited $?: $(cat "$OUT/all.err")"
grep -E "^ *$pid " "$OUT/all" >"$OUT/row" || fail "--all does not list it: $(cat "$OUT/all")"
grep -qF "(unreadable: process $pid's main thread has exited while its other threads run" \
	"$OUT/row" || fail "--all: $(cat "$OUT/row")"
"$MW" snapshot -p $pid,$$ >"$OUT/two" 2>&1
grep -qF "process $pid's main thread has exited while its other threads run" "$OUT/two" ||
	fail "-p $pid,$$: $(cat "$OUT/two")"
echo "ok: --all and -p A,B list it, unreadable, for that reason"
