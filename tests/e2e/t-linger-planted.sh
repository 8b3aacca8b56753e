#!/bin/sh
# --linger's rendezvous cannot be planted or hijacked by another user.
#
# An unprivileged user (nobody, through setpriv) listens on the name a
# session of this script would have, answering any question with an OK
# and a ready line, and logs what it is sent:
#  1. in a root-owned 0700 directory (made 0777 while nobody binds, as
#     if raced), the socket file then given to root by chown: the file
#     passes the owner check, so only SO_PEERCRED (uid 65534) refuses it;
#  2. in a directory that is nobody's: refused as a rendezvous (no join,
#     no session armed there either).
# Each run must start its own tracer and its program's report must be
# complete, the planted listener must get no question (no byte), and in
# case 1 (where the run connects, sees uid 65534 and closes) the run's own session must then take the name (renamed over
# the planted socket) and serve the next run: on the code before
# --linger existed the runs failed (unknown option).
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v setpriv >/dev/null || skip "no setpriv"
events=/sys/kernel/tracing/uprobe_events
[ -r $events ] || events=/sys/kernel/debug/tracing/uprobe_events
export MALLOCWATCH_LINGER_DIR="$OUT/rdv"
mkdir -m 700 "$MALLOCWATCH_LINGER_DIR" || exit 99
listeners=""
cleanup() { for p in $listeners; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
# wait_gone TRACER: its session, it and its uprobes gone (bounded)
wait_gone() {
	_i=0
	while kill -0 "$1" 2>/dev/null || grep -q "stapprobe_$1_" $events 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 3000 ] || fail "tracer $1 still there after 300 s"
		sleep 0.1
	done
}
# the session's name: from a first run's note ("no session KEY to join")
"$MW" -v --linger 0.1 -o /dev/null -c /bin/true 2>"$OUT/err0" || fail "run 0 exited $?"
key=$(sed -n 's/.*no session \([0-9a-f]\{16\}\) to join.*/\1/p' "$OUT/err0")
[ -n "$key" ] || fail "no session name in: $(cat "$OUT/err0")"
t0=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err0")
[ -n "$t0" ] || fail "run 0 armed no session: $(cat "$OUT/err0")"
wait_gone "$t0"
# plant DIR: nobody listens on DIR/$key and logs each question's size
plant() {
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    print("accepted", flush=True)
    m = c.recv(1 << 20)
    print("got %d bytes" % len(m), flush=True)
    try:
        c.send(b"OK 1 planted\nMW 1 ready\n")
    except OSError:
        pass
    c.close()
' "$1/$key" >"$2" 2>&1 &
	listeners="$listeners $!"
	wait_for "$2" listening 10
}
# 1. a root 0700 directory with nobody's socket, given to root
chmod 777 "$MALLOCWATCH_LINGER_DIR"
plant "$MALLOCWATCH_LINGER_DIR" "$OUT/planted1.log"
chmod 700 "$MALLOCWATCH_LINGER_DIR"
chown 0:0 "$MALLOCWATCH_LINGER_DIR/$key"
"$MW" -v --linger 5 -o "$OUT/r1.txt" -c /bin/true 2>"$OUT/err1" || fail "run 1 exited $?"
grep -q "no session $key to join: the session is not root's" "$OUT/err1" ||
	fail "run 1 did not refuse the planted session: $(cat "$OUT/err1")"
! grep -q 'joined' "$OUT/err1" || fail "run 1 joined the planted session"
grep -q '^  exit status 0' "$OUT/r1.txt" && grep -q '^Arenas: 1' "$OUT/r1.txt" ||
	fail "run 1's report: $(cat "$OUT/r1.txt")"
t1=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err1")
[ -n "$t1" ] || fail "run 1 armed no session of its own: $(cat "$OUT/err1")"
"$MW" -v --linger 5 -o /dev/null -c /bin/true 2>"$OUT/err2" || fail "run 2 exited $?"
grep -q "joined a tracer session (tracer pid $t1," "$OUT/err2" ||
	fail "run 2 did not join run 1's session: $(cat "$OUT/err2")"
grep -q 'got [1-9]' "$OUT/planted1.log" && fail "the planted listener was asked: $(cat "$OUT/planted1.log")"
# 2. a directory of nobody's
mkdir -m 700 "$OUT/nobodys" && chown 65534:65534 "$OUT/nobodys" || exit 99
plant "$OUT/nobodys" "$OUT/planted2.log"
MALLOCWATCH_LINGER_DIR="$OUT/nobodys" "$MW" -v --linger 5 -o "$OUT/r3.txt" -c /bin/true \
	2>"$OUT/err3" || fail "run 3 exited $?"
grep -q "no session $key to join: rendezvous: '$OUT/nobodys' belongs to uid 65534" "$OUT/err3" ||
	fail "run 3 did not refuse the directory: $(cat "$OUT/err3")"
grep -q 'no lingering session: rendezvous' "$OUT/err3" || fail "run 3 armed a session there"
! grep -q 'joined\|armed a tracer' "$OUT/err3" || fail "run 3 used the rendezvous"
grep -q '^Arenas: 1' "$OUT/r3.txt" || fail "run 3's report: $(cat "$OUT/r3.txt")"
grep -q 'accepted\|got' "$OUT/planted2.log" && fail "the planted listener was asked: $(cat "$OUT/planted2.log")"
wait_gone "$t1"
echo "ok: planted sessions refused (SO_PEERCRED; a directory of uid 65534), nothing sent to them; run 1's own session took the name and served run 2"
