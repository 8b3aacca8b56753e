#!/bin/sh
# --stacks: user call stacks of the rare allocator events, from uprobe
# perf events beside the tracer, unwound with libdwfl (src/stacks/stacks.c,
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
# garbled stack record is counted, not fatal.  The --html page shows the
# stacks as tooltips (titles) of the arenas, the sbrk line and the marks,
# and a flame graph of the break's growth checked against --folded
# (tests/lib/flame-check.py).
# needs: root glibc slow
. tests/lib/lib.sh
need_root
need_libc
for v in stack-chains stack-chains-fp stack-chains-stripped; do
	[ -x build/tests/fixtures/$v ] || skip "no build/tests/fixtures/$v (make check builds it)"
done

for v in stack-chains stack-chains-fp stack-chains-stripped; do
	d=$OUT/$v
	mkdir -p "$d"
	$MW --stacks --folded "$d/folded" --json "$d/report.json" -o "$d/summary" \
		--save-stream "$d/saved.mw" --html "$d/page.html" \
		-c build/tests/fixtures/$v 3 double >"$d/stdout" 2>"$d/stderr"
	rc=$?
	# the program aborts (SIGABRT) at the double free: 128 + 6
	[ $rc = 134 ] || { cat "$d/stderr"; fail "$v: exit $rc, not 134 (the program's abort)"; }
	sed -n '/^Stacks/,$p' "$d/summary"
	chain_stacks "$v" "$d/summary" "$d/folded"
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
	# the page's tooltips (item 2): each arena's band and its lane's
	# circle, the sbrk line, the double free's mark
	n=$(grep -c 'created at: chain_c &lt;- chain_b &lt;- chain_a' "$d/page.html")
	[ "$n" = 6 ] || fail "$v: $n arena tooltips with chain_c <- chain_b <- chain_a, not 6 (3 bands, 3 circles)"
	grep -A2 '<title>main heap extent (sbrk)' "$d/page.html" | grep -q 'grown by' &&
	grep -A3 '<title>main heap extent (sbrk)' "$d/page.html" | grep -q 'grow_c &lt;- grow_b &lt;- grow_a' ||
		fail "$v: the sbrk line's tooltip has no grow_c <- grow_b <- grow_a"
	grep -A1 'memory_tcache_double_free [0-9]' "$d/page.html" | grep -q '^at: twice_c &lt;- twice_b' ||
		fail "$v: the double free's mark has no stack"
	grep -q 'heap 0x[0-9a-f]* made at: chain_c' "$d/page.html" || fail "$v: no heap tooltip"
	# the page's flame graph of the break's growth (item 3: drawn by
	# mallocwatch, Debian packages no flame graph tool): its frames are
	# the folded lines' (pre-order, each frame's path root first), each
	# as heavy as the folded lines through it, as wide as its share of
	# the page's width, placed after its elder siblings in its parent;
	# main -> grow_a -> grow_b -> grow_c with 3.5 MiB or more
	python3 tests/lib/flame-check.py "$d/page.html" "$d/folded" memory_sbrk_more \
		"main;grow_a;grow_b;grow_c" 3670016 || fail "$v: the flame graph of the break's growth"
	# the same drawn from --folded alone, as a standalone SVG
	$MW flame --probe memory_sbrk_more -o "$d/sbrk.svg" "$d/folded" 2>"$d/flame.err" ||
		fail "$v: mallocwatch flame: $(cat "$d/flame.err")"
	python3 tests/lib/flame-check.py "$d/sbrk.svg" "$d/folded" memory_sbrk_more \
		"main;grow_a;grow_b;grow_c" 3670016 || fail "$v: flame's SVG of the break's growth"
	# the replay: the same section, the same folded lines, the same frames
	$MW replay -o "$d/replay" --folded "$d/rfolded" --json "$d/replay.json" "$d/saved.mw" \
		2>"$d/replay.err"
	[ $? = 134 ] || fail "$v: replay exit not 134: $(cat "$d/replay.err")"
	grep -q '^X memory_arena_new ' "$d/saved.mw" || fail "$v: no X record in the saved stream"
	sed -n '/^Stacks/,$p' "$d/summary" >"$d/live.stacks"
	sed -n '/^Stacks/,$p' "$d/replay" >"$d/replay.stacks"
	diff -u "$d/live.stacks" "$d/replay.stacks" || fail "$v: the replay's stacks section differs"
	diff -u "$d/folded" "$d/rfolded" || fail "$v: the replay's folded lines differ"
	$MW replay -o /dev/null --html "$d/replay.html" "$d/saved.mw" 2>/dev/null
	cmp -s "$d/page.html" "$d/replay.html" || fail "$v: the replay's page differs"
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
# an exec under -c (sh -c 'exec ...'): the shell's own events before the
# exec keep the shell's module map (one per image, from the kernel's MMAP2
# and COMM records): its frames name the shell; no stack without a module
d=$OUT/exec
mkdir -p "$d"
$MW --stacks --json "$d/report.json" -o "$d/summary" \
	-c /bin/sh -c "exec $PWD/build/tests/fixtures/stack-chains 2" >"$d/stdout" 2>"$d/stderr" ||
	fail "sh -c exec stack-chains: exit $?: $(cat "$d/stderr")"
n=$(grep -c 'created by thread [0-9]* at: chain_c <- chain_b <- chain_a' "$d/summary")
[ "$n" = 2 ] || fail "exec: $n arenas under chain_c, not 2: $(sed -n '/^Stacks/,$p' "$d/summary")"
python3 - "$d/report.json" <<'PY' || fail "exec: a stack with no module"
import json, sys
ev = json.load(open(sys.argv[1]))["stacks"]["events"]
bare = [e for e in ev if not any(f["module"] for f in e["frames"])]
assert not bare, bare
mods = sorted({f["module"] for e in ev for f in e["frames"] if f["module"]})
# the shell's first malloc grew the break before its exec: named in the
# shell's own module map (the kernel's MMAP2 records), however late read
assert "dash" in mods or "bash" in mods, mods
print("exec: modules", mods)
PY

# python3: its threads' arenas made under libpython's thread start
if [ -x /usr/bin/python3 ]; then
	d=$OUT/python
	mkdir -p "$d"
	cat >"$d/threads.py" <<'PY'
import threading
def work(): b = [bytearray(1000) for _ in range(200)]
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
	$MW --stacks --json "$d/report.json" -o "$d/summary" -c /usr/bin/python3 "$d/threads.py" \
		>"$d/stdout" 2>"$d/stderr" || fail "python3: exit $?: $(cat "$d/stderr")"
	sed -n '/^Stacks/,$p' "$d/summary"
	python3 - "$d/report.json" <<'PY' || fail "python3: no arena made under libpython's frames"
import json, sys
ev = json.load(open(sys.argv[1]))["stacks"]["events"]
assert not [e for e in ev if not any(f["module"] for f in e["frames"])], "a stack with no module"
new = [e for e in ev if e["probe"] == "memory_arena_new"]
# the first thread's first malloc makes an arena (no thread has exited yet)
assert new, "no memory_arena_new"
for e in new:
    assert any((f["module"] or "").startswith(("libpython", "python3")) for f in e["frames"]), e
print("python3:", len(new), "arenas, each under", [f["function"] for f in new[0]["frames"]][-3:])
PY
fi
echo "PASS"
