#!/bin/sh
# Slow-math probes (provider libm, pointer-to-double and int* arguments),
# proven on a fixture library with glibc 2.19-2.33's probe shapes, since
# this machine's glibc 2.36 libm has none: hits per probe and the first 4
# samples' decoded doubles must be exactly what mathprog printed; the
# kernel-runtime script for it must pass stap -p3; and the real 2.36 libm
# must be reported as having no slow-path probes.
# needs: root glibc
. tests/lib/lib.sh
need_root
FIX=build/tests/fixtures
"$MW" -q --json "$OUT/report.json" -o "$OUT/summary.txt" --libm $FIX/libmfix.so \
	-c $FIX/mathprog >"$OUT/program.txt" || fail "mallocwatch exited $?"
python3 - "$OUT/program.txt" "$OUT/report.json" <<'PY' || fail "slow-math report differs"
import json, sys
hits, samples = {}, {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "hits":
        hits[w[1]] = int(w[2])
    else:
        samples.setdefault(w[1], []).append({k: float(v) for k, v in (a.split("=") for a in w[2:])})
m = json.load(open(sys.argv[2]))["math"]
got_hits = {f["probe"]: f["hits"] for f in m["functions"]}
assert got_hits == hits, (got_hits, hits)
for f in m["functions"]:
    got = [{k: float(v) for k, v in s.items() if k != "tid"} for s in f["samples"]]
    assert got == samples[f["probe"]], (f["probe"], got, samples[f["probe"]])
assert m["sites"] == 5, m
print(len(hits), "slow-math probes, hits and samples exact")
PY
grep -q '^  slowatan2: 1 hit ' "$OUT/summary.txt" || fail "no slow-math section"

need_libc
"$MW" -q --json "$OUT/real.json" -o "$OUT/real.txt" -c true || fail "mallocwatch exited $?"
grep -q "^Nothing else to report: .*no slow-math probes in '[^']*libm.so.6' (glibc 2.19 to 2.33 have them)" "$OUT/real.txt" || fail "2.36 libm not reported as without probes"
ok "$MW" script --runtime=kernel --libm $FIX/libmfix.so >"$OUT/kernel.stp"
grep -q 'mark("slowatan2")' "$OUT/kernel.stp" || fail "script has no slow-math probes"
stap_p3 "$OUT/kernel.stp"
