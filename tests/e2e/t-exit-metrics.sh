#!/bin/sh
# The --check metrics read at exit (45.4): mmapped_bytes, rss_exit,
# peak_rss, free_resident_bytes and trim_now_bytes of a -c run of
# tests/fixtures/hold-mmapped (3 chunks of 1 MiB held at exit, every
# other of 2000 small chunks freed).  mmapped_bytes equals the mmap total
# of the program's own malloc_info(); each metric has a rule that fails
# and one that passes; the text summary has a peak RSS line.  A replayed
# stream has no exit snapshot: each metric is "unknown" with its reason
# and a rule on it fails.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
HM=build/tests/fixtures/hold-mmapped
[ -x $HM ] || skip "no $HM (make check builds it)"

"$MW" --json "$OUT/hm.json" -o "$OUT/hm.txt" -c $HM "$OUT/mi.xml" 2>"$OUT/hm.err" ||
	fail "-c hold-mmapped exited $?: $(cat "$OUT/hm.err")"
"$MW" check --metrics "$OUT/hm.json" >"$OUT/hm.metrics" || fail "check --metrics exited $?"
python3 - "$OUT/mi.xml" "$OUT/hm.metrics" "$OUT/hm.json" <<'PY' || fail "exit metrics: $(cat "$OUT/hm.metrics")"
import json, sys, xml.etree.ElementTree as ET
mi = ET.parse(sys.argv[1]).getroot()
mm = [t for t in mi.findall("total") if t.get("type") == "mmap"][0]
m = dict(l.split() for l in open(sys.argv[2]))
assert int(mm.get("count")) == 3, ET.tostring(mm)
assert int(m["mmapped_bytes"]) == int(mm.get("size")) >= 3 << 20, (m["mmapped_bytes"], mm.get("size"))
r = json.load(open(sys.argv[3]))
l = r["snapshots"]["exit"]["ledger"]
assert int(m["rss_exit"]) == l["rss"] and int(m["peak_rss"]) == l["peak_rss"], (m, l["rss"])
assert int(m["peak_rss"]) >= int(m["rss_exit"]) >= 3 << 20, m
assert int(m["free_resident_bytes"]) == l["free_resident"] > 0, m
assert int(m["trim_now_bytes"]) == r["snapshots"]["exit"]["fragmentation"]["trim_now"], m
print("exit metrics:", {k: m[k] for k in ("mmapped_bytes", "rss_exit", "peak_rss",
      "free_resident_bytes", "trim_now_bytes")}, "malloc_info mmap", mm.get("size"))
PY
grep -q '^  peak RSS [0-9.]* [KMG]iB (the highest so far, not a part; VmHWM' "$OUT/hm.txt" || fail "no peak RSS line: $(grep -A3 'RSS ledger' "$OUT/hm.txt")"

# rc WANT RULE...: check's exit status on hm.json is WANT
rc() {
	_want=$1; shift
	"$MW" check "$@" "$OUT/hm.json" >"$OUT/out" 2>"$OUT/err"
	_rc=$?
	[ $_rc = "$_want" ] || fail "check $*: exited $_rc, not $_want: $(cat "$OUT/out" "$OUT/err")"
}
for mt in mmapped_bytes rss_exit peak_rss free_resident_bytes trim_now_bytes; do
	v=$(awk -v m=$mt '$1 == m {print $2}' "$OUT/hm.metrics")
	rc 0 --check "$mt==$v"
	grep -q "^PASS $mt $v " "$OUT/out" || fail "$mt: $(cat "$OUT/out")"
	rc 3 --check "$mt<$v"
	grep -q "^FAIL $mt $v " "$OUT/out" || fail "$mt: $(cat "$OUT/out")"
done
echo "ok: a rule on each passes and one fails"

# no exit snapshot (a replayed stream): unknown, with the reason; rules fail
"$MW" check --metrics tests/streams/storm24.json >"$OUT/st.metrics" || fail "--metrics of storm24 exited $?"
for mt in mmapped_bytes rss_exit peak_rss free_resident_bytes trim_now_bytes; do
	grep -qx "$mt unknown" "$OUT/st.metrics" || fail "storm24: $mt: $(cat "$OUT/st.metrics")"
	"$MW" check --check "$mt<=1G" tests/streams/storm24.json >"$OUT/out" 2>"$OUT/err"
	_rc=$?
	[ $_rc = 3 ] || fail "storm24: rule on $mt exited $_rc: $(cat "$OUT/out" "$OUT/err")"
	grep -q "^FAIL $mt: unknown: no snapshot at exit" "$OUT/out" || fail "storm24: $mt: $(cat "$OUT/out")"
done
echo "ok: without an exit snapshot each is unknown and its rule fails"
