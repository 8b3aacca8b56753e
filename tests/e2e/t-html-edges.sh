#!/bin/sh
# The HTML report's edges (issue 26, item 7), on tests/golden/html/storm20.mw
# (a saved -c run of examples/arena-storm 20: 16 arenas, 21 threads, no
# lock waits; thread 8356 reused main_arena before its address was known,
# an attachment the model merges when the bias comes, keeping its time):
#  - thread 8356's lane shows main_arena, as the table does ("8356(reuse)"),
#    not "no arena event seen", from the time it reused it (0.004 s; the
#    merge once stamped it with the bias's time, and drew it untimed);
#  - the empty lock-wait strip says "no waits";
#  - the 16 arenas' colours differ: every pair by a CIE76 delta E of 30 or
#    more (the palette before: two blues 10.5 apart);
#  - a stream without samples (as -f's processes have) draws its arenas
#    and heaps from the events, bounded by the chart's pixel columns:
#    tests/lib/mkstream-heaps.sh's 100,000 heaps made and freed give at most
#    921 steps and markers, whose counts add up to the heaps made (100,005)
#    and freed (100,000) exactly, the last step with 3 arenas and 5 heaps.
# No root needed.
# needs: cpu
. tests/lib/lib.sh
command -v python3 >/dev/null || skip "no python3"
"$MW" replay -o "$OUT/storm.txt" --html "$OUT/storm.html" tests/golden/html/storm20.mw 2>"$OUT/err" ||
	fail "replay exited $?: $(cat "$OUT/err")"
grep -q '0x7fc47c2d8c60 .*8356(reuse)' "$OUT/storm.txt" || fail "the table does not show 8356's reuse"
sed -n '/data-tid="8356"/,/<\/g>/p' "$OUT/storm.html" >"$OUT/lane8356"
grep -q 'no arena event seen' "$OUT/lane8356" && fail "8356: $(cat "$OUT/lane8356")"
grep -q '<circle class="how reuse" [^>]*><title>0.004 s  tid 8356: reuse arena 0x7fc47c2d8c60<' "$OUT/lane8356" &&
grep -q '<rect[^>]*><title>tid 8356 on arena 0x7fc47c2d8c60 from 0.004 s<' "$OUT/lane8356" ||
	fail "8356's lane does not show main_arena: $(cat "$OUT/lane8356")"
sed -n '/<svg id="waits"/,/<\/svg>/p' "$OUT/storm.html" >"$OUT/waits"
grep -q '>no waits: no thread waited' "$OUT/waits" || fail "empty waits strip: $(cat "$OUT/waits")"
python3 - "$OUT/storm.html" <<'PY' || fail "arena colours too alike"
import itertools, re, sys
html = open(sys.argv[1]).read()
legend = re.search(r'<p class="legend">(.*?)</p>', html).group(1)
cols = re.findall(r'background:(#[0-9a-f]{6})"></i>(?:main_arena )?0x', legend)
assert len(cols) == 16, cols
def lab(h):
    def lin(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(int(h[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x = (r * .4124 + g * .3576 + b * .1805) / .95047
    y = r * .2126 + g * .7152 + b * .0722
    z = (r * .0193 + g * .1192 + b * .9505) / 1.08883
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
d, a, b = min((sum((p - q) ** 2 for p, q in zip(lab(a), lab(b))) ** .5, a, b)
              for a, b in itertools.combinations(cols, 2))
print("16 arenas: the closest colours %s and %s, delta E %.1f" % (a, b, d))
sys.exit(0 if d >= 30 else 1)
PY

sh tests/lib/mkstream-heaps.sh 100000 >"$OUT/heaps.mw" || exit 99
"$MW" replay -q -o /dev/null --html "$OUT/heaps.html" "$OUT/heaps.mw" 2>"$OUT/err" ||
	fail "replay of heaps.mw exited $?: $(cat "$OUT/err")"
python3 - "$OUT/heaps.html" <<'PY' || fail "the chart of 100000 heaps"
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" id="mw-data">(.*?)</script>', html,
                         re.S).group(1))["ev"]
made = [int(n) for n in re.findall(r'<path class="heap-new" data-n="(\d+)"', html)]
freed = [int(n) for n in re.findall(r'<path class="heap-free" data-n="(\d+)"', html)]
print("%d steps, %d and %d markers for %d heaps made, %d freed; page %d bytes"
      % (len(d["t"]), len(made), len(freed), sum(made), sum(freed), len(html)))
assert len(d["t"]) <= 921 and len(made) <= 921 and len(freed) <= 921, (len(d["t"]), len(made))
assert (sum(made), sum(freed)) == (100005, 100000), (sum(made), sum(freed))
assert (d["arenas"][-1], d["heaps"][-1], max(d["heaps"])) == (3, 5, 6), d["heaps"][-3:]
assert html.count('<circle class="arena-new"') == 2
PY
rm -f "$OUT/heaps.mw"
echo "lanes: 8356 on main_arena; waits: 'no waits'; colours apart; 100000 heaps in 921 steps"
