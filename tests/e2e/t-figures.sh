#!/bin/sh
# Figures, cross-checked where they are computed, on streams made here
# (replayed: deterministic, no root, no glibc of our own).  The inputs
# are asymmetric on purpose, so that one figure taken for another shows:
#  - a heap that grows 7 times and shrinks 2 (G records: the hits of
#    memory_heap_more and memory_heap_less come from those fields), and a
#    second heap of the same arena freed mid-run (grew 3, shrank 1);
#  - the arena's heap count and heap bytes are its live heaps' only, and
#    agree with the "heaps" list and the heaps / heap_bytes metrics;
#  - sbrk grows more than it trims (net = grown - trimmed, peak >= net);
#  - rules relative to a baseline that differs from the report: +10% of
#    the baseline, never of the new value (a 10.5% rise fails <=+10%);
#  - a memory_heap_free record with no H record of its own (the tables
#    were not full: the count of end records does not underflow).
# needs: cpu
. tests/lib/lib.sh

H1=139637976727552	# 0x7f0000000000: heaps are 64 MiB aligned
H2=139638043836416	# 0x7f0004000000
AR=$((H1 + 48))		# the arena inside its first heap
cat >"$OUT/churn.mw" <<EOF || exit 99
# mallocwatch-stream 1
# pid 100
P 0 memory_arena_new 2
P 5 memory_heap_new 2
P 6 memory_heap_free 2
P 7 memory_heap_more 2
P 8 memory_heap_less 2
P 9 memory_sbrk_more 2
P 10 memory_sbrk_less 2
MW 1 ready
T 5 101 1000 $H1 135168
T 0 101 1001 $AR 2264
T 5 101 1002 $H2 135168
G $H2 $AR 65536 200704 3 1
T 6 101 1003 $H2 65536
N 0 101 1
N 5 101 2
N 6 101 1
G $H1 $AR 532480 598016 7 2
S 3145728 1048576 5 2 2621440 94000000000000 94000002097152 0
MW 1 end
EOF
"$MW" replay -o "$OUT/churn.txt" --json "$OUT/churn.json" "$OUT/churn.mw" 2>"$OUT/churn.err" ||
	fail "replay of churn.mw exited $?: $(cat "$OUT/churn.err")"
"$MW" check --metrics "$OUT/churn.json" >"$OUT/churn.metrics" || fail "check --metrics exited $?"
python3 - "$OUT/churn.json" "$OUT/churn.metrics" "$H1" "$H2" "$AR" <<'PY' || fail "churn figures"
import json, sys
r = json.load(open(sys.argv[1]))
m = dict(l.split()[:2] for l in open(sys.argv[2]) if l.strip())
m = {k: int(v) for k, v in m.items() if v.lstrip("-").isdigit()}
h1, h2, ar = (int(x) for x in sys.argv[3:6])
by = r["events"]["by_probe"]
# G records: grew is memory_heap_more's, shrank memory_heap_less's
assert by["memory_heap_more"] == 3 + 7, by
assert by["memory_heap_less"] == 1 + 2, by
heaps = {int(h["address"], 16): h for h in r["heaps"]}
assert heaps[h1]["grew"] == 7 and heaps[h1]["shrank"] == 2, heaps[h1]
assert heaps[h2]["grew"] == 3 and heaps[h2]["shrank"] == 1, heaps[h2]
assert heaps[h2]["freed"] and not heaps[h1]["freed"], heaps
assert heaps[h1]["peak_size"] == 598016 and heaps[h1]["size"] == 532480, heaps[h1]
assert heaps[h2]["peak_size"] == 200704, heaps[h2]
# the arena's heaps are its live ones: count and bytes
a = [x for x in r["arenas"] if x["address"] and int(x["address"], 16) == ar]
assert len(a) == 1, r["arenas"]
live = [h for h in r["heaps"] if not h["freed"] and int(h["arena"], 16) == ar]
assert a[0]["heaps"] == len(live) == 1, (a[0], live)
assert a[0]["heap_bytes"] == sum(h["size"] for h in live) == 532480, a[0]
# the metrics agree with the lists they come from
assert m["heaps"] == 1, m
assert m["heap_bytes"] == 532480, m
assert m["heap_bytes_peak"] == 598016 + 200704, m
assert m["arenas"] == 2 and m["arenas_created"] == 1, m
# sbrk: grown 3 MiB in 5 calls, trimmed 1 MiB in 2: net 2 MiB
s = r["sbrk"]
assert s["grown"] == 3145728 and s["trimmed"] == 1048576, s
assert s["net"] == s["grown"] - s["trimmed"] == m["sbrk_net"] == 2097152, (s, m)
assert m["sbrk_peak"] == s["peak"] == 2621440 >= s["net"], (s, m)
main = [x for x in r["arenas"] if x["main"]][0]
assert main["heap_bytes"] == s["net"], main
print("churn figures:", {k: m[k] for k in ("heaps", "heap_bytes", "heap_bytes_peak", "sbrk_net")})
PY
grep -q 'full' "$OUT/churn.err" && fail "a table said full: $(cat "$OUT/churn.err")"
echo "ok: heap_more/less hits, live heaps per arena, metrics and sbrk agree"

# rules relative to a real, different baseline: heap_bytes 532480 in the
# report; a baseline of 481882 (+10% is 530070: 0.45% under) fails
# <=+10%, one of 484073 (+10% = 532480) passes it exactly; -N% of the
# baseline likewise; a +N rule adds N to the baseline's value
python3 - "$OUT/churn.json" "$OUT" <<'PY' || exit 99
import json, sys
r = json.load(open(sys.argv[1]))
for name, hb in (("base-under", 481882), ("base-exact", 484073), ("base-big", 600000)):
    b = json.loads(json.dumps(r))
    for a in b["arenas"]:
        if not a["main"]:
            a["heap_bytes"] = hb
    json.dump(b, open(f"{sys.argv[2]}/{name}.json", "w"))
PY
C="$OUT/churn.json"
expect_rc() {
	want=$1; shift
	"$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $(cat "$OUT/out" "$OUT/err")"
}
expect_rc 3 "$MW" check --baseline "$OUT/base-under.json" --check 'heap_bytes<=+10%' "$C"
grep -qx "FAIL heap_bytes 532480 (520.0 KiB), limit <= 530070 (517.6 KiB) (baseline 481882 (470.6 KiB), rule 'heap_bytes<=+10%')" "$OUT/out" ||
	fail "+10% of the baseline: $(cat "$OUT/out")"
expect_rc 0 "$MW" check --baseline "$OUT/base-exact.json" --check 'heap_bytes<=+10%' "$C"
expect_rc 3 "$MW" check --baseline "$OUT/base-exact.json" --check 'heap_bytes<+10%' "$C"
expect_rc 0 "$MW" check --baseline "$OUT/base-big.json" --check 'heap_bytes<=-11%' "$C"
grep -q "limit <= 534000 " "$OUT/out" || fail "-11% of 600000: $(cat "$OUT/out")"
expect_rc 3 "$MW" check --baseline "$OUT/base-big.json" --check 'heap_bytes<=-12%' "$C"
expect_rc 0 "$MW" check --baseline "$OUT/base-under.json" --check 'heap_bytes<=+50598' "$C"
expect_rc 3 "$MW" check --baseline "$OUT/base-under.json" --check 'heap_bytes<=+50597' "$C"
expect_rc 3 "$MW" check --baseline "$OUT/base-under.json" --check 'heap_bytes>=+50599' "$C"
echo "ok: relative rules are taken of the baseline"

# a memory_heap_free with no H record: no table was full
printf '# mallocwatch-stream 1\nP 6 memory_heap_free 2\nMW 1 ready\nT 6 100 5 %s 135168\nN 6 100 1\nMW 1 end\n' \
	"$H1" >"$OUT/free-only.mw"
"$MW" replay -o "$OUT/free-only.txt" --json "$OUT/free-only.json" "$OUT/free-only.mw" \
	2>"$OUT/free-only.err" || fail "replay of free-only.mw exited $?"
grep -q 'FULL' "$OUT/free-only.txt" && fail "a free without H said the tables were full: $(grep FULL "$OUT/free-only.txt")"
grep -q '"full_tables": ""' "$OUT/free-only.json" || fail "full_tables: $(grep full_tables "$OUT/free-only.json")"
grep -q '"complete": true' "$OUT/free-only.json" || fail "the run is not complete"
[ -s "$OUT/free-only.err" ] && fail "stderr: $(cat "$OUT/free-only.err")"
echo "ok: a heap free without its H record is no full table"

# -p: the main heap trimmed more than it grew while traced (what was
# there before): a net below 0, said as such, not 2^64 - N
printf '# mallocwatch-stream 1\nP 10 memory_sbrk_less 2\nMW 1 ready\nS 0 135168 0 1 0 94000000000000 94000000000000 0\nMW 1 end\n' \
	>"$OUT/neg.mw"
"$MW" replay -o "$OUT/neg.txt" --json "$OUT/neg.json" "$OUT/neg.mw" 2>"$OUT/neg.err" ||
	fail "replay of neg.mw exited $?"
grep -q 'trimmed 132.0 KiB in 1 call, net -132.0 KiB (-135168 bytes)' "$OUT/neg.txt" ||
	fail "a net below 0: $(grep -A1 'Main arena sbrk' "$OUT/neg.txt")"
grep -q '"net": -135168' "$OUT/neg.json" || fail "JSON net: $(grep '"net"' "$OUT/neg.json")"
echo "ok: an sbrk net below 0 is said as one"
