#!/bin/sh
# End to end: the aggregated heap and sbrk probes count exactly.
# heap-churn grows and shrinks one heap N times with the trim threshold
# and top pad at 0 (mallopt): in a thread's arena each iteration is one
# grow_heap (memory_heap_more) and one shrink_heap (memory_heap_less)
# (thread2: two blocks, two growths, one shrink: asymmetric); in
# main_arena one sbrk grow and one systrim (memory_sbrk_less), plus the
# break's first growth and printf's buffer after the loop.  These
# probes' hits come from the per-heap (G) and main_arena (S) records, not
# per thread (docs/protocol.md): they must add up all the same.  The
# heap's peak from the probes equals its heap_info.mprotect_size at exit,
# its size the heap_info.size.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
n=3000
"$MW" -q --json "$OUT/thread.json" -o "$OUT/thread.txt" -c $IN ./examples/heap-churn $n thread \
	>"$OUT/thread.out" || fail "mallocwatch exited $? for heap-churn thread"
"$MW" -q --json "$OUT/main.json" -o "$OUT/main.txt" -c $IN ./examples/heap-churn $n main \
	>"$OUT/main.out" || fail "mallocwatch exited $? for heap-churn main"
"$MW" -q --json "$OUT/thread2.json" -o "$OUT/thread2.txt" -c $IN ./examples/heap-churn $n thread2 \
	>"$OUT/thread2.out" || fail "mallocwatch exited $? for heap-churn thread2"
python3 - "$OUT/thread.json" "$OUT/main.json" $n <<'PY' || fail "heap-churn counts"
import json, sys
t, m, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
for r in (t, m):
    assert r["events"]["lost"] == 0 and r["events"]["complete"], r["events"]
b = t["events"]["by_probe"]
assert b["memory_heap_more"] == n and b["memory_heap_less"] == n, b
grew = sum(h["grew"] for h in t["heaps"])
shrank = sum(h["shrank"] for h in t["heaps"])
assert (grew, shrank) == (n, n), (grew, shrank, t["heaps"])
# the peak the probes saw (memory_heap_more's sizes) is what the heap's
# own heap_info.mprotect_size says at exit: the most it was ever made
# read-write (shrink_heap lowers it only with vm.overcommit_memory=2)
if open("/proc/sys/vm/overcommit_memory").read().strip() != "2":
    snap = {a["address"]: a for a in t["snapshots"]["exit"]["arenas"]}
    for h in t["heaps"]:
        a = snap[h["arena"]]
        print("heap", h["address"], "peak", h["peak_size"], "mprotect", a["heap_mprotect_bytes"])
        assert h["peak_size"] == a["heap_mprotect_bytes"] > 512 * 1024, (h, a)
# its size, the last memory_heap_less's (packed with the counts and the
# peak in one value per heap), is the heap_info.size the exit snapshot read
for h in t["heaps"]:
    sh = [x for a in t["snapshots"]["exit"]["arenas"] for x in a["heaps"]
          if x["address"] == h["address"]]
    assert len(sh) == 1 and sh[0]["size"] == h["size"] > 0, (h, sh)
t2 = json.load(open(sys.argv[1].replace("thread.json", "thread2.json")))
# two blocks per iteration, freed in the order made: two growths, one
# shrink: the counts differ, so one taken for the other shows
b2 = t2["events"]["by_probe"]
assert b2["memory_heap_more"] == 2 * n and b2["memory_heap_less"] == n, b2
assert [(h["grew"], h["shrank"]) for h in t2["heaps"]] == [(2 * n, n)], t2["heaps"]
b, s = m["events"]["by_probe"], m["sbrk"]
assert b["memory_sbrk_less"] == n == s["trim_calls"], (b, s)
assert n < b["memory_sbrk_more"] <= n + 3, b
assert b["memory_sbrk_more"] == s["grow_calls"] + s["failed"], (b, s)
PY
