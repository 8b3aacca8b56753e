#!/bin/sh
# --stacks on memory_heap_more (issue 22 item 1): a hot probe, sampled by
# the kernel (the perf event's sample_period: 1 in 64 hits per CPU, the
# others only counted; MW_STACKS_HEAP_PERIOD overrides it).
#
# examples/heap-churn N thread: a thread's own arena's heap grows by a
# 512 KiB malloc and shrinks at its free, N times: N memory_heap_more hits
# under churn <- start_thread (what glibc guarantees with the thresholds
# the program fixes: grow_heap at each malloc, shrink_heap at each free).
# Asserted: the text's "memory_heap_more: S samples of 1 in 64 hits"
# with S between N/64 - CPUs and N/64 (each CPU's event counts its own
# hits; none lost at this rate), every sample under "churn <-
# start_thread"; the JSON's heap_more events say "hits": 64 and the
# stats "heap_more_period": 64; --folded has the line ending in
# ";churn;...;memory_heap_more S*64"; the HTML page's summary has the
# line and its flame graph of heap growths has churn <- start_thread with
# S*64 (tests/lib/flame-check.py).  MW_STACKS_HEAP_PERIOD=0: no heap_more stack, and the period 0
# in the stats.  The program runs on a copy of the probe-enabled libc of
# its own (--libc): the kernel counts a uprobe's hits by the file, every
# process's on a CPU, and a test beside it (tests/run -j, a second make
# check) that grows heaps on the shared libc moved where the samples
# fell (51 samples of N/64 = 50, once, beside another make check).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -x examples/heap-churn ] || make -s -C examples heap-churn >/dev/null 2>&1 ||
	skip "no examples/heap-churn"
N=3200
d=$OUT/sampled
mkdir -p "$d" "$OUT/libc"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" "$OUT/libc/" ||
	fail "cannot copy the probe-enabled libc"
$MW --libc "$OUT/libc/libc.so.6" --stacks --folded "$d/folded" --json "$d/report.json" -o "$d/summary" --html "$d/page.html" \
	-c ./examples/heap-churn $N thread >"$d/stdout" 2>"$d/stderr" ||
	fail "heap-churn: exit $?: $(cat "$d/stderr")"
sed -n '/^Stacks/,$p' "$d/summary"
line=$(grep '^  memory_heap_more: ' "$d/summary") || fail "no memory_heap_more line in the stacks"
s=$(echo "$line" | sed -n 's/^  memory_heap_more: \([0-9]*\) samples of 1 in 64 hits.*/\1/p')
cpus=$(nproc)
[ -n "$s" ] && [ "$s" -le $((N / 64)) ] && [ "$s" -ge $((N / 64 - cpus)) ] ||
	fail "memory_heap_more: '$line': not $((N / 64 - cpus)) to $((N / 64)) samples of 1 in 64"
grep -A1 '^  memory_heap_more: ' "$d/summary" | tail -1 | grep -q " $s x  churn <- start_thread" ||
	fail "the samples are not all under churn <- start_thread: $(grep -A3 '^  memory_heap_more' "$d/summary")"
w=$(grep ';churn;.*;memory_heap_more ' "$d/folded" | awk '{ s += $NF } END { print s + 0 }')
[ "$w" = $((s * 64)) ] || fail "--folded: $w growths under churn for heap_more, not $((s * 64))"
python3 - "$d/report.json" "$s" <<'PY' || fail "JSON: heap_more events"
import json, sys
st = json.load(open(sys.argv[1]))["stacks"]
ev = [e for e in st["events"] if e["probe"] == "memory_heap_more"]
assert len(ev) == int(sys.argv[2]), (len(ev), sys.argv[2])
assert st["stats"]["heap_more_period"] == 64, st["stats"]
for e in ev:
    assert e["hits"] == 64, e["hits"]
    names = [f["function"] for f in e["frames"]]
    assert "churn" in names, names
    assert len(e["args"]) == 2 and e["args"][1] >= 512 * 1024, e["args"]
print("JSON:", len(ev), "heap_more samples of 64 hits, under", names[names.index("churn"):])
PY
grep -q 'memory_heap_more: [0-9]* samples of 1 in 64 hits' "$d/page.html" ||
	fail "the page's summary has no heap_more stacks"
# the page's flame graph of the heap growths (report_flame.c), as
# --folded: churn under start_thread with every sample's 64 growths
python3 tests/lib/flame-check.py "$d/page.html" "$d/folded" memory_heap_more \
	"start_thread;churn" $((s * 64)) || fail "the flame graph of heap growths"

# MW_STACKS_HEAP_PERIOD=0: heap_more not stacked
d=$OUT/off
mkdir -p "$d"
MW_STACKS_HEAP_PERIOD=0 $MW --stacks --json "$d/report.json" -o "$d/summary" \
	-c ./examples/heap-churn 500 thread >"$d/stdout" 2>"$d/stderr" ||
	fail "period 0: exit $?: $(cat "$d/stderr")"
! grep -q '^  memory_heap_more: ' "$d/summary" || fail "period 0: heap_more stacks: $(grep heap_more "$d/summary")"
python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["stacks"]["stats"]; assert s["heap_more_period"] == 0, s' \
	"$d/report.json" || fail "period 0: the stats"
echo "PASS"
