#!/bin/sh
# -c chroot NEWROOT PROG: PROG is traced on the libc inside NEWROOT
# (src/runtime/target.h), not on the one mallocwatch would choose here.  A
# small root is made of the probe-enabled glibc's libc, libm and loader
# (copies: other inodes than the cached glibc's) and examples/arena-storm:
#  - its arenas, heaps and heap bytes equal its own malloc_info() exactly,
#    the report names the root's libc, and the exit snapshot read its
#    DWARF from that file;
#  - snapshot -p of a process running in the root equals its malloc_info();
#  - errors, one line each and exit 1: chroot without a root, an option of
#    chroot's that is not followed, a root without a libc.so.6, and a root
#    whose libc.so.6 is a link that climbs out of it (looked up inside the
#    root, it is not there).
# make check-glibc runs the end-to-end tests this way on Debian releases'
# own glibcs (scripts/check-glibc.sh).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -z "$MW_ROOT" ] || skip "makes a root of its own"
[ -x examples/arena-storm ] && [ -x examples/hold-arenas ] || make -s -C examples || exit 99
R=$OUT/root
mkdir -p "$R/lib" "$R/lib64" "$R/bin"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$GLIBC_PREFIX/lib/libm.so.6" "$R/lib/" || exit 99
cp "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" "$R/lib64/" || exit 99
cp examples/arena-storm examples/hold-arenas "$R/bin/" || exit 99

"$MW" -q --json "$OUT/report.json" -o "$OUT/summary.txt" -c chroot "$R" /bin/arena-storm 4 20 \
	>"$OUT/malloc_info.xml" || fail "mallocwatch -c chroot exited $?"
grep -q "^  libc $R/lib/libc.so.6, " "$OUT/summary.txt" ||
	fail "not the root's libc: $(sed -n 2p "$OUT/summary.txt")"
grep -q "\"dwarf\": \"$R/lib/libc.so.6\"" "$OUT/report.json" ||
	fail "the exit snapshot did not read the root's libc"
expect_malloc_info "$OUT/malloc_info.xml" "$OUT/report.json" "$OUT" "-c chroot"

# snapshot -p of a process in the root, holding its state
rm -f "$OUT/hold.in"; mkfifo "$OUT/hold.in"
chroot "$R" /bin/hold-arenas 4 held 0 <"$OUT/hold.in" >"$OUT/held.xml" 2>"$OUT/held.err" &
pid=$!
exec 3>"$OUT/hold.in"
wait_for "$OUT/held.xml" '</malloc>' 30
"$MW" snapshot -p $pid --json "$OUT/snap.json" -o "$OUT/snap.txt" 2>"$OUT/snap.err"
rc=$?
exec 3>&-; wait $pid
[ $rc = 0 ] || fail "snapshot -p of a process in the root: exit $rc: $(cat "$OUT/snap.err")"
grep -q "\"dwarf\": \"$R/lib/libc.so.6\"" "$OUT/snap.json" || fail "snapshot: not the root's libc"
expect_snapshot "$OUT/held.xml" "$OUT/snap.json" "$OUT/snap" "snapshot -p in the root"

for bad in "" "--bogus $R" "$OUT" "$OUT/climb"; do
	case $bad in
	"") want="chroot without a root to run in" ;;
	--bogus*) want="cannot follow chroot's option '--bogus': the root its program runs in is not known" ;;
	*) want="no libc.so.6 in the root '$bad' (its lib/x86_64-linux-gnu, usr/lib/x86_64-linux-gnu, lib64, usr/lib64, lib, usr/lib)" ;;
	esac
	if [ "$bad" = "$OUT/climb" ]; then
		mkdir -p "$OUT/climb/lib"
		ln -sf ../../../../../../../../lib/x86_64-linux-gnu/libc.so.6 "$OUT/climb/lib/libc.so.6"
	fi
	# shellcheck disable=SC2086
	if [ -n "$bad" ]; then set -- $bad /bin/true; else set --; fi
	"$MW" -c chroot "$@" >"$OUT/bad.out" 2>"$OUT/bad.err"
	rc=$?
	[ $rc = 1 ] && [ "$(cat "$OUT/bad.err")" = "mallocwatch: $want" ] ||
		fail "chroot $bad: exit $rc: $(cat "$OUT/bad.err")"
done
echo "ok: chroot errors"
