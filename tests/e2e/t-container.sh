#!/bin/sh
# Containers: a process in its own mount and pid namespaces, its root
# switched with pivot_root (tests/fixtures/ctr-run.c) into a directory
# holding the probe-enabled glibc under Debian's paths (tests/lib/mkcontainer.sh),
# so that the host's /lib/x86_64-linux-gnu/libc.so.6 is another file:
# Debian's, without SDT probes.  mallocwatch must read and trace the file
# the process maps, never the host's of that name:
#  1. snapshot equals the contained process's own malloc_info(), arena
#     for arena, and says the libc is the process's own file;
#  2. -p traces it (uprobes on the mapped file's inode fire in the
#     container) and its report agrees with malloc_info() exactly;
#  3. a stripped libc whose debuginfo is only inside the container root
#     (usr/lib/debug/.build-id/): found there, snapshot exact;
#  4. a link planted in that tree pointing out of the root (to a FIFO on
#     the host, which would hang a reader) is not followed: no hang, the
#     missing debuginfo is said in one line; a directory in the
#     debuginfo's place is said as such (not "install the debug symbols");
#  5. a libc replaced on disk after it was mapped: the mapped file is
#     read, snapshot exact;
#  6. a process that maps another libc.so.6 as data: its own libc is read;
#  7. calls and stops made from outside the namespaces: `trim -p` on a
#     contained examples/frag-hold gives back the RSS it predicted (within
#     2%), and `snapshot --leave-stopped` leaves the contained pid 1 in a
#     job-control stop (SIGCONT lets it go on and exit 0).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
CTR=$PWD/build/tests/fixtures/ctr-run
[ -x "$CTR" ] || fail "no $CTR (make check builds it)"
HOSTLIBC=/lib/x86_64-linux-gnu/libc.so.6
readelf -n "$HOSTLIBC" | grep -q memory_arena_new &&
	skip "the host's libc has SDT probes itself: no container case to tell apart"
readelf -n "$GLIBC_PREFIX/lib/libc.so.6" | grep -q memory_arena_new ||
	fail "the probe-enabled glibc has no memory_arena_new probe"

ctrpids=""
cleanup() { for p in $ctrpids; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

# ctr_start NAME ROOT PROG ARGS...: run /bin/PROG in ROOT's container with
# stdin on the FIFO $OUT/NAME.in (held on fd 3) and stdout in
# $OUT/NAME.xml; sets pid to the program's pid here (pid 1 inside).
ctr_start() {
	_n=$1 _r=$2
	shift 2
	rm -f "$OUT/$_n.in"
	mkfifo "$OUT/$_n.in"
	"$CTR" "$_r" "$@" <"$OUT/$_n.in" >"$OUT/$_n.xml" 2>"$OUT/$_n.stderr" &
	ctr=$!
	ctrpids="$ctrpids $ctr"
	exec 3>"$OUT/$_n.in"
	pid=""
	_i=0
	until [ -n "$pid" ] && grep -q "/lib/x86_64-linux-gnu/libc.so.6" /proc/$pid/maps 2>/dev/null; do
		pid=$(pgrep -P $ctr | head -n 1)
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "$_n: the contained program did not start: $(cat "$OUT/$_n.stderr")"
		sleep 0.05
	done
	grep -q "^NSpid:.*[[:space:]]1$" /proc/$pid/status || fail "$_n: pid $pid is not pid 1 of its namespace"
}
wait_xml() {	# NAME: until malloc_info is printed
	wait_for "$OUT/$1.xml" '</malloc>' 60
}
# snap_same NAME: snapshot -p $pid equals $OUT/NAME.xml
snap_same() {
	"$MW" snapshot -p $pid --json "$OUT/$1.json" -o "$OUT/$1.txt" 2>"$OUT/$1.err" ||
		fail "$1: snapshot exited $?: $(cat "$OUT/$1.err")"
	expect_snapshot "$OUT/$1.xml" "$OUT/$1.json" "$OUT/$1"
	grep -q "INCONSISTENT" "$OUT/$1.txt" && fail "$1: snapshot inconsistent: $(cat "$OUT/$1.txt")"
	grep -q "the process's own file" "$OUT/$1.txt" ||
		fail "$1: the text does not say the libc is the process's own: $(head -3 "$OUT/$1.txt")"
	grep -q '"libc_elsewhere": true' "$OUT/$1.json" || fail "$1: no libc_elsewhere in the JSON"
}

R=$OUT/root
sh tests/lib/mkcontainer.sh "$R" examples/hold-arenas examples/arena-storm examples/frag-hold || exit 99

# 1. snapshot
ctr_start snap "$R" /bin/hold-arenas 6 snap
wait_xml snap
snap_same snap
sed -n 1,4p "$OUT/snap.txt"
exec 3>&-
wait $ctr || fail "the contained hold-arenas failed"

# 2. -p: every arena made after attach, counted exactly
ctr_start attach "$R" /bin/arena-storm 4 40 -
"$MW" -p $pid --json "$OUT/attach.json" -o "$OUT/attach.txt" 2>"$OUT/attach.err" 3>&- &
mwpid=$!
wait_for "$OUT/attach.err" "tracing process $pid" 120 $mwpid
grep -q "process $pid's libc is its own" "$OUT/attach.err" ||
	fail "-p did not say it traces the process's own libc: $(cat "$OUT/attach.err")"
echo go >&3
exec 3>&-
wait $mwpid || fail "-p exited $?: $(cat "$OUT/attach.err")"
grep -q "^  pid 1 in its pid namespace [0-9]* (not ours), mount namespace [0-9]* (not ours)" "$OUT/attach.txt" ||
	fail "-p does not say where the process lives: $(head -3 "$OUT/attach.txt")"
wait $ctr || fail "the contained arena-storm failed"
expect_malloc_info "$OUT/attach.xml" "$OUT/attach.json" "$OUT/attach" "-p in the container"

# 3. the debuginfo only inside the container root
S=$OUT/stripped
sh tests/lib/mkcontainer.sh "$S" examples/hold-arenas || exit 99
L=$S/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$L" | sed -n 's/.*Build ID: *//p')
[ -n "$id" ] || fail "the probe-enabled libc has no build-id"
[ -e "/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug" ] &&
	fail "precondition: the host has debuginfo for build-id $id"
D=$S/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)
mkdir -p "$D"
objcopy --only-keep-debug "$L" "$D/$(echo $id | cut -c3-).debug" || exit 99
strip --strip-all "$L" || exit 99
readelf -S "$L" | grep -q "debug_info\|symtab" && fail "precondition: $L is not stripped"
ctr_start stripped "$S" /bin/hold-arenas 3 stripped
wait_xml stripped
snap_same stripped
grep -q "layouts from /proc/$pid/root/usr/lib/debug/.build-id/" "$OUT/stripped.txt" ||
	fail "the layouts did not come from the container's debuginfo: $(head -3 "$OUT/stripped.txt")"
exec 3>&-
wait $ctr

# 4. a planted link out of the root: not followed, no hang
mv "$D/$(echo $id | cut -c3-).debug" "$OUT/moved.debug"
rm -f "$OUT/hostfifo"
mkfifo "$OUT/hostfifo"
ln -s "$OUT/hostfifo" "$D/$(echo $id | cut -c3-).debug"
ctr_start planted "$S" /bin/hold-arenas 2 planted
wait_xml planted
timeout 30 "$MW" snapshot -p $pid -o "$OUT/planted.txt" 2>"$OUT/planted.err"
rc=$?
[ $rc = 124 ] && fail "snapshot hung on a link planted in the container's debug tree"
[ $rc = 1 ] || fail "planted link: exit $rc, expected 1: $(cat "$OUT/planted.err")"
[ "$(wc -l <"$OUT/planted.err")" = 1 ] || fail "planted link: not one line: $(cat "$OUT/planted.err")"
grep -q "^mallocwatch: no symbols for glibc's 'main_arena'" "$OUT/planted.err" ||
	fail "planted link: $(cat "$OUT/planted.err")"
cat "$OUT/planted.err"
exec 3>&-
wait $ctr

# 4b. something there that is not the debuginfo (a directory in its
# place): said as it is, not "install the debug symbols"
rm -f "$D/$(echo $id | cut -c3-).debug"
mkdir "$D/$(echo $id | cut -c3-).debug"
ctr_start notfile "$S" /bin/hold-arenas 2 notfile
wait_xml notfile
timeout 30 "$MW" snapshot -p $pid -o "$OUT/notfile.txt" 2>"$OUT/notfile.err"
rc=$?
[ $rc = 1 ] || fail "a directory in the debuginfo's place: exit $rc, expected 1: $(cat "$OUT/notfile.err")"
grep -q "^mallocwatch: the debug symbols of '.*' inside process $pid's root (/proc/$pid/root/usr/lib/debug/.build-id/[0-9a-f]*/[0-9a-f]*.debug) cannot be used: not a regular ELF file$" \
	"$OUT/notfile.err" || fail "a directory in the debuginfo's place: $(cat "$OUT/notfile.err")"
grep -q "install" "$OUT/notfile.err" && fail "advises an install: $(cat "$OUT/notfile.err")"
exec 3>&-
wait $ctr
rmdir "$D/$(echo $id | cut -c3-).debug"

# 5. the libc replaced on disk once mapped: the mapped one is read
ctr_start replaced "$R" /bin/hold-arenas 3 replaced
wait_xml replaced
rm "$R/lib/x86_64-linux-gnu/libc.so.6"
cp "$HOSTLIBC" "$R/lib/x86_64-linux-gnu/libc.so.6"
grep -q "libc.so.6 (deleted)" /proc/$pid/maps || fail "precondition: maps does not say (deleted)"
snap_same replaced
exec 3>&-
wait $ctr
# 6. a process that maps another libc.so.6 as data (a debugger, a reader
# of ELF files, mallocwatch itself through libelf): the libc it runs on is
# the one with an executable mapping, not the first of that name
mkdir -p "$OUT/asdata"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$OUT/asdata/libc.so.6"
rm -f "$OUT/asdata.in"
mkfifo "$OUT/asdata.in"
python3 -c '
import mmap, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
print("ready", flush=True)
sys.stdin.read(1)' "$OUT/asdata/libc.so.6" <"$OUT/asdata.in" >"$OUT/asdata.out" &
py=$!
ctrpids="$ctrpids $py"
exec 3>"$OUT/asdata.in"
wait_for "$OUT/asdata.out" ready 30
grep -q "$OUT/asdata/libc.so.6" /proc/$py/maps || fail "precondition: the copy is not mapped"
"$MW" snapshot -p $py -o "$OUT/asdata.txt" 2>"$OUT/asdata.err" || fail "snapshot of python3: $(cat "$OUT/asdata.err")"
grep -q "INCONSISTENT" "$OUT/asdata.txt" && fail "python3 read through the libc it maps as data: $(head -4 "$OUT/asdata.txt")"
grep -q "libc /usr/lib/x86_64-linux-gnu/libc.so.6" "$OUT/asdata.txt" ||
	fail "not python3's own libc: $(head -4 "$OUT/asdata.txt")"
exec 3>&-
wait $py

# 7. trim -p and snapshot --leave-stopped from outside its namespaces
if [ "$(uname -m)" = x86_64 ]; then
	ctr_start trim "$R" /bin/frag-hold pages 64
	until grep -q "^ready" "$OUT/trim.xml" 2>/dev/null; do
		_i=$((_i + 1)); [ $_i -lt 1200 ] || fail "frag-hold not ready: $(cat "$OUT/trim.stderr")"; sleep 0.05
	done
	"$MW" trim -p $pid --json "$OUT/trim.json" -o "$OUT/trim.txt" 2>"$OUT/trim.err" ||
		fail "trim -p in a container: exit $?: $(cat "$OUT/trim.err")"
	python3 - "$OUT/trim.json" <<'PY' || fail "trim in a container: $(cat "$OUT/trim.txt")"
import json, sys
t = json.load(open(sys.argv[1]))["trim"]
drop = t["rss_before"] - t["rss_after"]
assert t["returned"] == 1, t
assert t["predicted"] > 3000000 and abs(drop - t["predicted"]) <= 0.02 * t["predicted"], t
PY
	sed -n 1,3p "$OUT/trim.txt"
	"$MW" snapshot -p $pid --leave-stopped -o "$OUT/stopped.txt" 2>"$OUT/stopped.err" ||
		fail "--leave-stopped in a container: exit $?: $(cat "$OUT/stopped.err")"
	grep -q "INCONSISTENT" "$OUT/stopped.txt" && fail "--leave-stopped: $(head -4 "$OUT/stopped.txt")"
	grep -q "^mallocwatch: process $pid is left stopped (SIGSTOP), as read: .kill -CONT $pid. lets it go on" \
		"$OUT/stopped.err" || fail "--leave-stopped does not say the process stays stopped: $(cat "$OUT/stopped.err")"
	wait_for /proc/$pid/status '^State:.*T (stopped)' 2
	kill -CONT $pid
	exec 3>&-
	wait $ctr || fail "the contained frag-hold failed after trim and stop"
	echo "ok: trim -p and --leave-stopped across the namespaces"
fi
echo "container: snapshot, attach, debuginfo in the root, planted link, replaced libc, a libc mapped as data, trim and leave-stopped all right"
