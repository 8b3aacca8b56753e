#!/bin/sh
# -c: the RSS ledger and the findings read with the snapshot at the
# program's exit (its ptrace exit stop), in the text and JSON reports and
# the findings in the HTML page (and in its replay, from the saved stream);
# -p: the same with the snapshot at the end (--duration 1); -f: each
# process of the tree at its exit:
# examples/frag-hold arenas leaves 4 idle arenas (1 MiB free and resident
# each): the ledger adds up (against smaps_rollup, read in the exit stop)
# and the findings name them; allocator-knobs contend makes exactly 8
# lock waits on main_arena: the "waits" finding says 8.  Traces (-e arena).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -x examples/frag-hold ] && [ -x examples/allocator-knobs ] || make -s -C examples || exit 99
"$MW" -q -e arena --json "$OUT/frag.json" -o "$OUT/frag.txt" --html "$OUT/frag.html" \
	--save-stream "$OUT/frag.mw" -c $IN ./examples/frag-hold arenas 4 </dev/null >/dev/null ||
	fail "-c frag-hold exited $?"
python3 - "$OUT/frag.json" <<'PY' || fail "frag-hold: the exit ledger"
import json, sys
e = json.load(open(sys.argv[1]))["snapshots"]["exit"]
L = e["ledger"]
parts = sum(L[k] for k in ["in_use", "free_resident", "top", "mmapped", "heap_slack", "not_malloc"])
assert parts == L["rss"], (parts, L)
assert L["check"]["ok"] and abs(L["check"]["difference"]) <= L["check"]["tolerance"], L["check"]
idle = [a for a in e["arenas"] if a["on_free_list"]]
assert len(idle) == 4, len(idle)
ids = [f["id"] for f in e["findings"]]
assert ids[0] == "where" and "idle_arenas" in ids, ids
f = [f for f in e["findings"] if f["id"] == "idle_arenas"][0]
assert f["bytes"] >= 4 * 256 * 4096, f
print("ok: exit ledger", L["rss"], "= smaps_rollup", L["check"]["smaps_rollup_rss"], ids)
PY
grep -q '^RSS ledger (pagemap, smaps): .*adds up)$' "$OUT/frag.txt" || fail "no ledger in the text report"
grep -q '^Findings (largest first):' "$OUT/frag.txt" || fail "no findings in the text report"
grep -q 'arenas with no thread attached' "$OUT/frag.txt" || fail "no idle arenas finding in the text"
# the HTML page has them too, and a replay of the saved stream the same page
grep -q '^<h2>Findings, from the allocator read at the end</h2>' "$OUT/frag.html" &&
	grep -q '4 arenas with no thread attached' "$OUT/frag.html" || fail "no findings in the HTML page"
"$MW" replay -q --html "$OUT/replay.html" -o /dev/null "$OUT/frag.mw" || fail "replay exited $?"
cmp "$OUT/frag.html" "$OUT/replay.html" || fail "replay --html differs from the run's page"
echo "ok: the findings in the HTML page, and its replay"

"$MW" -q -e arena --json "$OUT/knobs.json" -o "$OUT/knobs.txt" -c $IN ./examples/allocator-knobs contend \
	>/dev/null 2>&1 || fail "-c allocator-knobs contend exited $?"
python3 - "$OUT/knobs.json" <<'PY' || fail "contend: the waits finding"
import json, sys
e = json.load(open(sys.argv[1]))["snapshots"]["exit"]
w = [f for f in e["findings"] if f["id"] == "waits"]
assert len(w) == 1 and w[0]["finding"].startswith("8 arena lock waits while traced, on 1 arena;"), w
print("ok:", w[0]["finding"])
PY
# -p PID --duration 1: the ledger and findings of the end's snapshot
rm -f "$OUT/hold.in"; mkfifo "$OUT/hold.in"
(on_glibc ./examples/frag-hold arenas 4) <"$OUT/hold.in" >"$OUT/hold.out" 2>&1 &
pid=$!
exec 3>"$OUT/hold.in"
wait_for "$OUT/hold.out" '^ready' 30
"$MW" -q -e arena -p $pid --duration 1 --json "$OUT/p.json" -o "$OUT/p.txt" || fail "-p exited $?"
exec 3>&-; wait $pid
python3 - "$OUT/p.json" <<'PY' || fail "-p: the end's ledger"
import json, sys
e = json.load(open(sys.argv[1]))["snapshots"]["end"]
L = e["ledger"]
assert L["check"]["ok"] and sum(L[k] for k in ["in_use", "free_resident", "top", "mmapped", "heap_slack", "not_malloc"]) == L["rss"], L
ids = [f["id"] for f in e["findings"]]
assert ids[0] == "where" and "idle_arenas" in ids, ids
print("ok: -p: the end's ledger", L["rss"], ids)
PY
grep -q '^RSS ledger (pagemap, smaps): .*adds up)$' "$OUT/p.txt" || fail "-p: no ledger in the text report"
# -f: each process of the tree has its ledger at its exit
"$MW" -q -f -e arena --json "$OUT/tree.json" -o "$OUT/tree.txt" -c $IN sh -c \
	'./examples/frag-hold arenas 4 </dev/null; ./examples/frag-hold pages 64 </dev/null' >/dev/null ||
	fail "-f exited $?"
python3 - "$OUT/tree.json" <<'PY' || fail "-f: the ledgers at exit"
import json, sys
r = json.load(open(sys.argv[1]))
procs = r["processes"] if "processes" in r else [r]
found = []
for p in procs:
    e = p.get("snapshots", {}).get("exit")
    if not e or "ledger" not in e:
        continue
    L = e["ledger"]
    assert L["check"]["ok"], L["check"]
    found.append([f["id"] for f in e["findings"]])
assert len(found) == 3, found            # sh and the two frag-holds
assert any("idle_arenas" in f for f in found) and any("trim_now" in f for f in found), found
print("ok: -f:", found)
PY
[ "$(grep -c '^RSS ledger (pagemap, smaps): .*adds up)$' "$OUT/tree.txt")" = 3 ] || fail "-f: not three ledgers in the text"
echo "ok: ledger and findings at exit and at the end"
# a program that never allocates from main_arena has no main heap yet:
# nothing is missing from its ledger (it said INCOMPLETE before)
"$MW" -o "$OUT/true.txt" -c $IN /bin/true 2>"$OUT/true.err" || fail "-c /bin/true exited $?"
grep -q '^RSS ledger' "$OUT/true.txt" || fail "no ledger for /bin/true: $(cat "$OUT/true.err")"
grep -q 'INCOMPLETE' "$OUT/true.txt" && fail "/bin/true's ledger: $(grep INCOMPLETE "$OUT/true.txt")"
echo "ok: a program without a main heap has a complete ledger"
