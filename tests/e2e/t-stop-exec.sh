#!/bin/sh
# A process that execs while a snapshot holds it (issue 43, item 1: the
# snapshot's stop and release, --leave-stopped, and trim's hold survive
# an exec; trim must not call: "malloc_trim not called"), run
# as nobody: tests/fixtures/trim-hostile -t 2 stuck-exec, a thread inside
# malloc for good beside two idle ones, and a watcher child that, once
# the process is traced, sends SIGUSR1 to the thread inside malloc, whose
# handler (written over malloc_stats: inside malloc's code to any
# unwinder) execs `trim-hostile victim`.  The stop lets that thread go to
# leave malloc, and it execs inside the stop (or, the watcher late,
# between two).  mallocwatch must end, refusing ("exec'd while it was
# read"), and the new program must run as it starts, untraced and not left
# stopped ("VICTIM OK", exit 0).
# Before: the exec waited for mallocwatch to take the ends of the threads
# it killed, while mallocwatch waited for the exec'ing thread to stop:
# both hung for good.
# Then an exec that another tracer keeps waiting (see below): the
# snapshot ends within --read-timeout, refusing.
# The watcher is another process: on a loaded machine it may be so late
# that the exec falls after the snapshot (which then says the process
# exited, or reads the new program); a round is then tried again (10 at
# most), and every round must end as safely.
# needs: root
. tests/lib/lib.sh
need_root
FIX=$PWD/build/tests/fixtures/trim-hostile
[ -x "$FIX" ] || { echo "no $FIX (make check builds it)"; exit 99; }
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
[ -f "$dbg" ] || skip "libc6-dbg is not installed (a snapshot needs the libc's symbols)"
chmod 755 "$OUT"
# the watcher reacts at once when it may (SCHED_FIFO, kept across setpriv)
RT="chrt -f 5"
$RT true 2>/dev/null || RT=
pid=
trap '[ -z "$pid" ] || kill -9 $pid 2>/dev/null' EXIT

# round NAME [OPTIONS]: one snapshot of a fresh stuck-exec; hit=1 when
# the exec fell inside a stop
round() {
	_n=$1
	shift
	$RT setpriv --reuid=65534 --regid=65534 --clear-groups "$FIX" -t 2 stuck-exec "$FIX" victim \
		>"$OUT/$_n.out" 2>&1 &
	pid=$!
	i=0
	until grep -qs READY "$OUT/$_n.out"; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "$_n never got ready"; sleep 0.05
	done
	sleep 0.1	# inside malloc by now
	timeout -k 1 40 "$MW" "$@" -p $pid -o /dev/null 2>"$OUT/$_n.err"
	rc=$?
	[ $rc != 124 ] && [ $rc != 137 ] || fail "$_n: mallocwatch hung (40 s): $(cat "$OUT/$_n.err")"
	timeout 20 tail --pid=$pid -f /dev/null
	if kill -0 $pid 2>/dev/null; then
		grep -q '^State:.*T (stopped)' /proc/$pid/status && fail "$_n: left stopped"
		fail "$_n: the process still runs 20 s later: $(cat "$OUT/$_n.out")"
	fi
	wait $pid
	_rc=$?
	pid=
	[ $_rc = 0 ] && grep -q '^VICTIM OK$' "$OUT/$_n.out" ||
		fail "$_n: the exec'd program exited $_rc: $(cat "$OUT/$_n.out"); mallocwatch: $(cat "$OUT/$_n.err")"
	hit=0
	if grep -q "exec'd while it was read; no snapshot\|exec'd before it was held" "$OUT/$_n.err"; then
		[ $rc = 1 ] || fail "$_n: exit $rc: $(cat "$OUT/$_n.err")"
		hit=1
	fi
	if [ "$1" = trim ]; then
		[ $rc = 1 ] && grep -q "malloc_trim not called$" "$OUT/$_n.err" ||
			fail "$_n: trim: exit $rc: $(cat "$OUT/$_n.err")"
	fi
}

for mode in snapshot leave-stopped trim; do
	case $mode in
	snapshot) cmd=snapshot ;;
	leave-stopped) cmd="snapshot --leave-stopped" ;;
	trim) cmd=trim ;;
	esac
	k=0 hit=0
	while [ $hit = 0 ] && [ $k -lt 10 ]; do
		k=$((k + 1))
		round $mode-$k $cmd
	done
	if [ $hit = 1 ]; then
		echo "ok: $mode: exec while it was read (round $k): $(sed 's/^mallocwatch: //' "$OUT/$mode-$k.err"); the new program ran"
	elif [ -n "$RT" ]; then	# the watcher at SCHED_FIFO is never that late
		fail "$mode: the exec fell outside the stops in 10 rounds: $(cat "$OUT/$mode-10.err")"
	else
		echo "note: $mode: the exec fell outside the stops in 10 rounds (a loaded machine, no SCHED_FIFO); each ended safely"
	fi
done

# An exec that never ends: another tracer (trim-hostile exec-held, as
# nobody, traces two threads of its child, a thread of which waits inside
# malloc for good) never takes the ends the exec waits for, and the exec
# holds what a PTRACE_SEIZE waits for (the kernel's cred_guard_mutex).
# The snapshot must end within --read-timeout, refusing, saying why.
# Before: it waited for good (so did serve --all, every scrape after).
setpriv --reuid=65534 --regid=65534 --clear-groups "$FIX" exec-held >"$OUT/held.out" 2>&1 &
pid=$!
i=0
until grep -qs READY "$OUT/held.out"; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "exec-held never got ready: $(cat "$OUT/held.out")"
	sleep 0.05
done
child=$(sed -n 's/^READY //p' "$OUT/held.out")
t0=$(date +%s)
timeout -k 1 40 "$MW" snapshot -p $child -o /dev/null --read-timeout 2 2>"$OUT/held.err"
rc=$?
t1=$(date +%s)
[ $rc != 124 ] && [ $rc != 137 ] || fail "exec held by another tracer: mallocwatch hung (40 s)"
[ $rc = 1 ] && grep -q "could not be attached in time (an exec of the process waits" "$OUT/held.err" ||
	fail "exec held by another tracer: exit $rc: $(cat "$OUT/held.err")"
[ $((t1 - t0)) -lt 20 ] || fail "exec held by another tracer: $((t1 - t0)) s"
kill $pid
wait $pid 2>/dev/null
pid=
echo "ok: an exec another tracer holds: refused in $((t1 - t0)) s: $(sed 's/^mallocwatch: //' "$OUT/held.err")"
