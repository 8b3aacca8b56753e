#!/bin/sh
# stapbpf's internal map made an array in stap's bpf object
# (src/runtime/bpfobj.h).
# 1. The object mallocwatch's stapbpf runs, compiled afresh and taken
#    from the cache, has map 0 of type 2 (BPF_MAP_TYPE_ARRAY); stap
#    writes 1 (BPF_MAP_TYPE_HASH).
# 2. What the map is for works the same before and after, on scripts
#    compiled here: a count on setjmp equals the program's own count,
#    exit() from a handler stops at the 7th hit, error() in one is
#    reported and ends stapbpf with status 1; only the one byte of the
#    map's type differs between the two objects.
# 3. Bad input: a file that is not ELF, an ELF object with no such map
#    (a program, an object already changed, bpf objects whose map 0 has
#    another name or other key size) are told apart and left unchanged.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v stap >/dev/null && command -v stapbpf >/dev/null || skip "no stap/stapbpf"
command -v readelf >/dev/null || skip "no readelf"
P=$GLIBC_PREFIX/lib
LIBC=$P/libc.so.6
maptype() {	# FILE: map 0's type, the first u32 of "maps", as hex bytes
	readelf -x maps "$1" | sed -n 's/^  0x00000000 \([0-9a-f]*\) .*/\1/p'
}
# what the traced program sees: the object of its sibling stapbpf
# (mallocwatch's child, as the program is), map 0's type
PROBE='p=$(pgrep -x -P $PPID stapbpf); o=$(tr "\0" "\n" </proc/$p/cmdline | tail -n 1); readelf -x maps "$o" | sed -n "s/^  0x00000000 \([0-9a-f]*\) .*/type \1/p"'
MW_NO_CACHE=1 "$MW" -q -e setjmp -o /dev/null -c sh -c "$PROBE" >"$OUT/fresh.txt" ||
	fail "mallocwatch exited $?"
echo "type 02000000" >"$OUT/expected.txt"
expect_same "$OUT/expected.txt" "$OUT/fresh.txt"
"$MW" -q -e setjmp -o /dev/null -c sh -c "$PROBE" >/dev/null || fail "mallocwatch exited $?"
"$MW" -v -e setjmp -o /dev/null -c sh -c "$PROBE" >"$OUT/cached.txt" 2>"$OUT/cached.err" ||
	fail "mallocwatch exited $?"
grep -q "built before" "$OUT/cached.err" || fail "the third run did not use the cache's object"
expect_same "$OUT/expected.txt" "$OUT/cached.txt"

# 2. the bench's tool: mallocwatch's own function
cc -O2 -Isrc/runtime -o "$OUT/tune" bench/bpfobj-tune.c src/runtime/bpfobj.c -lelf || exit 99
KSTUB=/var/cache/mallocwatch/kernel-$(uname -r)	# made by the runs above
[ -d "$KSTUB" ] || exit 99
cat >"$OUT/count.stp" <<EOF
global n
probe begin { printf("ready\n") }
probe process("$LIBC").mark("setjmp") { if (pid() == target()) n++ }
probe end { printf("setjmp %d\n", n) }
EOF
sed 's/n++ }/{ n++; if (n == 7) exit() } }/' "$OUT/count.stp" >"$OUT/stop.stp"
sed 's/n++ }/{ n++; if (n == 5) error("boom") } }/' "$OUT/count.stp" >"$OUT/fault.stp"
LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
UE=/sys/kernel/debug/tracing/uprobe_events
[ -f $UE ] || UE=/sys/kernel/tracing/uprobe_events
# traced OBJ: stapbpf -x on setjmp-loop 1000, held until the begin
# probe's "ready", and once the program is gone stopped with SIGINT, as
# mallocwatch stops it (count), or left to end by itself (stop, fault:
# their exit() and error(); a SIGINT then crossing stapbpf's own exit
# left it hanging once in a few runs under load, stap's object or the
# changed one).  Not stapbpf's -c: it missed its command's exit in
# every other run back to back here, either object, and waited for a
# signal.  OUT/OBJ.out gets stapbpf's output and "exit STATUS".  A
# stapbpf still there 30 s later is killed, its uprobe definitions
# removed, and the test fails.
traced() {
	rm -f "$OUT/go" && mkfifo "$OUT/go" || exit 99
	sh -c 'read _ <"$0"; exec "$@"' "$OUT/go" $LOADER "$PWD/examples/setjmp-loop" 1000 \
		>"$OUT/$1.prog" &
	prog=$!
	LD_PRELOAD=$PWD/build/memlock-shim.so stapbpf -w -x $prog "$OUT/$1.bo" >"$OUT/$1.out" 2>&1 &
	tracer=$!
	i=0
	until grep -q '^ready' "$OUT/$1.out"; do
		i=$((i + 1))
		if ! kill -0 $tracer 2>/dev/null || [ $i -gt 3000 ]; then
			kill -KILL $tracer 2>/dev/null; echo >"$OUT/go"; wait $prog
			fail "$1: stapbpf not ready: $(cat "$OUT/$1.out")"
		fi
		sleep 0.01
	done
	echo >"$OUT/go"
	wait $prog
	case $1 in count*) kill -INT $tracer ;; esac
	i=0
	while kill -0 $tracer 2>/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
	if kill -0 $tracer 2>/dev/null; then
		kill -KILL $tracer; wait $tracer
		for e in $(grep -o "stapprobe_${tracer}_[0-9]*" $UE); do echo "-:uprobes/$e" >>$UE; done
		fail "$1: stapbpf still there 30 s after the program"
	fi
	wait $tracer
	echo "exit $?" >>"$OUT/$1.out"
}
for s in count stop fault; do
	(cd "$OUT" && stap --runtime=bpf -w -r "$KSTUB" -p4 -m "$s" "$s.stp" >/dev/null) ||
		fail "stap could not compile $s.stp"
	cp "$OUT/$s.bo" "$OUT/${s}_stap.bo"
	[ "$(maptype "$OUT/$s.bo")" = 01000000 ] || fail "$s: stap's map 0 is not a hash"
	"$OUT/tune" "$OUT/$s.bo" || fail "$s: not changed"
	[ "$(maptype "$OUT/$s.bo")" = 02000000 ] || fail "$s: map 0 is not an array"
	[ "$(cmp -l "$OUT/${s}_stap.bo" "$OUT/$s.bo" | wc -l)" = 1 ] ||
		fail "$s: more than one byte changed"
	for o in ${s}_stap $s; do
		traced $o
		cp "$OUT/$o.out" "$OUT/$o.txt"	# stapbpf's colours kept
	done
	expect_same "$OUT/${s}_stap.txt" "$OUT/$s.txt"
done
# the program's setjmp-loop 1000 calls setjmp 1001 times (its first)
grep -qx 'setjmp 1001' "$OUT/count.txt" || fail "count: $(cat "$OUT/count.txt")"
grep -qx 'exit 0' "$OUT/count.txt" || fail "count: $(cat "$OUT/count.txt")"
grep -qx 'setjmp 7' "$OUT/stop.txt" || fail "exit(): $(cat "$OUT/stop.txt")"
grep -q 'ERROR: .*boom' "$OUT/fault.txt" || fail "error(): $(cat "$OUT/fault.txt")"
grep -qx 'exit 1' "$OUT/fault.txt" || fail "error(): $(cat "$OUT/fault.txt")"

# 3. bad input
echo "not an object" >"$OUT/junk"
"$OUT/tune" "$OUT/junk" 2>"$OUT/junk.err" && fail "a text file was changed"
grep -q "'$OUT/junk' is not an ELF object" "$OUT/junk.err" || fail "junk: $(cat "$OUT/junk.err")"
cp /bin/true "$OUT/prog"
"$OUT/tune" "$OUT/prog" 2>"$OUT/prog.err" && fail "a program was changed"
grep -q "no internal map" "$OUT/prog.err" || fail "prog: $(cat "$OUT/prog.err")"
cmp -s /bin/true "$OUT/prog" || fail "the program's file changed"
cp "$OUT/count.bo" "$OUT/again.bo"
"$OUT/tune" "$OUT/again.bo" 2>/dev/null && fail "an object already changed was changed again"
cmp -s "$OUT/count.bo" "$OUT/again.bo" || fail "the object already changed changed"
"$OUT/tune" "$OUT/nothere.bo" 2>"$OUT/nothere.err" && fail "a missing file was changed"
grep -q "cannot open" "$OUT/nothere.err" || fail "nothere: $(cat "$OUT/nothere.err")"
# bpf objects of clang's with a "maps" section: the internal map's shape
# but another name, or its name but 8-byte keys, are not stapbpf's and
# stay; with both it is changed (the shape alone decides, not stap)
if command -v clang >/dev/null; then
	cat >"$OUT/maps.c" <<'EOF'
struct def { unsigned type, key, value, max, flags; };
struct def m0 __asm__(NAME) __attribute__((section("maps"), used)) = { 1, KEY, 8, 2, 0 };
struct def m1 __asm__("map.1") __attribute__((section("maps"), used)) = { 4, 4, 4, 0, 0 };
EOF
	for v in 'good "map.0" 4 0' 'other "other" 4 1' 'key8 "map.0" 8 1'; do
		set -- $v
		clang -O2 -target bpf -DNAME="$2" -DKEY=$3 -c -o "$OUT/$1.o" "$OUT/maps.c" || exit 99
		cp "$OUT/$1.o" "$OUT/$1.orig"
		rc=0
		"$OUT/tune" "$OUT/$1.o" 2>/dev/null || rc=$?
		[ $rc = $4 ] || fail "clang's object '$1': tune exited $rc, not $4"
		if [ $4 = 1 ]; then
			cmp -s "$OUT/$1.orig" "$OUT/$1.o" || fail "clang's object '$1' changed"
		else
			[ "$(maptype "$OUT/$1.o")" = 02000000 ] || fail "clang's object '$1' not changed"
		fi
	done
fi
echo "map 0: hash in stap's objects, array in mallocwatch's; counts, exit() and error() the same"
