#!/bin/sh
# The sweep every run does, and --cleanup, touch only what mallocwatch
# made, and stay bounded whatever another user or tool left around:
#  1. --cleanup does not open, wait on or follow a "detaching" marker in
#     a directory another user made (a FIFO planted by nobody hung it, a
#     file naming a live pid cost 35 s);
#  2. a live stapbpf in a pid namespace of its own (its uprobe
#     definitions named for its pid there) is never touched by the host's
#     runs: its definitions stay, the host's run does not stall on them,
#     and the traced run in the namespace ends complete.
. tests/lib.sh
need_root
need_libc
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"
UE=/sys/kernel/debug/tracing/uprobe_events
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
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
