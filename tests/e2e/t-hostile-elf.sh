#!/bin/sh
# Files another user's process maps, and the debug files found for them,
# are that user's: libdw and libdwfl must not read them unchecked.
# 1. A libc of nobody's with a 0.5 MiB SHF_COMPRESSED .debug_info that
#    inflates to 512 MiB (a zlib bomb, tests/lib/mkbomb.py): `snapshot -p`
#    refuses it with one line, fast, without allocating it (main: 516 MB,
#    11 s, and a wrong reason).
# 2. A libc of nobody's without a build-id, whose .gnu_debuglink names a
#    FIFO beside it: the snapshot does not wait for a writer (main hung:
#    dwfl_standard_find_debuginfo opens the name).
# 3. A plain copy of the libc in nobody's directory still works: read from
#    a sealed private copy (the owner cannot change it between the check
#    and the reads), its layouts from the host's debug file.
# needs: root
. tests/lib/lib.sh
need_root
command -v setpriv >/dev/null && command -v objcopy >/dev/null || skip "no setpriv/objcopy"
need_system_libc
chmod 755 "$OUT"
pids=
trap 'kill $pids 2>/dev/null' EXIT

# measure LABEL CMD...: run CMD, its exit status, seconds and peak RSS
# (KiB, getrusage of the children) into $OUT/LABEL.{out,err,m}
measure() {
	_l=$1
	shift
	python3 - "$OUT/$_l" "$@" <<'PY'
import resource, subprocess, sys, time
out = sys.argv[1]
t = time.monotonic()
with open(out + ".out", "wb") as o, open(out + ".err", "wb") as e:
    try:
        rc = subprocess.run(sys.argv[2:], stdout=o, stderr=e, timeout=60).returncode
    except subprocess.TimeoutExpired:
        rc = 124
secs = time.monotonic() - t
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(out + ".m", "w").write("%d %.2f %d\n" % (rc, secs, kib))
PY
	read -r rc secs kib <"$OUT/$_l.m"
}

# start DIR: nobody runs sleep on the loader with DIR's libc; pid in $pid
start() {
	$NOBODY $LDSO --library-path "$1" /bin/sleep 600 &
	pid=$!
	pids="$pids $pid"
	for _i in $(seq 100); do
		grep -q "$1/libc.so.6" /proc/$pid/maps 2>/dev/null && return 0
		sleep 0.05
	done
	fail "nobody's sleep did not map $1/libc.so.6"
}

for d in bomb link copy; do
	mkdir -m 0755 "$OUT/$d" && chown 65534:65534 "$OUT/$d" || exit 99
done
$NOBODY /usr/bin/python3 tests/lib/mkbomb.py $LIBC "$OUT/bomb/libc.so.6" 512 || exit 99
$NOBODY sh -c 'cd "$1" && echo x >libc.so.6.debug &&
	objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink \
		--add-gnu-debuglink=libc.so.6.debug "$2" libc.so.6 &&
	rm libc.so.6.debug && mkfifo libc.so.6.debug' sh "$OUT/link" $LIBC || exit 99
$NOBODY cp $LIBC "$OUT/copy/libc.so.6" || exit 99

# 1. the bomb
start "$OUT/bomb"
measure bomb "$MW" snapshot -p $pid
cat "$OUT/bomb.err"
[ "$rc" = 1 ] || fail "bomb: exit $rc, not 1: $(cat "$OUT/bomb.out")"
[ "$(wc -l <"$OUT/bomb.err")" = 1 ] || fail "bomb: not one line"
grep -q "^mallocwatch: '$OUT/bomb/libc.so.6' has compressed sections that would decompress to more than mallocwatch reads (256 MiB, MALLOCWATCH_ELF_MB, and 64 times the file's size): not read" \
	"$OUT/bomb.err" || fail "bomb: not the reason"
[ -s "$OUT/bomb.out" ] && fail "bomb: figures printed: $(cat "$OUT/bomb.out")"
[ "$kib" -lt 131072 ] || fail "bomb: mallocwatch grew to $kib KiB"
awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "bomb: $secs s"
echo "ok: a 512 MiB compressed .debug_info refused in $secs s, peak RSS $kib KiB"

# the bound is MALLOCWATCH_ELF_MB's and the file's size's: raised, the
# ratio (512 MiB from a 2.4 MB file) still refuses it
measure bomb2 env MALLOCWATCH_ELF_MB=4096 "$MW" snapshot -p $pid
[ "$rc" = 1 ] && grep -q "(4096 MiB, MALLOCWATCH_ELF_MB, and 64 times" "$OUT/bomb2.err" ||
	fail "bomb with MALLOCWATCH_ELF_MB=4096: exit $rc: $(cat "$OUT/bomb2.err")"
[ "$kib" -lt 131072 ] || fail "bomb2: mallocwatch grew to $kib KiB"
echo "ok: MALLOCWATCH_ELF_MB=4096: still refused by the ratio"

# 2. the FIFO named by .gnu_debuglink
start "$OUT/link"
measure link "$MW" snapshot -p $pid
[ "$rc" = 124 ] && fail "link: the snapshot waited on nobody's FIFO (killed after 60 s)"
[ "$rc" = 1 ] || fail "link: exit $rc: $(cat "$OUT/link.err")"
grep -q "no symbols for glibc's 'main_arena' and 'mp_' in '$OUT/link/libc.so.6'" "$OUT/link.err" ||
	fail "link: $(cat "$OUT/link.err")"
echo "ok: a .gnu_debuglink naming a FIFO: refused in $secs s"

# 3. a plain copy: the snapshot as with the system's libc
start "$OUT/copy"
measure copy "$MW" snapshot -p $pid
[ "$rc" = 0 ] || fail "copy: exit $rc: $(cat "$OUT/copy.err")"
grep -q "libc $OUT/copy/libc.so.6 (glibc 2\.[0-9]*), layouts from /usr/lib/debug/" "$OUT/copy.out" ||
	fail "copy: $(head -n 3 "$OUT/copy.out")"
echo "ok: nobody's copy of the libc read ($secs s)"
