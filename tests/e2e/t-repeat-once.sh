#!/bin/sh
# --repeat N -c arms once (issue 21, item 3): one tracer session for the
# N runs, and each run's report still its own run's.
#
# The runs differ on purpose: a counter file makes run K exec
# arena-storm with K + 1 threads (sh -c 'exec ...' keeps the pid, the
# one traced), so glibc gives run K K + 2 arenas, each worker one of its
# own (arena-storm's barrier: no thread exits before all attached).
# Each run prints its malloc_info() to stdout, in order; each run's
# figures come from its own report (--check lists every run's figure).
# A report fed another run's records, or none, would not match.
#  - arenas, live heaps and their bytes per run equal that run's
#    malloc_info(), exactly;
#  - one tracer: with -v, every "tracer (pid N)" note names one pid (a
#    session per run names N), and the run says so.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -x examples/arena-storm ] || skip "no examples/arena-storm (make check builds it)"
echo 0 >"$OUT/ctr"
"$MW" -v --repeat 3 --json "$OUT/last.json" -o "$OUT/last.txt" \
	--check 'arenas>=0' --check 'heaps>=0' --check 'heap_bytes>=0' \
	-c sh -c 'n=$(cat "$1"); echo $((n + 1)) >"$1"; exec ./examples/arena-storm $((n + 2)) 20' \
	sh "$OUT/ctr" >"$OUT/mi.xml" 2>"$OUT/err" || { _rc=$?; cat "$OUT/err"; fail "mallocwatch exited $_rc"; }
[ "$(cat "$OUT/ctr")" = 3 ] || fail "the program ran $(cat "$OUT/ctr") times, not 3"
python3 - "$OUT/mi.xml" "$OUT/err" "$OUT/last.json" <<'PY' || fail "per-run reports (see above)"
import json, sys
sys.path.insert(0, "tests/lib")
from malloc_info_compare import per_run
want, have = per_run(open(sys.argv[1]).read(), open(sys.argv[2]).read(), 3)
assert have == want, "the runs' reports differ from their malloc_info"
assert [a for a, _, _ in want] == [3, 4, 5], "run K has K + 2 arenas"
last = json.load(open(sys.argv[3]))
assert len(last["arenas"]) == 5, ("--json keeps the last run's", len(last["arenas"]))
PY
pids=$(sed -n 's/.*tracer (pid \([0-9]*\)).*/\1/p' "$OUT/err" | sort -u)
[ -n "$pids" ] || fail "no 'tracer (pid N)' note with -v: $(cat "$OUT/err")"
[ "$(echo "$pids" | wc -l)" = 1 ] || fail "tracers started: $(echo $pids) (one session expected)"
grep -q '^mallocwatch: 3 runs under one tracer session$' "$OUT/err" ||
	fail "no note of one session: $(cat "$OUT/err")"
echo "ok: 3 runs, one tracer (pid $pids), each run's report equal to its malloc_info()"
