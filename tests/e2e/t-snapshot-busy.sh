#!/bin/sh
# `mallocwatch snapshot -p` of a process whose 8 threads malloc and free
# without pause (tests/fixtures/busy-alloc), under the probe-enabled glibc
# and Debian's own libc (libc6-dbg): every snapshot is exact or refused
# (exit 1, one line), never figures that cannot be.
#
# exact: 20 times `snapshot --leave-stopped` of the running process:
#   mallocwatch stops it, lets the threads inside malloc finish what they
#   do, reads it, and leaves it stopped (SIGSTOP) right there; then gdb
#   (scheduler-locking on: only the thread it calls in runs) checks every
#   arena's mutex, list_lock and free_list_lock, which must be free, and
#   calls the fixture's mw_dump(): malloc_info(0) to a file opened before,
#   allocating nothing - the allocator at the moment mallocwatch read.
#   Each round exact, or refused with the process let run; one exact at
#   least.
# sigstop: 5 rounds of a process someone SIGSTOPped: never let run, left
#   stopped, exact or refused (a thread stopped inside malloc holds a lock).
# running: 20 snapshots of the running process: each exit 0 with every
#   arena (9, as glibc counts) and free <= system per arena, the stop
#   stated, or refused in one line; realtime signals sent meanwhile all
#   arrive (none lost at a detach); the process runs on afterwards.
# --no-stop: never stopped; consistent or refused ("0 stops").
# traced by strace: not stopped; a refusal names the tracer.
# -p on Debian's libc (snapshots only): no arena "gone", no INCONSISTENT
#   (or, on a loaded machine, its first snapshot refused within the stop
#   bounds, and said so).
# What is asserted holds under any CPU load (stress-ng beside it).
# needs: root slow
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures/busy-alloc
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
command -v gdb >/dev/null || skip "gdb is not installed"
need_gdb_call	# its ground truth is malloc_info() called by gdb
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
pid=
trap '[ -z "$pid" ] || { kill -CONT $pid; kill $pid; } 2>/dev/null' EXIT

cat >"$OUT/locks.py" <<'EOF'
import gdb, os
gdb.execute("set scheduler-locking on")
# gdb attached to a job-stopped process sees a SIGSTOP of its own
# making again when it runs the call: not the process's to take
gdb.execute("handle SIGSTOP nostop noprint nopass")
def v(e): return int(gdb.parse_and_eval(e))
held, ma = [], v("(unsigned long)&main_arena")
a = ma
while True:
    if v("((struct malloc_state *)%d)->mutex" % a): held.append("arena 0x%x" % a)
    a = v("(unsigned long)((struct malloc_state *)%d)->next" % a)
    if a in (ma, 0): break
held += [l for l in ("list_lock", "free_list_lock") if v(l)]
if held:
    print("LOCKED " + " ".join(held))
else:
    gdb.execute("call ((void (*)(void))%s)()" % os.environ["MW_DUMP"])
    print("CLEAN")
EOF

# busy NAME [system]: start the fixture, return once its threads run
busy() {
	rm -f "$OUT/$1.in" "$OUT/$1.xml"
	mkfifo "$OUT/$1.in"
	if [ "${2:-}" = system ]; then
		$FIX 8 "$OUT/$1.xml" <"$OUT/$1.in" >"$OUT/$1.out" 2>&1 &
	else
		"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" \
			$FIX 8 "$OUT/$1.xml" <"$OUT/$1.in" >"$OUT/$1.out" 2>&1 &
	fi
	pid=$!
	exec 3>"$OUT/$1.in"
	wait_for "$OUT/$1.out" READY 30
}
# all_stopped: every thread of $pid in a job-control stop
all_stopped() {
	for t in /proc/$pid/task/*; do
		grep -q '^State:.*T (stopped)' $t/status || return 1
	done
}
# refused FILE.err RC: exit 1 and one line saying why: no consistent
# snapshot, or (a loaded machine) not read within --read-timeout, or a
# thread that did not stop in time
refused() {
	[ "$2" = 1 ] && [ "$(wc -l <"$1")" = 1 ] &&
		grep -q "^mallocwatch: process $pid[:'].*no \(consistent \)\{0,1\}snapshot" "$1"
}

# all_running: no thread of $pid in a job-control stop
all_running() {
	for t in /proc/$pid/task/*; do
		grep -q '^State:.*T (stopped)' $t/status && return 1
	done
	return 0
}
# until_holds COND: until COND holds, 2 s at most (a thread let go by
# ptrace reaches its job-control stop in the kernel a moment later,
# running no code of its own meanwhile)
until_holds() {
	i=0
	until $1; do i=$((i + 1)); [ $i -lt 200 ] || return 1; sleep 0.01; done
}

# exact NAME: --leave-stopped reads the running process stopped and
# leaves it stopped there; gdb then finds no lock held and malloc_info
# equals the snapshot, or mallocwatch refused and let it run.  At least
# one round of 20 must be exact (the reads are what is tested).
exact_rounds() {	# NAME
	n_exact=0 n_refused=0 ms=
	MW_DUMP=$(sed -n 's/^READY //p' "$OUT/$1.out")
	export MW_DUMP
	for r in $(seq 20); do
		f=$OUT/$1-still-$r
		# what is tested is exactness: stops as long as a loaded
		# machine needs (t-stop-bounds tests the bounds)
		"$MW" snapshot -p $pid --leave-stopped --max-stop 500 --max-stopped 1000 \
			--json $f.json -o $f.txt 2>$f.err
		rc=$?
		if refused $f.err $rc; then
			until_holds all_running || fail "$1 round $r: refused, but left stopped"
			n_refused=$((n_refused + 1))
			continue
		fi
		[ $rc = 0 ] || fail "$1 round $r: exit $rc: $(cat $f.err)"
		until_holds all_stopped || fail "$1 round $r: --leave-stopped, but the process runs"
		gdb -p $pid -batch -nx -x "$OUT/locks.py" >$f.gdb 2>&1
		kill -CONT $pid
		g=$(grep -E '^(LOCKED|CLEAN)' $f.gdb) || { cat $f.gdb; exit 99; }
		[ "$g" = CLEAN ] || fail "$1 round $r: a consistent snapshot, but gdb: $g"
		expect_snapshot "$OUT/$1.xml" $f.json $f
		ms="$ms $(grep -o 'stopped for [0-9.]* ms' $f.txt | cut -d' ' -f3)"
		n_exact=$((n_exact + 1))
	done
	[ $n_exact -gt 0 ] || fail "$1: 20 of 20 refused: $(cat $f.err)"
	echo "ok: $1, --leave-stopped: $n_exact exact, $n_refused refused of 20; stopped ms:$ms"
}

# sigstop NAME: a process in a job-control stop is read, not let run, and
# left stopped; exact or refused (a thread stopped inside malloc holds
# its arena's lock: no walk can be consistent then)
sigstop_rounds() {	# NAME
	n_exact=0 n_refused=0
	for r in 1 2 3 4 5; do
		f=$OUT/$1-sigstop-$r
		kill -STOP $pid
		until_holds all_stopped || fail "not stopped"
		"$MW" snapshot -p $pid --json $f.json -o $f.txt 2>$f.err
		rc=$?
		until_holds all_stopped || fail "$1 sigstop $r: the process runs after mallocwatch (it was SIGSTOPped)"
		gdb -p $pid -batch -nx -x "$OUT/locks.py" >$f.gdb 2>&1
		kill -CONT $pid
		g=$(grep -E '^(LOCKED|CLEAN)' $f.gdb) || { cat $f.gdb; exit 99; }
		if refused $f.err $rc; then
			n_refused=$((n_refused + 1))
		elif [ $rc = 0 ] && [ "$g" = CLEAN ]; then
			expect_snapshot "$OUT/$1.xml" $f.json $f
			n_exact=$((n_exact + 1))
		else
			fail "$1 sigstop $r: exit $rc, gdb: $g: $(cat $f.err)"
		fi
	done
	echo "ok: $1, stopped by SIGSTOP: $n_exact exact, $n_refused refused of 5"
}

running_rounds() {	# NAME
	n_ok=0 n_refused=0 sent=0 ms=
	for r in $(seq 20); do
		f=$OUT/$1-run-$r
		"$MW" snapshot -p $pid --json $f.json -o $f.txt 2>$f.err &
		mw=$!
		for k in 1 2 3 4 5; do kill -s RTMIN $pid && sent=$((sent + 1)); sleep 0.01; done
		wait $mw
		rc=$?
		if refused $f.err $rc; then
			n_refused=$((n_refused + 1))
			continue
		fi
		[ $rc = 0 ] || fail "$1 run $r: exit $rc: $(cat $f.err)"
		python3 - $f.json <<'PY' || fail "$1 run $r: impossible figures in $f.json"
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
assert s["consistent"] and len(s["arenas"]) == s["narenas"] == 9, (len(s["arenas"]), s["narenas"])
for a in s["arenas"]:
    assert a["free_bytes"] + a["in_use_bytes"] == a["system_bytes"], a
assert s["totals"]["free_bytes"] <= s["totals"]["system_bytes"], s["totals"]
PY
		if grep -q '"stops": 0,' $f.json; then
			grep -q ' while it ran$' $f.txt || fail "$1 run $r: $(head -n 1 $f.txt)"
		else
			grep -q 'the process was stopped for [0-9.]* ms' $f.txt || fail "$1 run $r: $(head -n 1 $f.txt)"
			ms="$ms $(grep -o 'stopped for [0-9.]* ms ([0-9]* stops*)' $f.txt | cut -d' ' -f3,5)"
		fi
		n_ok=$((n_ok + 1))
	done
	grep -q '^State:.*[RS] ' /proc/$pid/status || fail "$1: the process does not run after the snapshots"
	echo "ok: $1, running: $n_ok consistent, $n_refused refused of 20; stopped ms (stops):$ms"
}

signals_kept() {	# NAME: every realtime signal arrived
	exec 3>&-
	wait $pid
	pid=
	got=$(sed -n 's/^signals //p' "$OUT/$1.out")
	[ "$got" = "$sent" ] || fail "$1: $sent signals sent, $got received"
	echo "ok: $1: all $sent signals sent during the snapshots arrived"
}

nostop() {	# NAME
	for r in 1 2 3 4 5; do
		"$MW" snapshot -p $pid --no-stop --json $OUT/$1-ns.json -o $OUT/$1-ns.txt 2>$OUT/$1-ns.err
		rc=$?
		if [ $rc = 0 ]; then
			grep -q '"stops": 0,' $OUT/$1-ns.json || fail "--no-stop stopped it"
		else
			refused $OUT/$1-ns.err $rc && grep -q '(3 reads, 0 stops in 0.0 ms): ' $OUT/$1-ns.err ||
				fail "--no-stop: exit $rc: $(cat $OUT/$1-ns.err)"
		fi
	done
	echo "ok: $1, --no-stop: $(cat $OUT/$1-ns.err) "
}

traced() {	# NAME: strace holds the leader
	command -v strace >/dev/null || return 0
	strace -p $pid -o /dev/null 2>/dev/null &
	st=$!
	until grep -q "^TracerPid:[[:space:]]*$st\$" /proc/$pid/status; do sleep 0.02; done
	"$MW" snapshot -p $pid -o /dev/null 2>$OUT/$1-traced.err
	rc=$?
	kill $st; wait $st
	[ $rc = 0 ] || { refused $OUT/$1-traced.err $rc &&
		grep -q "not stopped: process $pid is traced by process $st (strace)" $OUT/$1-traced.err; } ||
		fail "traced: exit $rc: $(cat $OUT/$1-traced.err)"
	echo "ok: $1, traced by strace: exit $rc $(cat $OUT/$1-traced.err)"
}

for libc in probes system; do
	if [ $libc = probes ]; then
		[ -f "$GLIBC_PREFIX/lib/libc.so.6" ] || { echo "note: no probe-enabled glibc"; continue; }
		busy $libc
	else
		[ -f "$dbg" ] || { echo "note: libc6-dbg is not installed; Debian's libc not checked"; continue; }
		busy $libc system
	fi
	exact_rounds $libc
	sigstop_rounds $libc
	running_rounds $libc
	nostop $libc
	traced $libc
	if [ $libc = system ]; then
		"$MW" -p $pid --interval 0.2 --duration 3 -o $OUT/watch.txt 2>$OUT/watch.err
		rc=$?
		# a loaded machine may leave no first snapshot within the
		# stop bounds: refused after its tries, saying so in one line,
		# and nothing reported
		if [ $rc = 1 ] && [ ! -s $OUT/watch.txt ] && [ "$(wc -l <$OUT/watch.err)" = 1 ] &&
		   grep -q "^mallocwatch: no snapshot at attach: [0-9]* tries in .*: process $pid: no consistent snapshot" \
			$OUT/watch.err; then
			echo "ok: -p on the busy process: refused at attach: $(cat $OUT/watch.err)"
			signals_kept $libc
			continue
		fi
		[ $rc = 0 ] || fail "-p: exit $rc: $(cat $OUT/watch.err)"
		grep -q 'is gone\|INCONSISTENT' $OUT/watch.txt && fail "-p: $(cat $OUT/watch.txt)"
		# the end's reading: made (9 arenas at both ends), or refused
		# under load and said so (no consistent snapshot in its time)
		grep -q '^  arenas  *9  *9 ' $OUT/watch.txt ||
			{ grep -q '^  arenas  *9$' $OUT/watch.txt &&
			  grep -q '^mallocwatch: warning: no snapshot at the end: .*no consistent snapshot' $OUT/watch.err; } ||
			fail "-p: arenas: $(cat $OUT/watch.txt $OUT/watch.err)"
		echo "ok: -p on the busy process: $(grep -c '^ *[0-9.]* *9 ' $OUT/watch.txt) samples of 9 arenas; $(grep -c . $OUT/watch.err) lines on stderr"
	fi
	signals_kept $libc
done
