#!/bin/sh
# -p on a libc without SDT probes (Debian's own, with libc6-dbg): the run
# reports from snapshots alone.  Its JSON ("mode": "snapshots") is a
# report that `check` and `diff` take: the metrics a snapshot has
# (arenas, heaps, heap bytes, thresholds, system/in use/free bytes) are
# judged, the ones that need probes are missing; --html, which draws a
# traced run, is refused before any file is made (issue 26, items 2, 3).
# Its progress lines (default with -p) are there, --no-progress drops them
# (item 4); --check on the run judges that report (it was ignored).
# needs: root
. tests/lib/lib.sh
need_root
L=/lib/x86_64-linux-gnu/libc.so.6
readelf -n "$L" | grep -q memory_arena_new && skip "the system libc has probes"
id=$(readelf -n "$L" | sed -n 's/.*Build ID: *//p')
[ -f "/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug" ] ||
	skip "no libc6-dbg for $L"
hold_arenas sys 4 0 system
"$MW" -p $pid --duration 1 --json "$OUT/snap.json" -o "$OUT/snap.txt" 2>"$OUT/snap.err" ||
	fail "-p on Debian's libc exited $?: $(cat "$OUT/snap.err")"
grep -q '"mode": "snapshots"' "$OUT/snap.json" || fail "not a snapshots-only report"
# progress lines, the default with -p, one per snapshot (issue 26, item 4)
grep -q '^mallocwatch: *0\.0s  arenas *5  heaps .* system .* in use .* free ' "$OUT/snap.err" ||
	fail "no progress line at attach: $(cat "$OUT/snap.err")"
"$MW" -p $pid --duration 1 --interval 0.2 --no-progress -o /dev/null 2>"$OUT/quiet.err" ||
	fail "--no-progress exited $?"
grep -q ' arenas  *5 ' "$OUT/quiet.err" && fail "--no-progress printed progress lines"
# --check on the run itself judges the snapshots' report, as check does
"$MW" -p $pid --duration 1 -o /dev/null --check 'arenas==5' --check 'arenas<=4' --format json \
	--format-output "$OUT/run-checks.json" 2>"$OUT/run-checks.err"
rc=$?
[ $rc = 3 ] || fail "-p --check 'arenas<=4' on 5 arenas: exit $rc, expected 3: $(cat "$OUT/run-checks.err")"
grep -q '"passed": 1' "$OUT/run-checks.json" && grep -q '"failed": 1' "$OUT/run-checks.json" ||
	fail "the run's checks: $(cat "$OUT/run-checks.json")"

"$MW" check --check 'arenas==5' --check 'heaps==4' --check 'mmap_threshold>=131072' \
	--check 'system_bytes>0' "$OUT/snap.json" >"$OUT/check.out" 2>&1 ||
	fail "check of a snapshots-only report exited $?: $(cat "$OUT/check.out")"
cat "$OUT/check.out"
"$MW" check --check 'arenas<=4' "$OUT/snap.json" >"$OUT/fail.out" 2>&1
[ $? = 3 ] || fail "arenas<=4 on 5 arenas: expected exit 3: $(cat "$OUT/fail.out")"
"$MW" check --check 'retries==0' "$OUT/snap.json" >"$OUT/missing.out" 2>&1
rc=$?
[ $rc = 0 ] && fail "retries, which needs probes, judged on snapshots: $(cat "$OUT/missing.out")"
grep -qi "retries" "$OUT/missing.out" || fail "the missing metric is not named: $(cat "$OUT/missing.out")"
cat "$OUT/missing.out"
"$MW" diff "$OUT/snap.json" "$OUT/snap.json" >"$OUT/diff.out" 2>&1 ||
	fail "diff of snapshots-only reports exited $?: $(cat "$OUT/diff.out")"
grep -q "arenas" "$OUT/diff.out" || fail "diff shows no arenas: $(cat "$OUT/diff.out")"

rm -f "$OUT/page.html"
"$MW" -p $pid --duration 1 --html "$OUT/page.html" -o /dev/null 2>"$OUT/html.err"
rc=$?
release_hold
[ $rc = 2 ] || fail "--html on a libc without probes: exit $rc, expected 2"
[ -e "$OUT/page.html" ] && fail "--html left a file: $(wc -c <"$OUT/page.html") bytes"
grep -q "no SDT probes.*--html" "$OUT/html.err" || fail "$(cat "$OUT/html.err")"
cat "$OUT/html.err"
echo "snapshots-only -p: check and diff take its JSON; --html refused, nothing written"
