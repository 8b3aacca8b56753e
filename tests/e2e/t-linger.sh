#!/bin/sh
# --linger (issue 21, item 3): separate -c runs back to back share one
# tracer session, each with its own report, and the session is gone
# after its idle time.
#
# Three invocations of arena-storm with 2, 3 and 4 threads under
# --linger 8, one after the other, then two at once (5 and 6 threads:
# one may be served while the other, finding the session busy, traces
# on its own and arms no session).  Each prints its malloc_info() to
# stdout; each run's report must equal it (arenas, heaps, heap bytes,
# as t-repeat-once checks --repeat).  Run 1 arms the session (a note
# with -v: "armed a tracer session (tracer pid N"), runs 2 and 3 join it
# (same N) and start no tracer of their own (no "bpf object" note: no
# compile or stapbpf).  Then, within the idle time and the uprobes'
# removal (bounded), no session process, no tracer N and none of its
# uprobe definitions are left.  The rendezvous is a directory of this
# test's (MALLOCWATCH_LINGER_DIR), so no other run can join.
# Before --linger existed the first run failed (unknown option).
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
[ -x examples/arena-storm ] || skip "no examples/arena-storm (make check builds it)"
export MALLOCWATCH_LINGER_DIR="$OUT/rdv"
mkdir -m 700 "$MALLOCWATCH_LINGER_DIR" || exit 99
# run K: arena-storm with K + 1 threads, its malloc_info in miK.xml
run() {
	"$MW" -v --linger 8 -o "$OUT/r$1.txt" \
		--check 'arenas>=0' --check 'heaps>=0' --check 'heap_bytes>=0' \
		-c ./examples/arena-storm $(($1 + 1)) 20 >"$OUT/mi$1.xml" 2>"$OUT/err$1"
}
for k in 1 2 3; do
	run $k || { st=$?; cat "$OUT/err$k"; fail "run $k: mallocwatch exited $st"; }
done
tracer=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err1")
[ -n "$tracer" ] || fail "run 1 armed no session: $(cat "$OUT/err1")"
sess=$(ps -o ppid= -p "$tracer" | tr -d ' ')
[ -n "$sess" ] && [ "$(cat /proc/"$sess"/comm 2>/dev/null)" = mw-linger ] ||
	fail "no session process lingers after run 3 (tracer $tracer, parent '$sess')"
# runs 4 and 5 at once: each joins when the session is idle, else
# (the other is being served) traces on its own; both exact
run 4 & p4=$!
run 5 & p5=$!
wait $p4 || fail "run 4: mallocwatch exited $?"
wait $p5 || fail "run 5: mallocwatch exited $?"
end=$(date +%s.%N)
python3 - "$OUT" <<'PY' || fail "per-run reports (see above)"
import re, sys
sys.path.insert(0, "tests/lib")
from malloc_info_compare import totals
out = sys.argv[1]
for k in (1, 2, 3, 4, 5):
    arenas, heaps, nbytes = totals(open("%s/mi%d.xml" % (out, k)).read())
    err = open("%s/err%d" % (out, k)).read()
    got = tuple(int(re.search(r'^PASS %s (\d+)' % m, err, re.M).group(1))
                for m in ("arenas", "heaps", "heap_bytes"))
    print("run %d: malloc_info %s, report %s" % (k, (arenas, heaps, nbytes), got))
    assert got == (arenas, heaps, nbytes), "run %d's report differs from its malloc_info" % k
    assert arenas == k + 2, "run %d: %d arenas, not %d" % (k, arenas, k + 2)
PY
for k in 2 3; do
	j=$(sed -n 's/.*joined a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err$k")
	[ "$j" = "$tracer" ] || fail "run $k did not join tracer $tracer: $(cat "$OUT/err$k")"
	! grep -q 'bpf object' "$OUT/err$k" || fail "run $k made a tracer of its own"
	# nor says what a runtime of its own would have armed
	! grep -q 'bpf runtime' "$OUT/err$k" || fail "run $k, joined, noted a runtime: $(cat "$OUT/err$k")"
done
grep -q 'bpf runtime: .*uprobe' "$OUT/err1" || fail "run 1, which armed, did not note its runtime"
for k in 4 5; do
	grep -q "joined a tracer session (tracer pid $tracer," "$OUT/err$k" ||
		grep -q "to join: the session is serving another run" "$OUT/err$k" ||
		fail "run $k neither joined nor found the session busy: $(cat "$OUT/err$k")"
	! grep -q 'armed a tracer session' "$OUT/err$k" || fail "run $k took the session's name"
done
events=/sys/kernel/tracing/uprobe_events
[ -r $events ] || events=/sys/kernel/debug/tracing/uprobe_events
# 8 s idle, then the uprobes' removal (about 0.11 s a site, more while
# other tracers remove theirs): bounded at 300 s
i=0
while kill -0 "$sess" 2>/dev/null || kill -0 "$tracer" 2>/dev/null ||
	grep -q "stapprobe_${tracer}_" $events 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 3000 ] || fail "after 300 s: session $sess, tracer $tracer or its uprobes still there"
	sleep 0.1
done
gone=$(echo "$(date +%s.%N) - $end" | bc -l)
[ -z "$(ls -A "$MALLOCWATCH_LINGER_DIR")" ] ||
	fail "the rendezvous holds $(ls -A "$MALLOCWATCH_LINGER_DIR")"
printf 'ok: 3 runs back to back and 2 at once (%s), session tracer pid %s, each report equal to its malloc_info(); nothing left %.1f s after the last run (8 s idle)\n' "$(grep -l joined "$OUT/err4" "$OUT/err5" | wc -l) joined" "$tracer" "$gone"
# --linger where it is not used says so; MALLOCWATCH_LINGER (a CI job's,
# for every run) does not
"$MW" --linger 5 -f -o /dev/null -c /bin/true 2>"$OUT/notused.err" || fail "--linger -f exited $?"
grep -q "^mallocwatch: --linger is not used with -f" "$OUT/notused.err" ||
	fail "--linger -f: $(cat "$OUT/notused.err")"
MALLOCWATCH_LINGER=5 "$MW" -f -o /dev/null -c /bin/true 2>"$OUT/notused2.err" || fail "-f exited $?"
grep -q "linger" "$OUT/notused2.err" && fail "MALLOCWATCH_LINGER with -f: $(cat "$OUT/notused2.err")"
echo "ok: --linger with -f is said not to be used"
