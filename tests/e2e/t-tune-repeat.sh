#!/bin/sh
# tune repeats (45.3): on tests/fixtures/tune-det (peak RSS about 24 MiB
# with glibc's defaults, about 40 MiB with glibc.malloc.mmap_threshold=32M,
# wall times alike) two identical tune runs give the same marks; each
# setting runs 3 times by default, interleaved, its median inside its
# spread; the median of 2 runs is their mean; a row whose figures at exit
# are missing (a static program: no libc.so.6 to read) shows why and is
# never marked best.
# needs: root
. tests/lib/lib.sh
need_root
TD=build/tests/fixtures/tune-det
[ -x $TD ] || skip "no $TD (make check builds it)"

for i in 1 2; do
	"$MW" tune --try glibc.malloc.mmap_threshold=33554432 --json "$OUT/det$i.json" \
		-o "$OUT/det$i.txt" -c $TD 2>"$OUT/det$i.err" || fail "tune $i exited $?"
done
cat "$OUT/det1.txt"
python3 - "$OUT/det1.json" "$OUT/det2.json" "$OUT/det1.err" <<'PY' || fail "tune-det"
import json, sys
a, b = (json.load(open(p))["tune"]["settings"] for p in sys.argv[1:3])
marks = [[x["best"] for x in s] for s in (a, b)]
# The rule (docs/mallocwatch-tune.1): best where a spread of peak RSS or
# wall time lies wholly below another's (beyond 64 KiB, 0.02 s) and no
# other's lies wholly below its own.  The baseline's peak RSS lies wholly
# below the other's in every run (glibc's mmap threshold: the fixture's
# guarantee).  Wall times are alike on a quiet machine, so the baseline
# alone is best and two runs give the same marks; under load (stress-ng,
# a second make check) one setting's walls may all fall below the
# other's, and then neither is best.  Each run's marks must be what the
# rule gives from its own spreads, and the other setting is never best.
def below(x, y, k, floor):
    return x["spread"][k][1] + floor < y["spread"][k][0]
def rule(s):
    out = []
    for x in s:
        wins = any(below(x, y, k, f) for y in s if y is not x
                   for k, f in (("peak_rss", 65536), ("wall_seconds", 0.02)))
        loses = any(below(y, x, k, f) for y in s if y is not x
                    for k, f in (("peak_rss", 65536), ("wall_seconds", 0.02)))
        out.append(wins and not loses)
    return out
for s, m in zip((a, b), marks):
    assert below(s[0], s[1], "peak_rss", 65536), [(x["peak_rss"], x["spread"]) for x in s]
    assert m == rule(s) and not m[1], (m, [x["spread"] for x in s])
walls_apart = any(below(s[i], s[1 - i], "wall_seconds", 0.02) for s in (a, b) for i in (0, 1))
assert marks[0] == marks[1] or walls_apart, marks
for s in (a, b):
    for x in s:
        assert len(x["runs"]) == 3, x                       # 3 by default
        lo, hi = x["spread"]["peak_rss"]
        assert lo == min(r["peak_rss"] for r in x["runs"]) <= x["peak_rss"] <= hi == max(r["peak_rss"] for r in x["runs"]), x
        v = sorted(r["peak_rss"] for r in x["runs"])
        assert x["peak_rss"] == v[1], x
        assert x["unknown_reason"] is None, x
# interleaved: baseline, setting, baseline, ...
notes = [l for l in open(sys.argv[3]) if ": run " in l]
assert [("baseline" in l) for l in notes] == [True, False] * 3, notes
print("ok: the same marks twice:", marks[0], [x["peak_rss"] for x in a])
PY
grep -q '^\* (baseline)  *[0-9.]* MiB ([0-9.]* MiB-[0-9.]* MiB)' "$OUT/det1.txt" ||
	grep -q '^\* (baseline)  *[0-9.]* MiB  ' "$OUT/det1.txt" || fail "no median and spread in the text"

# the median of an even count: the mean of the middle two
"$MW" tune -q --repeat 2 --try glibc.malloc.mmap_threshold=33554432 --json "$OUT/two.json" \
	-o /dev/null -c $TD || fail "tune --repeat 2 exited $?"
python3 - "$OUT/two.json" <<'PY' || fail "the median of 2"
import json, sys
for x in json.load(open(sys.argv[1]))["tune"]["settings"]:
    r = x["runs"]
    assert len(r) == 2, x
    assert x["peak_rss"] == (r[0]["peak_rss"] + r[1]["peak_rss"]) // 2, x
    assert abs(x["wall_seconds"] - (r[0]["wall_seconds"] + r[1]["wall_seconds"]) / 2) < 1e-5, x
print("ok: the median of 2 is their mean")
PY

# figures at exit missing: shown with the reason, never best
printf 'int main(void) { return 0; }\n' >"$OUT/st.c"
if cc -static -o "$OUT/st" "$OUT/st.c" 2>/dev/null; then
	"$MW" tune -q --try glibc.malloc.arena_max=1 --json "$OUT/st.json" -o "$OUT/st.txt" \
		-c "$OUT/st" || fail "tune of a static program exited $?"
	python3 - "$OUT/st.json" <<'PY' || fail "a static program: $(cat "$OUT/st.txt")"
import json, sys
for x in json.load(open(sys.argv[1]))["tune"]["settings"]:
    assert not x["best"] and "maps no libc.so.6" in x["unknown_reason"], x
PY
	grep -q "^  (baseline): not compared, figures at exit missing .*maps no libc.so.6" "$OUT/st.txt" &&
		grep -q "^  no difference" "$OUT/st.txt" || fail "a static program's text: $(cat "$OUT/st.txt")"
	echo "ok: missing figures with their reason, no mark"
else
	echo "no static libc here (cc -static failed): the missing-figure case not run"
fi
