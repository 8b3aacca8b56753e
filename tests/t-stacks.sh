#!/bin/sh
# --stacks: user call stacks of the rare allocator events, from uprobe
# perf events beside the tracer, unwound with libdwfl (src/trace/stacks.c,
# src/live/unwind.c, src/report/report_stacks.c).
#
# tests/fixtures/stack-chains 3 double: 3 threads, released at a barrier,
# each make an arena under chain_a -> chain_b -> chain_c; the main thread
# grows the break by 4 MiB under grow_a -> grow_b -> grow_c and frees a
# block twice under twice_a -> twice_b -> twice_c (glibc aborts).  Built
# three ways: CFI only (-O2, no frame pointer), with the frame pointer,
# stripped (the chain's names from .dynsym).  What glibc guarantees:
# a thread's first malloc makes an arena while fewer than 8 * cores exist
# (memory_arena_new under chain_c), 4 MiB of 64 KiB blocks under the
# 128 KiB mmap threshold come from sbrk (memory_sbrk_more under grow_c),
# the second free finds the block in the tcache (memory_tcache_double_free).
# Asserted: 3 arena lines, each "chain_c <- chain_b <- chain_a" in that
# order; the top sbrk stack "grow_c <- grow_b <- grow_a <- main" with at
# least 3.5 MiB (4 MiB asked; the top left by earlier growth serves some); the double free under
# "twice_c <- twice_b <- twice_a"; --folded has the sbrk line root first
# with its bytes; the JSON frames name chain_c with a file and line where
# there is debug info.  The saved stream (--save-stream) keeps the raw
# stacks and module maps: its replay prints the same stacks section and
# the same folded lines, symbolized again from the files (item 3); a
# garbled stack record is counted, not fatal.
. tests/lib.sh
need_root
need_libc
for v in stack-chains stack-chains-fp stack-chains-stripped; do
	[ -x build/tests/fixtures/$v ] || skip "no build/tests/fixtures/$v (make check builds it)"
done

for v in stack-chains stack-chains-fp stack-chains-stripped; do
	d=$OUT/$v
	mkdir -p "$d"
	$MW --stacks --folded "$d/folded" --json "$d/report.json" -o "$d/summary" \
		--save-stream "$d/saved.mw" -c build/tests/fixtures/$v 3 double >"$d/stdout" 2>"$d/stderr"
	rc=$?
	# the program aborts (SIGABRT) at the double free: 128 + 6
	[ $rc = 134 ] || { cat "$d/stderr"; fail "$v: exit $rc, not 134 (the program's abort)"; }
	sed -n '/^Stacks/,$p' "$d/summary"
	n=$(grep -c 'created by thread [0-9]* at: chain_c <- chain_b <- chain_a' "$d/summary")
	[ "$n" = 3 ] || fail "$v: $n arenas named chain_c <- chain_b <- chain_a, not 3"
	line=$(grep -A1 'memory_sbrk_more:' "$d/summary" | tail -1)
	case "$line" in
	*"grow_c <- grow_b <- grow_a <- main"*) ;;
	*) fail "$v: the top sbrk stack is not grow_c <- grow_b <- grow_a <- main: $line" ;;
	esac
	grep -q 'tcache double free of 0x[0-9a-f]* by thread [0-9]* at: twice_c <- twice_b <- twice_a <- main' \
		"$d/summary" || fail "$v: no double free under twice_c <- twice_b <- twice_a"
	bytes=$(grep ';main;grow_a;grow_b;grow_c;' "$d/folded" | awk '{s += $NF} END {print s + 0}')
	[ "$bytes" -ge 3670016 ] || fail "$v: --folded has $bytes bytes under grow_c, not 3.5 MiB or more"
	python3 - "$d/report.json" "$v" <<'PY' || fail "$v: JSON frames"
import json, sys
r = json.load(open(sys.argv[1]))
ev = [e for e in r["stacks"]["events"] if e["probe"] == "memory_arena_new"]
assert len(ev) == 3, len(ev)
for e in ev:
    names = [f["function"] for f in e["frames"]]
    i = names.index("chain_c")
    assert names[i:i + 3] == ["chain_c", "chain_b", "chain_a"], names
    f = e["frames"][i]
    assert f["module"] == sys.argv[2] and f["address"] > 0, f
    if sys.argv[2] != "stack-chains-stripped":
        assert f["file"].endswith("stack-chains.c") and f["line"] > 0, f
    assert f["build_id"], f
print(sys.argv[2], "JSON: chain_c at", e["frames"][i]["file"], e["frames"][i]["line"])
PY
	# the replay: the same section, the same folded lines, the same frames
	$MW replay -o "$d/replay" --folded "$d/rfolded" --json "$d/replay.json" "$d/saved.mw" \
		2>"$d/replay.err"
	[ $? = 134 ] || fail "$v: replay exit not 134: $(cat "$d/replay.err")"
	grep -q '^X memory_arena_new ' "$d/saved.mw" || fail "$v: no X record in the saved stream"
	sed -n '/^Stacks/,$p' "$d/summary" >"$d/live.stacks"
	sed -n '/^Stacks/,$p' "$d/replay" >"$d/replay.stacks"
	diff -u "$d/live.stacks" "$d/replay.stacks" || fail "$v: the replay's stacks section differs"
	diff -u "$d/folded" "$d/rfolded" || fail "$v: the replay's folded lines differ"
	python3 - "$d/report.json" "$d/replay.json" <<'PY' || fail "$v: the replay's JSON stacks differ"
import json, sys
a, b = (json.load(open(p))["stacks"] for p in sys.argv[1:])
assert a["events"] == b["events"], "events"
PY
	echo "$v: the replay's stacks are the live run's"
done

# a stream whose files are gone: module+offset and the build-id; a
# garbled stack record counted
d=$OUT/moved
mkdir -p "$d"
sed -e 's|^\(L [0-9]* [0-9]* [0-9]* [0-9]* [0-9]* [0-9a-f-]*\) /.*/stack-chains$|\1 /nonexistent/stack-chains|' \
	"$OUT/stack-chains/saved.mw" >"$d/saved.mw"
echo 'X memory_arena_new 1 2 zz' >>"$d/saved.mw"
$MW replay -o "$d/replay" --json "$d/replay.json" "$d/saved.mw" 2>"$d/err"
grep -q 'garbled stack record' "$d/err" || fail "no warning for a garbled X record: $(cat "$d/err")"
grep -q 'created by thread [0-9]* at: stack-chains+0x[0-9a-f]* <- stack-chains+0x' "$d/replay" ||
	fail "moved file: no module+offset: $(sed -n '/^Stacks/,$p' "$d/replay")"
python3 - "$d/replay.json" <<'PY' || fail "moved file: JSON frames"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["stacks"]["events"] if e["probe"] == "memory_arena_new"]
f = [f for f in ev[0]["frames"] if f["module"] == "stack-chains"][0]
assert f["function"] is None and f["build_id"] and f["offset"] > 0, f
PY
echo "PASS"
