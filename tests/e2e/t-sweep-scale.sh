#!/bin/sh
# A run's sweep (leftovers.h) does not look at every process when
# nothing of a killed run is left: no dead run's work directory, no
# record of a tracer but those it asks by pid (uprobes.h).  With 300
# more processes on the machine, a plain -c run touches /proc/PID/ of a
# handful of processes (its own, its program's, its tracer's, the
# recorded ones), not of every one: 2090 processes had cost each run's
# start 50 to 190 ms (bench/procs-start.sh measures it).  t-leftovers
# checks that what a killed run left is still found.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v strace >/dev/null || skip "needs strace (scripts/install-deps.sh installs it)"
# work directories in a TMPDIR of the test's own: another run on the
# machine, just started or just ended, has none there for the sweep to try
TMPDIR=$OUT/tmp
export TMPDIR
mkdir -p "$TMPDIR" || exit 99
"$MW" --cleanup >/dev/null 2>&1
pids=
trap 'kill $pids 2>/dev/null' EXIT
for i in $(seq 300); do
	sleep 120 &
	pids="$pids $!"
done
n=$(ls -d /proc/[0-9]* | wc -l)
[ "$n" -gt 300 ] || fail "only $n processes"
# (another run on the machine, another make check's, may leave what a
# killed run leaves, machine-wide: swept just before, up to 3 tries)
try=0 touched=$n
while [ "$touched" -ge 30 ] && [ $try -lt 3 ]; do
	try=$((try + 1))
	"$MW" --cleanup >/dev/null 2>&1
	strace -o "$OUT/trace" -e trace=openat,newfstatat,statx,readlink,pidfd_open \
		"$MW" -q -o /dev/null -c true 2>"$OUT/err" || fail "the run failed: $(cat "$OUT/err")"
	touched=$(grep -o '/proc/[0-9]*/\|pidfd_open([0-9]*' "$OUT/trace" | grep -o '[0-9][0-9]*' | sort -u | wc -l)
	echo "processes: $n; touched by the run: $touched (try $try)"
done
[ "$touched" -lt 30 ] || fail "the run looked at $touched of $n processes"
# with a dead run's work directory there, the sweep looks at all
[ -e /proc/999999 ] && skip "pid 999999 is alive here"
d=$(mktemp -d "${TMPDIR:-/tmp}/mallocwatch.999999.XXXXXX")
strace -o "$OUT/trace2" -e trace=openat,pidfd_open "$MW" -q -o /dev/null -c true 2>"$OUT/err2" ||
	fail "the run with a dead run's directory failed: $(cat "$OUT/err2")"
touched=$(grep -o '/proc/[0-9]*/\|pidfd_open([0-9]*' "$OUT/trace2" | grep -o '[0-9][0-9]*' | sort -u | wc -l)
[ -e "$d" ] && fail "the dead run's directory $d was not swept"
[ "$touched" -gt 300 ] || fail "with a dead run's directory, the sweep looked at $touched processes only"
echo "ok: a plain run looks at a few processes; with a dead run's directory, at all ($touched)"

# a dead run's directory whose pid another user's process holds now (it
# forked until it got it): still dead (no lock held, and that process is
# not a run of ours), its tracer stopped and the directory removed
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 60 &
npid=$!
d=$(mktemp -d "${TMPDIR:-/tmp}/mallocwatch.$npid.XXXXXX")
cp /bin/sleep "$OUT/stap"
(cd "$d" && exec "$OUT/stap" 60) &
fake=$!
i=0
until [ "$(readlink /proc/$fake/cwd 2>/dev/null)" = "$d" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the fake tracer did not start in $d"; sleep 0.05
done
"$MW" -q -o /dev/null -c true 2>"$OUT/reused.err" || fail "the run failed: $(cat "$OUT/reused.err")"
i=0
while kill -0 $fake 2>/dev/null && [ "$(cut -d' ' -f3 /proc/$fake/stat 2>/dev/null)" != Z ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the tracer in $d (pid $npid: nobody's sleep) was not stopped"; sleep 0.05
done
wait $fake 2>/dev/null
[ -e "$d" ] && fail "$d (its pid $npid nobody's now) was not swept"
kill $npid 2>/dev/null
echo "ok: a dead run's directory is swept though another user's process has its pid"
