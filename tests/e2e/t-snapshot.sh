#!/bin/sh
# mallocwatch snapshot -p PID: glibc's allocator state read from a live
# process must equal what the process's own malloc_info() printed, exactly
# (arena by arena: system bytes, fast and rest chunks and bytes, heaps and
# their bytes; mmapped chunks), for the probe-enabled glibc (its own
# DWARF) and for Debian's own libc (DWARF from libc6-dbg).  examples/
# hold-arenas builds the state in N threads, prints malloc_info() and
# holds it until its stdin gives a byte: nothing changes while we read.
# Then the errors: a process gone, gone while it is read, a static
# binary, one mapping a libc as data alone (snapshot and -p), a libc
# whose debug symbols cannot be found - one line each,
# exit 1; and python3 with threads, a real program not written here.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
compare() {	# NAME: snapshot of $pid against its malloc_info
	"$MW" snapshot -p $pid --json "$OUT/$1.json" -o "$OUT/$1.txt" 2>"$OUT/$1.err" ||
		{ _rc=$?; cat "$OUT/$1.err"; fail "$1: snapshot exited $_rc"; }
	expect_snapshot "$OUT/$1.xml" "$OUT/$1.json" "$OUT/$1" "$1"
}

for n in 0 4 24; do
	hold_arenas probes-$n $n
	compare probes-$n
	release_hold
done
grep -q '"consistent": true' "$OUT/probes-4.json" || fail "the quiescent snapshot is not consistent"
# every arena's top left at MINSIZE where its heap's readable pages end
# (a state any program can reach; 24 threads met it by chance): the top
# is read up to its size field, not as a whole struct malloc_chunk
HOLD_TOP_EDGE=1 hold_arenas edge-4 4
compare edge-4
release_hold
python3 - "$OUT/edge-4.json" <<'PY' || fail "top edge: the fixture did not leave its tops at MINSIZE"
import json, sys
a = json.load(open(sys.argv[1]))["snapshot"]["arenas"]
assert len(a) == 5 and all(x["top_bytes"] == 32 and int(x["top"], 16) % 4096 == 4096 - 32 for x in a), \
    [(x["top"], x["top_bytes"]) for x in a]
PY
python3 - "$OUT/probes-4.json" <<'PY' || fail "snapshot fields"
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
assert len(s["arenas"]) == s["narenas"] == 5, (len(s["arenas"]), s["narenas"])
for a in s["arenas"]:
    assert a["free_bytes"] + a["in_use_bytes"] == a["system_bytes"], a
    assert 0 < a["trimmable_bytes"] <= a["free_bytes"], a   # whole free pages in large free chunks
    assert a["attached_threads"] == 1 and not a["on_free_list"], a
    assert a["main"] or (len(a["heaps"]) >= 1 and a["heaps"][0]["size"] <= a["heap_bytes"]), a
t = s["totals"]
assert t["system_bytes"] == sum(a["system_bytes"] for a in s["arenas"]), t
assert int(s["main_heap"]["end"], 16) > int(s["main_heap"]["sbrk_base"], 16), s["main_heap"]
assert s["mmap"]["count"] == 10, s["mmap"]    # two kept 300000-byte chunks per thread
print("fields add up")
PY
# MW_ROOT: that was the root's libc; what follows is about the host's
[ -z "$MW_ROOT" ] || exit 0

# Debian's own libc: no SDT probes, layouts from libc6-dbg
if [ -f /usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug ]; then
	hold_arenas system-4 4 0 system
	compare system-4
	grep -q '"dwarf": "/usr/lib/debug/' "$OUT/system-4.json" || fail "system libc: DWARF not from libc6-dbg"
	# without its debug symbols: one line that names the package
	MW_DEBUGINFO_PATH=/nonexistent "$MW" snapshot -p $pid >"$OUT/nodbg.out" 2>"$OUT/nodbg.err"
	rc=$?
	release_hold
	[ $rc = 1 ] || fail "snapshot without debug symbols exited $rc"
	grep -q "^mallocwatch: no symbols for glibc's 'main_arena' .*libc6-dbg" "$OUT/nodbg.err" ||
		fail "no debug symbols: $(cat "$OUT/nodbg.err")"
	echo "ok: without debug symbols: $(cat "$OUT/nodbg.err")"
else
	echo "note: libc6-dbg is not installed; Debian's own libc not checked"
fi

# a libc with its symbols but without DWARF (strip --strip-debug): one
# line that says the layouts are missing and which package has them
mkdir -p "$OUT/nodwarf"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$OUT/nodwarf/" && strip --strip-debug "$OUT/nodwarf/libc.so.6"
"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$OUT/nodwarf:/lib/x86_64-linux-gnu" /bin/sleep 60 &
nd=$!
until grep -q "$OUT/nodwarf/libc.so.6" /proc/$nd/maps 2>/dev/null; do sleep 0.05; done
"$MW" snapshot -p $nd >/dev/null 2>"$OUT/nodwarf.err"
rc=$?
kill $nd
[ $rc = 1 ] && grep -q "^mallocwatch: no DWARF for '$OUT/nodwarf/libc.so.6' (glibc's struct layouts): install its debug symbols (Debian: libc6-dbg" \
	"$OUT/nodwarf.err" || fail "no DWARF: exit $rc: $(cat "$OUT/nodwarf.err")"
echo "ok: no DWARF: $(cat "$OUT/nodwarf.err")"

# gone before, and gone while it is read (3 million free chunks take a
# while to follow): one line, exit 1, whichever it was
true & gone=$!
wait $gone
"$MW" snapshot -p $gone >/dev/null 2>"$OUT/gone.err"
[ $? = 1 ] && grep -q "^mallocwatch: no process $gone\$" "$OUT/gone.err" || fail "gone: $(cat "$OUT/gone.err")"
# a zombie (exited, its parent has not reaped it) and a kernel thread:
# neither maps anything, and the message says which
rm -f "$OUT/zombie.pid"
python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
open(sys.argv[1], "w").write("%d\n" % pid)  # never waited for: a zombie
time.sleep(30)' "$OUT/zombie.pid" &
zp=$!
i=0
until [ -s "$OUT/zombie.pid" ] && [ "$(cut -d')' -f2 /proc/$(cat "$OUT/zombie.pid")/stat 2>/dev/null | cut -c2)" = Z ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no zombie in 10 s"
	sleep 0.05
done
z=$(cat "$OUT/zombie.pid")
"$MW" snapshot -p $z >/dev/null 2>"$OUT/zombie.err"
[ $? = 1 ] && [ "$(cat "$OUT/zombie.err")" = "mallocwatch: process $z has exited" ] ||
	fail "a zombie: $(cat "$OUT/zombie.err")"
kill $zp
kt=$(ps -eo pid=,comm= | awk '$2 == "kthreadd" { print $1 }')
if [ -n "$kt" ]; then
	"$MW" snapshot -p $kt >/dev/null 2>"$OUT/kthread.err"
	[ $? = 1 ] && grep -q "^mallocwatch: process $kt is a kernel thread" "$OUT/kthread.err" ||
		fail "a kernel thread: $(cat "$OUT/kthread.err")"
fi
echo "ok: a zombie and a kernel thread ($kt) said as such"
hold_arenas busy 0 3000000
"$MW" snapshot -p $pid >/dev/null 2>"$OUT/killed.err" &
mw=$!
sleep 0.1	# (its read took 0.33-0.43 s at load 7; a kill at 0.3 s can come after it)
kill -KILL $pid
wait $mw
rc=$?
exec 3>&-
wait $pid 2>/dev/null
[ $rc = 1 ] || fail "snapshot of a process killed meanwhile exited $rc: $(cat "$OUT/killed.err")"
[ "$(wc -l <"$OUT/killed.err")" = 1 ] && grep -q "^mallocwatch: \(process $pid exited while it was read\|process $pid has exited\|process $pid is exiting: \|no process $pid\|cannot read\)" \
	"$OUT/killed.err" || fail "killed meanwhile: $(cat "$OUT/killed.err")"
echo "ok: killed meanwhile: $(cat "$OUT/killed.err")"

# a static binary has no libc.so.6
printf '#include <unistd.h>\nint main(void) { pause(); return 0; }\n' >"$OUT/static.c"
if cc -static -o "$OUT/static" "$OUT/static.c" 2>/dev/null; then
	"$OUT/static" &
	st=$!
	until [ "$(readlink /proc/$st/exe)" = "$OUT/static" ]; do sleep 0.01; done	# exec'd
	"$MW" snapshot -p $st >/dev/null 2>"$OUT/static.err"
	rc=$?
	kill $st
	[ $rc = 1 ] && grep -q "^mallocwatch: process $st maps no libc.so.6: a static binary" \
		"$OUT/static.err" || fail "static: exit $rc: $(cat "$OUT/static.err")"
	echo "ok: static binary: $(cat "$OUT/static.err")"
	# one that maps a libc.so.6 as data (as the loader does before its
	# code, as a debugger does): that, not "no libc", is said; and by -p
	printf '#include <fcntl.h>\n#include <sys/mman.h>\n#include <unistd.h>\nint main(int c, char **v) { int fd = open(v[1], O_RDONLY); if (fd < 0 || mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) return 1; write(1, "r", 1); pause(); return 0; }\n' >"$OUT/data.c"
	cc -static -o "$OUT/data" "$OUT/data.c" || fail "data: cc"
	"$OUT/data" "$LIBC" >"$OUT/data.ready" &
	st=$!
	wait_for "$OUT/data.ready" r 30 $st
	"$MW" snapshot -p $st >/dev/null 2>"$OUT/data.err"
	rc=$?
	"$MW" -p $st --duration 1 >/dev/null 2>"$OUT/data-trace.err"
	rc2=$?
	kill $st
	for e in "$rc data.err" "$rc2 data-trace.err"; do
		set -- $e
		[ $1 = 1 ] && grep -q "^mallocwatch: process $st maps libc as data alone, with no code mapped from it: a program still loading it" \
			"$OUT/$2" || fail "data alone: exit $1: $(cat "$OUT/$2")"
	done
	echo "ok: libc as data alone: $(cat "$OUT/data.err")"
fi

# python3 with threads, a program not written here: every arena, now
if command -v python3 >/dev/null && [ -f /usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug ]; then
	rm -f "$OUT/py.in"; mkfifo "$OUT/py.in"
	python3 -c '
import sys, threading
ready, go = threading.Barrier(7), threading.Event()
def work():
    keep = [bytearray(200000 + i) for i in range(20)]   # malloc, in this thread
    ready.wait(); go.wait()
ts = [threading.Thread(target=work) for _ in range(6)]
[t.start() for t in ts]
ready.wait()
print("ready", flush=True)
sys.stdin.read(1)
go.set()
[t.join() for t in ts]
' <"$OUT/py.in" >"$OUT/py.out" &
	pid=$!
	exec 3>"$OUT/py.in"
	wait_for "$OUT/py.out" ready 30
	"$MW" snapshot -p $pid --json "$OUT/py.json" -o "$OUT/py.txt" || fail "snapshot of python3 exited $?"
	release_hold
	python3 - "$OUT/py.json" <<'PY' || fail "python3 snapshot"
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
assert s["consistent"], s["inconsistent_reason"]
# six threads alive at once, each allocating: six arenas of their own
assert len(s["arenas"]) >= 7 and len(s["arenas"]) == s["narenas"], (len(s["arenas"]), s["narenas"])
assert all(len(a["heaps"]) >= 1 for a in s["arenas"] if not a["main"]), s["arenas"]
print("python3:", len(s["arenas"]), "arenas,", s["totals"])
PY
	sed -n '1,12p' "$OUT/py.txt"
fi

# -c: the allocator read at the program's exit (ptrace exit stop), for a
# program that changes nothing after its malloc_info(): equal, exactly;
# and the exit status and signal stay the program's own.
"$MW" -q --json "$OUT/exit.json" -o "$OUT/exit.txt" -c $IN ./examples/hold-arenas 4 t-snapshot \
	</dev/null >"$OUT/exit.xml" 2>"$OUT/exit.err" || { _rc=$?; cat "$OUT/exit.err"; fail "-c hold-arenas exited $_rc"; }
python3 - "$OUT/exit.json" "$OUT/exit-snap.json" <<'PY' || fail "no exit snapshot"
import json, sys
r = json.load(open(sys.argv[1]))
json.dump({"snapshot": r["snapshots"]["exit"]}, open(sys.argv[2], "w"))
PY
expect_snapshot "$OUT/exit.xml" "$OUT/exit-snap.json" "$OUT/exit"
grep -q "Allocator at exit, read from the process: 5 arenas" "$OUT/exit.txt" || fail "no exit section"
"$MW" -q -o "$OUT/segv.txt" -c sh -c 'kill -SEGV $$' 2>"$OUT/segv.err"
[ $? = 139 ] || fail "a program killed by SIGSEGV under ptrace: exit $?"
grep -q "Allocator at exit" "$OUT/segv.txt" || fail "no exit snapshot for a killed program"
"$MW" -q -o /dev/null -c sh -c 'trap "exit 42" USR1; kill -USR1 $$; sleep 1; exit 1' 2>"$OUT/usr1.err"
[ $? = 42 ] || fail "a signal the program handles was not passed on unchanged: exit $?"
echo "ok: -c exit snapshot equals malloc_info; statuses and signals unchanged"
