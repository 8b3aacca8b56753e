#!/bin/sh
# mallocwatch tune: examples/frag-hold arenas 4 (four threads, each
# leaving 1 MiB free in an arena of its own) under the baseline and
# glibc.malloc.arena_max=1,2: the arenas at exit are what each setting
# allows (5, 1, 2), the idle arenas' free memory at exit goes with them,
# the setting the baseline's arena_max finding names (it gives no
# estimate) is set beside the measured outcome,
# and a best row is marked; python3 with threads the same way (Debian's
# libc); usage errors; --waits on allocator-knobs contend (exactly 8
# lock waits, under the tracer).
# needs: root glibc
. tests/lib/lib.sh
need_root
[ -x examples/frag-hold ] && [ -x examples/allocator-knobs ] || make -s -C examples || exit 99

"$MW" tune -q --try glibc.malloc.arena_max=1,2 --json "$OUT/frag.json" --markdown "$OUT/frag.md" \
	-o "$OUT/frag.txt" -c ./examples/frag-hold arenas 4 || fail "tune frag-hold exited $?"
cat "$OUT/frag.txt"
python3 - "$OUT/frag.json" <<'PY' || fail "tune frag-hold"
import json, sys
t = json.load(open(sys.argv[1]))["tune"]
s = {x["tunables"]: x for x in t["settings"]}
assert list(s) == [None, "glibc.malloc.arena_max=1", "glibc.malloc.arena_max=2"], list(s)
assert [s[k]["arenas_at_exit"] for k in s] == [5, 1, 2], [s[k]["arenas_at_exit"] for k in s]
for k, x in s.items():
    assert x["exit_status"] == 0 and len(x["runs"]) == 3 and x["wall_seconds"] > 0, x
    assert x["peak_rss"] >= x["rss_at_exit"] > 0, x
    assert x["lock_waits"] is None, x          # no tracer without --waits
# four idle arenas keep their free MiB each; with one arena the frees meet
assert s[None]["free_at_exit"] >= 4 * 1020 * 1024, s[None]
assert s["glibc.malloc.arena_max=1"]["free_at_exit"] < s[None]["free_at_exit"], s
assert any(x["best"] for x in t["settings"]), t["settings"]
e = [x for x in t["estimates"] if x["tunable"] == "glibc.malloc.arena_max=2"]
assert len(e) == 1 and e[0]["tried"] and e[0]["measured_bytes"] is not None and e[0]["estimate_bytes"] is None, t["estimates"]
print("ok: frag-hold:", [(k, s[k]["arenas_at_exit"], s[k]["free_at_exit"]) for k in s], e[0])
PY
grep -q '^| .*| `glibc.malloc.arena_max=1` |' "$OUT/frag.md" || fail "no markdown row"
grep -q '^  glibc.malloc.arena_max=2 (finding arena_max); measured: free and resident at exit ' \
	"$OUT/frag.txt" || fail "no measured outcome beside the finding's setting in the text"

# a setting glibc does not apply is refused, not shown as that setting's:
# each glibc ignores one of mmap_max=-1 and =4294967296 (2.31 the second,
# 2.36 both, 2.41 the first: the tunable's bounds), silently; mmap_max=5
# every one applies
"$MW" tune -q --repeat 1 --try glibc.malloc.mmap_max=-1,4294967296,5 --json "$OUT/na.json" \
	-o "$OUT/na.txt" -c ./examples/frag-hold arenas 4 || fail "tune mmap_max exited $?"
python3 - "$OUT/na.json" <<'PY' || { cat "$OUT/na.txt"; fail "tune: a setting glibc did not apply"; }
import json, sys
s = {x["tunables"]: x for x in json.load(open(sys.argv[1]))["tune"]["settings"]}
bad = [k for k in s if k and s[k]["unknown_reason"]]
assert bad and "glibc.malloc.mmap_max=5" not in bad and s[None]["unknown_reason"] is None, s
for k in bad:
    assert "glibc did not apply %s: mp_.no_dyn_threshold is 0" % k in s[k]["unknown_reason"], s[k]
    assert s[k]["rss_at_exit"] is None and not s[k]["best"], s[k]
print("ok: not applied by this glibc, refused:", bad)
PY

if command -v python3 >/dev/null && [ -f /usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug ]; then
	cat >"$OUT/thr.py" <<'PY'
import threading
barrier = threading.Barrier(4)
kept = []
def work(i):
    barrier.wait()                                  # all four alive at once
    keep = [bytearray(3000 + i) for _ in range(5000)]
    del keep[::2]
    kept.append(keep)
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
PY
	"$MW" tune -q --try glibc.malloc.arena_max=1 --json "$OUT/py.json" -o "$OUT/py.txt" \
		-c python3 "$OUT/thr.py" || fail "tune python3 exited $?"
	cat "$OUT/py.txt"
	python3 - "$OUT/py.json" <<'PY' || fail "tune python3"
import json, sys
s = json.load(open(sys.argv[1]))["tune"]["settings"]
assert s[0]["arenas_at_exit"] >= 3 and s[1]["arenas_at_exit"] == 1, s
print("ok: python3: arenas at exit", s[0]["arenas_at_exit"], "->", s[1]["arenas_at_exit"])
PY
fi

# --repeat 2: two runs each, interleaved; --show-output: the program's
# stdout is its own (without it, /dev/null)
"$MW" tune -q --repeat 2 --show-output --read-timeout 5 --try glibc.malloc.arena_max=1 \
	--json "$OUT/rep.json" -o /dev/null -c sh -c 'echo "tunables=$GLIBC_TUNABLES"' >"$OUT/rep.out" ||
	fail "tune --repeat 2 exited $?"
[ "$(sort "$OUT/rep.out" | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" = "2 tunables= 2 tunables=glibc.malloc.arena_max=1 " ] ||
	fail "--show-output, --repeat 2: $(cat "$OUT/rep.out")"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["tune"]["settings"]; assert [len(x["runs"]) for x in s] == [2, 2], s' \
	"$OUT/rep.json" || fail "--repeat 2: not two runs each"
"$MW" tune -q --try glibc.malloc.arena_max=1 -o /dev/null -c sh -c 'echo hidden' >"$OUT/hid.out" ||
	fail "tune exited $?"
[ ! -s "$OUT/hid.out" ] || fail "the program's stdout was not /dev/null: $(cat "$OUT/hid.out")"
echo "ok: --repeat 2, --show-output"

for bad in "--try arena_max=1" "--try glibc.malloc.arena_max=" "--try glibc.malloc.arena_max=1;id" "--repeat 0 --try glibc.malloc.arena_max=1"; do
	"$MW" tune $bad -c true >/dev/null 2>"$OUT/usage.err"
	[ $? = 2 ] || fail "tune $bad: not a usage error: $(cat "$OUT/usage.err")"
done
"$MW" tune --try glibc.malloc.arena_max=1 >/dev/null 2>&1
[ $? = 2 ] || fail "tune without a program: not a usage error"
"$MW" tune -q --try glibc.malloc.arena_max=1 -c /nonexistent/prog >/dev/null 2>"$OUT/noprog.err"
[ $? = 1 ] && grep -q "^mallocwatch: cannot run '/nonexistent/prog': No such file or directory" "$OUT/noprog.err" ||
	fail "a program that cannot run: $(cat "$OUT/noprog.err")"
echo "ok: usage errors, a program that cannot run"

need_libc
"$MW" tune -q --waits --try glibc.malloc.arena_max=1 --json "$OUT/waits.json" -o /dev/null \
	-c ./examples/allocator-knobs contend || fail "tune --waits exited $?"
python3 - "$OUT/waits.json" <<'PY' || fail "tune --waits"
import json, sys
s = json.load(open(sys.argv[1]))["tune"]["settings"]
assert [x["lock_waits"] for x in s] == [8, 8], [x["lock_waits"] for x in s]
print("ok: --waits: contend's 8 lock waits in both settings")
PY
echo "ok: tune"

# tune killed (SIGKILL) while its traced run goes on: its work directory
# (mallocwatch.PID.XXXXXX, where the run's JSON comes back) is swept
# once that run has ended, as a killed run's is
tmp=${TMPDIR:-/tmp}
"$MW" tune -q --waits --try glibc.malloc.arena_max=1 -o /dev/null -c sleep 3 >/dev/null 2>&1 &
tp=$!
i=0
until [ -n "$(pgrep -P $tp -x mallocwatch)" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "tune started no traced run in 30 s"
	sleep 0.1
done
ls -d "$tmp/mallocwatch.$tp".* >/dev/null 2>&1 || fail "tune has no work directory of its own in $tmp"
child=$(pgrep -P $tp -x mallocwatch)
kill -KILL $tp
wait $tp 2>/dev/null
i=0
while kill -0 $child 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "tune's traced run $child did not end"
	sleep 0.1
done
"$MW" --cleanup >/dev/null 2>"$OUT/killed.err"
ls -d "$tmp/mallocwatch.$tp".* 2>/dev/null && fail "the killed tune's work directory is still there"
ls -d "$tmp"/mallocwatch-tune.* 2>/dev/null && fail "a tune directory of the old name"
echo "ok: a killed tune's work directory swept"
