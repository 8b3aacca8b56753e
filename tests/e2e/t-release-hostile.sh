#!/bin/sh
# mallocwatch release's socket against another user, and its life
# (src/cleanup/relsock.c, src/tracer/release.c).  A root run listens in
# root's 0700 /run/mallocwatch/release/NS.PID/socket.
# 1. Before the run starts, nobody (setpriv) takes the names the next
#    3000 pids would get: the abstract @mallocwatch-release-PID (the old
#    name, which a root run then could not bind: its release did not
#    work) held, and in /run/mallocwatch/release a directory, a link, a
#    FIFO and a socket at NS.PID and NS.PID/socket: each refused (EACCES).
#    The run (its pid among those) listens all the same, and root's
#    release of its process A works.
# 2. Once it runs, nobody cannot plant a link, a FIFO or a socket at the
#    run's socket, nor move its directory away.
# 3. 16 connections of root's that never send their request do not hold
#    the run up: a release is answered within 8 s (the run reads what
#    came, each connection waits 1 s at most, 8 at once).
# 4. Another run's sweep leaves a live run's socket; none is left after
#    the run's normal end, after SIGINT, SIGTERM and SIGHUP, and after an
#    error exit (its report to /dev/full); after a SIGKILL its directory
#    stays, and the next run's sweep removes it.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
RT=build/tests/fixtures/release-tree
[ -x $RT ] || skip "no $RT (make check-build builds it)"
command -v setpriv >/dev/null || skip "no setpriv"
BASE=/run/mallocwatch/release
NS=$(stat -L -c %i /proc/self/ns/pid)
D=$OUT/d
mkdir -p "$D" && chmod 755 "$OUT" "$D" || exit 99

# 1. nobody squats the next pids' names, then the run starts
cat >"$OUT/squat.py" <<'PY'
import os, resource, socket, sys
base, ns, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 200), hard))
held = []
for pid in range(first, first + count):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0mallocwatch-release-%d" % pid)
    s.listen(8)
    held.append(s)
def sock(p):
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(p)
errs = {}
tries = [("mkdir", lambda p: os.mkdir(p, 0o777)), ("link", lambda p: os.symlink("/tmp", p)),
         ("fifo", os.mkfifo), ("socket", sock)]
for pid in range(first, first + count, 97):
    for p in ("%s/%s.%d" % (base, ns, pid), "%s/%s.%d/socket" % (base, ns, pid)):
        for what, f in tries:
            try:
                f(p)
                errs["%s %s: made" % (what, p)] = 1
            except OSError as e:
                errs[os.strerror(e.errno)] = 1
print("held %d abstract names from pid %d; planting: %s" % (len(held), first, ", ".join(sorted(errs))),
      flush=True)
sys.stdin.read()	# until the test closes it
PY
first=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
mkfifo "$OUT/squat.in" || exit 99
$NOBODY /usr/bin/python3 "$OUT/squat.py" "$BASE" "$NS" $first 3000 <"$OUT/squat.in" >"$OUT/squat.out" 2>&1 &
squat=$!
exec 7>"$OUT/squat.in"
unsquat() { exec 7>&-; wait $squat 2>/dev/null; }
wait_for "$OUT/squat.out" "^held " 60 $squat
grep -q "^held 3000 abstract names from pid $first; planting: Permission denied\$" "$OUT/squat.out" ||
	{ unsquat; fail "nobody's squat: $(cat "$OUT/squat.out")"; }
"$MW" -f -o "$OUT/r.txt" -c $RT "$D" 2>"$OUT/r.err" &
mwpid=$!
finish() { touch "$D/go"; wait $mwpid; }
[ $mwpid -ge $first ] && [ $mwpid -lt $((first + 3000)) ] ||
	{ finish; unsquat; fail "the run's pid $mwpid is not among the squatted $first..$((first + 2999)) (harness)"; }
for i in $(seq 600); do
	[ -s "$D/a.pid" ] && [ -s "$D/b.pid" ] && [ -S "$BASE/$NS.$mwpid/socket" ] && break
	grep -q "cannot reach this run" "$OUT/r.err" && break	# the name was taken
	kill -0 $mwpid 2>/dev/null || { unsquat; fail "the run ended early: $(cat "$OUT/r.err")"; }
	sleep 0.1
done
A=$(cat "$D/a.pid")
SOCK=$BASE/$NS.$mwpid/socket
[ -S "$SOCK" ] || { finish; unsquat; fail "no socket $SOCK: $(grep -v '^mallocwatch: running' "$OUT/r.err")"; }

# 2. nobody plants at the run's own socket, or moves its directory
cat >"$OUT/plant.py" <<'PY'
import os, socket, sys
sock = sys.argv[1]
errs = {}
def bind(p):
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(p)
for what, f in [("unlink", os.unlink), ("link", lambda p: os.symlink("/tmp", p)),
                ("fifo", os.mkfifo), ("socket", bind),
                ("move", lambda p: os.rename(os.path.dirname(p), os.path.dirname(p) + ".x"))]:
    try:
        f(sock)
        errs["%s: done" % what] = 1
    except OSError as e:
        errs[os.strerror(e.errno)] = 1
print(", ".join(sorted(errs)))
PY
$NOBODY /usr/bin/python3 "$OUT/plant.py" "$SOCK" >"$OUT/plant.out" 2>&1
[ "$(cat "$OUT/plant.out")" = "Permission denied" ] || { finish; unsquat; fail "nobody at the run's socket: $(cat "$OUT/plant.out")"; }
[ -S "$SOCK" ] || { finish; unsquat; fail "the run's socket is gone after nobody's tries"; }

# 3. connections of root's that say nothing, then the release
cat >"$OUT/silent.py" <<'PY'
import socket, sys, time
held = []
for i in range(16):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:	# the run's queue is full
        pass
    held.append(s)
print("holding", flush=True)
time.sleep(20)
PY
/usr/bin/python3 "$OUT/silent.py" "$SOCK" >"$OUT/silent.out" 2>&1 &
silent=$!
wait_for "$OUT/silent.out" "^holding" 30 $silent
t0=$(date +%s%N)
"$MW" release "$A" >"$OUT/rel.out" 2>"$OUT/rel.err"
st=$?
ms=$((($(date +%s%N) - t0) / 1000000))
kill $silent 2>/dev/null
wait $silent 2>/dev/null
[ $st = 0 ] || { finish; unsquat; fail "root's release exited $st: $(cat "$OUT/rel.err"; cat "$OUT/r.err")"; }
[ $ms -lt 8000 ] || { finish; unsquat; fail "the release took $ms ms behind 16 silent connections"; }
grep -q "^process $A released by the mallocwatch run $mwpid" "$OUT/rel.out" || { finish; unsquat; fail "release said: $(cat "$OUT/rel.out")"; }
grep -q "cannot reach this run" "$OUT/r.err" && { finish; unsquat; fail "the run: $(cat "$OUT/r.err")"; }
echo "squatted by nobody ($(cat "$OUT/squat.out")), the run (pid $mwpid) released A in $ms ms behind 16 silent connections"

# 4. another run's sweep leaves the live run's socket; the run's end removes it
"$MW" -q -o /dev/null -c true 2>"$OUT/other.err" || { finish; unsquat; fail "another run: $(cat "$OUT/other.err")"; }
[ -S "$SOCK" ] || { finish; unsquat; fail "another run's sweep removed a live run's socket"; }
finish
st=$?
unsquat
[ $st = 0 ] || fail "the run exited $st: $(cat "$OUT/r.err")"
[ -e "$BASE/$NS.$mwpid" ] && fail "the run's release directory is left after its end: $(ls -la "$BASE/$NS.$mwpid")"

# a -f run of sleep, its socket and its program (sleep, exec'd) waited
# for: their pids in $run and $prog
start_run() {	# OUT-NAME ARGS...
	_n=$1
	shift
	"$MW" -f -q "$@" -c sleep 60 2>"$OUT/$_n.err" &
	run=$!
	for i in $(seq 600); do
		prog=$(pgrep -x -P $run sleep) && [ -S "$BASE/$NS.$run/socket" ] && return 0
		kill -0 $run 2>/dev/null || fail "$_n: the run ended early: $(cat "$OUT/$_n.err")"
		sleep 0.05
	done
	fail "$_n: no socket $BASE/$NS.$run/socket in 30 s"
}
for sig in INT TERM HUP; do
	start_run sig-$sig -o /dev/null
	kill -$sig $run
	wait $run
	[ -e "$BASE/$NS.$run" ] && fail "left after SIG$sig: $(ls -la "$BASE/$NS.$run")"
done
start_run error -o /dev/full
kill $prog
wait $run
st=$?
[ $st != 0 ] && grep -q "^mallocwatch: cannot write '/dev/full'" "$OUT/error.err" ||
	fail "a report to /dev/full: exit $st: $(cat "$OUT/error.err")"
[ -e "$BASE/$NS.$run" ] && fail "left after an error exit: $(ls -la "$BASE/$NS.$run")"
start_run kill -o /dev/null
kill -KILL $run
wait $run 2>/dev/null
kill $prog 2>/dev/null
[ -d "$BASE/$NS.$run" ] || fail "a run killed with SIGKILL left no directory (the sweep has nothing to show)"
"$MW" -o /dev/null -c true 2>"$OUT/sweep.err" || fail "the run after: $(cat "$OUT/sweep.err")"
[ -e "$BASE/$NS.$run" ] && fail "the next run's sweep left the killed run's socket: $(cat "$OUT/sweep.err")"
echo "no socket left after the end, SIGINT, SIGTERM, SIGHUP, an error exit; a SIGKILLed run's swept: $(grep cleaned "$OUT/sweep.err")"
