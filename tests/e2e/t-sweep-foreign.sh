#!/bin/sh
# The sweep every run does, and --cleanup, touch only what mallocwatch
# made, and stay bounded whatever another user or tool left around:
#  1. --cleanup does not open, wait on or follow a "detaching" marker in
#     a directory another user made (a FIFO planted by nobody hung it, a
#     file naming a live pid cost 35 s);
#     nor on a marker a dead watcher left, nor works in a TMPDIR another
#     user can write;
#  2. a live stapbpf in a pid namespace of its own (its uprobe
#     definitions named for its pid there) is never touched by the host's
#     runs: its definitions stay, the host's run does not stall on them,
#     and the traced run in the namespace ends complete;
#  3. when a namespace is killed whole (its tracer with it), what the
#     tracer left is swept by the host.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"
UE=/sys/kernel/debug/tracing/uprobe_events
# 2 and 3 are about uprobe definitions in tracefs, which stapbpf makes
# when it attaches by itself; through umulti-shim.so it makes none (its
# uprobe_multi links go with its descriptors: t-umulti)
export MALLOCWATCH_ATTACH=tracefs
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# 1. Planted markers, in a TMPDIR of our own that nobody may write to
# (1777, as /tmp): a FIFO, a link to a FIFO, and a file naming pid 1
# (alive), each in a directory named as a run of pid 1 (alive) would be.
T=$OUT/tmp
mkdir -p "$T" && chmod 1777 "$T"
mkfifo "$OUT/fifo" && chmod 666 "$OUT/fifo"
$NOBODY sh -c "
	mkdir -m 0700 '$T/mallocwatch.1.AAAAAA' && mkfifo '$T/mallocwatch.1.AAAAAA/detaching'
	mkdir -m 0700 '$T/mallocwatch.1.BBBBBB' && ln -s '$OUT/fifo' '$T/mallocwatch.1.BBBBBB/detaching'
	mkdir -m 0700 '$T/mallocwatch.1.CCCCCC' && echo 1 >'$T/mallocwatch.1.CCCCCC/detaching'
" || fail "nobody could not plant"
t0=$(ms)
TMPDIR=$T timeout 60 "$MW" --cleanup 2>"$OUT/cleanup.err"
rc=$?
took=$(( $(ms) - t0 ))
cat "$OUT/cleanup.err"
[ $rc = 0 ] || fail "--cleanup exited $rc after $took ms with markers planted by nobody"
[ $took -lt 10000 ] || fail "--cleanup took $took ms with markers planted by nobody"
[ -p "$T/mallocwatch.1.AAAAAA/detaching" ] || fail "nobody's directory was changed"
grep -q "waited for" "$OUT/cleanup.err" && fail "--cleanup waited for a planted marker"
echo "ok: planted markers ignored ($took ms)"

# 1b. A watcher that died (its directory's lock free) and left its
# marker naming a pid that now belongs to a process of nobody's calling
# itself stapbpf: nothing to wait for.
mkdir -p "$OUT/bin"
cp "$(command -v sleep)" "$OUT/bin/stapbpf"
$NOBODY "$OUT/bin/stapbpf" 60 &
fake=$!
mkdir -m 0700 "$T/mallocwatch.1.DDDDDD"
echo $fake >"$T/mallocwatch.1.DDDDDD/detaching"
t0=$(ms)
TMPDIR=$T timeout 60 "$MW" --cleanup 2>"$OUT/cleanup-fake.err"
rc=$?
took=$(( $(ms) - t0 ))
kill $fake 2>/dev/null
[ $rc = 0 ] && [ $took -lt 10000 ] || fail "--cleanup waited on nobody's 'stapbpf' (exit $rc, $took ms)"
grep -q "waited for" "$OUT/cleanup-fake.err" && fail "--cleanup waited for nobody's 'stapbpf'"
echo "ok: a dead watcher's marker naming nobody's 'stapbpf' ignored ($took ms)"

# 1c. A TMPDIR another user controls: that user could move root's work
# directory away and plant links in its place.  Refused before anything.
$NOBODY mkdir -m 0755 "$T/ud" || fail "nobody could not make a directory"
TMPDIR=$T/ud "$MW" -q -c /bin/true >/dev/null 2>"$OUT/ud.err"
rc=$?
[ $rc = 1 ] || fail "a TMPDIR of nobody's was used (exit $rc): $(cat "$OUT/ud.err")"
grep -q "^mallocwatch: TMPDIR: '$T/ud' belongs to uid 65534" "$OUT/ud.err" || fail "no reason: $(cat "$OUT/ud.err")"
[ -z "$(ls "$T/ud")" ] || fail "root made something in nobody's TMPDIR: $(ls "$T/ud")"
echo "ok: a TMPDIR of nobody's refused"

# 2. A traced run in its own pid namespace, held until released.
"$MW" --cleanup 2>/dev/null
rm -f "$OUT/started" "$OUT/release"
unshare --pid --fork --mount-proc sh -c '"$1" -q -o "$2/inner.txt" -c sh -c "touch $2/started
	i=0; while [ ! -e $2/release ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done"' \
	sh "$MW" "$OUT" 2>"$OUT/inner.err" &
inner=$!
i=0
until [ -e "$OUT/started" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the run in the namespace never started: $(cat "$OUT/inner.err")"
	sleep 0.1
done
# its stapbpf: the one with a second pid in NSpid; N is its pid there
N=
for p in $(pgrep -x stapbpf); do
	set -- $(sed -n 's/^NSpid://p' /proc/$p/status)
	[ $# = 2 ] && N=$2
done
[ -n "$N" ] || fail "no stapbpf in a pid namespace"
before=$(grep -c "stapprobe_${N}_" $UE)
[ "$before" -gt 0 ] || fail "the namespaced stapbpf ($N there) has no definitions"
t0=$(ms)
"$MW" -o /dev/null -c true 2>"$OUT/host.err" || fail "the host's run failed: $(cat "$OUT/host.err")"
took=$(( $(ms) - t0 ))
after=$(grep -c "stapprobe_${N}_" $UE)
echo "host run: $took ms; the namespaced tracer's definitions: $before before, $after after"
[ "$after" = "$before" ] || fail "the host's run removed $((before - after)) of a live namespaced stapbpf's definitions"
[ $took -lt 15000 ] || fail "the host's run took $took ms beside a namespaced tracer"
TMPDIR=$T "$MW" --cleanup 2>"$OUT/cleanup2.err" || fail "--cleanup exited $?"
[ "$(grep -c "stapprobe_${N}_" $UE)" = "$before" ] || fail "--cleanup removed a live namespaced stapbpf's definitions"
touch "$OUT/release"
wait $inner
rc=$?
cat "$OUT/inner.err"
[ $rc = 0 ] || fail "the namespaced run exited $rc"
grep -q "tracer ended early\|incomplete" "$OUT/inner.txt" && fail "the namespaced run was cut short"
grep -q "events: [0-9]* probe hits, 0 lost" "$OUT/inner.txt" || fail "the namespaced run lost events: $(grep events: "$OUT/inner.txt")"
echo "ok: a namespaced tracer left alone, its run complete"

# 3. A namespace killed whole (SIGKILL to its init, so to everything in
# it) while its tracer holds its uprobes: what that tracer left is the
# host's to sweep, by root's record of it.
rm -f "$OUT/started"
unshare --pid --fork --kill-child=SIGKILL --mount-proc sh -c '"$1" -q -o /dev/null -c sh -c \
	"touch $2/started; sleep 3"' sh "$MW" "$OUT" 2>/dev/null &
killer=$!
i=0
until [ -e "$OUT/started" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the second namespaced run never started"; sleep 0.1
done
N=
for p in $(pgrep -x stapbpf); do
	set -- $(sed -n 's/^NSpid://p' /proc/$p/status)
	[ $# = 2 ] && N=$2 && P=$p
done
[ -n "$N" ] && [ "$(grep -c "stapprobe_${N}_" $UE)" -gt 0 ] || fail "no namespaced stapbpf with definitions"
kill -TERM $killer	# unshare sends SIGKILL to the namespace's init
wait $killer
i=0
while [ -e /proc/$P ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the namespaced stapbpf outlived its namespace"; sleep 0.1
done
echo "namespace killed; its tracer ($N there) left $(grep -c "stapprobe_${N}_" $UE) definitions"
"$MW" --cleanup 2>"$OUT/cleanup3.err" || fail "--cleanup exited $?"
cat "$OUT/cleanup3.err"
left=$(grep -c "stapprobe_${N}_" $UE)
[ "$left" = 0 ] || fail "$left uprobe definitions of the killed namespace's tracer left"
ls /run/mallocwatch/tracers 2>/dev/null | grep -q "\\.${N}\$" && fail "the dead tracer's record was kept"
pkill -f 'ld-linux-x86-64.so.2 .*sleep 3$' 2>/dev/null
echo "ok: what a killed namespace's tracer left is swept"
