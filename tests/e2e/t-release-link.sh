#!/bin/sh
# Root's `mallocwatch release` against a run of another user
# (src/tracer/release.c): the command finds that run's socket under the
# XDG_RUNTIME_DIR of the run's environment, a directory of that user's,
# who may change what is in it at any time.  nobody plays the run: a
# process of nobody's traces another (TracerPid) and listens at
# $XDG_RUNTIME_DIR/mallocwatch-release/NS.PID/socket, its queue full, so
# that root's command waits to connect (it asks again every 20 ms).
# 1. While it waits, nobody makes the socket's name a link to a socket of
#    root's in a 0700 directory nobody cannot reach: root's command must
#    not connect to it (it connected through the link, then refused to
#    talk: the listener was not the run), and it exits 1.  Nor to a
#    hard link of root's socket there (the kernel lets nobody make one
#    only where fs.protected_hardlinks is 0: root makes it here).
# 2. An XDG_RUNTIME_DIR with an escape in it, and one that is a link to
#    nobody's own directory: refused in one line, the escape shown as
#    \x1b, the link not followed.
# needs: root
. tests/lib/lib.sh
need_root
command -v setpriv >/dev/null || skip "no setpriv"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
chmod 755 "$OUT" || exit 99
X=$OUT/xdg
mkdir -m 700 "$X" "$OUT/root" && chown 65534:65534 "$X" || exit 99

cat >"$OUT/target.py" <<'PY'
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    pid, uid, gid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    print("connected: process %d, uid %d" % (pid, uid), flush=True)
    c.close()
PY
cat >"$OUT/fakerun.py" <<'PY'
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
child = os.fork()
if child == 0:
    libc.ptrace(0, 0, 0, 0)	# PTRACE_TRACEME: its TracerPid is ours
    os.write(w, b"x")
    time.sleep(120)
    os._exit(0)
os.read(r, 1)
if sys.argv[1] == "listen":
    ns = os.stat("/proc/self/ns/pid").st_ino
    d = "%s/mallocwatch-release/%d.%d" % (os.environ["XDG_RUNTIME_DIR"], ns, os.getpid())
    os.makedirs(d, 0o700)
    os.chmod(os.path.dirname(d), 0o700)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(d + "/socket")
    s.listen(0)
    held = []
    for i in range(4):	# its queue full: root's connect waits
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(d + "/socket")
        except BlockingIOError:
            pass
        held.append(c)
print("ready", child, flush=True)
for line in sys.stdin:
    if line.strip() == "swap":
        os.symlink(sys.argv[2], d + "/new")
        os.rename(d + "/new", d + "/socket")
        print("swapped", flush=True)
os.kill(child, 9)
PY

/usr/bin/python3 "$OUT/target.py" "$OUT/root/sock" >"$OUT/target.out" 2>&1 &
target=$!
# fakerun XDG MODE: nobody's run, its stdin on fd 7; sets fake and traced
fakerun() {
	# the last run's output gone first: a background job's redirection
	# is made after the fork, so "ready" could be read from the old one
	rm -f "$OUT/fr.in" "$OUT/fr.out" && mkfifo "$OUT/fr.in" || exit 99
	env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$1" $NOBODY /usr/bin/python3 "$OUT/fakerun.py" \
		"$2" "$OUT/root/sock" <"$OUT/fr.in" >"$OUT/fr.out" 2>&1 &
	fake=$!
	exec 7>"$OUT/fr.in"
	wait_for "$OUT/fr.out" "^ready " 30 $fake
	traced=$(sed -n 's/^ready //p' "$OUT/fr.out")
}
endfake() { exec 7>&-; wait $fake; }
wait_for "$OUT/target.out" "^listening" 30 $target

# 1. the socket's name made a link while root's command waits
fakerun "$X" listen
"$MW" release "$traced" >"$OUT/rel.out" 2>"$OUT/rel.err" &
rel=$!
sleep 1
echo swap >&7
wait_for "$OUT/fr.out" "^swapped" 30 $fake
wait $rel
st=$?
endfake
[ -L "$X/mallocwatch-release/$(stat -L -c %i /proc/self/ns/pid).$fake/socket" ] ||
	{ kill $target; fail "nobody's link was not made (harness)"; }
grep -q "^connected" "$OUT/target.out" &&
	{ kill $target; fail "root's release connected through nobody's link to root's socket: $(cat "$OUT/target.out"); it said: $(cat "$OUT/rel.err")"; }
[ $st = 1 ] || { kill $target; fail "root's release exited $st: $(cat "$OUT/rel.out" "$OUT/rel.err")"; }
echo "root's release, nobody's socket made a link to root's meanwhile: not followed ($(cat "$OUT/rel.err"))"

# 1b. a hard link to root's socket at the name (made by root here: what
# nobody could make where fs.protected_hardlinks is 0): not connected to
fakerun "$X" listen
ln -f "$OUT/root/sock" "$X/mallocwatch-release/$(stat -L -c %i /proc/self/ns/pid).$fake/socket" ||
	exit 99
"$MW" release "$traced" >"$OUT/rel.out" 2>"$OUT/rel.err"
st=$?
endfake
grep -q "^connected" "$OUT/target.out" &&
	{ kill $target; fail "root's release connected to root's socket hard-linked in nobody's directory: $(cat "$OUT/rel.err")"; }
[ $st = 1 ] && grep -q "is not its user's (uid 65534): not asked" "$OUT/rel.err" ||
	{ kill $target; fail "a hard link: exit $st: $(cat "$OUT/rel.err")"; }
echo "root's socket hard-linked at nobody's run's name: $(cat "$OUT/rel.err")"

# 2. hostile XDG_RUNTIME_DIR values: refused in one line of root's
# release_with XDG: root's release of nobody's traced process, nobody's
# run's XDG_RUNTIME_DIR being XDG; must exit 1 with one line in rel.err
release_with() {
	fakerun "$1" quiet
	"$MW" release "$traced" >"$OUT/rel.out" 2>"$OUT/rel.err"
	st=$?
	endfake
	[ $st = 1 ] && [ "$(wc -l <"$OUT/rel.err")" = 1 ] ||
		{ kill $target; fail "XDG_RUNTIME_DIR '$1': exit $st: $(cat "$OUT/rel.err")"; }
}
esc=$(printf '\033')
release_with "$OUT/x${esc}[31mred"
grep -q "$esc" "$OUT/rel.err" && { kill $target; fail "an escape reached root's terminal: $(od -c "$OUT/rel.err")"; }
grep -q 'x\\x1b\[31mred' "$OUT/rel.err" || { kill $target; fail "the escape not shown as \\x1b: $(cat "$OUT/rel.err")"; }
echo "an escape in XDG_RUNTIME_DIR: $(cat "$OUT/rel.err")"
ln -s "$X" "$OUT/xdg-link" || exit 99
release_with "$OUT/xdg-link"
grep -q "Too many levels of symbolic links" "$OUT/rel.err" ||
	{ kill $target; fail "XDG_RUNTIME_DIR a link: $(cat "$OUT/rel.err")"; }
echo "XDG_RUNTIME_DIR a link: $(cat "$OUT/rel.err")"
kill $target
wait $target 2>/dev/null
grep -q "^connected" "$OUT/target.out" && fail "root's socket got a connection: $(cat "$OUT/target.out")"
exit 0
