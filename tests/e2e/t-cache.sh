#!/bin/sh
# Root's cache (/var/cache/mallocwatch, src/runtime/cache.h):
#  1. a run killed (SIGKILL) while it makes a cache entry leaves its
#     temporary; the next run removes it and says so.  The run is held at
#     its rename by strace's fault injection (a delay), so the kill lands
#     while the kernel-config stub is being made, every time;
#  2. a temporary whose maker lives (its lock held: here by flock(1)) is
#     left alone; names that are not temporaries are never touched;
#  3. the compiled scripts are bounded (MALLOCWATCH_CACHE_MB): the least
#     recently used go first, until the rest fit, and a bad bound is
#     refused with a warning.
# The cache is the machine's: another run (another make check's) may
# sweep a dead run's temporary before ours does, which is right; so what
# is removed and what stays is checked, and ours need not be the sweep
# that says it (the last session's load run failed "the killed run left
# no temporary" this way).
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v strace >/dev/null || skip "needs strace (scripts/install-deps.sh installs it)"
C=/var/cache/mallocwatch
K=$C/kernel-$(uname -r)
"$MW" --cleanup >/dev/null 2>&1
"$MW" -q -c true >/dev/null 2>&1 || fail "a plain run failed"
[ -d "$C/modules" ] || fail "no $C/modules after a run"
# none left that no one holds (one held is another run's, making it now;
# looked at twice, a second apart: its maker locks it just after making it)
unheld_tmp() {
	for t in "$C"/new.* "$C"/modules/new.* "$C"/runtime/new.*; do
		[ -e "$t" ] && flock -n "$t" true 2>/dev/null && [ -e "$t" ] && echo "$t"
	done
}
[ -z "$(unheld_tmp)" ] || { sleep 1; [ -z "$(unheld_tmp)" ]; } ||
	fail "temporaries no one holds before the test: $(unheld_tmp)"
holder=
trap '[ -z "$holder" ] || pkill -P $holder sleep; rm -f "$C/modules/new.heldxx" "$C/modules/keepme" "$C/modules/new.toolong7" "$C"/modules/bpf_t-cache-*.bo' EXIT

# 1. killed while making the kernel-config stub (the bpf runtime's; made
# again once it is gone)
if [ -d "$K" ]; then
	rm -rf "$K"
	strace -o "$OUT/strace" -e trace=rename -e inject=rename:delay_enter=60000000 \
		"$MW" -c true >/dev/null 2>"$OUT/1.err" &
	st=$!
	# held in rename(2) (strace writes its line only when the call ends):
	# /proc/PID/syscall names the call it is in
	nr=$(printf '#include <sys/syscall.h>\nSYS_rename\n' | cpp -P - | tail -n 1)
	i=0
	# another run on the machine (another make check's) may make the stub
	# first: then ours, holding no temporary of its own, has none to make
	# (it ends unheld, or goes on with its run), and part 1 cannot be
	# tried this time (said, not failed)
	other=
	until [ -n "${mwpid:-}" ] && [ "$(cut -d' ' -f1 /proc/$mwpid/syscall 2>/dev/null)" = "$nr" ] &&
		ls -d "$C"/new.* >/dev/null 2>&1; do
		if ! kill -0 $st 2>/dev/null || { [ -d "$K" ] && [ -n "${mwpid:-}" ] &&
			! ls -l /proc/$mwpid/fd 2>/dev/null | grep -q " -> $C/new\."; }; then
			other=1
			break
		fi
		i=$((i + 1))
		[ $i -lt 300 ] || fail "no run held in rename with a temporary in $C in 30 s: $(cat "$OUT/1.err")"
		sleep 0.1
		mwpid=$(pgrep -P $st -x mallocwatch)
	done
	if [ -n "$other" ]; then
		[ -n "${mwpid:-}" ] && kill -KILL "$mwpid" 2>/dev/null
		kill -KILL $st 2>/dev/null
		wait $st 2>/dev/null
		[ -d "$K" ] || fail "the run ended unheld and made no stub: $(cat "$OUT/1.err")"
		echo "note: $K made first by another run: part 1 not tried this time"
	else
		# its temporary: the one it holds open (its lock), not another
		# run's (other runs on the machine make theirs in the same place)
		left=$(ls -l /proc/$mwpid/fd 2>/dev/null | sed -n "s|.* -> \($C/new\.[^/]*\)\$|\1|p" | head -n 1)
		[ -n "$left" ] || fail "the held run $mwpid holds no temporary in $C open"
		kill -KILL "$mwpid"
		kill -KILL $st	# strace would sit out its delay
		wait $st 2>/dev/null
		i=0
		while kill -0 "$mwpid" 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 100 ] || fail "the killed run $mwpid is still there"
			sleep 0.1
		done
		# (held 60 s in its rename, it cannot have made the stub: one there now
		# is another run's on the machine, made meanwhile)
		[ -d "$K" ] && echo "note: $K made meanwhile by another run"
		# from the kill on, the temporary is a dead run's: any run's sweep on
		# the machine may take it (another make check's, say); the next run
		# says it removed it unless another took it first
		there=0
		[ -e "$left" ] && there=1
		"$MW" -c true >/dev/null 2>"$OUT/1b.err" || fail "the next run failed: $(cat "$OUT/1b.err")"
		[ -e "$left" ] && fail "$left is still there after the next run"
		if grep -q 'cleaned up after an earlier run that was killed: .* unfinished cache entr' "$OUT/1b.err"; then
			echo "ok: a run killed while making $K left $left; the next run removed it and made the stub"
		elif [ $there = 1 ]; then
			fail "the next run did not say it removed the temporary: $(cat "$OUT/1b.err")"
		else	# gone before the next run: another run's sweep took it
			echo "ok: a run killed while making $K left $left; another run's sweep removed it"
		fi
	fi
	[ -f "$K/include/config/kernel.release" ] || fail "the stub was not made again"
fi

# 2. planted: three temporaries nobody holds, one held, two other names
# removed FILE: the count of "N unfinished cache entr(y|ies) removed" in FILE
removed() { sed -n 's/.* \([0-9]*\) unfinished cache entr.*/\1/p' "$1" | head -n 1; }
mkdir "$C/new.aaaaaa" && echo x >"$C/new.aaaaaa/f"
echo x >"$C/modules/new.bbbbbb"
mkdir -p "$C/runtime" && mkdir "$C/runtime/new.cccccc"
echo x >"$C/modules/keepme.bo.part"
mv "$C/modules/keepme.bo.part" "$C/modules/keepme"
echo x >"$C/modules/new.toolong7"
flock -o -x "$C/modules/new.heldxx" sleep 120 &	# -o: flock itself holds it
holder=$!
i=0
until [ -e "$C/modules/new.heldxx" ] && ! flock -n -x "$C/modules/new.heldxx" true; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "flock(1) did not take its lock"
	sleep 0.1
done
# other runs' temporaries there now (another make check's): a dead one
# among them may be this sweep's to count too
others=0
for t in "$C"/new.* "$C"/modules/new.* "$C"/runtime/new.*; do
	case $t in "$C/new.aaaaaa" | "$C/modules/new.bbbbbb" | "$C/runtime/new.cccccc" | \
		"$C/modules/new.heldxx" | "$C/modules/new.toolong7") continue ;; esac
	[ -e "$t" ] && others=$((others + 1))
done
"$MW" --cleanup >/dev/null 2>"$OUT/2.err" || fail "--cleanup exited $?: $(cat "$OUT/2.err")"
# 3; fewer (down to 0) when another run's sweep (another make check's)
# took some first, more only by other runs' dead temporaries that were
# there: what is gone and what stays is checked below either way
n=$(removed "$OUT/2.err")
[ -n "$n" ] && [ "$n" -le $((3 + others)) ] ||
	fail "--cleanup did not say 3 (or fewer, or up to $others more for other runs'): $(cat "$OUT/2.err")"
[ "$n" -ge 3 ] || echo "note: $((3 - n)) of the 3 taken by another run's sweep first"
for p in "$C/new.aaaaaa" "$C/modules/new.bbbbbb" "$C/runtime/new.cccccc"; do
	[ -e "$p" ] && fail "$p (nobody's) is still there"
done
for p in "$C/modules/new.heldxx" "$C/modules/keepme" "$C/modules/new.toolong7"; do
	[ -e "$p" ] || fail "$p was removed"
done
pkill -P $holder sleep
wait $holder 2>/dev/null
holder=
"$MW" --cleanup >/dev/null 2>"$OUT/2b.err"
n=$(removed "$OUT/2b.err")
[ "$n" = 1 ] || { [ "$n" = 0 ] && echo "note: taken by another run's sweep first"; } ||
	fail "--cleanup after the holder ended: $(cat "$OUT/2b.err")"
[ -e "$C/modules/new.heldxx" ] && fail "new.heldxx is still there after its holder ended"
rm -f "$C/modules/keepme" "$C/modules/new.toolong7"
echo "ok: nobody's temporaries removed, a held one only once its holder ended, other names left"

# 3. the bound: the compiled scripts in modules/ now take REAL bytes; a
# bound of REAL rounded down to MiB plus 2 MiB leaves between 1 and 2 MiB
# over them.  Planted: A 1 MiB (2000), B 1.5 MiB (2001), C 0.5 MiB (2002),
# F 0.5 MiB (now).  The oldest go until the rest fit: A and B (with B
# the rest exceed the bound by 0.5 MiB at least), not C; F is fresh
mib=1048576
real=$(find "$C/modules" -maxdepth 1 -type f \( -name '*.bo' -o -name '*.ko' \) -printf '%s\n' |
	awk '{ s += $1 } END { print s + 0 }')
bound=$((real / mib + 2))
plant() {	# NAME KIB DATE
	head -c $(($2 * 1024)) /dev/zero >"$C/modules/bpf_t-cache-$1.bo"
	[ -z "$3" ] || touch -d "$3" "$C/modules/bpf_t-cache-$1.bo"
}
plant a 1024 '2000-01-01 00:00'
plant b 1536 '2001-01-01 00:00'
plant c 512 '2002-01-01 00:00'
plant f 512 ''
MALLOCWATCH_CACHE_MB=$bound "$MW" --cleanup >/dev/null 2>"$OUT/3.err"
grep -q ' 2 least recently used compiled scripts removed from the cache (over '$bound' MiB)' \
	"$OUT/3.err" || fail "--cleanup with the bound $bound MiB: $(cat "$OUT/3.err")"
[ -e "$C/modules/bpf_t-cache-a.bo" ] && fail "A (the oldest) was kept"
[ -e "$C/modules/bpf_t-cache-b.bo" ] && fail "B was kept"
[ -e "$C/modules/bpf_t-cache-c.bo" ] || fail "C was removed: the rest fitted without"
[ -e "$C/modules/bpf_t-cache-f.bo" ] || fail "F (used now) was removed"
now=$(find "$C/modules" -maxdepth 1 -type f \( -name '*.bo' -o -name '*.ko' \) -printf '%s\n' |
	awk '{ s += $1 } END { print s + 0 }')
[ "$now" -le $((bound * mib)) ] || fail "$now bytes kept, over the bound"
echo "ok: bound $bound MiB over $real bytes: A and B went, C and F stayed ($now bytes kept)"
# a bad bound: a warning, the default kept, nothing removed
MALLOCWATCH_CACHE_MB=lots "$MW" --cleanup >/dev/null 2>"$OUT/3b.err"
grep -q "warning: MALLOCWATCH_CACHE_MB='lots' is not a whole number of MiB" "$OUT/3b.err" ||
	fail "no warning for a bad bound: $(cat "$OUT/3b.err")"
[ -e "$C/modules/bpf_t-cache-c.bo" ] || fail "a bad bound removed C"
echo "ok: a bad bound is refused with a warning"
