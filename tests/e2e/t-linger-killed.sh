#!/bin/sh
# --linger: a session killed with SIGKILL leaves nothing for good.
# Its stapbpf dies with it (SIGTERM through PR_SET_PDEATHSIG: it removes
# its uprobes and exits), the work directory it held the lock of is a
# dead run's, which the next run's sweep removes (and stops its tracer if
# it were still there), and the next lingering run finds the socket file
# refusing connections, arms a session of its own and takes the name.
# Before --linger existed the first run failed (unknown option).
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
events=/sys/kernel/tracing/uprobe_events
[ -r $events ] || events=/sys/kernel/debug/tracing/uprobe_events
export MALLOCWATCH_LINGER_DIR="$OUT/rdv"
mkdir -m 700 "$MALLOCWATCH_LINGER_DIR" || exit 99
"$MW" -v --linger 60 -o /dev/null -c /bin/true 2>"$OUT/err1" || fail "run 1 exited $?"
tracer=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err1")
[ -n "$tracer" ] || fail "run 1 armed no session: $(cat "$OUT/err1")"
sess=$(ps -o ppid= -p "$tracer" | tr -d ' ')
[ "$(cat /proc/"$sess"/comm 2>/dev/null)" = mw-linger ] || fail "no session process (parent '$sess')"
workdir=$(readlink /proc/"$tracer"/cwd)
case $workdir in */mallocwatch.*) ;; *) fail "the tracer works in '$workdir'" ;; esac
kill -KILL "$sess"
# the tracer and its uprobes go (bounded: 300 s, the removal is slow
# while other tracers remove theirs)
i=0
while kill -0 "$tracer" 2>/dev/null || grep -q "stapprobe_${tracer}_" $events 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 3000 ] || fail "tracer $tracer or its uprobes still there 300 s after its session was killed"
	sleep 0.1
done
killed_s=$((i / 10))
# the next lingering run: no session to join, its own armed under the name
"$MW" -v --linger 0.1 -o "$OUT/r2.txt" -c /bin/true 2>"$OUT/err2" || fail "run 2 exited $?"
grep -q 'to join: no session listens (Connection refused)' "$OUT/err2" ||
	fail "run 2 did not find the dead session's socket: $(cat "$OUT/err2")"
t2=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err2")
[ -n "$t2" ] || fail "run 2 armed no session: $(cat "$OUT/err2")"
grep -q '^Arenas: 1' "$OUT/r2.txt" || fail "run 2's report: $(cat "$OUT/r2.txt")"
[ ! -e "$workdir" ] || fail "the killed session's work directory $workdir is still there"
i=0
while kill -0 "$t2" 2>/dev/null || grep -q "stapprobe_${t2}_" $events 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 3000 ] || fail "run 2's session still there after 300 s"
	sleep 0.1
done
[ -z "$(ls -A "$MALLOCWATCH_LINGER_DIR")" ] || fail "the rendezvous holds $(ls -A "$MALLOCWATCH_LINGER_DIR")"
echo "ok: a SIGKILLed session's tracer and uprobes went within ${killed_s} s, its work directory was swept, the next run armed under the name (its session gone $((i / 10)) s after)"
