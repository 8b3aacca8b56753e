#!/bin/sh
# -f: a pid the tree reuses.  pid_max is 32768 on a 2-CPU machine, and a
# loaded one (stress-ng, another make check) wraps it within one run of
# t-e2e-exec's tree of 260 processes: a process created with the pid of
# one that exited got "no model (Cannot allocate memory)" and its records
# went to the exited one's model.  The tracer keeps its totals per pid,
# and those of the exited process stay there (it left the tracer's set,
# its entries did not): the two processes' totals are one.  So each gets
# its own report, both with their figures from the tracer refused and
# why; no ENOMEM.  Forced: a python3 in the tree writes ns_last_pid so
# that its next fork gets the pid of a child it reaped (tried until the
# pid is free; another process of the machine may take it first).
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
PY=/usr/bin/python3
[ -x $PY ] || skip "no $PY"
[ -w /proc/sys/kernel/ns_last_pid ] || skip "no /proc/sys/kernel/ns_last_pid to write"
cat >"$OUT/reuse.py" <<'P'
import os, sys
a = os.fork()
if a == 0:
    os._exit(0)
os.waitpid(a, 0)
for i in range(200):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(a - 1))
    b = os.fork()
    if b == 0:
        os._exit(0)
    os.waitpid(b, 0)
    if b == a:
        print("REUSED", a, "after", i + 1, flush=True)
        sys.exit(0)
print("NOT REUSED", flush=True)
sys.exit(1)
P
"$MW" -f --json "$OUT/reuse.json" -o "$OUT/reuse.txt" --check 'arenas<=8' \
	-c $PY "$OUT/reuse.py" >"$OUT/reuse.out" 2>"$OUT/reuse.err"
rc=$?
cat "$OUT/reuse.out"
grep -q "^NOT REUSED" "$OUT/reuse.out" && skip "the pid was taken by other processes 200 times"
grep -q "^REUSED" "$OUT/reuse.out" || fail "the program: $(cat "$OUT/reuse.out" "$OUT/reuse.err")"
pid=$(awk '/^REUSED/ {print $2}' "$OUT/reuse.out")
grep -q "no model\|Cannot allocate memory" "$OUT/reuse.err" && fail "$(grep "no model\|Cannot" "$OUT/reuse.err")"
[ $rc = 3 ] || fail "exit $rc, expected 3 (the rule on the refused figures): $(cat "$OUT/reuse.err")"
grep -q "^mallocwatch: warning: process $pid: its pid $pid was reused by a later process of the tree while traced, and the tracer keeps its totals per pid" \
	"$OUT/reuse.err" || fail "no warning: $(cat "$OUT/reuse.err")"
python3 - "$OUT/reuse.json" "$pid" <<'P' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
same = [p for p in r["processes"] if p["target"]["pid"] == pid]
assert len(same) == 2, [p["target"] for p in r["processes"]]
reasons = [p["unknown"]["reason"] for p in same]
print(reasons)
assert reasons[0].startswith("its pid %d was reused by a later process" % pid), reasons
assert reasons[1].startswith("its pid %d was an earlier process's" % pid), reasons
for p in same:
    assert p["arenas"] is None and "arenas" in p["unknown"]["figures"], p
others = [p for p in r["processes"] if p["target"]["pid"] != pid]
assert others and all("unknown" not in p for p in others), [p.get("unknown") for p in others]
assert r["totals"]["refused_processes"] == 2, r["totals"]
P
[ "$(grep -c "^FAIL process $pid (/usr/bin/python3): arenas: unknown: its pid $pid was" "$OUT/reuse.err")" = 2 ] ||
	fail "the rules: $(grep 'FAIL\|PASS' "$OUT/reuse.err")"
echo "ok: pid $pid reused: two reports, both refused with why, no ENOMEM"
