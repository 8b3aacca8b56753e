#!/bin/sh
# The HTML report's thread lanes (report_html.c lanes()):
#  - tests/golden/html/lanes.mw (12 threads, the main one among them, 6 arenas,
#    attachments by memory_arena_new, _reuse and _reuse_free_list, timed
#    ones with equal times and ones before the program's start, untimed
#    ones) gives exactly tests/golden/html/lanes.html, the page written before
#    the lanes were indexed (which attachment comes next, ties included;
#    since then only its colours, the empty waits strip's "no waits"
#    (t-html-edges) and the empty bytes chart's note, which replaced its
#    lone "1 B" axis label, changed; then, the stream having no samples,
#    the chart of arenas and heaps from its events replaced that note);
#  - 200000 threads attaching once each (tests/lib/mkstream-threads.sh) are
#    drawn in well under 10 s: linear, where a scan of every attachment
#    per thread took about 30 s (bench/run times it against 20000).
# No root needed.
# needs: cpu
. tests/lib/lib.sh
"$MW" replay -q -o /dev/null --html "$OUT/lanes.html" tests/golden/html/lanes.mw ||
	fail "replay of lanes.mw exited $?"
expect_same tests/golden/html/lanes.html "$OUT/lanes.html"
echo "ok: lanes as before"

N=200000
sh tests/lib/mkstream-threads.sh $N >"$OUT/big.mw" || exit 99
start=$(date +%s%N)
timeout 120 "$MW" replay -q -o /dev/null --html "$OUT/big.html" "$OUT/big.mw" ||
	fail "replay --html of $N threads exited $?"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$(grep -c '^<g class="lane"' "$OUT/big.html")" = $N ] || fail "not $N lanes"
[ "$(grep -c '^<circle class="how' "$OUT/big.html")" = $N ] || fail "not $N attachments drawn"
[ $ms -lt 10000 ] || fail "replay --html of $N threads took $ms ms (linear: about 1 s)"
rm -f "$OUT/big.mw" "$OUT/big.html"
echo "ok: $N threads' lanes in $ms ms"
