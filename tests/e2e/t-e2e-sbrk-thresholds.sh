#!/bin/sh
# End to end: main-heap growth and trim (sbrk-trim), and the dynamic mmap
# threshold (dyn-threshold).  sbrk net must equal main_arena's system
# bytes from malloc_info(); the thresholds must be what the program says
# glibc set.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
"$MW" -q --json "$OUT/trim.json" -o "$OUT/trim.txt" -c $IN ./examples/sbrk-trim 8 \
	>"$OUT/trim.xml" || fail "mallocwatch exited $?"
expect_malloc_info "$OUT/trim.xml" "$OUT/trim.json" "$OUT"
python3 - "$OUT/trim.json" <<'PY' || fail "sbrk did not both grow and trim"
import json, sys
s = json.load(open(sys.argv[1]))["sbrk"]
print(s)
assert s["grown"] > 8 * 2**20 and s["trimmed"] > 4 * 2**20 and s["trim_calls"] > 0, s
assert s["peak"] == s["grown"], s  # all growth comes before the trims
PY

"$MW" -q --json "$OUT/thr.json" -o "$OUT/thr.txt" -c $IN ./examples/dyn-threshold 1024 3072 200 \
	>"$OUT/thr.out" || fail "mallocwatch exited $?"
sed -n 's/^expect //p' "$OUT/thr.out" >"$OUT/thr.expected"
python3 - "$OUT/thr.json" >"$OUT/thr.actual" <<'PY' || exit 99
import json, sys
t = json.load(open(sys.argv[1]))["thresholds"]
for c in t["changes"]:
    print("mmap_threshold=%d trim_threshold=%d" % (c["mmap"], c["trim"]))
PY
[ -s "$OUT/thr.expected" ] || exit 99
expect_same "$OUT/thr.expected" "$OUT/thr.actual"
tail -n 1 "$OUT/thr.expected" | sed 's/mmap_threshold=\([0-9]*\).*/\1/' >"$OUT/final.exp"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["thresholds"]["mmap"])' \
	"$OUT/thr.json" >"$OUT/final.act"
expect_same "$OUT/final.exp" "$OUT/final.act"
