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
# there is debug info.
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
		-c build/tests/fixtures/$v 3 double >"$d/stdout" 2>"$d/stderr"
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
done
echo "PASS"
