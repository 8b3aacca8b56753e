#!/bin/sh
# mallocwatch trim (root) against a process of nobody's that turns the
# malloc_trim(0) call against it (issue 43, items 1-3), each through
# tests/fixtures/trim-hostile run as nobody:
#  - exec: the process's malloc_trim execs another program inside the
#    call.  A program of ours that catches its own SIGSEGV
#    (trim-hostile victim): it must run as it starts ("VICTIM OK", exit
#    0), with 0 and 2 other threads held meanwhile; before, the old
#    image's registers were written into it (it died of SIGSEGV), or, with
#    other threads, mallocwatch and the process hung for good.  Then
#    /usr/bin/passwd, setuid root: mallocwatch says the process exec'd
#    and ends, and passwd runs untraced (it waits for the current
#    password); before, passwd ran under root's ptrace and mallocwatch
#    waited with it.
#  - bkloop: the unsorted bin's bk loops (its fd, which the snapshot
#    follows, is intact): glibc's malloc_trim loops with main_arena
#    locked.  With the default --call-timeout (5 s) the call is cut short,
#    the lock it took let go, the process let go; it mallocs again and
#    its blocks are intact.  Before, trim ran until killed.
#  - spin: malloc_trim loops taking no lock; --call-timeout 1.
#  - ^C, SIGTERM, SIGHUP to mallocwatch during a 3 s call: the call is
#    cut short 0.5 s later, the process let go and intact, and mallocwatch
#    ends by that signal.  Before, the call returned to address 0 with no
#    tracer: the process died of SIGSEGV.  A 0.4 s call ^C'd returns
#    first.
# Every wait is bounded; what is asserted holds under any CPU load.
# needs: root
. tests/lib/lib.sh
need_root
[ "$(uname -m)" = x86_64 ] || skip "trim calls into the process on x86_64 only"
FIX=$PWD/build/tests/fixtures/trim-hostile
[ -x "$FIX" ] || { echo "no $FIX (make check builds it)"; exit 99; }
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
[ -f "$dbg" ] || skip "libc6-dbg is not installed (trim needs the libc's symbols)"
chmod 755 "$OUT"
pid=
trap '[ -z "$pid" ] || kill -9 $pid 2>/dev/null' EXIT

# start NAME ARGS...: the fixture as nobody, its stdin a FIFO held open
# on fd 3; $pid once it said READY
start() {
	name=$1
	shift
	rm -f "$OUT/$name.in"
	mkfifo -m 666 "$OUT/$name.in"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FIX" "$@" <"$OUT/$name.in" \
		>"$OUT/$name.out" 2>&1 &
	pid=$!
	exec 3>"$OUT/$name.in"
	i=0
	until grep -qs READY "$OUT/$name.out"; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "$name never got ready: $(cat "$OUT/$name.out")"
		sleep 0.05
	done
}
# ended SECONDS: $pid has exited within SECONDS (its status in $rc), or
# fails naming $name
ended() {
	timeout "$1" tail --pid=$pid -f /dev/null
	kill -0 $pid 2>/dev/null && fail "$name: the process still runs after $1 s: $(cat "$OUT/$name.out")"
	wait $pid
	rc=$?
	pid=
}
# intact: the fixture checks its blocks and mallocs (a lock left taken
# hangs it) once its stdin gives a byte
intact() {
	echo x >&3
	exec 3>&-
	ended 20
	[ $rc = 0 ] && grep -q '^INTACT$' "$OUT/$name.out" ||
		fail "$name: the process, let go, exited $rc: $(cat "$OUT/$name.out")"
}
# trim NAME ARGS...: root's trim of $pid, bounded; $rc and $NAME.err
trim() {
	_n=$1
	shift
	timeout -k 1 40 "$MW" trim -p $pid -o "$OUT/$_n.txt" "$@" 2>"$OUT/$_n.err"
	rc=$?
	[ $rc != 124 ] && [ $rc != 137 ] || fail "$_n: mallocwatch trim did not end in 40 s"
}

# 1. an exec inside the call
for t in 0 2; do
	start victim$t -t $t exec "$FIX" victim
	trim victim$t
	[ $rc = 1 ] && grep -q "^mallocwatch: process $pid: the process exec'd during the call; .*nothing was written into the new program" \
		"$OUT/victim$t.err" || fail "victim$t: exit $rc: $(cat "$OUT/victim$t.err")"
	exec 3>&-
	ended 20
	[ $rc = 0 ] && grep -q '^VICTIM OK$' "$OUT/victim$t.out" ||
		fail "victim$t: the program exec'd in the call exited $rc: $(cat "$OUT/victim$t.out")"
	echo "ok: exec in the call, $t threads held besides: the new program ran as it starts"
done
if [ -u /usr/bin/passwd ]; then
	start passwd -t 2 exec /usr/bin/passwd
	trim passwd
	[ $rc = 1 ] && grep -q "exec'd during the call" "$OUT/passwd.err" ||
		fail "passwd: exit $rc: $(cat "$OUT/passwd.err")"
	if [ "$(readlink /proc/$pid/exe 2>/dev/null)" = /usr/bin/passwd ]; then
		tr=$(awk '/^TracerPid:/ {print $2}' /proc/$pid/status)
		[ "$tr" = 0 ] || fail "passwd, setuid root, is traced by $tr after the trim"
		echo "ok: exec of setuid passwd in the call: refused, passwd runs untraced ($(grep '^Uid:' /proc/$pid/status | tr -s '\t' ' '))"
	else
		echo "ok: exec of setuid passwd in the call: refused (passwd already gone)"
	fi
	exec 3>&-
	ended 20
else
	echo "note: /usr/bin/passwd is not setuid here; skipped"
fi

# 2. a call that does not return
start bkloop bkloop
t0=$(date +%s)
trim bkloop --read-timeout 2
t1=$(date +%s)
if [ $rc = 1 ] && grep -q "allocator is corrupt or hostile" "$OUT/bkloop.err"; then
	echo "ok: bkloop: refused before the call: $(cat "$OUT/bkloop.err")"
else
	[ $rc = 1 ] && grep -q "^mallocwatch: process $pid: malloc_trim(0) did not return within 5 s (--call-timeout): cut short at 0x[0-9a-f]*; the thread was put back where it was held (registers and vector state), 1 arena lock the call had taken let go, and the process let go" \
		"$OUT/bkloop.err" || fail "bkloop: exit $rc: $(cat "$OUT/bkloop.err")"
	[ $((t1 - t0)) -lt 20 ] || fail "bkloop: trim took $((t1 - t0)) s"
	echo "ok: bkloop: cut short at the 5 s deadline in $((t1 - t0)) s, its lock let go"
fi
intact
echo "ok: bkloop: the process, let go, mallocs again, its blocks intact"

start spin spin
trim spin --call-timeout 1
[ $rc = 1 ] && grep -q "malloc_trim(0) did not return within 1 s (--call-timeout): cut short at 0x[0-9a-f]*; .* 0 arena locks the call had taken let go" \
	"$OUT/spin.err" || fail "spin: exit $rc: $(cat "$OUT/spin.err")"
intact
echo "ok: spin: cut short at 1 s, the process intact"

# 3. a signal to mallocwatch during the call (^C: SIGINT, reset from
# the SIG_IGN a background job of sh gets)
for sn in INT:2 TERM:15 HUP:1; do
	sig=${sn%:*}
	start sig$sig slow 3000
	env --default-signal=INT,TERM,HUP "$MW" trim -p $pid -o "$OUT/sig$sig.txt" 2>"$OUT/sig$sig.err" &
	mw=$!
	wait_for "$OUT/sig$sig.out" CALLED 30
	kill -$sig $mw
	wait $mw
	rc=$?
	[ $rc = $((128 + ${sn#*:})) ] || fail "sig$sig: mallocwatch exited $rc, not by SIG$sig: $(cat "$OUT/sig$sig.err")"
	grep -q "malloc_trim(0) did not return within 500 ms of SIG$sig: cut short at 0x[0-9a-f]*; the thread was put back" \
		"$OUT/sig$sig.err" || fail "sig$sig: $(cat "$OUT/sig$sig.err")"
	intact
	echo "ok: SIG$sig during the call: cut short, the process let go intact, mallocwatch ended by SIG$sig"
done
# a call shorter than the grace: it returns first (when the signal came
# in time: under load it may come after the call, and mallocwatch exit 0)
start grace slow 400
env --default-signal=INT,TERM,HUP "$MW" trim -p $pid -o "$OUT/grace.txt" 2>"$OUT/grace.err" &
mw=$!
wait_for "$OUT/grace.out" CALLED 30
kill -INT $mw 2>/dev/null
wait $mw
rc=$?
if [ $rc = 0 ]; then
	echo "note: the 0.4 s call ended before SIGINT came"
else
	[ $rc = 130 ] || fail "grace: mallocwatch exited $rc: $(cat "$OUT/grace.err")"
	grep -q "malloc_trim(0) returned 1 after SIGINT came; the process was let go\|within 500 ms of SIGINT: cut short" \
		"$OUT/grace.err" || fail "grace: $(cat "$OUT/grace.err")"
fi
intact
echo "ok: ^C during a short call: $(sed 's/^mallocwatch: process [0-9]*: //' "$OUT/grace.err")"
