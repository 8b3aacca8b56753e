#!/bin/sh
# End to end: arena-storm under mallocwatch; its arenas, heaps per arena,
# heap bytes per arena, and main arena system bytes vs sbrk net must equal
# what the program's own malloc_info() says, exactly.  4 threads (one
# arena each) and 24 threads (beyond the 16-arena limit on 2 cores:
# threads reuse arenas and wait for their locks).
. tests/lib.sh
need_root
need_libc
for args in "4 50" "24 30"; do
	d=$OUT/$(echo "$args" | tr ' ' _)
	mkdir -p "$d"
	"$MW" -q --json "$d/report.json" -o "$d/summary.txt" -c ./examples/arena-storm $args \
		>"$d/malloc_info.xml" || fail "mallocwatch exited $? for arena-storm $args"
	python3 tests/malloc_info_compare.py "$d/malloc_info.xml" "$d/report.json" "$d" || exit 99
	expect_same "$d/expected.txt" "$d/actual.txt"
	grep -q '"lost": 0,' "$d/report.json" || fail "events lost: $(grep -o '"events": {[^}]*' "$d/report.json")"
	cat "$d/actual.txt"
done
# with 24 threads some must have reused an arena
grep -q '"how": "reuse"' "$OUT/24_30/report.json" || fail "no arena reuse with 24 threads"
