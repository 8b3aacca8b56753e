#!/bin/sh
# A process that maps a libc.so.6's code alone (not its data: no
# main_arena there), as nobody's may, has exec'd nothing: the snapshot
# that cannot read that libc's allocator says so, never "replaced its
# program (exec)".  Here python3, as nobody, maps the first page of a
# copy of Debian's libc executable below its own libc (mapped.c takes the
# first libc.so.6 with code).  Before: "process N replaced its program
# (exec) while it was read" (snapshot_take.c's execed() asked only
# whether main_arena was mapped after the reads failed, not before).
# needs: root
. tests/lib/lib.sh
need_root
need_libc6_dbg
PY=/usr/bin/python3
[ -x $PY ] || skip "no $PY"
P=
cleanup() { [ -n "$P" ] && kill -KILL "$P" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
chmod 755 "$OUT"
D=$OUT/nobody
mkdir -m 0755 "$D" && chown 65534:65534 "$D" || exit 99
$NOBODY cp /lib/x86_64-linux-gnu/libc.so.6 "$D/libc.so.6" || exit 99
$NOBODY $PY - "$D/libc.so.6" >"$OUT/py.out" 2>&1 <<'PYEOF' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
# PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED_NOREPLACE, at 4 GiB
a = libc.mmap(1 << 32, 4096, 5, 0x02 | 0x100000, fd, 0)
if a != 1 << 32:
    print("mmap:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print("ready", flush=True)
time.sleep(600)
PYEOF
P=$!
wait_for "$OUT/py.out" '^ready' 30
"$MW" snapshot -p $P -o "$OUT/snap.txt" 2>"$OUT/err"
rc=$?
echo "snapshot: exit $rc: $(cat "$OUT/err")"
[ $rc != 0 ] || fail "a snapshot of a libc whose data is not mapped: exit 0"
grep -q 'exec' "$OUT/err" && fail "no exec, but: $(cat "$OUT/err")"
[ "$(wc -l <"$OUT/err")" = 1 ] || fail "not one line: $(cat "$OUT/err")"
grep -q "^mallocwatch: process $P" "$OUT/err" || fail "no reason: $(cat "$OUT/err")"
grep -q '^State:.*[tT]' /proc/$P/status && fail "process $P left stopped"
exit 0
