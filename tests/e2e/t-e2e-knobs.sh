#!/bin/sh
# Every memory_* probe in the probe-enabled libc, fired for real and
# checked in the report (examples/allocator-knobs, sbrk-trim,
# dyn-threshold):
#   mallopt on every parameter: name, value and previous value exact;
#   the tunables through GLIBC_TUNABLES: name and value, and glibc's
#     documented defaults as previous values for the tcache ones;
#   the retry paths with the requested sizes; a tcache double free caught
#     by glibc (the program dies of SIGABRT: exit 134);
#   heap growth past one heap, heap_free/heap_less, arena reuse from the
#     free list, exactly 8 lock waits (M_ARENA_MAX=1), and over time the
#     wait counts of the samples rising to at most N, the --html strip's
#     bars adding up to the last;
# and then: the union of all runs' hits covers every memory_* probe name
# readelf finds in the libc.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
K="$IN ./examples/allocator-knobs"
run() {	# NAME EXPECTED-STATUS ARGS...
	name=$1 want=$2
	shift 2
	"$MW" -q --json "$OUT/$name.json" -o "$OUT/$name.txt" -c "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
	[ $rc = "$want" ] || { cat "$OUT/$name.err"; fail "$name: exit $rc, expected $want"; }
}
run mallopt 0 $K mallopt
python3 - "$OUT/mallopt.out" "$OUT/mallopt.json" <<'PY' || fail "mallopt settings differ"
import json, sys
exp = [l.split() for l in open(sys.argv[1])]
got = [s for s in json.load(open(sys.argv[2]))["settings"] if s["source"] == "mallopt"]
assert len(exp) == len(got), (len(exp), len(got))
for e, g in zip(exp, got):
    _, name, param, value, _, prev = e
    assert (g["name"], g["param"], g["value"]) == (name, int(param), int(value)), (e, g)
    if prev == "-":
        assert g["previous"] is None, (e, g)
    elif prev != "?":
        assert g["previous"] == int(prev), (e, g)
    else:
        assert g["previous"] is not None, (e, g)
print(len(got), "mallopt calls exact")
PY

T=glibc.malloc.tcache_max=512:glibc.malloc.tcache_count=3:glibc.malloc.tcache_unsorted_limit=10
T=$T:glibc.malloc.mmap_threshold=262144:glibc.malloc.trim_threshold=524288:glibc.malloc.top_pad=65536
T=$T:glibc.malloc.mmap_max=1000:glibc.malloc.arena_max=3:glibc.malloc.arena_test=2
T=$T:glibc.malloc.perturb=7:glibc.malloc.mxfast=64
GLIBC_TUNABLES=$T run tunables 0 $K retry
python3 - "$T" "$OUT/tunables.json" <<'PY' || fail "tunables differ"
import json, sys
want = dict(kv.split("=") for kv in sys.argv[1].split(":"))
r = json.load(open(sys.argv[2]))
got = {s["name"]: s for s in r["settings"] if s["source"] == "tunable"}
assert set(got) == set(want), (sorted(got), sorted(want))
for k, v in want.items():
    assert got[k]["value"] == int(v), (k, got[k])
# glibc's documented defaults (manual, "Memory Allocation Tunables")
assert got["glibc.malloc.tcache_count"]["previous"] == 7, got["glibc.malloc.tcache_count"]
assert got["glibc.malloc.tcache_unsorted_limit"]["previous"] == 0
assert r["thresholds"]["mmap"] == 262144 and r["thresholds"]["trim"] == 524288, r["thresholds"]
assert all(c["source"] == "tunable" for c in r["thresholds"]["changes"]), r["thresholds"]
print(len(got), "tunables exact")
PY

run retry 0 $K retry
python3 - "$OUT/retry.out" "$OUT/retry.json" <<'PY' || fail "retries differ"
import json, sys
exp = {(l.split()[1], int(l.split()[2])) for l in open(sys.argv[1])}
r = json.load(open(sys.argv[2]))
got = {(x["probe"], x["bytes"]) for x in r["retries"]}
assert exp <= got, (exp, got)
assert any(x["probe"] == "memory_arena_retry" and x["arena"] for x in r["retries"]), r["retries"]
assert r["sbrk"]["failed"] >= 1, r["sbrk"]
print(sorted(got))
PY

run double-free 134 $K double-free
grep -q "killed by signal 6" "$OUT/double-free.err" || fail "no signal message"
grep -q '^\*\*\* tcache double free detected' "$OUT/double-free.txt" || fail "double free not shown"
python3 - "$OUT/double-free.out" "$OUT/double-free.json" <<'PY' || fail "double free differs"
import json, sys
_, _, entry, _, idx = open(sys.argv[1]).read().split()
d = json.load(open(sys.argv[2]))["tcache_double_free"]
assert d == [{"tid": d[0]["tid"], "entry": entry, "tc_idx": int(idx)}], (d, entry, idx)
print("double free", entry, idx)
PY

run lifecycle 0 $K lifecycle
python3 - "$OUT/lifecycle.json" <<'PY' || fail "lifecycle"
import json, sys
r = json.load(open(sys.argv[1]))
arena = [a for a in r["arenas"] if not a["main"]]
assert len(arena) == 1 and [t["how"] for t in arena[0]["threads"]] == ["new", "free_list"], arena
heaps = r["heaps"]
assert len(heaps) == 2 and sum(h["freed"] for h in heaps) == 1, heaps
assert all(h["arena"] == arena[0]["address"] for h in heaps), heaps
live = [h for h in heaps if not h["freed"]][0]
assert live["shrank"] >= 1 and live["peak_size"] > live["size"], live
print("heap freed, heap shrunk, arena from the free list")
PY

# lock waits: the program makes exactly N threads wait for main_arena's
# lock (allocator-knobs.c, do_contend), whatever the scheduler does
run contend 0 $K contend
python3 - "$OUT/contend.out" "$OUT/contend.json" <<'PY' || fail "lock waits differ"
import json, sys
want = int(open(sys.argv[1]).read().split()[2])
r = json.load(open(sys.argv[2]))
waits = sum(t["waits"] for t in r["threads"])
assert r["events"]["by_probe"]["memory_arena_reuse_wait"] == want, r["events"]["by_probe"]
assert waits == want, (waits, want)
assert sum(a["waits"] for a in r["arenas"] if a["main"]) == want, r["arenas"]
assert sum(1 for t in r["threads"] if t["waits"] == 1) == want, r["threads"]
print(waits, "lock waits, all on main_arena, one per new thread")
PY
# the same over time (the samples' C records, --html's wait strip): the
# counts rise, never past the program's N, and the strip's bars add up to
# the last count (how many samples get an answer is the tracer's affair)
"$MW" -q --interval 0.01 --save-stream "$OUT/strip.mw" --html "$OUT/strip.html" -o /dev/null \
	-c $K contend 64 >"$OUT/strip.out" 2>"$OUT/strip.err" || fail "contend 64 over time: exit $?"
python3 - "$OUT/strip.mw" "$OUT/strip.html" 64 <<'PY' || fail "the lock-wait strip"
import re, sys
# a number: plain (kernel runtime) or HI:LO (bpf; docs/protocol.md)
num = lambda s: int(s) if ":" not in s else (int(s.split(":")[0]) << 32) | (int(s.split(":")[1]) & 0xffffffff)
cs = [num(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("C ")]
bars = [int(b) for b in re.findall(r": (\d+) lock waits</title>", open(sys.argv[2]).read())]
n = int(sys.argv[3])
print("C records", cs, "bars", bars)
assert cs == sorted(cs) and all(c <= n for c in cs), cs
assert sum(bars) == (cs[-1] if cs else 0), (bars, cs)
PY

run trim 0 $IN ./examples/sbrk-trim 4
run thresholds 0 $IN ./examples/dyn-threshold
readelf -n "$LIBC" | sed -n 's/^ *Name: \(memory_.*\)/\1/p' | sort -u >"$OUT/in-libc"
python3 - "$OUT"/*.json <<'PY' | sort >"$OUT/fired"
import json, sys
fired = set()
for f in sys.argv[1:]:
    fired |= {k for k, v in json.load(open(f))["events"]["by_probe"].items() if v}
print("\n".join(p for p in fired if p.startswith("memory_")))
PY
expect_same "$OUT/in-libc" "$OUT/fired"
echo "all $(wc -l <"$OUT/fired") memory probes fired and reported"
