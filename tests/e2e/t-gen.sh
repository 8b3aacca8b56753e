#!/bin/sh
# The script generator.
# 1. For the fixture library, the whole script, both runtimes, must be
#    exactly tests/golden/gen/libfix-RUNTIME.stp (the library's path replaced by
#    @LIBFIX@).  A change here is a change in what mallocwatch runs: look
#    at the diff, run the fixture and e2e tests, then update the file.
# 2. For the probe-enabled libc (when present): one handler per memory_*,
#    setjmp, longjmp and longjmp_target probe name found by readelf, every site of a multi-site probe
#    dispatched, $argN only in the kernel script, and the stream mode
#    of probes.def (heap_more aggregated, arena_new streamed), and the
#    bpf handlers' pid and tid from one mw_pidtgid() call each.
# needs: cpu
. tests/lib/lib.sh
FIX=$PWD/build/tests/fixtures/libfix.so
[ -f "$FIX" ] || exit 99
for rt in bpf kernel; do
	ok "$MW" script --runtime=$rt --libc "$FIX" >"$OUT/raw-$rt.stp"
	sed "s|$FIX|@LIBFIX@|g" "$OUT/raw-$rt.stp" >"$OUT/libfix-$rt.stp"
	expect_same tests/golden/gen/libfix-$rt.stp "$OUT/libfix-$rt.stp"
done

LIBC=$GLIBC_PREFIX/lib/libc.so.6
[ -f "$LIBC" ] || skip "no probe-enabled libc for part 2 (part 1 passed)"
command -v readelf >/dev/null || skip "no readelf for part 2 (part 1 passed)"
readelf -n "$LIBC" | sed -n 's/^ *Name: \(memory_.*\|setjmp\|longjmp\|longjmp_target\)$/\1/p' |
	sort -u >"$OUT/names.readelf"
for rt in bpf kernel; do
	ok "$MW" script --runtime=$rt --libc "$LIBC" >"$OUT/libc-$rt.stp"
	sed -n 's/^probe process(".*").mark("\(.*\)") {$/\1/p' "$OUT/libc-$rt.stp" | sort >"$OUT/names.$rt"
	expect_same "$OUT/names.readelf" "$OUT/names.$rt"
done
sites=$(readelf -n "$LIBC" | grep -c 'Name: memory_mallopt_arena_max')
[ "$sites" -ge 2 ] || fail "expected memory_mallopt_arena_max to have several sites"
arms=$(sed -n '/mark("memory_mallopt_arena_max")/,/^}/p' "$OUT/libc-bpf.stp" | grep -c 'if ((ip & 4095) ==')
[ "$arms" = "$sites" ] || fail "$sites sites but $arms dispatch arms"
grep -q '= \$arg' "$OUT/libc-bpf.stp" && fail "bpf script uses \$argN"
grep -q 'a1 = \$arg1' "$OUT/libc-kernel.stp" || fail "kernel script does not use \$argN"
sed -n '/mark("memory_heap_more")/,/^}/p' "$OUT/libc-bpf.stp" | grep -q printf &&
	fail "memory_heap_more streams a line per hit"
sed -n '/mark("memory_arena_new")/,/^}/p' "$OUT/libc-bpf.stp" | grep -q 'printf("T ' ||
	fail "memory_arena_new is not streamed"
# bpf handlers: pid and tid from one helper call each hit (stp/bpf.stp's
# mw_pidtgid), not pid() and tid()'s one call each and more
# (-f: the script of several processes, whose maps are keyed by process)
ok "$MW" script --runtime=bpf -f --libc "$LIBC" >"$OUT/libc-bpf-f.stp"
for s in libc-bpf libc-bpf-f; do
	handlers=$(grep -c '^probe process(' "$OUT/$s.stp")
	calls=$(sed -n '/^probe process(/,/^}/p' "$OUT/$s.stp" | grep -c 'mw_pidtgid()')
	[ "$calls" = "$handlers" ] || fail "$s: $handlers handlers but $calls mw_pidtgid() calls"
	sed -n '/^probe process(/,/^}/p' "$OUT/$s.stp" | grep -n 'pid()\|tid()' &&
		fail "$s: a handler calls pid() or tid()"
done
echo "$(wc -l <"$OUT/names.readelf") memory probes, $sites sites of memory_mallopt_arena_max"
# without --runtime: the runtime a run here would use (runtime.h
# mw_runtime_pick: the kernel's with loadable modules and a build tree)
want=bpf
[ -e /proc/modules ] && [ -e "/lib/modules/$(uname -r)/build" ] && want=kernel
"$MW" script --libc "$LIBC" | head -n 1 | grep -q "($want runtime)" ||
	fail "script without --runtime: $("$MW" script --libc "$LIBC" | head -n 1), expected the $want runtime's"
echo "ok: script's default runtime is a run's ($want)"
