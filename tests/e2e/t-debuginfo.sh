#!/bin/sh
# A stripped libc: RIP-relative symbols (mp_, global_max_fast,
# perturb_byte) and main_arena resolve through its separate debuginfo
# (elfutils libdwfl): by .gnu_debuglink beside the file, and by build-id
# under $MW_DEBUGINFO_PATH.  With no debuginfo, those arguments are
# reported unavailable (null), one warning says so, the probes are still
# traced, and the kernel-runtime script still translates.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
L=$GLIBC_PREFIX/lib
S=$OUT/stripped
mkdir -p "$S"
cp "$L/ld-linux-x86-64.so.2" "$S/" || exit 99
objcopy --only-keep-debug "$L/libc.so.6" "$OUT/libc.debug" || exit 99
strip -o "$S/libc.so.6" "$L/libc.so.6" || exit 99
readelf -S "$S/libc.so.6" | grep -q '\.symtab' && exit 99

# 1. build-id, found under MW_DEBUGINFO_PATH
id=$(readelf -n "$S/libc.so.6" | sed -n 's/.*Build ID: *\([0-9a-f]*\)/\1/p')
[ -n "$id" ] || exit 99
D=$OUT/debugroot/.build-id/$(echo "$id" | cut -c1-2)
mkdir -p "$D" && cp "$OUT/libc.debug" "$D/$(echo "$id" | cut -c3-).debug" || exit 99
MW_DEBUGINFO_PATH=$OUT/debugroot "$MW" probes --libc "$S/libc.so.6" >"$OUT/probes-buildid.txt" ||
	fail "probes exited $?"
grep 'memory_mallopt_arena_max' "$OUT/probes-buildid.txt" | grep -q '(yes)$' ||
	fail "mp_ not resolved by build-id: $(grep arena_max "$OUT/probes-buildid.txt")"

# 2. .gnu_debuglink beside the file: a real run with exact previous values
cp "$OUT/libc.debug" "$S/libc.so.6.debug"
objcopy --add-gnu-debuglink="$S/libc.so.6.debug" "$S/libc.so.6" || exit 99
"$MW" -q --libc "$S/libc.so.6" --json "$OUT/linked.json" -o "$OUT/linked.txt" \
	-c ./examples/allocator-knobs mallopt >"$OUT/linked.out" || fail "mallocwatch exited $?"
python3 - "$OUT/linked.out" "$OUT/linked.json" <<'PY' || fail "values wrong through debuglink"
import json, sys
exp = [l.split() for l in open(sys.argv[1])]
r = json.load(open(sys.argv[2]))
got = [s for s in r["settings"] if s["source"] == "mallopt"]
for e, g in zip(exp, got):
    if e[5] not in "?-":
        assert g["previous"] == int(e[5]), (e, g)
main = [a for a in r["arenas"] if a["main"]][0]
assert main["address"] is not None, main
print("previous values and main_arena through debuginfo:", main["address"])
PY

# 3. no debuginfo at all
rm -f "$S/libc.so.6.debug"
"$MW" --libc "$S/libc.so.6" --json "$OUT/none.json" -o "$OUT/none.txt" \
	-c ./examples/allocator-knobs mallopt >/dev/null 2>"$OUT/none.err" || fail "mallocwatch exited $?"
[ "$(grep -c "cannot resolve" "$OUT/none.err")" = 1 ] || { cat "$OUT/none.err"; fail "expected one warning"; }
grep -q "cannot resolve 'mp_', 'global_max_fast', 'perturb_byte'" "$OUT/none.err" || fail "warning text"
grep -q 'previous unavailable' "$OUT/none.txt" || fail "summary does not say unavailable"
python3 - "$OUT/none.json" <<'PY' || fail "unavailable previous values not null"
import json, sys
r = json.load(open(sys.argv[1]))
got = [s for s in r["settings"] if s["source"] == "mallopt" and s["name"] != "M_CHECK_ACTION"]
assert len(got) == 16 and all(s["previous"] is None for s in got), got
assert all(s["value"] is not None for s in got)
print(len(got), "mallopt calls traced, previous unavailable")
PY
"$MW" script --runtime=kernel --libc "$S/libc.so.6" >"$OUT/kernel.stp" 2>/dev/null || fail "script"
stap_p3 "$OUT/kernel.stp"
