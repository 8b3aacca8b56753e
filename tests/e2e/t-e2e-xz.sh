#!/bin/sh
# A real program not written here: xz -T2 compressing a file.  Its two
# worker threads must show up with arenas of their own, and the output
# must still decompress to the input.
# needs: root glibc slow
. tests/lib/lib.sh
need_root
need_libc
command -v xz >/dev/null || skip "xz not installed"
head -c 12000000 /dev/urandom | od -An -tx1 >"$OUT/in.txt" || exit 99
"$MW" -q --json "$OUT/report.json" -o "$OUT/summary.txt" -c xz -T2 -k -f "$OUT/in.txt" \
	|| fail "mallocwatch exited $?"
xz -dc "$OUT/in.txt.xz" | cmp - "$OUT/in.txt" || fail "xz output is wrong"
python3 - "$OUT/report.json" <<'PY' || fail "xz's worker threads have no arenas of their own"
import json, sys
r = json.load(open(sys.argv[1]))
pid = r["target"]["pid"]
workers = {a["created_by_tid"] for a in r["arenas"] if not a["main"] and a["created_by_tid"] != pid}
print("arenas created by worker threads:", sorted(workers))
assert len(workers) >= 2, r["arenas"]
assert r["target"]["exit_status"] == 0
PY
