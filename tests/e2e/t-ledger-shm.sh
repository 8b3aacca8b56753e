#!/bin/sh
# Shared memory is named in the ledger (45.7), not filed as files:
# tests/fixtures/hold-shm holds 15 MiB of it, every page touched (8 MiB
# shared anonymous, "/dev/zero (deleted)" as PostgreSQL's shared_buffers;
# 4 MiB memfd; 2 MiB SysV shm; 1 MiB POSIX shm under /dev/shm).  Its
# ledger at exit (-c) counts exactly 15 MiB as shared memory, files hold
# less than that, the ledger adds up, and the text and the "where"
# finding say "shared memory 15.0 MiB".
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
HS=build/tests/fixtures/hold-shm
[ -x $HS ] || skip "no $HS (make check builds it)"

"$MW" --json "$OUT/shm.json" -o "$OUT/shm.txt" -c $HS >"$OUT/shm.out" 2>"$OUT/shm.err" ||
	fail "-c hold-shm exited $?: $(cat "$OUT/shm.err")"
grep -qx 'shm 15360' "$OUT/shm.out" || fail "hold-shm made not all its shared memory: $(cat "$OUT/shm.out")"
python3 - "$OUT/shm.json" <<'PY' || fail "the ledger of hold-shm"
import json, sys
L = json.load(open(sys.argv[1]))["snapshots"]["exit"]["ledger"]
k = L["not_malloc_by_kind"]
assert k.get("shared_memory") == 15 << 20, k
assert k["files"] < 15 << 20, k
assert sum(k.values()) == L["not_malloc"], (k, L["not_malloc"])
assert L["check"]["ok"], L["check"]
print("ok: shared memory", k["shared_memory"], "files", k["files"])
PY
grep -q "^  not malloc's .*; shared memory 15.0 MiB; files " "$OUT/shm.txt" ||
	fail "the ledger's text: $(grep "not malloc's" "$OUT/shm.txt")"
grep -q "^ 1\. RSS .*shared memory 15.0 MiB, files " "$OUT/shm.txt" ||
	fail "the where finding: $(grep '^ 1\. RSS' "$OUT/shm.txt")"
echo "ok: shared memory named in the text"
