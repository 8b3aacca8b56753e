#!/bin/sh
# The stream's order across its two paths: stapbpf sends a streamed
# probe's hit (T records) through its perf buffer, read by a thread of
# its own, while the aggregates of the flush and the end (G records) are
# printed by its interpreter directly.  Under load a memory_heap_new hit
# came after the G record of the heap it made, and the model counted that
# heap twice: heaps=2 where the process's malloc_info() said 1, heap
# bytes 135168 too many (t-attach-multi at load 20).  Replayed here
# (deterministic, no root): the same figures whichever of the two comes
# first,
#  1. a heap whose G record precedes its memory_heap_new: one heap, of
#     the G record's size, made by the thread that made it;
#  2. a heap freed, and a new one at the same address whose
#     memory_heap_new comes after its end G record: one live heap.
# needs: cpu
. tests/lib/lib.sh

H1=139637976727552	# 0x7f0000000000: heaps are 64 MiB aligned
H2=139638043836416	# 0x7f0004000000
A1=$((H1 + 48)) A2=$((H2 + 48))
head() {
	cat <<EOF
# mallocwatch-stream 1
# pid 100
P 0 memory_arena_new 2
P 5 memory_heap_new 2
P 6 memory_heap_free 2
P 7 memory_heap_more 2
MW 1 ready
EOF
}
# in order: each heap_new before the G records of the end
{ head; cat <<EOF; } >"$OUT/inorder.mw" || exit 99
T 5 101 1000 $H1 135168
T 0 101 1001 $A1 2264
T 5 102 1002 $H2 135168
T 0 102 1003 $A2 2264
N 0 101 1
N 0 102 1
N 5 101 1
N 5 102 1
G $H1 $A1 34197504 34197504 551 1
G $H2 $A2 36532224 36532224 567 0
MW 1 end
EOF
# the heap_new hits trailing the end's G records
{ head; cat <<EOF; } >"$OUT/late.mw" || exit 99
T 0 101 1001 $A1 2264
T 0 102 1003 $A2 2264
N 0 101 1
N 0 102 1
N 5 101 1
N 5 102 1
G $H1 $A1 34197504 34197504 551 1
G $H2 $A2 36532224 36532224 567 0
T 5 101 1000 $H1 135168
T 5 102 1002 $H2 135168
MW 1 end
EOF
# 2. H2 freed (its G at the free, then the free's hit), a new heap at
# H2 made by thread 103, its heap_new trailing its end G record
{ head; cat <<EOF; } >"$OUT/reused.mw" || exit 99
T 5 101 1000 $H1 135168
T 0 101 1001 $A1 2264
T 5 102 1002 $H2 135168
G $H2 $A1 65536 200704 3 1
T 6 102 1003 $H2 65536
N 0 101 1
N 5 101 1
N 5 102 1
N 5 103 1
N 6 102 1
G $H1 $A1 532480 598016 7 2
G $H2 $A1 266240 266240 2 0
T 5 103 1004 $H2 135168
MW 1 end
EOF
figures() {	# STREAM: "arena heaps heap_bytes" per arena, then each live heap
	"$MW" replay --json "$OUT/$1.json" -o /dev/null "$OUT/$1.mw" 2>"$OUT/$1.err" ||
		fail "replay $1 exited $?: $(cat "$OUT/$1.err")"
	python3 - "$OUT/$1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for a in r["arenas"]:
    if not a["main"]:
        print("arena", a["address"], "heaps", a["heaps"], "heap_bytes", a["heap_bytes"])
for h in r["heaps"]:
    if not h["freed"]:
        print("heap", h["address"], "size", h["size"], "by", h["created_by_tid"],
              "grew", h["grew"], "shrank", h["shrank"])
PY
}
figures inorder >"$OUT/inorder.txt" || exit 1
figures late >"$OUT/late.txt" || exit 1
cat "$OUT/late.txt"
[ "$(grep -c '^arena .* heaps 1 heap_bytes' "$OUT/inorder.txt")" = 2 ] ||
	fail "in order: $(cat "$OUT/inorder.txt")"
expect_same "$OUT/inorder.txt" "$OUT/late.txt"
echo "ok: a heap_new trailing its heap's G record: the same figures as in order"
figures reused >"$OUT/reused.txt" || exit 1
cat "$OUT/reused.txt"
grep -qx "arena 0x7f0000000030 heaps 2 heap_bytes 798720" "$OUT/reused.txt" ||
	fail "a heap made again at a freed one's address: $(cat "$OUT/reused.txt")"
grep -qx "heap 0x7f0004000000 size 266240 by 103 grew 2 shrank 0" "$OUT/reused.txt" ||
	fail "the new heap at the freed one's address: $(cat "$OUT/reused.txt")"
echo "ok: a heap made again at a freed one's address, its heap_new trailing: one live heap"
