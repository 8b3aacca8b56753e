#!/bin/sh
# --stacks over several processes (issue 22): -c -f and -p A,B.
#
# tests/fixtures/stack-fork forks two children one after the other; child
# K makes K arenas under kidK_c <- kidK_b <- kidK_a (threads released at
# a barrier, none exits before all made theirs) and grows the break by 4
# MiB under kidK_grow; the parent then grows it under parent_grow.  What
# glibc guarantees: a new thread's first malloc makes an arena while
# fewer than 8 * cores exist and none is free (memory_arena_new under
# kidK_c), 64 KiB blocks under the 128 KiB mmap threshold come from sbrk
# (memory_sbrk_more under kidK_grow / parent_grow).  Asserted, per
# process of the JSON's "processes": every stack event is of that process
# (its pid), child K's has K arenas under kidK_c <- kidK_b <- kidK_a and
# its sbrk stacks under kidK_grow with 3.5 MiB or more, and none of the
# other child's or the parent's functions; the parent's has parent_grow and
# no kid frame; each process's text section the same; --folded: each
# line's root is its process (pid_PID), the kids' functions under their
# own pid only.  -p A,B: two "stack-fork solo K -" held on FIFOs, released
# once mallocwatch traces them: the same per process.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
F=build/tests/fixtures/stack-fork
[ -x $F ] || skip "no $F (make check builds it)"
L=$GLIBC_PREFIX/lib
pids=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# check DIR "K:PID ..." [PARENT_PID]: the JSON, text and folded of a run
check() {
	python3 - "$1" "$2" "${3:-0}" <<'PY' || fail "$1: the stacks of each process"
import json, re, sys
d, kids, parent = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
r = json.load(open(d + "/report.json"))
procs = {p["target"]["pid"]: p for p in r["processes"]}
want = {int(kp.split(":")[1]): int(kp.split(":")[0]) for kp in kids}
if parent:
    want[parent] = 0
assert set(want) <= set(procs), (want, list(procs))
def names(e):
    return [f["function"] or "" for f in e["frames"]]
for pid, k in want.items():
    ev = procs[pid]["stacks"]["events"]
    assert ev, "process %d has no stack" % pid
    bad = [e["pid"] for e in ev if e["pid"] != pid]
    assert not bad, "process %d's report has stacks of %s" % (pid, sorted(set(bad)))
    allf = {n for e in ev for n in names(e)}
    mine = ("kid%d_" % k) if k else "parent_grow"
    others = {n for n in allf if re.match(r"kid[12]_|parent_grow", n) and
              not n.startswith(mine)}
    assert not others, "process %d (kid %d) has frames %s" % (pid, k, sorted(others))
    grow = [e for e in ev if e["probe"] == "memory_sbrk_more"]
    fn = "kid%d_grow" % k if k else "parent_grow"
    b = sum(e["args"][1] for e in grow if fn in names(e))
    assert b >= 3670016, "process %d: %d bytes of sbrk under %s" % (pid, b, fn)
    if k:
        new = [e for e in ev if e["probe"] == "memory_arena_new"]
        chain = ["kid%d_c" % k, "kid%d_b" % k, "kid%d_a" % k]
        ok = [e for e in new if chain == names(e)[names(e).index(chain[0]):][:3]
              if chain[0] in names(e)]
        assert len(ok) == k, "kid %d: %d arenas under %s" % (k, len(ok), chain)
    print("process %d (%s): %d stacks, %d bytes under %s" %
          (pid, "kid %d" % k if k else "parent", len(ev), b, fn))
# --folded: each process its own root
for line in open(d + "/folded"):
    m = re.match(r"pid_(\d+);", line)
    assert m, "folded line without its process: " + line
    pid = int(m.group(1))
    for n in re.findall(r"kid([12])_", line):
        assert want.get(pid) == int(n), "kid%s's frame under pid %d: %s" % (n, pid, line)
PY
	# the text: each process's section names its own chain
	for kp in $2; do
		k=${kp%%:*} pid=${kp#*:}
		# -f: "mallocwatch: PROGRAM (pid PID)"; -p: "mallocwatch: process PID (COMM)"
		awk -v p="$pid" '/^mallocwatch: / { on = $0 ~ "\\(pid " p "\\)$" ||
			$0 ~ "^mallocwatch: process " p " " } on' "$1/summary" >"$1/text.$pid"
		n=$(grep -c "created by thread [0-9]* at: kid${k}_c <- kid${k}_b <- kid${k}_a" "$1/text.$pid")
		[ "$n" = "$k" ] || fail "$1: the text of kid $k (pid $pid) names $n arenas under kid${k}_c, not $k"
	done
}

# -c -f: the children are followed, each with its own stacks
d=$OUT/follow
mkdir -p "$d"
$MW --stacks -f --folded "$d/folded" --json "$d/report.json" -o "$d/summary" -c $F \
	>"$d/stdout" 2>"$d/stderr" || fail "-c -f: exit $?: $(cat "$d/stderr")"
cat "$d/stdout"
k1=$(sed -n 's/^kid 1 pid //p' "$d/stdout")
k2=$(sed -n 's/^kid 2 pid //p' "$d/stdout")
pp=$(sed -n 's/^parent pid //p' "$d/stdout")
[ -n "$k1" ] && [ -n "$k2" ] && [ -n "$pp" ] || fail "-c -f: the fixture did not say its pids"
check "$d" "1:$k1 2:$k2" "$pp"

# -p A,B: two processes held on FIFOs, released once traced
d=$OUT/pids
mkdir -p "$d"
for k in 1 2; do
	rm -f "$d/in$k"
	mkfifo "$d/in$k"
	"$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
		$F solo $k - <"$d/in$k" >"$d/out$k" &
	pids="$pids $!"
done
exec 4>"$d/in1" 5>"$d/in2"
set -- $pids
for p in "$1" "$2"; do
	wait_held $p 30
done
$MW --stacks -p "$1,$2" --folded "$d/folded" --json "$d/report.json" -o "$d/summary" \
	2>"$d/stderr" 4>&- 5>&- &
mw=$!
wait_for "$d/stderr" "tracing 2 processes" 120 $mw
echo go >&4; echo go >&5
exec 4>&- 5>&-
wait $mw || fail "-p A,B: exit $?: $(cat "$d/stderr")"
check "$d" "1:$1 2:$2"
echo "PASS"
