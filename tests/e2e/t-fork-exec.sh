#!/bin/sh
# -f: a process the tree forks runs a copy of its parent until its first
# exec, and what that copy hits is not the exec'd program's.  The tracer
# empties the copy's totals at that exec, as at any later one (while the
# tree has had at most 256 processes; src/tracer/tracer.h).
# tests/fixtures/fork-exec's child leaves 6 MiB of sbrk in 16 KiB
# blocks, a mallopt, a thread's arena and heap, then execs
# examples/sbrk-trim 8: the child's report must hold sbrk-trim's hits
# probe by probe (as when it runs alone), agree with its malloc_info()
# exactly, and say what its exec left out (images_replaced 1: the copy,
# emptied at that first exec; the copy's hits in hits_before).  On
# main (07370be) the child's hits held the copy's (memory_sbrk_more 106
# where sbrk-trim alone has 63, an arena, a heap, a mallopt); with the
# copy's totals emptied but its streamed records taken as they came,
# the arena its thread made just before the exec often came after the
# exec line and made a second arena with a 48 MiB heap (3 runs of 4;
# state.h mw_state_owed).
# needs: root glibc
. tests/lib/lib.sh
exec_setup fork-exec
"$MW" -q -f --json "$OUT/tree.json" -o "$OUT/tree.txt" -c $FIX $KL ./examples/sbrk-trim 8 \
	>"$OUT/child.xml" || fail "-f: mallocwatch exited $?: $(cat "$OUT/tree.txt")"
python3 - "$OUT/tree.json" "$OUT/alone.json" "$OUT/child.json" <<'PY' || fail "the child's report: $(sed -n '/sbrk-trim 8 (pid/,/^Allocator at exit/p' "$OUT/tree.txt")"
import json, sys
sys.path.insert(0, "tests/lib")
from alone_hits import expect_alone_hits
r = json.load(open(sys.argv[1]))
ps = r["processes"]
assert len(ps) == 2, [p["target"] for p in ps]
c = [p for p in ps if p["ppid"]][0]
assert not c.get("unknown"), c["unknown"]
by = c["events"]["by_probe"]
expect_alone_hits(by, sys.argv[2])
ex = c["events"]["execs"]
assert ex["images_replaced"] == 1 and ex["hits_before"] >= 5, ex
print("the child's hits are sbrk-trim's alone:", sum(by.values()), "; left out:", ex)
json.dump(c, open(sys.argv[3], "w"))
PY
python3 tests/lib/malloc_info_compare.py "$OUT/child.xml" "$OUT/child.json" "$OUT" || exit 99
expect_same "$OUT/expected.txt" "$OUT/actual.txt"
cat "$OUT/actual.txt"
