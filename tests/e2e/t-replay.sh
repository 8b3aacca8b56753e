#!/bin/sh
# Stream parser -> state -> reports, on recorded streams (tests/streams):
# three real runs (arena-storm 24 threads, sbrk-trim, dyn-threshold) and
# hand-made edge cases (garbled lines, lost events, a tracer that died, a
# program killed by a signal, an unknown memory_* probe, a tcache double
# free).  Each NAME.mw must give exactly NAME.txt (summary), NAME.json,
# NAME.err (stderr) and NAME.rc (exit status).  No root needed.
# needs: cpu
. tests/lib/lib.sh
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

# Not a stream at all: an empty file, random bytes.
: >"$OUT/empty.mw"
head -c 4096 /dev/urandom >"$OUT/random.mw"
for f in empty random; do
	"$MW" replay -o "$OUT/$f.txt" "$OUT/$f.mw" 2>"$OUT/$f.err"
	rc=$?
	[ $rc = 1 ] || fail "replay of $f bytes exited $rc, expected 1"
	grep -q "^mallocwatch: '$OUT/$f.mw': not a mallocwatch stream" "$OUT/$f.err" ||
		fail "replay of $f bytes: $(cat "$OUT/$f.err")"
	[ "$(wc -l <"$OUT/$f.err")" = 1 ] || fail "replay of $f bytes: more than one line"
done

# Control bytes in a garbled line are escaped in the warning; a NUL inside
# a line makes it garbled; a probe declared with 0 arguments, and a known
# probe declared with fewer than it has, are parsed without reading
# uninitialised memory (valgrind); names that are not JSON-safe are
# escaped in the JSON report.
printf '# mallocwatch-stream 1\nP 1 memory_zero 0\nP 2 memory_mallopt 0\nP 3 memory_"quoted\\ 1\nMW 1 ready\nE 1 100\nE 2 100\nE 3 100 7\nE 9 \033[31mred\nN 1 100 1\nN 2 100 1\nN 3 100 1\nMW 1 end\n' >"$OUT/odd.mw"
printf 'E 1 100\000tail\n' >>"$OUT/odd.mw"
if command -v valgrind >/dev/null; then
	VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
else
	VG=
fi
$VG "$MW" replay -o "$OUT/odd.txt" --json "$OUT/odd.json" "$OUT/odd.mw" 2>"$OUT/odd.err"
rc=$?
[ $rc = 0 ] || { cat "$OUT/odd.err"; fail "replay of odd.mw exited $rc"; }
grep -q "garbled tracer line ignored and counted: 'E 2 100'" "$OUT/odd.err" ||
	fail "a known probe with too few arguments was not garbled: $(cat "$OUT/odd.err")"
grep -q "$(printf '\033')" "$OUT/odd.err" "$OUT/odd.txt" && fail "an escape byte reached the terminal"
python3 - "$OUT/odd.json" <<'PY' || fail "odd.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert 'memory_"quoted\\' in r["events"]["by_probe"], r["events"]["by_probe"]
assert r["events"]["garbled"] == 3, r["events"]   # E 2 (too short), E 9 (undeclared), the NUL line
print("odd stream:", r["events"])
PY
echo "bad streams refused or counted, never trusted"

# a stream is anyone's file: the snapshot's reason and the findings' text
# it carries reach the terminal quoted (no ESC of theirs), and a snapshot
# line that is not one is counted as garbled
python3 - tests/fuzz/corpus-stream/p-snapshots.mw "$OUT/hostile.mw" <<'PY'
import sys
out = []
for l in open(sys.argv[1]):
    if l.startswith("# snapshot "):
        l = l.replace('"consistent":true,"inconsistent_reason":null',
                      '"consistent":false,"inconsistent_reason":"\\u001b]0;PWNED\\u0007\\u001b[2J"')
    if l.startswith("# finding  1."):
        l = "# finding  1. \\x1b[41mX\\x1b]0;T\\x07\n"
    out.append(l)
out.insert(len(out) - 1, "# snapshot end {not json\n")
open(sys.argv[2], "w").write("".join(out))
PY
grep -q 'PWNED' "$OUT/hostile.mw" || exit 99
"$MW" replay -o "$OUT/hostile.txt" "$OUT/hostile.mw" 2>"$OUT/hostile.err"
[ $? = 0 ] || fail "replay of the hostile stream: $(cat "$OUT/hostile.err")"
if grep -q "$(printf '\033')" "$OUT/hostile.txt" "$OUT/hostile.err"; then
	fail "an ESC of the stream's reached the output: $(grep -n "$(printf '\033')" "$OUT/hostile.txt" | cat -v | head -3)"
fi
grep -q 'INCONSISTENT: \\x1b\]0;PWNED\\x07' "$OUT/hostile.txt" || fail "the reason is not shown quoted: $(grep INCONSISTENT "$OUT/hostile.txt")"
grep -q '\\x1b\[41mX' "$OUT/hostile.txt" || fail "the finding is not shown quoted"
grep -q "saved snapshot (end) is garbled or repeated" "$OUT/hostile.err" ||
	fail "the garbled snapshot line was not said: $(cat "$OUT/hostile.err")"
echo "ok: a stream's reason and findings reach the terminal quoted; a garbled snapshot line is counted"
