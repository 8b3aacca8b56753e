#!/bin/sh
# -p whose snapshot at attach was refused: the figures that need the
# allocator as tracing found it (metrics.def's attach column: arenas,
# heaps, heap bytes, heap peaks, thresholds) are unknown, never counted
# from nothing.  The report says so in its header; text and HTML show
# them as "?", JSON as null with "unknown": {"reason", "figures"}; every
# --check rule on them fails with the reason (exit 3), rules on what
# the run did see (events, the end snapshot's totals) are judged as ever.
# First on a saved stream (replay: deterministic, no root), then live: a
# process whose thread arena's lock is held for good (fixtures/locked-arena)
# is refused at every try, on any load.
# needs: root
. tests/lib/lib.sh

# a real -p stream of a process with 5 arenas made before tracing, its
# attach snapshot taken out as a refused one would be
S=tests/fuzz/corpus-stream/p-snapshots.mw
WHY='no snapshot at attach: 5 tries in 2.0 s: process 27616: no consistent snapshot (5 reads, 2 stops in 3.1 ms): arena 0x7fae84000030 is locked (a thread is inside malloc or free)'
awk -v why="$WHY" '/^# snapshot attach /{ print "# attach_refused " why; next } { print }' "$S" \
	>"$OUT/refused.mw" || exit 99
grep -q '^# attach_refused' "$OUT/refused.mw" || exit 99
"$MW" replay -o "$OUT/refused.txt" --json "$OUT/refused.json" --html "$OUT/refused.html" \
	"$OUT/refused.mw" 2>"$OUT/refused.err" || fail "replay exited $?: $(cat "$OUT/refused.err")"
grep -q "^  the allocator at attach is UNKNOWN (no snapshot at attach: 5 tries in 2.0 s: " "$OUT/refused.txt" ||
	fail "the header does not say the allocator at attach is unknown: $(head -8 "$OUT/refused.txt")"
grep -qx 'Arenas: ? (1 seen while traced)' "$OUT/refused.txt" || fail "arenas: $(grep Arenas "$OUT/refused.txt")"
grep -q '^Heaps (heap_info): ? ' "$OUT/refused.txt" || fail "heaps: $(grep Heaps "$OUT/refused.txt")"
grep -q 'mmap threshold ?, trim threshold ?' "$OUT/refused.txt" || fail "thresholds: $(grep -A1 Thresholds "$OUT/refused.txt")"
grep -q '^  0x[0-9a-f]*  *main  -  *0 ?  ' "$OUT/refused.txt" || fail "main's heap bytes: $(grep ' main ' "$OUT/refused.txt")"
grep -q 'Allocator at the end, read from the process' "$OUT/refused.txt" ||
	fail "the end snapshot's own figures are not shown"
grep -q 'The allocator at attach is UNKNOWN' "$OUT/refused.html" || fail "the page does not say it"
grep -q '? arenas (1 seen while traced)' "$OUT/refused.html" || fail "the page counts arenas"
python3 - "$OUT/refused.json" <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
u = r["unknown"]
assert u["reason"].startswith("no snapshot at attach: 5 tries"), u
assert sorted(u["figures"]) == sorted(["arenas", "heaps", "heap_bytes", "heap_bytes_peak",
                                      "mmap_threshold", "trim_threshold"]), u
assert r["thresholds"]["mmap"] is None and r["thresholds"]["trim"] is None, r["thresholds"]
main = [a for a in r["arenas"] if a["main"]][0]
assert main["heap_bytes"] is None, main
assert r["snapshots"]["attach"] is None and r["snapshots"]["end"]["totals"], r["snapshots"].keys()
print("unknown:", u["figures"])
PY
# every rule on an unknown figure fails, with the reason; the others hold
for rule in 'arenas<=2' 'arenas>=0' 'heaps==0' 'heap_bytes<=1G' 'heap_bytes_peak>=0' \
	'mmap_threshold>=0' 'trim_threshold!=1'; do
	"$MW" check --check "$rule" "$OUT/refused.json" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	[ $rc = 3 ] || fail "'$rule' on an unknown figure exited $rc: $(cat "$OUT/out" "$OUT/err")"
	grep -q "^FAIL ${rule%%[<>=!]*}: unknown: no snapshot at attach: 5 tries in 2.0 s: .* (rule '$rule')$" "$OUT/out" ||
		fail "'$rule': $(cat "$OUT/out")"
done
"$MW" check --check 'system_bytes>0' --check 'reuse_waits==0' --check 'arenas_created==0' \
	"$OUT/refused.json" >"$OUT/out" 2>&1 || fail "known figures: $(cat "$OUT/out")"
"$MW" check --format json --check 'arenas<=2' "$OUT/refused.json" >"$OUT/out.json"
[ $? = 3 ] || fail "--format json exited $?"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["rules"][0]
assert not r["ok"] and r["value"] is None and r["unknown"].startswith("no snapshot at attach"), r
' "$OUT/out.json" || fail "--format json: $(cat "$OUT/out.json")"
"$MW" check --metrics "$OUT/refused.json" >"$OUT/metrics" || fail "--metrics exited $?"
grep -qx 'arenas unknown' "$OUT/metrics" && grep -qx 'mmap_threshold unknown' "$OUT/metrics" &&
	grep -q '^system_bytes [1-9]' "$OUT/metrics" || fail "--metrics: $(cat "$OUT/metrics")"
# as a baseline: a relative rule has nothing to be relative to
"$MW" replay --json "$OUT/known.json" "$S" >/dev/null 2>&1 || exit 99
"$MW" check --baseline "$OUT/refused.json" --check 'arenas<=+0' "$OUT/known.json" >"$OUT/out" 2>&1
[ $? = 3 ] || fail "a relative rule on an unknown baseline figure: $(cat "$OUT/out")"
grep -q "^FAIL arenas: unknown: the baseline: no snapshot at attach" "$OUT/out" || fail "$(cat "$OUT/out")"
echo "ok: a refused attach snapshot leaves its figures unknown, and every rule on them fails"

# live: a process whose thread arena is locked for good (fixtures/locked-
# arena) refuses every snapshot, on any load
[ "$(id -u)" = 0 ] || skip "the live part needs root (ptrace, uprobes)"
FIX=build/tests/fixtures/locked-arena
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null' EXIT
# locked NAME [system]: start it (under the probe-enabled glibc, or
# Debian's own), return once its arena is locked
locked() {
	if [ "${2:-}" = system ]; then
		$FIX >"$OUT/$1.out" &
	else
		"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib" \
			$FIX >"$OUT/$1.out" &
	fi
	pid=$!
	wait_for "$OUT/$1.out" READY 30 $pid
}

# Debian's libc (no probes: snapshots only): nothing to report from, exit 1
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
if [ -f "$dbg" ]; then
	locked system system
	start=$(date +%s%N)
	"$MW" -p $pid --duration 1 -o "$OUT/system.txt" 2>"$OUT/system.err"
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $rc = 1 ] || fail "snapshots only, refused: exit $rc: $(cat "$OUT/system.err")"
	# refused at every try; a loaded machine may leave time for fewer
	# tries, or let even the first run out of time
	grep -q "^mallocwatch: no snapshot at attach: \([0-9]* tries in [0-9.]* s: \)\{0,1\}process $pid\(: no consistent snapshot\|'s allocator was not read within\)" \
		"$OUT/system.err" || fail "snapshots only: $(cat "$OUT/system.err")"
	[ -s "$OUT/system.txt" ] && fail "snapshots only, refused: a report was written"
	echo "ok: snapshots only: refused after ${ms} ms: $(cat "$OUT/system.err")"
	kill $pid; wait $pid 2>/dev/null; pid=
else
	echo "no libc6-dbg for Debian's libc: its part left out"
fi

# the probe-enabled glibc: traced, the figures at attach unknown
if [ -f "$GLIBC_PREFIX/lib/libc.so.6" ]; then
	locked traced
	"$MW" -p $pid --duration 1 --check 'arenas<=2' --check 'threads>=0' \
		-o "$OUT/traced.txt" --json "$OUT/traced.json" >"$OUT/traced.out" 2>"$OUT/traced.err"
	rc=$?
	[ $rc = 3 ] || fail "traced, refused at attach: exit $rc, expected 3: $(cat "$OUT/traced.out" "$OUT/traced.err")"
	cat "$OUT/traced.out" "$OUT/traced.err" >"$OUT/traced.all"	# the verdicts: stderr with -o
	# the verdict quotes the reason's start; a loaded machine's is long
	# (the stop budget spent first), the warning has it whole
	grep -q "^FAIL arenas: unknown: no snapshot at attach: " "$OUT/traced.all" &&
		grep -q "^mallocwatch: warning: no snapshot at attach: .*\(arena 0x[0-9a-f]* is locked\|was not read within\)" "$OUT/traced.all" ||
		fail "traced: $(cat "$OUT/traced.all")"
	grep -q "^PASS threads" "$OUT/traced.all" || fail "traced: $(cat "$OUT/traced.all")"
	grep -q "^  the allocator at attach is UNKNOWN (no snapshot at attach: " "$OUT/traced.txt" ||
		fail "traced: the report does not say it: $(head -8 "$OUT/traced.txt")"
	grep -q '^Arenas: ? ' "$OUT/traced.txt" || fail "traced: $(grep Arenas "$OUT/traced.txt")"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert "arenas" in r["unknown"]["figures"] and r["thresholds"]["mmap"] is None, r["unknown"]
' "$OUT/traced.json" || fail "traced: JSON"
	echo "ok: -p traced, refused at attach: unknown, the rule failed (exit 3)"
	# beside a process that can be read (-p A,B): its figures known, the
	# locked one's unknown, the totals' arenas and heaps unknown too
	lpid=$pid
	mkfifo "$OUT/mi.in"
	"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib" \
		build/tests/fixtures/mallinfo-hold <"$OUT/mi.in" >"$OUT/mi.out" &
	mpid=$!
	exec 4>"$OUT/mi.in"
	wait_for "$OUT/mi.out" READY 30 $mpid
	"$MW" -p $lpid,$mpid --duration 1 --check 'arenas<=100' -o "$OUT/two.txt" \
		--json "$OUT/two.json" >"$OUT/two.out" 2>"$OUT/two.err"
	rc=$?
	exec 4>&-
	wait $mpid
	[ $rc = 3 ] || fail "-p A,B: exit $rc, expected 3: $(cat "$OUT/two.out" "$OUT/two.err")"
	grep -q "^FAIL process $lpid .*arenas: unknown: no snapshot at attach" "$OUT/two.err" &&
		grep -q "^PASS process $mpid .*arenas 2, limit <= 100" "$OUT/two.err" ||
		fail "-p A,B: $(grep 'PASS\|FAIL' "$OUT/two.err")"
	grep -q "processes in all: ? arenas, ? heaps (1 process's allocator at attach unknown)" \
		"$OUT/two.txt" || fail "-p A,B totals: $(grep 'in all' "$OUT/two.txt")"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t, p = r["totals"], r["processes"]
assert t["arenas"] is None and t["heaps"] is None and t["unknown_processes"] == 1, t
assert [("unknown" in x) for x in p] == [True, False], [x.get("unknown") for x in p]
' "$OUT/two.json" || fail "-p A,B: JSON"
	kill $pid; wait $pid 2>/dev/null; pid=
	echo "ok: -p A,B: the readable one known, the locked one and the totals unknown"
else
	echo "no probe-enabled glibc at $GLIBC_PREFIX: the traced part left out"
fi
