#!/bin/sh
# mallocwatch serve --textfile DIR in a directory other users can write
# (issue 43 item 7), with what nobody plants there:
#  - a FIFO at the name serve used for its temporary file (before: serve
#    opened it, waited for a reader for good and ignored SIGTERM), a
#    symlink to /etc/shadow at the textfile's name, a hard link to a root
#    file at the temporary name (as a host without protected_hardlinks
#    lets anyone make), a FIFO and a 64 MiB sparse file under other
#    names, then that hard link at the temporary name itself: serve
#    writes DIR/mallocwatch.prom every --interval through
#    a new file of its own, opens none of them, changes none of them,
#    and /etc/shadow and the root file stay as they were;
#  - a directory planted at the textfile's name: one warning, not one
#    per --interval;
#  - SIGTERM ends serve (exit 0) within 2 s and removes its file, not
#    what nobody planted;
#  - a serve whose loop is held for good (its thread stopped by ptrace,
#    tests/lib/hold_thread.py, as if blocked in a system call) still ends
#    within 2 s of SIGTERM: exit 1, saying so, the textfile removed.
# needs: root
. tests/lib/lib.sh
need_root
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
S=
cleanup() {
	[ -n "$S" ] && kill -KILL $S 2>/dev/null && wait $S 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

D=$OUT/tf
mkdir -m 0777 "$D" || exit 99
chmod 0777 "$D" || exit 99
echo "root's file" >"$OUT/victim" && chmod 0644 "$OUT/victim" || exit 99
$NOBODY mkfifo "$D/.mallocwatch.prom.tmp" "$D/fifo.prom" || fail "nobody: mkfifo"
$NOBODY ln -s /etc/shadow "$D/mallocwatch.prom" || fail "nobody: ln -s"
$NOBODY truncate -s 64M "$D/huge.prom" || fail "nobody: truncate"
ln "$OUT/victim" "$D/.mallocwatch.prom.tmp.link" || exit 99
shadow=$(sha256sum </etc/shadow)
victim=$(sha256sum <"$OUT/victim")
ls -la "$D" >"$OUT/planted.ls"

# stopped NAME SECONDS STATUS [PID]: $S ends within SECONDS of a SIGTERM
# (to PID, default $S) with STATUS
stopped() {
	t0=$(date +%s.%N)
	kill -TERM ${4:-$S}
	i=0
	while kill -0 $S 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt $(($2 * 20 + 20)) ] || fail "$1: still running $(($2 + 1)) s after SIGTERM: $(cat "$OUT/$1.err")"
		sleep 0.05
	done
	wait $S; rc=$?; S=
	t=$(echo "$(date +%s.%N) - $t0" | bc)
	[ $rc = "$3" ] || fail "$1: exit $rc after SIGTERM, not $3: $(cat "$OUT/$1.err")"
	[ "$(echo "$t < $2 + 1" | bc)" = 1 ] || fail "$1: took $t s to stop"
	echo "$1: ended $t s after SIGTERM, exit $rc"
}

"$MW" serve --textfile "$D" --interval 0.2 -p $$ 2>"$OUT/s1.err" &
S=$!
i=0
until [ -f "$D/mallocwatch.prom" ] && [ ! -L "$D/mallocwatch.prom" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no textfile in 5 s: $(cat "$OUT/s1.err"; ls -la "$D")"
	sleep 0.05
done
sleep 1	# a few more periods
grep -q '^mallocwatch_processes ' "$D/mallocwatch.prom" || fail "the textfile holds no metrics"
[ "$(stat -c %U "$D/mallocwatch.prom")" = root ] || fail "the textfile is not root's"
[ -p "$D/.mallocwatch.prom.tmp" ] && [ -p "$D/fifo.prom" ] || fail "a FIFO went"
[ "$(stat -c %s "$D/huge.prom")" = 67108864 ] || fail "huge.prom changed"
[ "$(sha256sum <"$OUT/victim")" = "$victim" ] || fail "root's file, hard-linked in DIR, changed"
[ "$(sha256sum </etc/shadow)" = "$shadow" ] || fail "/etc/shadow changed"
[ ! -s "$OUT/s1.err" ] || fail "serve warned: $(cat "$OUT/s1.err")"
stopped s1 2 0
[ ! -e "$D/mallocwatch.prom" ] || fail "the textfile is left"
left=$(ls -A "$D" | sort | tr '\n' ' ')
[ "$left" = ".mallocwatch.prom.tmp .mallocwatch.prom.tmp.link fifo.prom huge.prom " ] ||
	fail "DIR holds: $left"

# --- a hard link to root's file at that name (serve used to open it
# O_TRUNC and write the metrics into root's file)
rm "$D/.mallocwatch.prom.tmp" && ln "$OUT/victim" "$D/.mallocwatch.prom.tmp" || exit 99
"$MW" serve --textfile "$D" --interval 0.1 -p $$ 2>"$OUT/s1b.err" &
S=$!
sleep 1
[ -f "$D/mallocwatch.prom" ] || fail "s1b: no textfile: $(cat "$OUT/s1b.err")"
stopped s1b 2 0
[ "$(sha256sum <"$OUT/victim")" = "$victim" ] || fail "root's file, hard-linked at the temporary name, changed"
rm "$D/.mallocwatch.prom.tmp"

# --- a directory at the textfile's name: one warning
$NOBODY mkdir "$D/mallocwatch.prom" || fail "nobody: mkdir"
"$MW" serve --textfile "$D" --interval 0.1 -p $$ 2>"$OUT/s2.err" &
S=$!
sleep 2
n=$(grep -c "cannot write '$D/mallocwatch.prom'" "$OUT/s2.err")
[ "$n" = 1 ] || fail "$n warnings for 20 periods: $(cat "$OUT/s2.err")"
stopped s2 2 0
[ -d "$D/mallocwatch.prom" ] || fail "nobody's directory went"
[ -z "$(ls -A "$D/mallocwatch.prom")" ] || fail "nobody's directory holds: $(ls -A "$D/mallocwatch.prom")"
[ "$(ls -A "$D" | grep -c '^\.mallocwatch\.prom\.[A-Za-z]\{12\}$')" = 0 ] || fail "a temporary file is left"
rmdir "$D/mallocwatch.prom"

# --- the loop held for good: its thread stopped (hold_thread.py, ptrace)
"$MW" serve --textfile "$D" --interval 0.2 -p $$ 2>"$OUT/s3.err" &
S=$!
i=0
until [ -f "$D/mallocwatch.prom" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "s3: no textfile: $(cat "$OUT/s3.err")"
	sleep 0.05
done
/usr/bin/python3 tests/lib/hold_thread.py $S 30 >"$OUT/hold.out" 2>&1 &
HOLD=$!
wait_for "$OUT/hold.out" held 5
stopped s3 2 1
wait $HOLD || fail "hold_thread.py let the thread go: $(cat "$OUT/hold.out")"
grep -q 'Terminated: the loop did not end within 2 s; serve ends now' "$OUT/s3.err" ||
	fail "s3: no line says why: $(cat "$OUT/s3.err")"
[ ! -e "$D/mallocwatch.prom" ] || fail "the textfile is left after the forced end"
exit 0
