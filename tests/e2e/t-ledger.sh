#!/bin/sh
# The RSS ledger, fragmentation and findings (snapshot -p, explain -p) of
# programs that leave a known fragmentation (examples/frag-hold: free
# space pinned between chunks in use, whole free pages, idle arenas on
# glibc's free list), on the probe-enabled glibc and Debian's own: the
# parts add up to the ledger's RSS, which is smaps_rollup's within one
# page per mapping, and the fragmentation and findings are what the
# program did (tests/lib/ledger_check.py).  Then python3 with threads and
# memcached after some traffic: the ledger adds up and explain says where
# the memory is.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -x examples/frag-hold ] || make -s -C examples frag-hold || exit 99

# frag NAME MODE N [system]: frag-hold MODE N held on fd 3; sets pid
frag() {
	rm -f "$OUT/$1.in"; mkfifo "$OUT/$1.in"
	if [ "${4:-}" = system ]; then
		./examples/frag-hold "$2" "$3" <"$OUT/$1.in" >"$OUT/$1.out" 2>&1 &
	else
		(on_glibc ./examples/frag-hold "$2" "$3") <"$OUT/$1.in" >"$OUT/$1.out" 2>&1 &
	fi
	pid=$!
	exec 3>"$OUT/$1.in"
	wait_for "$OUT/$1.out" '^ready' 30
}
# check NAME MODE N: snapshot and explain of $pid, checked
check() {
	"$MW" snapshot -p $pid --json "$OUT/$1.json" -o "$OUT/$1.txt" 2>"$OUT/$1.err" ||
		{ _rc=$?; cat "$OUT/$1.err"; fail "$1: snapshot exited $_rc"; }
	rss=$(awk '/^Rss:/ {print $2}' /proc/$pid/smaps_rollup)
	nmaps=$(wc -l </proc/$pid/maps)
	python3 tests/lib/ledger_check.py "$OUT/$1.json" "$rss" "$nmaps" "$2" "$3" || fail "$1: ledger"
	"$MW" explain -p $pid --json "$OUT/$1.explain.json" -o "$OUT/$1.explain.txt" ||
		fail "$1: explain exited $?"
	python3 tests/lib/ledger_check.py "$OUT/$1.explain.json" "$rss" "$nmaps" "$2" "$3" >/dev/null ||
		fail "$1: explain's ledger"
	grep -q '^Findings (largest first):' "$OUT/$1.txt" || fail "$1: no findings in the snapshot's text"
	head -n 1 "$OUT/$1.explain.txt" | grep -q "^mallocwatch: process $pid (frag-hold\|^mallocwatch: process $pid (ld-linux" ||
		fail "$1: explain's first line: $(head -n 1 "$OUT/$1.explain.txt")"
}

for mode in "pinned 2000" "pages 64" "arenas 8"; do
	set -- $mode
	frag "$1" "$1" "$2"
	check "$1" "$1" "$2"
	exec 3>&-; wait $pid
done
sed -n '/^Findings/,$p' "$OUT/arenas.explain.txt" | head -n 12
# MW_ROOT: the root's python3 below, on the root's libc; Debian's own
# libc and memcached are the host's
if [ -n "$MW_ROOT" ]; then
	:
elif [ -f /usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug ]; then
	frag sys-pages pages 32 system
	check sys-pages pages 32
	exec 3>&-; wait $pid
else
	echo "note: libc6-dbg is not installed; Debian's own libc not checked"
fi

# python3 with threads, each keeping and freeing buffers (Debian's libc,
# or the root's)
if [ -n "$MW_ROOT" ] || { command -v python3 >/dev/null && [ -f /usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug ]; }; then
	rm -f "$OUT/py.in"; mkfifo "$OUT/py.in"
	$IN python3 -c '
import sys, threading
ready, go = threading.Barrier(7), threading.Event()
def work(i):
    keep = [bytearray(3000 + i) for _ in range(4000)]   # malloc, in this thread
    del keep[::2]                                       # every other freed
    ready.wait(); go.wait()
ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
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
	"$MW" explain -p $pid --json "$OUT/py.json" -o "$OUT/py.txt" || fail "explain of python3 exited $?"
	python3 tests/lib/ledger_check.py "$OUT/py.json" "$(awk '/^Rss:/ {print $2}' /proc/$pid/smaps_rollup)" \
		"$(wc -l </proc/$pid/maps)" || fail "python3: ledger"
	exec 3>&-; wait $pid
	sed -n '1,/^RSS ledger/p' "$OUT/py.txt" | head -n 20
fi

# memcached, 4 workers, after 3000 sets of 5 to 20 KB from a loopback client
if [ -z "$MW_ROOT" ] && command -v memcached >/dev/null; then
	port=$((20000 + $$ % 20000))
	memcached -u root -l 127.0.0.1 -p $port -U 0 -t 4 -m 128 >"$OUT/mc.log" 2>&1 &
	mc=$!
	python3 - $port <<'PY' || { kill $mc; fail "memcached traffic"; }
import socket, sys, time
for _ in range(100):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); break
    except OSError:
        time.sleep(0.05)
f = s.makefile("rwb")
for i in range(3000):
    v = b"x" * (5000 + (i * 37) % 15000)
    f.write(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)); f.flush()
    assert f.readline() == b"STORED\r\n"
for i in range(0, 3000, 3):
    f.write(b"delete k%d\r\n" % i); f.flush(); f.readline()
print("memcached: 3000 sets, 1000 deletes")
PY
	sleep 0.3
	"$MW" explain -p $mc --json "$OUT/mc.json" -o "$OUT/mc.txt" || { kill $mc; fail "explain of memcached exited $?"; }
	python3 tests/lib/ledger_check.py "$OUT/mc.json" "$(awk '/^Rss:/ {print $2}' /proc/$mc/smaps_rollup)" \
		"$(wc -l </proc/$mc/maps)" || { kill $mc; fail "memcached: ledger"; }
	kill $mc; wait $mc 2>/dev/null
	sed -n '1,/^RSS ledger/p' "$OUT/mc.txt" | head -n 20
fi
echo "ok: ledger"
