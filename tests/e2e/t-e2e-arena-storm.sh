#!/bin/sh
# End to end: arena-storm under mallocwatch; its arenas, heaps per arena,
# heap bytes per arena, and main arena system bytes vs sbrk net must equal
# what the program's own malloc_info() says, exactly.  4 threads (one
# arena each) and 24 threads (past the 16-arena limit on 2 cores).
#
# What glibc guarantees whatever the scheduler does (arena-storm makes
# every thread attach before any exits, so the free list stays empty):
# every worker attaches exactly once, new or reuse, never from the free
# list, and the new ones are the arenas besides main_arena.  How many
# reuse is not fixed (arena.c computes the limit only once narenas >
# arena_test, and racing threads may pass before it), so it is counted,
# not assumed.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
for n in 4 24; do
	d=$OUT/$n
	mkdir -p "$d"
	"$MW" -q --json "$d/report.json" -o "$d/summary.txt" -c $IN ./examples/arena-storm $n 30 \
		>"$d/malloc_info.xml"
	rc=$?
	# hits the tracer lost or skipped are counted, never a silent gap:
	# said before the comparison, which they would spoil
	grep -q '"lost": 0,' "$d/report.json" || fail "events lost: $(grep -o '"events": {[^}]*' "$d/report.json")"
	[ $rc = 0 ] || fail "mallocwatch exited $rc for arena-storm $n"
	expect_malloc_info "$d/malloc_info.xml" "$d/report.json" "$d"
	python3 - "$d/report.json" $n <<'PY' || fail "attachments of arena-storm $n"
import json, sys
r, n = json.load(open(sys.argv[1])), int(sys.argv[2])
pid = r["target"]["pid"]
att = [t for a in r["arenas"] for t in a["threads"] if t["tid"] != pid]
how = {h: sum(1 for t in att if t["how"] == h) for h in ("new", "reuse", "free_list")}
assert len({t["tid"] for t in att}) == len(att) == n, ("each worker once", len(att), n)
assert how["free_list"] == 0, how
assert how["new"] == len(r["arenas"]) - 1, (how, len(r["arenas"]))
assert how["new"] + how["reuse"] == n, how
print("%d workers: %d new arenas, %d reused one" % (n, how["new"], how["reuse"]))
PY
	cat "$d/actual.txt"
done
