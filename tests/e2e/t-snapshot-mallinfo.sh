#!/bin/sh
# A snapshot against glibc's own account of the same allocator: mallinfo2()
# (int_mallinfo: every arena's top, fastbin and bin chunks) printed by
# tests/fixtures/mallinfo-hold once its two arenas hold free chunks of each
# kind (893 fastbin chunks per arena, 300 binned, the tops) and two
# mmapped chunks (a third freed), every thread then waiting.  Exact, on
# Debian's libc (libc6-dbg) and the probe-enabled glibc:
#   totals.free_bytes == fordblks (= fastbin + bin + top bytes: each kind
#   must be in it), in_use_bytes == uordblks, system_bytes == arena,
#   fast counts/bytes == smblks/fsmblks, rest counts == ordblks, mmapped
#   count/bytes == hblks/hblkhd, main's top == keepcost, and per arena
#   free_bytes == fast + binned + top; the thresholds after the free of an
#   mmapped chunk: mmap == its size, trim == twice it (glibc's rule).
# The same with a thread that ticks (HOLD_TICK=1): read twice, the second
# walk's figures from the first's records.
# Then traced (-c, probe-enabled glibc): the same threshold change, from
# memory_mallopt_free_dyn_thresholds's two arguments (mmap, then trim:
# different values, so swapped indices show).
# needs: root
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures/mallinfo-hold
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null' EXIT

# hold NAME [system]: start it, return once it printed its account
hold() {
	rm -f "$OUT/$1.in"
	mkfifo "$OUT/$1.in"
	if [ "${2:-}" = system ]; then
		$FIX <"$OUT/$1.in" >"$OUT/$1.out" &
	else
		"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib" \
			$FIX <"$OUT/$1.in" >"$OUT/$1.out" &
	fi
	pid=$!
	exec 3>"$OUT/$1.in"
	wait_for "$OUT/$1.out" READY 30
}

compare() {	# NAME
	"$MW" snapshot -p $pid --json "$OUT/$1.json" -o "$OUT/$1.txt" 2>"$OUT/$1.err" ||
		fail "$1: snapshot exited $?: $(cat "$OUT/$1.err")"
	exec 3>&-
	wait $pid
	pid=
	python3 - "$OUT/$1.out" "$OUT/$1.json" <<'PY' || fail "$1: the snapshot is not glibc's account"
import json, sys
mi = dict(kv.split("=") for kv in open(sys.argv[1]).readline().split()[1:])
mi = {k: int(v) for k, v in mi.items()}
s = json.load(open(sys.argv[2]))["snapshot"]
t, A = s["totals"], s["arenas"]
def eq(what, ours, glibc):
    assert ours == glibc, "%s: snapshot %d, mallinfo2 %d" % (what, ours, glibc)
eq("free bytes (fordblks)", t["free_bytes"], mi["fordblks"])
eq("in use (uordblks)", t["in_use_bytes"], mi["uordblks"])
eq("system (arena)", t["system_bytes"], mi["arena"])
eq("fastbin chunks (smblks)", sum(a["malloc_info"]["fast_count"] for a in A), mi["smblks"])
eq("fastbin bytes (fsmblks)", sum(a["malloc_info"]["fast_bytes"] for a in A), mi["fsmblks"])
eq("bin chunks and tops (ordblks)", sum(a["malloc_info"]["rest_count"] for a in A), mi["ordblks"])
eq("mmapped chunks (hblks)", s["mmap"]["count"], mi["hblks"])
eq("mmapped bytes (hblkhd)", s["mmap"]["bytes"], mi["hblkhd"])
eq("totals.mmapped_bytes", t["mmapped_bytes"], mi["hblkhd"])
eq("main's top (keepcost)", [a for a in A if a["main"]][0]["top_bytes"], mi["keepcost"])
assert len(A) == 2 and mi["hblks"] == 2, (len(A), mi)
for a in A:   # the fixture's: 893 fastbin chunks (900 less the tcache's 7) in each arena
    assert a["malloc_info"]["fast_count"] == 893 and a["malloc_info"]["rest_count"] == 301, a
    # free = fastbin chunks + binned chunks + top: each stored size has its
    # flag bits (PREV_INUSE always, NON_MAIN_ARENA perhaps): 1 to 5 per binned chunk
    binned = a["malloc_info"]["rest_count"] - 1
    flags = a["malloc_info"]["fast_bytes"] + a["malloc_info"]["rest_bytes"] - a["free_bytes"]
    assert binned <= flags <= 5 * binned, (a["free_bytes"], a["malloc_info"])
    eq("in use + free", a["in_use_bytes"] + a["free_bytes"], a["system_bytes"])
eq("mmap threshold", s["thresholds"]["mmap"], mi["freed_mmap"])
eq("trim threshold", s["thresholds"]["trim"], 2 * mi["freed_mmap"])
print("exact:", {k: mi[k] for k in ("fordblks", "fsmblks", "smblks", "ordblks", "hblkhd")})
PY
}

dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
n=0
if [ -f "$dbg" ]; then
	hold system system
	compare system
	n=$((n + 1))
fi
if [ -f "$GLIBC_PREFIX/lib/libc.so.6" ]; then
	hold probes
	compare probes
	n=$((n + 1))
	# not idle (a thread ticks): read twice, the second time from the
	# first's records (snapshot_record.c), and as exact
	HOLD_TICK=1 hold tick
	compare tick
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["snapshot"]; assert s["check"] == "reread" and s["tries"] >= 2, (s["check"], s["tries"])' \
		"$OUT/tick.json" || fail "tick: not read twice"
	# traced from its start: the dynamic threshold change, both arguments
	"$MW" --json "$OUT/traced.json" -o "$OUT/traced.txt" -c $FIX </dev/null >"$OUT/traced.out" \
		2>"$OUT/traced.err" || fail "traced: exit $?: $(cat "$OUT/traced.err")"
	freed=$(sed -n 's/.*freed_mmap=\([0-9]*\).*/\1/p' "$OUT/traced.out")
	[ -n "$freed" ] || fail "traced: the fixture printed no account: $(cat "$OUT/traced.out")"
	python3 - "$OUT/traced.json" "$freed" <<'PY' || fail "traced: thresholds"
import json, sys
r, freed = json.load(open(sys.argv[1])), int(sys.argv[2])
th = r["thresholds"]
dyn = [c for c in th["changes"] if c["source"] == "dynamic"]
assert len(dyn) == 1 and dyn[0]["mmap"] == freed and dyn[0]["trim"] == 2 * freed, th
assert th["mmap"] == freed and th["trim"] == 2 * freed, th
assert r["events"]["by_probe"]["memory_mallopt_free_dyn_thresholds"] == 1, r["events"]["by_probe"]
print("traced: mmap threshold", th["mmap"], "trim", th["trim"])
PY
	"$MW" check --check "mmap_threshold==$freed" --check "trim_threshold==$((2 * freed))" \
		--check 'arenas_created==1' "$OUT/traced.json" >"$OUT/check.out" ||
		fail "traced: check: $(cat "$OUT/check.out")"
fi
[ $n -gt 0 ] || skip "neither libc6-dbg for Debian's libc nor the probe-enabled glibc"
echo "ok: snapshots equal mallinfo2() on $n libc(s)"
