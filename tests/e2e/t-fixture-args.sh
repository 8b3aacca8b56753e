#!/bin/sh
# Every x86_64 operand form, decoded for real: fixprog fires libfix.so's
# probes (tests/fixtures) with known values and prints them; mallocwatch,
# tracing libfix.so as the "libc" under the bpf runtime (where the
# generator turns specs into register and memory reads), must report the
# same values.  The kernel-runtime script for it must pass stap -p3.
# needs: root
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures
[ -x $FIX/fixprog ] || exit 99
"$MW" -q --runtime=bpf --json "$OUT/report.json" -o "$OUT/summary.txt" \
	--libc $FIX/libfix.so -c $FIX/fixprog >"$OUT/expected.txt" || fail "mallocwatch exited $?"
python3 - "$OUT/report.json" >"$OUT/actual.txt" <<'PY' || exit 99
import json, sys
r = json.load(open(sys.argv[1]))
for e in r["events_log"]:
    print(e["probe"], *e["args"])
for h in r["heaps"]:
    print("memory_heap_new", int(h["address"], 16), h["size"])
for a in r["arenas"]:
    if not a["main"]:
        print("memory_arena_new", int(a["address"], 16), 135168)
        assert a["created_by_tid"] == r["target"]["pid"], a
        assert a["heaps"] == 1 and a["heap_bytes"] == 135168, a
PY
expect_same "$OUT/expected.txt" "$OUT/actual.txt"
grep -q '"lost": 0,' "$OUT/report.json" || fail "events lost"
grep -q 'not in mallocwatch.s probe table' "$OUT/summary.txt" || fail "unknown probes not marked"

ok "$MW" script --runtime=kernel --libc $FIX/libfix.so >"$OUT/kernel.stp"
stap_p3 "$OUT/kernel.stp"
