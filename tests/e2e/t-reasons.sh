#!/bin/sh
# A refusal names what happened (issue 44.5), on Debian's own libc
# (libc6-dbg gives the layouts); each case is deterministic, on any load:
#  - a thread arena locked for good while no thread is in malloc
#    (fixtures/locked-arena): "locked while no thread is inside malloc's
#    code", not "a thread is inside malloc or free";
#  - an idle process (threads in futex_wait, read) read stopped is never
#    refused;
#  - a process gdb holds: trim and snapshot --leave-stopped need it
#    stopped and say who holds it, with no empty field (": ;").
# needs: root
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures/locked-arena
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
[ -f "$dbg" ] || skip "no libc6-dbg for Debian's libc ($dbg)"
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done' EXIT

$FIX >"$OUT/locked.out" &
pid=$!
pids="$pids $pid"
wait_for "$OUT/locked.out" READY 30
# (stops as long as a loaded machine needs: the reason is the test's)
"$MW" snapshot -p $pid --max-stop 2000 --max-stopped 5000 >"$OUT/locked.txt" 2>"$OUT/locked.err"
rc=$?
[ $rc = 1 ] || fail "a locked arena: exit $rc: $(cat "$OUT/locked.err")"
grep -q "^mallocwatch: process $pid: no consistent snapshot (.*): arena 0x[0-9a-f]* is locked while no thread is inside malloc's code (left held: the process is deadlocked or its memory corrupt)$" \
	"$OUT/locked.err" || fail "a locked arena: $(cat "$OUT/locked.err")"
echo "ok: $(cat "$OUT/locked.err")"

# an idle process (its threads in futex_wait and read: none in malloc's
# code) read stopped: never refused, however long the stop took to come
# on a loaded machine (past the settling budget the threads are still
# looked at, once)
MI=build/tests/fixtures/mallinfo-hold
mkfifo "$OUT/idle.in"
$MI <"$OUT/idle.in" >"$OUT/idle.out" &
ipid=$!
pids="$pids $ipid"
exec 4>"$OUT/idle.in"
wait_for "$OUT/idle.out" READY 30
for r in 1 2 3 4 5 6 7 8; do
	"$MW" snapshot --leave-stopped -p $ipid -o /dev/null 2>"$OUT/idle.err" ||
		fail "idle, round $r: refused: $(cat "$OUT/idle.err")"
	kill -CONT $ipid
done
exec 4>&-
wait $ipid
echo "ok: an idle process read stopped 8 times, never refused"

# gdb holds a process (it waits in `shell sleep`, attached)
command -v gdb >/dev/null || skip "gdb is not installed"
sleep 60 &
spid=$!
pids="$pids $spid"
gdb -q -nx -p $spid -batch -ex 'shell sleep 30' >/dev/null 2>&1 &
gpid=$!
pids="$gpid $pids"
wait_for /proc/$spid/status '^TracerPid:[[:space:]]*[1-9]' 30
for cmd in "trim -p $spid" "snapshot --leave-stopped -p $spid"; do
	"$MW" $cmd >"$OUT/gdb.txt" 2>"$OUT/gdb.err"
	rc=$?
	[ $rc = 1 ] || fail "$cmd under gdb: exit $rc: $(cat "$OUT/gdb.err")"
	grep -q ': ;\|: $' "$OUT/gdb.err" && fail "$cmd under gdb: an empty field: $(cat "$OUT/gdb.err")"
	grep -q "^mallocwatch: process $spid: no snapshot: it must be read stopped; not stopped: process $spid is traced by process [0-9]* (gdb)" \
		"$OUT/gdb.err" || fail "$cmd under gdb: $(cat "$OUT/gdb.err")"
	echo "ok: $(cat "$OUT/gdb.err")"
done
echo "ok: refusals say what happened"
