#!/bin/sh
# Nothing left behind, ever:
#  - mallocwatch killed with SIGKILL at several moments of a run (while
#    stap compiles, while stapbpf attaches, while the program runs): once
#    'mallocwatch --cleanup' has run, no tracer of that run, no uprobe
#    definition of it and no work directory remain;
#  - uprobe definitions of a stapbpf of ours that died by SIGKILL (named
#    for its pid) are removed by the next run, and no one else's are;
#  - ^C while stap compiles: a message, exit 130, stap's whole process
#    group stopped, the work directory removed.
# Each check holds whatever phase the kill lands in; none depends on it.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
T=$OUT/tmp
mkdir -p "$T"
export TMPDIR=$T
UE=/sys/kernel/debug/tracing/uprobe_events
# tracers (stap, stapbpf) whose working directory is under $T
our_tracers() {
	for p in $(pgrep -x 'stap|stapbpf'); do
		case "$(readlink /proc/$p/cwd 2>/dev/null)" in "$T"/*) echo $p;; esac
	done
}
check_clean() {	# WHAT
	[ -z "$(our_tracers)" ] || fail "$1: tracers left: $(our_tracers)"
	[ -z "$(ls "$T")" ] || fail "$1: left in TMPDIR: $(ls "$T")"
	for p in $tracer_pids; do
		grep -q "stapprobe_${p}_" $UE && fail "$1: $(grep -c "stapprobe_${p}_" $UE) uprobe" \
			"definitions of stapbpf $p left (its state: $(cut -d' ' -f3 /proc/$p/stat \
			2>/dev/null || echo gone); --cleanup said: $(cat "$OUT/cleanup.err" 2>/dev/null))"
	done
	:
}
# record the tracer pids of the running mallocwatch in $tracer_pids
note_tracers() { tracer_pids="$tracer_pids $(our_tracers)"; }

for delay in 0.05 0.3 0.8 1.5 3; do
	tracer_pids=
	"$MW" -q -o /dev/null -c sleep 10 2>/dev/null &
	mw=$!
	sleep $delay
	note_tracers
	kill -KILL $mw
	wait $mw 2>/dev/null
	note_tracers
	"$MW" --cleanup 2>"$OUT/cleanup.err" || fail "--cleanup exited $?"
	check_clean "SIGKILL after ${delay}s"
	echo "ok: SIGKILL after ${delay}s: $(cat "$OUT/cleanup.err")"
done
# the rest is stapbpf's: under the kernel runtime (a guest's) it has no tracer
if [ "${MW_TEST_RUNTIME:-}" = kernel ]; then
	echo "kernel runtime: stapbpf's cases not run"
	exit 0
fi
# the moment stapbpf appears: it is still attaching its uprobes
tracer_pids=
"$MW" -q -o /dev/null -c sleep 10 2>/dev/null &
mw=$!
i=0
until our_tracers | xargs -r -n1 sh -c 'grep -qx stapbpf /proc/$0/comm 2>/dev/null && echo $0' | grep -q .; do
	i=$((i + 1)); [ $i -lt 3000 ] || fail "stapbpf never started"; sleep 0.01
done
note_tracers
kill -KILL $mw
wait $mw 2>/dev/null
"$MW" --cleanup 2>"$OUT/cleanup.err" || fail "--cleanup exited $?"
check_clean "SIGKILL while stapbpf attaches"
echo "ok: SIGKILL while stapbpf attaches: $(cat "$OUT/cleanup.err")"
pkill -f 'ld-linux-x86-64.so.2 .*sleep 10$' 2>/dev/null	# the programs ran on untraced

# A stapbpf killed with SIGKILL together with its mallocwatch cannot
# remove its uprobe definitions ("p:uprobes/stapprobe_PID_N ...").  The
# next run removes them (root's record says that stapbpf was one
# mallocwatch started) and says so.  A definition of a tracer mallocwatch
# did not start is never touched, even when no process has its pid.
# Definitions are what stapbpf makes when it attaches by itself
# (MALLOCWATCH_ATTACH=tracefs, or a kernel without uprobe_multi links);
# through umulti-shim.so it makes none (t-umulti).
export MALLOCWATCH_ATTACH=tracefs
"$MW" --cleanup 2>/dev/null
true & dead=$!
wait $dead
echo "p:uprobes/stapprobe_${dead}_0 /bin/true:0x1000" >>$UE || fail "cannot define a uprobe"
trap 'echo "-:uprobes/stapprobe_${dead}_0" >>$UE 2>/dev/null' EXIT	# ours to remove
# The kill must land while the definitions are there. stapbpf defines a
# uprobe, then opens its perf event (which lets the definition go): its
# perf_event_open calls are each held 1 s here (strace -D keeps stapbpf's
# own pid, parent and name), so even a loaded machine sees the window (at
# load 10, unheld, it had let them go in 5 tries of 5); up to 5 tries all
# the same (each a whole run, swept by --cleanup before the next).
wrap_tool "$OUT/slowbin" stapbpf strace -D -qq -o /dev/null -e trace=perf_event_open \
	-e inject=perf_event_open:delay_enter=1000000
n=0 try=0 swept=0
while [ "$n" -eq 0 ] && [ $try -lt 5 ]; do
	try=$((try + 1))
	PATH="$OUT/slowbin:$PATH" "$MW" -q -o /dev/null -c sleep 10 2>/dev/null &
	mw=$!
	i=0	# killed while it defines its uprobes (once attached, it has let
		# the definitions go: only the perf events hold them then)
	sb=
	until [ -n "$sb" ] && grep -q "stapprobe_${sb}_" $UE; do
		i=$((i + 1)); [ $i -lt 3000 ] || fail "stapbpf never defined a uprobe"; sleep 0.005
		sb=$(our_tracers | xargs -r -n1 sh -c 'grep -qx stapbpf /proc/$0/comm 2>/dev/null && echo $0')
	done
	pre=$(grep -c "stapprobe_${sb}_" $UE)
	kill -KILL $sb $mw
	wait $mw 2>/dev/null
	i=0
	while [ -e /proc/$sb ]; do
		i=$((i + 1)); [ $i -lt 3000 ] || fail "stapbpf $sb never ended"; sleep 0.01
	done
	pkill -f 'ld-linux-x86-64.so.2 .*sleep 10$' 2>/dev/null	# ran on untraced
	n=$(grep -c "stapprobe_${sb}_" $UE)
	# defined when killed (its perf_event_open held 1 s), gone now: another
	# make check's run swept them, as the next run would (a loaded runner)
	[ "$n" -gt 0 ] || [ "$pre" = 0 ] || swept=$((swept + 1))
	[ "$n" -gt 0 ] || { echo "try $try: stapbpf $sb's $pre definitions gone when it ended"; "$MW" --cleanup 2>/dev/null; }
done
if [ "$n" = 0 ] && [ "$swept" -gt 0 ]; then
	echo "note: in $swept of $try tries another run swept the killed stapbpf's definitions first; the next run's own sweep not seen"
	"$MW" --cleanup 2>/dev/null
	grep -q "stapprobe_${dead}_" $UE || fail "a definition of a tracer mallocwatch did not start was removed"
	tracer_pids=$sb
	check_clean "after another run's sweep"
	echo "-:uprobes/stapprobe_${dead}_0" >>$UE
	trap - EXIT
else
	[ "$n" -gt 0 ] || fail "stapbpf killed with SIGKILL left no definition in $try tries: nothing to test"
	start=$(date +%s%N)
	"$MW" -o /dev/null -c true 2>"$OUT/next.err" || fail "the next run failed: $(cat "$OUT/next.err")"
	echo "the next run took $(( ($(date +%s%N) - start) / 1000000 )) ms"
	grep -q "stapprobe_${sb}_" $UE && fail "$(grep -c "stapprobe_${sb}_" $UE) of the killed tracer's $n uprobe definitions are still there"
	# the next run says it removed them, unless another run's sweep (another
	# make check's) took them, or some, first
	said=$(sed -n 's/.*cleaned up after an earlier run that was killed: .* \([0-9]*\) uprobe definitions*.*/\1/p' "$OUT/next.err")
	[ "${said:-0}" -le "$n" ] && { [ "${said:-0}" = "$n" ] || ! grep -q "stapprobe_${sb}_" $UE; } ||
		fail "the next run did not say what it cleaned: $(cat "$OUT/next.err")"
	[ "${said:-0}" = "$n" ] || echo "note: $((n - ${said:-0})) of the $n taken by another run's sweep first"
	grep -q "stapprobe_${dead}_" $UE || fail "a definition of a tracer mallocwatch did not start was removed"
	"$MW" --cleanup 2>/dev/null	# waits for the run's tracer to remove its uprobes
	grep -q "stapprobe_${dead}_" $UE || fail "--cleanup removed a definition of a tracer mallocwatch did not start"
	echo "-:uprobes/stapprobe_${dead}_0" >>$UE
	trap - EXIT
	tracer_pids=$sb
	check_clean "after a run that cleaned"
	echo "ok: a killed stapbpf's $n uprobe definitions removed by the next run, a foreign one left"
fi
unset MALLOCWATCH_ATTACH

# A stapbpf of ours left running in a work directory removed under it,
# its run gone (and the watcher that would have stopped it): the next run
# stops it (SIGTERM, then SIGKILL: such a stapbpf had its SIGINT and
# ignores another one) and removes its uprobe definitions.  Made here by
# freezing the stapbpf (cgroup v2 freezer: it acts on no signal, not even
# its PR_SET_PDEATHSIG, until thawed; SIGKILL still ends it) before its
# run is killed and removing the directory; the sweep of the build before
# this change left such a tracer running.
FZ=/sys/fs/cgroup/unified/mw-t-leftovers-$$
if [ -w /sys/fs/cgroup/unified/cgroup.procs ] && mkdir "$FZ"; then
	"$MW" -q -o /dev/null -c sleep 10 2>/dev/null &
	mw=$!
	i=0
	until pgrep -P $mw -x sleep >/dev/null; do	# released: every uprobe attached
		i=$((i + 1)); [ $i -lt 3000 ] || fail "the program never started"; sleep 0.01
	done
	sb=$(pgrep -P $mw -x stapbpf)
	[ -n "$sb" ] || fail "no stapbpf"
	echo $sb >"$FZ/cgroup.procs" && echo 1 >"$FZ/cgroup.freeze" || fail "cannot freeze $sb"
	wait_for "$FZ/cgroup.events" 'frozen 1' 5
	kill -KILL $mw
	wait $mw 2>/dev/null
	rm -rf "$T"/mallocwatch.$mw.*
	pkill -x -P 1 sleep 2>/dev/null
	"$MW" -o /dev/null -c true 2>"$OUT/removed.err" || fail "the next run failed: $(cat "$OUT/removed.err")"
	i=0
	while [ -e /proc/$sb ] && [ "$(cut -d' ' -f3 /proc/$sb/stat 2>/dev/null)" != Z ]; do
		i=$((i + 1))
		[ $i -lt 500 ] || { echo 0 >"$FZ/cgroup.freeze"
			fail "the stapbpf $sb left in a removed directory still runs: $(cat "$OUT/removed.err")"; }
		sleep 0.01
	done
	rmdir "$FZ" 2>/dev/null
	grep -q "cleaned up after an earlier run that was killed: 1 tracer stopped" "$OUT/removed.err" ||
		fail "the next run did not say so: $(cat "$OUT/removed.err")"
	"$MW" --cleanup 2>/dev/null
	tracer_pids=$sb
	check_clean "a stapbpf in a removed directory"
	echo "ok: a stapbpf left in a removed work directory stopped by the next run ($(cat "$OUT/removed.err" | grep cleaned))"
else
	echo "no writable cgroup v2: a stapbpf in a removed directory not tried"
fi

# ^C while stap compiles: a stap on PATH that takes its time
mkdir -p "$OUT/bin"
cat >"$OUT/bin/stap" <<EOS
#!/bin/sh
touch "$OUT/compiling"
sleep 60
exec /usr/bin/stap "\$@"
EOS
chmod +x "$OUT/bin/stap"
rm -f "$OUT/compiling"
# (MW_NO_CACHE: compiled afresh, not taken from the compile cache)
MW_NO_CACHE=1 PATH="$OUT/bin:$PATH" "$MW" -o /dev/null -c true 2>"$OUT/int.err" &
mw=$!
i=0
until [ -e "$OUT/compiling" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the compile never started"; sleep 0.1
done
kill -INT $mw
wait $mw
rc=$?
[ $rc = 130 ] || fail "^C during the compile exited $rc, expected 130: $(cat "$OUT/int.err")"
grep -q "^mallocwatch: interrupted by signal 2 (Interrupt) before tracing started" "$OUT/int.err" ||
	fail "no message: $(cat "$OUT/int.err")"
sleep 0.2
pgrep -f "$OUT/bin/stap" >/dev/null && fail "the compiling stap survived"
# (stap's child: a sleep with this PATH; other sleeps on the machine are not)
for p in $(pgrep -x sleep); do
	{ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "PATH=$OUT/bin:$PATH" &&
		fail "stap's child survived"
done
[ -z "$(ls "$T")" ] || fail "^C left in TMPDIR: $(ls "$T")"
echo "ok: ^C while compiling: exit 130, a message, nothing left"

# Five traced programs back to back (issue 10): each report complete and
# exact, each run's tracer left removing its uprobes after the report;
# once --cleanup has waited for them nothing of the five remains: no
# uprobe definition, no tracer (not even a zombie of ours), no process
# holding a perf event, nothing in TMPDIR, no procfs FIFO directory.
"$MW" --cleanup 2>/dev/null
ours=
for i in 1 2 3 4 5; do
	"$MW" -v -o /dev/null --json "$OUT/b2b-$i.json" -c ./examples/arena-storm 4 30 \
		>"$OUT/b2b-$i.out" 2>"$OUT/b2b-$i.err" || fail "back-to-back run $i failed: $(cat "$OUT/b2b-$i.err")"
	ours="$ours $(sed -n 's/^mallocwatch: the tracer (pid \([0-9]*\)) goes on removing.*/\1/p' "$OUT/b2b-$i.err")"
	python3 - "$OUT/b2b-$i.json" <<'PY' || fail "back-to-back run $i: wrong report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["events"]["complete"] and r["events"]["lost"] == 0, r["events"]
assert len(r["arenas"]) == 5, len(r["arenas"])	# main + 4 workers (arena-storm's barrier)
PY
done
"$MW" --cleanup 2>"$OUT/cleanup.err" || fail "--cleanup exited $?"
# tracers of another user of this host (another mallocwatch, a stap of
# theirs) are theirs: then only the five runs' own are looked at
foreign=$(for p in $(pgrep -x stapbpf); do
	case " $ours " in *" $p "*) ;; *) [ "$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)" = Z ] || echo $p;; esac
done)
for p in $ours; do
	grep -q "stapprobe_${p}_" $UE && fail "after five runs: $(grep -c "stapprobe_${p}_" $UE) uprobe definitions of tracer $p left"
	[ -e /proc/$p ] && [ "$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)" != Z ] &&
		fail "after five runs: tracer $p still runs"
done
# quiet WHAT: fail with WHAT unless another tracer came meanwhile (one
# running now that is not of the five, or the record of one: another
# test's, another make check's), whose definitions, process and perf
# events the machine-wide looks below would see
quiet() {
	_other=$(for p in $(pgrep -x stapbpf); do
		case " $ours " in *" $p "*) ;; *) [ "$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)" = Z ] || echo $p;; esac
	done; for r in $(ls /run/mallocwatch/tracers 2>/dev/null); do
		case " $ours " in *" ${r#*.} "*) ;; *) echo "record $r";; esac
	done)
	[ -n "$_other" ] || fail "$1"
	echo "note: another tracer came meanwhile ($(echo $_other)): not failed on: $1"
}
if [ -z "$foreign" ]; then
	grep -q stapprobe_ $UE && quiet "after five runs: uprobe definitions left: $(grep -c stapprobe_ $UE)"
	# (a zombie holds nothing; init reaps the exited tracers in its own time)
	live=$(ps -eo stat=,pid=,comm= | awk '$3 == "stapbpf" && $1 !~ /^Z/')
	[ -z "$live" ] || quiet "after five runs: stapbpf processes left: $live"
	# (a running mallocwatch -p of another test counts execs with perf
	# events of its own, src/live/procexec.h, before its tracer starts:
	# the five runs' have exited, so a live one's are another run's)
	held=$(for d in /proc/[0-9]*; do
		[ "$(cat $d/comm 2>/dev/null)" = mallocwatch ] || ls -l $d/fd 2>/dev/null
	done | grep -c 'anon_inode:\[perf_event\]')
	[ "$held" = 0 ] || quiet "after five runs: $held perf event descriptors held"
else
	echo "note: other tracers on this host ($(echo $foreign)): the five runs' own ($ours) checked alone"
fi
[ -z "$(ls "$T")" ] || fail "after five runs: left in TMPDIR: $(ls "$T")"
[ -n "$foreign" ] || ! ls -d /run/mallocwatch/vartmp/systemtap-root/mallocwatch_* 2>/dev/null ||
	quiet "after five runs: FIFO directories left: $(ls /run/mallocwatch/vartmp/systemtap-root)"
echo "ok: five back-to-back runs, exact; then nothing left ($(cat "$OUT/cleanup.err"))"
