#!/bin/sh
# The text summary leads with the answer and says what tracing cost
# (issue 45, items 5 and 8), on examples/setjmp-loop 200000 (600000 hits
# of the setjmp family, one thread):
#  - order: the events line, the tracing cost, the Total, the RSS at exit
#    and the findings come before the arenas, threads, setjmp, the
#    allocator's table at exit and the RSS ledger;
#  - the cost line names setjmp with its hits (the JSON's events.cost and
#    by_family) and -e '!setjmp'; a saved stream replays to the same lines
#    (the time traced is kept in it);
#  - the threads' PROBE HITS and the "other" hits they name add up to the
#    header's count;
#  - sections with nothing to say fold into one line (no Heaps nor
#    Thresholds section, "Nothing else to report: no heaps of other
#    arenas (heap_info); no threshold change ...");
#  - finding 1's suggestion suggests something (was a note);
#  - no cost line under -e '!setjmp', nor for sbrk-trim's few hits;
#  - -f: two setjmp-loops under sh, each below the line's count without
#    its time (a process of the tree but the first), their sum above it:
#    the totals' line says it, with the sum of the JSON's processes.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
"$MW" -q --json "$OUT/sj.json" -o "$OUT/sj.txt" --save-stream "$OUT/sj.mw" \
	-c $IN ./examples/setjmp-loop 200000 >/dev/null || fail "mallocwatch exited $?"

# the order: each pattern's first line, ascending
prev=0
for pat in '^  events: ' '^  tracing cost: setjmp ' '^Total: system ' '^RSS at exit ' \
	'^Findings (largest first):' '^ 1\. RSS ' '^Arenas: ' '^Threads: ' '^setjmp/longjmp:' \
	'^Nothing else to report: ' '^Allocator at exit, read from the process: ' '^RSS ledger '; do
	at=$(grep -n -m1 "$pat" "$OUT/sj.txt" | cut -d: -f1)
	[ -n "$at" ] || fail "no '$pat' in the summary"
	[ "$at" -gt $prev ] || fail "'$pat' at line $at, not after line $prev"
	prev=$at
done
[ "$(grep -c '^Total: system ' "$OUT/sj.txt")" = 1 ] || fail "the Total is not said once"
echo "ok: the answer first (Total, RSS, findings), the details after"

python3 - "$OUT/sj.json" "$OUT/sj.txt" <<'PY' || fail "the cost, or the threads' hits"
import json, re, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
ev, c = r["events"], r["events"]["cost"]
n = ev["by_probe"]
assert c["family"] == "setjmp" and c["leave_out"] == "!setjmp" and c["shown"], c
assert c["hits"] == c["by_family"]["setjmp"] == n["setjmp"] + n["longjmp"] + n["longjmp_target"], c
assert c["hits"] >= 600000 and sum(c["by_family"].values()) == ev["total"], c
assert c["traced_seconds"] > 0 and abs(c["per_second"] * c["traced_seconds"] - c["hits"]) < 1, c
m = re.search(r"^  tracing cost: setjmp made (\d+) of the (\d+) hits \((\d+)%\), (\d+) a second over\n"
              r"    the ([\d.]+) s traced; at about ([\d.]+) µs a hit \(bench/perhit\.sh, this family; "
              r"more on\n    busy CPUs\), about ([\d.]+) m?s of the threads' time;\n"
              r"    -e '!setjmp' leaves them out \(and the setjmp/longjmp counts\)$", text, re.M)
assert m, "no cost line"
hits, total = int(m.group(1)), int(m.group(2))
assert (hits, total) == (c["hits"], ev["total"]), (m.groups(), c)
assert int(m.group(3)) == hits * 100 // total
assert int(m.group(4)) == round(c["per_second"]), (m.group(4), c["per_second"])
# the threads' PROBE HITS, and the other hits the line under them names
rows = re.search(r"^Threads: \d+\n  TID .*PROBE HITS\n((?:  \d+ .*\n)+)", text, re.M).group(1)
threads = sum(int(l.split()[-1]) for l in rows.splitlines())
assert threads == sum(t["hits"] for t in r["threads"]), (threads, r["threads"])
other = ev["total"] - threads
if other:
    m = re.search(r"^  \(their PROBE HITS add up to (\d+) of the (\d+); the other (\d+) (is|are) "
                  r"(.*?),\s+counted per heap and for main_arena, not per thread\)$", text, re.M | re.S)
    assert m and [int(x) for x in m.group(1, 2, 3)] == [threads, ev["total"], other], m and m.groups()
    assert other == ev["unthreaded"], (other, ev["unthreaded"])
    named = dict((p, int(c)) for p, c in re.findall(r"(memory_\w+)'s (\d+)", m.group(5)))
    assert sum(named.values()) == other and all(n[p] == c for p, c in named.items()), (named, n)
print("cost:", hits, "of", total, "hits;", threads, "in the threads' rows,", other, "other")
PY
grep -q '^Thresholds:' "$OUT/sj.txt" && fail "a Thresholds section with no change in it"
grep -q '^Heaps (heap_info)' "$OUT/sj.txt" && fail "a Heaps section with no heap in it"
grep -q '^Nothing else to report: no heaps of other arenas (heap_info); no threshold change (mmap 128.0 KiB, trim 128.0 KiB, default)' \
	"$OUT/sj.txt" || fail "the sections with nothing to say are not folded: $(grep -n '^Nothing' "$OUT/sj.txt")"
grep -A3 '^ 1\. RSS ' "$OUT/sj.txt" | grep -q '^    suggestion: to tell a leak from memory in use .*mallocwatch snapshot -p PID' ||
	fail "finding 1's suggestion: $(grep -A3 '^ 1\. RSS ' "$OUT/sj.txt" | grep suggestion)"

# the saved stream keeps the time traced: the replay says the same
"$MW" replay -o "$OUT/replay.txt" "$OUT/sj.mw" || fail "replay exited $?"
grep -A3 '^  tracing cost:' "$OUT/sj.txt" >"$OUT/cost.live"
grep -A3 '^  tracing cost:' "$OUT/replay.txt" >"$OUT/cost.replay"
expect_same "$OUT/cost.live" "$OUT/cost.replay"
echo "ok: the cost line, and its replay: $(head -n 1 "$OUT/cost.live")"

# where it does not matter, nothing is said
"$MW" -q -e '!setjmp' -o "$OUT/noset.txt" -c $IN ./examples/setjmp-loop 200000 >/dev/null ||
	fail "-e '!setjmp': mallocwatch exited $?"
grep -q 'tracing cost' "$OUT/noset.txt" && fail "-e '!setjmp': $(grep -A2 'tracing cost' "$OUT/noset.txt")"
"$MW" -q -o "$OUT/sbrk.txt" -c $IN ./examples/sbrk-trim 2 >/dev/null || fail "sbrk-trim: exited $?"
grep -q 'tracing cost' "$OUT/sbrk.txt" && fail "sbrk-trim's few hits: $(grep -A2 'tracing cost' "$OUT/sbrk.txt")"
echo "ok: no cost line under -e '!setjmp', nor for $(sed -n 's/^  events: //p' "$OUT/sbrk.txt")"

# the shell too inside the root (MW_ROOT): the tree on one libc
"$MW" -q -f --json "$OUT/tree.json" -o "$OUT/tree.txt" -c $IN sh -c \
	"./examples/setjmp-loop 200000 >/dev/null; ./examples/setjmp-loop 200000 >/dev/null" ||
	fail "-f: mallocwatch exited $?"
python3 - "$OUT/tree.json" "$OUT/tree.txt" <<'PY' || fail "-f: the tree's cost"
import json, re, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
ps, c = r["processes"], r["totals"]["cost"]
assert len(ps) == 3, [p["target"]["argv"] for p in ps]
hits = sum(p["events"]["cost"]["by_family"].get("setjmp", 0) for p in ps)
assert c["family"] == "setjmp" and c["hits"] == hits >= 1200000 and c["shown"], c
assert not any(p["events"]["cost"]["shown"] for p in ps), [p["events"]["cost"] for p in ps]
lines = re.findall(r"^  tracing cost: setjmp made (\d+) of the (\d+) hits in all processes", text, re.M)
assert lines == [(str(hits), str(r["totals"]["events"]))], lines
assert text.index("processes in all: ") < text.index("tracing cost: setjmp")
print("tree:", hits, "setjmp hits in all, said once, under the totals")
PY
