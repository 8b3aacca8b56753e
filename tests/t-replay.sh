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
