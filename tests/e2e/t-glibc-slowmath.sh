#!/bin/sh
# The slow-math probes of a real libm (make check-glibc on bullseye: glibc
# 2.19 to 2.33 take multi-precision slow paths in atan, atan2 and tan,
# each with an SDT probe; 2.31's libm has 32 such sites).  Random
# arguments almost never take them (none in 100 M atan calls here), so
# tests/fixtures/slow-math is given arguments that do: hard-to-round
# cases of atan, atan2 and tan (their results lie within about 2^-100 of
# a rounding boundary; taken from CORE-MATH's lists of worst cases and
# kept where glibc 2.31 took its slow path, found as below), each called
# REPEAT times, beside three that take the fast path.
#
# The independent count: a tracefs uprobe at the entry of each of
# atanMp, atan2Mp and tanMp (one call each per slow path, whichever
# probe it then fires: slowatan or slowatan_inexact, ...) and of the
# multi-precision functions under them (__mptan, __mpatan, __mpatan2) in
# every ifunc variant (sse2, avx, fma, fma4), at their file offsets from
# the libm's own symbol table (the root's libm is unstripped);
# uprobe_profile gives the hits.  mallocwatch's counts must equal them
# exactly, every slow argument must have taken its slow path each time
# (REPEAT per argument), and the samples' decoded doubles must be the
# arguments and results the program printed.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
[ -n "$MW_ROOT" ] ||
	skip "runs in make check-glibc, in a root whose libm has slow-path probes (bullseye)"
need_libc
LIBM=$MW_ROOT$(chroot "$MW_ROOT" readlink -f /lib/x86_64-linux-gnu/libm.so.6)
readelf -n "$LIBM" | grep -q 'Name: slowatan$' ||
	skip "$LIBM has no slow-path probes (glibc 2.19 to 2.33 have them)"
T=/sys/kernel/debug/tracing
[ -e $T/uprobe_events ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -w $T/uprobe_events ] && [ -r $T/uprobe_profile ] || skip "no $T/uprobe_events to count with"
case $LIBM in *[!A-Za-z0-9/._-]*) exit 99 ;; esac

REPEAT=500
SLOW="tan:0x1.d8767e64eeee6p-1 tan:0x1.0070ebbf6ca19p-3
atan:0x1.ff9f4c07c96cep+9 atan:0x1.00046968c6c71p+11
atan2:0x1.9b8168bdf60edp52,0x1.cc10c4ad8b617p52 atan2:0xd.55eb4c7c2c62p52,0x1.34efbf8aa612dp52"
FAST="tan:1 atan:0.5 atan2:1,2"

# the sites: "EVENT OFFSET", offsets from the symbols' addresses through
# the PT_LOAD that holds each
G=mwslow$$
python3 - "$LIBM" "$G" >"$OUT/sites" <<'PY' || exit 99
import re, subprocess, sys
libm, g = sys.argv[1:3]
loads = []
for l in subprocess.run(["readelf", "-lW", libm], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w and w[0] == "LOAD":
        loads.append((int(w[2], 16), int(w[1], 16), int(w[5], 16)))   # vaddr, offset, memsz
want = re.compile(r"^(atanMp|atan2Mp|tanMp|__mptan|__mpatan|__mpatan2)((_fma4|_fma|_avx)?)(\.constprop\.\d+)?$")
n = {}
for l in subprocess.run(["nm", libm], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if len(w) != 3 or w[1] not in "tT" or not want.match(w[2]):
        continue
    fam = want.match(w[2]).group(1).lstrip("_")
    a = int(w[0], 16)
    off = [a - v + o for v, o, m in loads if v <= a < v + m][0]
    n[fam] = n.get(fam, 0) + 1
    print("%s_%s_%d 0x%x" % (g, fam, n[fam], off))
PY
[ "$(grep -c "_atanMp_\|_atan2Mp_\|_tanMp_" "$OUT/sites")" = 12 ] ||
	{ cat "$OUT/sites"; fail "not 4 variants each of atanMp, atan2Mp and tanMp in $LIBM"; }
cleanup() {
	echo 0 >$T/events/$G/enable 2>/dev/null
	while read -r ev off; do echo "-:$G/$ev" >>$T/uprobe_events; done <"$OUT/sites" 2>/dev/null
}
trap cleanup EXIT
while read -r ev off; do
	echo "p:$G/$ev $LIBM:$off" >>$T/uprobe_events || fail "cannot add uprobe $ev"
done <"$OUT/sites"
echo 1 >$T/events/$G/enable || fail "cannot enable the uprobes"

# shellcheck disable=SC2086
"$MW" -q --json "$OUT/report.json" -o "$OUT/summary.txt" -c $IN build/tests/fixtures/slow-math \
	$REPEAT $SLOW $FAST >"$OUT/program.txt" || fail "mallocwatch exited $?"
echo 0 >$T/events/$G/enable
grep "^ *$LIBM ${G}_" $T/uprobe_profile | awk '{print $2, $3}' >"$OUT/profile"
python3 - "$OUT/report.json" "$OUT/profile" "$OUT/program.txt" "$G" $REPEAT <<'PY' || fail "slow-math counts"
import json, sys
rep, prof, prog, g, repeat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
count = {}
for l in open(prof):
    ev, hits = l.split()
    fam = ev[len(g) + 1:].rsplit("_", 1)[0]
    count[fam] = count.get(fam, 0) + int(hits)
r = json.load(open(rep))
assert r["events"]["lost"] == 0 and r["events"]["complete"], r["events"]
m = r["math"]
hits = {f["probe"]: f["hits"] for f in m["functions"]}
print("uprobes:", count)
print("mallocwatch:", hits, "sites", m["sites"])
# every slow argument took its slow path at each of its calls
slow = {"tan": 2, "atan": 2, "atan2": 2}
for fn in slow:
    assert count[fn + "Mp"] == slow[fn] * repeat, (fn, count)
# mallocwatch's counts are the uprobes' exactly
assert hits.get("slowtan", 0) == count["tanMp"] == count["mptan"], (hits, count)
assert hits.get("slowatan", 0) + hits.get("slowatan_inexact", 0) == count["atanMp"], (hits, count)
assert hits.get("slowatan2", 0) + hits.get("slowatan2_inexact", 0) == count["atan2Mp"], (hits, count)
# at least one multi-precision atan per slow call (atan2's goes through it too)
assert count["mpatan2"] >= count["atan2Mp"] and count["mpatan"] >= count["atanMp"] + count["atan2Mp"], count
assert m["sites"] == 32, m["sites"]
# the samples: the arguments and results the program printed
want = {}
for l in open(prog):
    w = l.split()
    args = [float.fromhex(x) for x in w[1:-2]]
    want.setdefault(w[0], []).append((args, float.fromhex(w[-1])))
n = 0
for f in m["functions"]:
    fn = f["probe"].replace("slow", "").replace("_inexact", "")
    for s in f["samples"]:
        args = [s["y"], s["x"]] if fn == "atan2" else [s["x"]]
        assert (args, s["result"]) in want[fn], (f["probe"], s, want[fn])
        n += 1
assert n > 0
print(n, "samples: the program's arguments and results")
PY
grep -q '^  slowatan2: [0-9]* hits' "$OUT/summary.txt" || fail "no slow-math section in the summary"
