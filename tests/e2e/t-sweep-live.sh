#!/bin/sh
# A sweep (every run's, and --cleanup) never takes what a live run still
# uses, whoever sweeps and whatever it can see.  Liveness is a lock the
# owner holds for as long as it lives (flock(2): a run's work directory,
# a cache temporary, and stapbpf's FIFO directory, which the run makes
# and locks before it starts the tracer, the tracer and a --linger
# session inheriting the lock), never a look at /proc, which a sweeper
# in a pid namespace of its own (a container's mallocwatch, or
# `unshare --pid --mount-proc`) sees empty of the host's tracers.
# Before the FIFO directory was locked, such a sweep removed a live run's
# FIFO directory ("cannot flush the tracer"), and its uprobe definitions
# (it judged the host's pid namespace dead: it saw no process in it).
#  1. run A, held in its program, and a linger session (armed by run L):
#     a sweep from a pid namespace of its own, a --cleanup and run B on
#     the host between; A's and the session's FIFO directories and A's
#     uprobe definitions (tracefs) stay, A ends complete (flushed), and a
#     run joining the session is served;
#  2. what nobody planted in the TMPDIR, named as a dead run's work
#     directory would be, is left alone (not root's);
#  3. a FIFO directory whose lock no one holds (its tracer killed) is
#     swept, from anywhere; one without a lock file (an older
#     mallocwatch's) only by a sweep that sees every process.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"
[ -x examples/arena-storm ] || skip "no examples/arena-storm (make check builds it)"
FIFOS=/run/mallocwatch/vartmp/systemtap-root
export MALLOCWATCH_LINGER_DIR="$OUT/rdv"
mkdir -m 700 "$MALLOCWATCH_LINGER_DIR" || exit 99
T=$OUT/tmp
mkdir -p "$T" && chmod 1777 "$T" || exit 99
export TMPDIR=$T
rm -f "$OUT/started" "$OUT/release"
sess=
trap 'touch "$OUT/release"; [ -z "$sess" ] || kill "$sess" 2>/dev/null' EXIT

# the FIFO directory of the run (or session process) PID, waited for
fifo_dir_of() {
	_i=0
	while :; do
		_d=$(ls -d "$FIFOS/mallocwatch_$1"_* 2>/dev/null | head -n 1)
		[ -n "$_d" ] && [ -p "$_d/flush" ] && break
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "no FIFO directory of run $1 in 60 s"
		sleep 0.1
	done
	echo "$_d"
}

# 1. run A, held until released; a linger session beside it
# A attaches through tracefs (uprobe definitions named for its stapbpf's
# pid, as on kernels before uprobe_multi links): those must stay too
MALLOCWATCH_ATTACH=tracefs "$MW" -o "$OUT/a.txt" -c sh -c "touch $OUT/started
	i=0; while [ ! -e $OUT/release ] && [ \$i -lt 900 ]; do sleep 0.1; i=\$((i+1)); done" \
	2>"$OUT/a.err" &
a=$!
"$MW" -v --linger 60 -o /dev/null -c ./examples/arena-storm 2 20 >/dev/null 2>"$OUT/l1.err" ||
	fail "run L exited $?: $(cat "$OUT/l1.err")"
tracer=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/l1.err")
[ -n "$tracer" ] || fail "run L armed no session: $(cat "$OUT/l1.err")"
sess=$(ps -o ppid= -p "$tracer" | tr -d ' ')
i=0
until [ -e "$OUT/started" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "run A never started its program: $(cat "$OUT/a.err")"
	sleep 0.1
done
adir=$(fifo_dir_of $a)
# the session's module is named after the work directory its tracer
# works in (mallocwatch.PID.XXXXXX: mallocwatch_PID_XXXXXX)
wd=$(basename "$(readlink /proc/$tracer/cwd)")
ldir=$FIFOS/mallocwatch_$(echo "$wd" | sed -n 's/^mallocwatch\.\([0-9]*\)\.\([A-Za-z0-9]*\)$/\1_\2/p')
[ -p "$ldir/drain" ] || fail "no FIFO directory of the linger session (tracer $tracer in $wd)"
atr=$(pgrep -P $a -x stapbpf)
[ -n "$atr" ] || fail "no stapbpf of run A's"
defs() { grep -c "^p:uprobes/stapprobe_${atr}_" /sys/kernel/debug/tracing/uprobe_events; }
adefs=$(defs)
[ "$adefs" -gt 0 ] || fail "run A's tracer $atr has no uprobe definitions"
echo "run A: $adir, tracer $atr with $adefs uprobe definitions; the session: $ldir"

# 2. planted by nobody: a directory named as a dead run's would be
$NOBODY mkdir -m 0700 "$T/mallocwatch.1.NOBODY" || fail "nobody could not plant"

# the sweeps: from a pid namespace of its own (its /proc has no tracer of
# the host's), --cleanup on the host, and a whole run on the host
unshare --pid --fork --mount-proc "$MW" --cleanup 2>"$OUT/ns.err" ||
	fail "--cleanup in a pid namespace exited $?: $(cat "$OUT/ns.err")"
cat "$OUT/ns.err"
[ -d "$adir" ] || fail "a sweep from a pid namespace removed live run A's FIFO directory"
[ -d "$ldir" ] || fail "a sweep from a pid namespace removed the live session's FIFO directory"
[ "$(defs)" = "$adefs" ] ||
	fail "a sweep from a pid namespace removed $((adefs - $(defs))) of live run A's uprobe definitions"
"$MW" --cleanup 2>"$OUT/host.err" || fail "--cleanup exited $?: $(cat "$OUT/host.err")"
"$MW" -q -o /dev/null -c true 2>"$OUT/b.err" || fail "run B exited $?: $(cat "$OUT/b.err")"
[ -d "$adir" ] && [ -d "$ldir" ] || fail "a host sweep removed a live FIFO directory"
[ "$(defs)" = "$adefs" ] || fail "a host sweep removed live run A's uprobe definitions"
[ -d "$T/mallocwatch.1.NOBODY" ] || fail "nobody's directory was removed"
echo "ok: the sweeps left the live FIFO directories and nobody's directory alone"

touch "$OUT/release"
wait $a
rc=$?
cat "$OUT/a.err"
[ $rc = 0 ] || fail "run A exited $rc"
grep -q "cannot flush" "$OUT/a.err" && fail "run A could not flush its tracer"
grep -q "events: [0-9]* probe hits, 0 lost" "$OUT/a.txt" || fail "run A: $(grep events: "$OUT/a.txt")"
"$MW" -v --linger 60 -o /dev/null -c ./examples/arena-storm 2 20 >/dev/null 2>"$OUT/l2.err" ||
	fail "run L2 exited $?: $(cat "$OUT/l2.err")"
grep -q "joined a tracer session (tracer pid $tracer," "$OUT/l2.err" ||
	fail "run L2 did not join the session: $(cat "$OUT/l2.err")"
grep -q "cannot flush" "$OUT/l2.err" && fail "run L2 could not drain the session's tracer"
echo "ok: run A ended complete, run L2 was served by the session"

# 3. the sweep still sweeps: a FIFO directory and lock file nobody holds
# (as a killed tracer leaves them) go at the next sweep
kill "$sess" 2>/dev/null
i=0
while [ -e "/proc/$tracer" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the session's tracer $tracer did not end"; sleep 0.1
done
mkdir -m 0700 "$FIFOS/mallocwatch_999999999_TESTXX" || exit 99
mkfifo "$FIFOS/mallocwatch_999999999_TESTXX/flush" || exit 99
: >"$FIFOS/mallocwatch_999999999_TESTXX.lock"
unshare --pid --fork --mount-proc "$MW" --cleanup 2>"$OUT/ns2.err"
[ -e "$FIFOS/mallocwatch_999999999_TESTXX" ] && fail "an unheld FIFO directory was kept: $(cat "$OUT/ns2.err")"
[ -e "$FIFOS/mallocwatch_999999999_TESTXX.lock" ] && fail "an unheld lock file was kept"
# one without a lock file (an older mallocwatch's): only a sweep that
# sees every process judges it
mkdir -m 0700 "$FIFOS/mallocwatch_999999998_TESTXX" || exit 99
unshare --pid --fork --mount-proc "$MW" --cleanup 2>"$OUT/ns3.err"
[ -d "$FIFOS/mallocwatch_999999998_TESTXX" ] || fail "a sweep from a pid namespace judged an unlocked FIFO directory"
"$MW" --cleanup 2>"$OUT/host3.err"
[ -e "$FIFOS/mallocwatch_999999998_TESTXX" ] && fail "the host's sweep kept a dead unlocked FIFO directory"
echo "ok: unheld FIFO directories are swept (without a lock file, only by the host)"
