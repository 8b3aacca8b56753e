#!/bin/sh
# setjmp/longjmp a million times (examples/setjmp-loop): on the program's
# jmp_buf, setjmp, longjmp and longjmp_target must each count exactly
# 1000000, the longjmp values exactly what the program says, with no
# lost events.  Then -e: '!setjmp' leaves the family out, 'setjmp' traces
# only it.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
N=1000000
"$MW" -q --json "$OUT/report.json" -o "$OUT/summary.txt" -c $IN ./examples/setjmp-loop $N \
	>"$OUT/program.txt" || fail "mallocwatch exited $?"
buf=$(sed -n 's/^jmp_buf \(0x[0-9a-f]*\) .*/\1/p' "$OUT/program.txt")
[ -n "$buf" ] || exit 99
{
	for p in setjmp longjmp longjmp_target; do echo "jmp_buf $buf $p $N"; done
	sed -n 's/^longjmp_value \([0-9]*\) \([0-9]*\)$/longjmp value \1 \2/p' "$OUT/program.txt"
	echo "lost 0"
} >"$OUT/expected.txt"
python3 - "$OUT/report.json" "$buf" >"$OUT/actual.txt" <<'PY' || exit 99
import json, sys
r = json.load(open(sys.argv[1]))
s = r["setjmp"]
for p in ("setjmp", "longjmp", "longjmp_target"):
    for b in s["jmp_bufs"]:
        if b["probe"] == p and b["address"] == sys.argv[2]:
            print("jmp_buf", b["address"], p, b["count"])
for v in sorted(s["longjmp_values"], key=lambda v: v["value"]):
    if v["probe"] == "longjmp":
        print("longjmp value", v["value"], v["count"])
print("lost", r["events"]["lost"])
PY
expect_same "$OUT/expected.txt" "$OUT/actual.txt"
grep -q "^  values (longjmp): " "$OUT/summary.txt" || fail "no setjmp section in the summary"

# negative values, INT_MIN among them: the value's 32 bits share a key
# word with the probe and the thread (src/script/gen_int.h, MW_JW_*) and
# come back sign-extended, alone and in a tree (-f: keys begin with the
# process)
for how in one tree; do
	f=; [ $how = tree ] && f=-f
	"$MW" -q $f -e setjmp --json "$OUT/neg-$how.json" -o /dev/null -c $IN ./examples/setjmp-loop 7000 neg \
		>"$OUT/neg-$how.txt" || fail "setjmp-loop neg ($how): mallocwatch exited $?"
	sed -n 's/^longjmp_value \(-\{0,1\}[0-9]*\) \([0-9]*\)$/\1 \2/p' "$OUT/neg-$how.txt" | sort -n \
		>"$OUT/neg-$how.expected"
	[ "$(wc -l <"$OUT/neg-$how.expected")" = 7 ] || exit 99
	python3 - "$OUT/neg-$how.json" >"$OUT/neg-$how.actual" <<'PY' || exit 99
import json, sys
r = json.load(open(sys.argv[1]))
s = r["processes"][-1]["setjmp"] if r.get("processes") else r["setjmp"]
for v in sorted(s["longjmp_values"], key=lambda v: v["value"]):
    if v["probe"] == "longjmp":
        print(v["value"], v["count"])
PY
	expect_same "$OUT/neg-$how.expected" "$OUT/neg-$how.actual"
done

"$MW" -q -e '!setjmp' --json "$OUT/noset.json" -o /dev/null -c $IN ./examples/setjmp-loop 10 >/dev/null ||
	fail "mallocwatch -e '!setjmp' exited $?"
grep -q '"setjmp"' "$OUT/noset.json" && fail "-e '!setjmp' still traced setjmp"
grep -q '"memory_arena_new"' "$OUT/noset.json" || fail "-e '!setjmp' dropped the memory probes"
"$MW" -q -e setjmp --json "$OUT/only.json" -o /dev/null -c $IN ./examples/setjmp-loop 10 >/dev/null ||
	fail "mallocwatch -e setjmp exited $?"
grep -q '"memory_' "$OUT/only.json" && fail "-e setjmp traced memory probes"
grep -q '"setjmp": 11' "$OUT/only.json" || fail "-e setjmp: $(grep -o '"by_probe": {[^}]*' "$OUT/only.json")"
"$MW" -e bogus -c true 2>"$OUT/err"; [ $? = 2 ] && grep -q "unknown event family 'bogus'" "$OUT/err" ||
	fail "-e bogus"
cat "$OUT/actual.txt"
