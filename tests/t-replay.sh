#!/bin/sh
# Stream parser -> state -> reports, on recorded streams (tests/streams):
# three real runs (arena-storm 24 threads, sbrk-trim, dyn-threshold) and
# hand-made edge cases (garbled lines, lost events, a tracer that died, a
# program killed by a signal, an unknown memory_* probe, a tcache double
# free).  Each NAME.mw must give exactly NAME.txt (summary), NAME.json,
# NAME.err (stderr) and NAME.rc (exit status).  No root needed.
. tests/lib.sh
n=0
for mw in tests/streams/*.mw; do
	b=${mw%.mw}
	name=$(basename "$b")
	"$MW" replay -o "$OUT/$name.txt" --json "$OUT/$name.json" "$mw" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
	for ext in txt json err rc; do
		expect_same "$b.$ext" "$OUT/$name.$ext"
	done
	python3 -m json.tool "$OUT/$name.json" >/dev/null || fail "$name.json is not valid JSON"
	n=$((n + 1))
done
[ $n -ge 7 ] || exit 99
echo "$n streams replayed exactly"

# A table the script filled up (BPF maps have fixed sizes; updates past
# that fail silently in the script): the summary, the JSON and a warning
# must say so, and the run is not "complete".
awk 'BEGIN {
	print "# mallocwatch-stream 1"
	print "P 7 memory_heap_more 2"; print "MW 1 ready"
	for (i = 0; i < 16384; i++) printf "N 7 %d 1\n", 1000 + i
	for (i = 0; i < 16384; i++) printf "H %d 0 4096 4096 1 0\n", 4096 * (i + 1)
	print "MW 1 end"
}' >"$OUT/full.mw"
"$MW" replay -o "$OUT/full.txt" --json "$OUT/full.json" "$OUT/full.mw" 2>"$OUT/full.err" ||
	fail "replay of a full-table stream exited $?"
grep -q "tables were full, later entries dropped: heaps (16384)" "$OUT/full.err" || fail "no warning"
grep -q "tables were FULL" "$OUT/full.txt" || fail "summary does not say the table was full"
grep -q '"complete": false' "$OUT/full.json" || fail "a full table still counts as complete"
grep -q '"full_tables": "heaps (16384)"' "$OUT/full.json" || fail "full_tables"
