#!/bin/sh
# mallocwatch snapshot --all (issue 17, item 3): every process on the
# host that maps a glibc, one line each, most free-but-retained bytes
# first, on a host running real programs on two libcs side by side:
# python3 workers (the system python3, on Debian's libc: symbols from
# libc6-dbg), memcached under load from a loopback client, and
# examples/hold-arenas under the probe-enabled glibc and under Debian's;
# plus a process whose libc has no DWARF (a row with the reason) and one
# in a pid namespace of its own (its pid there in the NSPID column).
# Under load, memcached is listed and, with --stop, read (without, read
# while it runs or refused with the reason); once every program is idle,
# a sample is frozen (gdb attached: `call malloc_info(0, stderr)`, then
# it holds the process until told) and `snapshot --all --json` must
# equal each one's malloc_info(), arena for arena.  hold-arenas prints
# its own malloc_info and holds still.  Then --interval and --count
# (fresh tables, ^C/SIGTERM end with 0) and the JSON's shape.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v gdb >/dev/null || skip "gdb is not installed (make deps)"
MC=$(command -v memcached || echo /usr/bin/memcached)
[ -x "$MC" ] || skip "memcached is not installed (make deps)"
PY=/usr/bin/python3	# the system's, on Debian's libc (not a pyenv one)
BUILD_ID=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}')
[ -f "/usr/lib/debug/.build-id/$BUILD_ID.debug" ] || skip "libc6-dbg is not installed (make deps)"
PIDS=
cleanup() {
	: >"$OUT/go"
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# python3 workers: threads that allocate, then block (nothing changes)
for w in 1 2 3; do
	$PY -c '
import sys, threading
n = int(sys.argv[1])
ready, go = threading.Barrier(n + 1), threading.Event()
def work(i):
    keep = [bytearray(100000 + 4099 * i + j) for j in range(30)]
    junk = [bytearray(700 + j % 3000) for j in range(4000)]
    del junk[::2]                  # free chunks left in the bins
    ready.wait(); go.wait()
ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
[t.start() for t in ts]
ready.wait()
print("ready", flush=True)
go.wait()
' $((w + 1)) >"$OUT/py$w.out" 2>"$OUT/py$w.err" &
	eval "PY$w=\$!"
	PIDS="$PIDS $!"
done

# memcached as nobody on a free loopback port; no background LRU threads
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$MC" -u nobody -l 127.0.0.1 -p "$PORT" -U 0 -t 4 -m 64 -o no_lru_crawler,no_lru_maintainer \
	2>"$OUT/mc.err" &
MCPID=$!
PIDS="$PIDS $MCPID"

# hold-arenas: two under the probe-enabled glibc, one under Debian's;
# each holds until its stdin gives a byte: a FIFO nobody writes to
rm -f "$OUT/hold.in"; mkfifo "$OUT/hold.in"
exec 3<>"$OUT/hold.in"
hold() {	# NAME N [system]
	if [ "${3:-}" = system ]; then
		./examples/hold-arenas "$2" "$1" <"$OUT/hold.in" >"$OUT/$1.xml" 2>/dev/null &
	else
		"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" \
			./examples/hold-arenas "$2" "$1" <"$OUT/hold.in" >"$OUT/$1.xml" 2>/dev/null &
	fi
	PIDS="$PIDS $!"
	eval "$1=\$!"
}
hold HP1 4; hold HP2 1; hold HS 3 system

# a libc without DWARF, and a process in a pid namespace of its own
mkdir -p "$OUT/nodwarf"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$OUT/nodwarf/" && strip --strip-debug "$OUT/nodwarf/libc.so.6"
"$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$OUT/nodwarf:/lib/x86_64-linux-gnu" /bin/sleep 600 &
ND=$!; PIDS="$PIDS $ND"
NS=
if unshare --pid --fork --kill-child /bin/sleep 600 & then
	UNS=$!; PIDS="$PIDS $UNS"
	i=0
	until NS=$(pgrep -P $UNS -x sleep); do i=$((i + 1)); [ $i -lt 200 ] || break; sleep 0.05; done
	# the init of a pid namespace takes only SIGKILL from us
	PIDS="$PIDS $NS"
fi

# a process that names itself with an escape sequence: shown quoted
EVIL="$OUT/$(printf 'e\033[31mvil')"
cp /bin/sleep "$EVIL" && "$EVIL" 600 &
EV=$!; PIDS="$PIDS $EV"

for w in 1 2 3; do wait_for "$OUT/py$w.out" ready 60; done
until [ "$(readlink /proc/$EV/exe)" = "$EVIL" ]; do sleep 0.05; done
for h in HP1 HP2 HS; do wait_for "$OUT/$h.xml" '</malloc>' 60; done
until grep -q "$OUT/nodwarf/libc.so.6" /proc/$ND/maps 2>/dev/null; do sleep 0.05; done
i=0
until $PY -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$PORT" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "memcached never listened: $(cat "$OUT/mc.err")"; sleep 0.05
done

# the loopback client: 4 connections, sets and gets of 10 B to 200 KB,
# a fixed number of them (not a time), then every connection closed
cat >"$OUT/load.py" <<'PY'
import random, socket, sys, threading
port, ops = int(sys.argv[1]), int(sys.argv[2])
started = threading.Barrier(5)
def client(seed):
    r, s = random.Random(seed), socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    started.wait()
    for i in range(ops):
        key, n = "k%d-%d" % (seed, r.randrange(500)), r.choice([10, 900, 5000, 60000, 200000])
        s.sendall(b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (key.encode(), n, b"x" * n, key.encode()))
        assert f.readline() == b"STORED\r\n"
        line = f.readline()
        while line != b"END\r\n":
            line = f.readline()
    s.close()
ts = [threading.Thread(target=client, args=(k,)) for k in range(4)]
[t.start() for t in ts]
started.wait()
print("started", flush=True)
[t.join() for t in ts]
print("done", flush=True)
PY
$PY "$OUT/load.py" "$PORT" 3000 >"$OUT/load.out" 2>&1 &
LOAD=$!
wait_for "$OUT/load.out" started 60
# --stop: stopped if need be, and read; without it (the default) read
# while it runs, or refused with the reason
"$MW" snapshot --all --stop --json "$OUT/busy.json" -o "$OUT/busy.txt" 2>"$OUT/busy.err" ||
	{ _rc=$?; cat "$OUT/busy.err"; fail "--all --stop under load exited $_rc"; }
"$MW" snapshot --all --json "$OUT/busy-nostop.json" -o /dev/null 2>"$OUT/busy-nostop.err" ||
	{ _rc=$?; cat "$OUT/busy-nostop.err"; fail "--all under load exited $_rc"; }
wait $LOAD || fail "the load client failed: $(cat "$OUT/load.out")"
grep -q done "$OUT/load.out" || fail "the load client did not finish"
python3 - "$OUT/busy.json" $MCPID "$OUT/busy-nostop.json" <<'PY' || fail "memcached under load"
import json, sys
d = json.load(open(sys.argv[1]))
mc = [p for p in d["processes"] if p["pid"] == int(sys.argv[2])]
assert mc and mc[0]["error"] is None, mc and mc[0]["error"]
print("under load, --stop: memcached read, %d arenas, %d bytes free (%s)" % (len(mc[0]["arenas"]),
      mc[0]["totals"]["free_bytes"], "consistent" if mc[0]["consistent"] else "inconsistent"))
d = json.load(open(sys.argv[3]))
mc = [p for p in d["processes"] if p["pid"] == int(sys.argv[2])]
assert mc and mc[0]["stops"] == 0 if mc and mc[0]["error"] is None else True, mc
assert mc and (mc[0]["error"] is None or (mc[0]["error"]["kind"] == "inconsistent" and
               mc[0]["error"]["message"].endswith("(not stopped: --all stops a process only with --stop)"))), mc
print("under load, no stop: memcached", "read" if mc[0]["error"] is None else "refused: " + mc[0]["error"]["message"])
PY

# Idle: every memcached thread asleep, twice in a row (the client's
# connections closed; no thread inside malloc holding an arena's lock)
asleep() {
	for t in /proc/$MCPID/task/*/stat; do
		s=$(sed 's/.*) //' "$t" | cut -d' ' -f1)
		[ "$s" = S ] || return 1
	done
}
i=0
until asleep && sleep 0.2 && asleep; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "memcached never went idle"; sleep 0.1
done

# freeze the sample: gdb calls malloc_info(0, stderr) in each, then holds
# it (attached, every thread stopped) until $OUT/go exists
rm -f "$OUT/go"
GDBS=
for p in $MCPID $PY1 $PY2; do
	timeout 120 gdb -q -batch -nx -p $p -ex 'call (int) malloc_info(0, stderr)' \
		-ex "shell touch $OUT/frozen.$p; while [ ! -e $OUT/go ]; do sleep 0.05; done" \
		>"$OUT/gdb.$p.out" 2>&1 &
	GDBS="$GDBS $!"
done
for p in $MCPID $PY1 $PY2; do
	i=0
	until [ -e "$OUT/frozen.$p" ]; do
		i=$((i + 1)); [ $i -lt 1800 ] || fail "gdb never froze $p: $(cat "$OUT/gdb.$p.out")"; sleep 0.05
	done
done
"$MW" snapshot --all --json "$OUT/all.json" -o "$OUT/all.txt" 2>"$OUT/all.err"
rc=$?
: >"$OUT/go"
for g in $GDBS; do wait $g || fail "gdb exited $?"; done
[ $rc = 0 ] || { cat "$OUT/all.err"; fail "--all exited $rc"; }
[ -s "$OUT/all.err" ] && fail "--all wrote to stderr: $(cat "$OUT/all.err")"
grep -q "$(printf '\033')" "$OUT/all.txt" && fail "a raw escape byte reached the table"
grep -q "^ *$EV e\\\\x1b\[31mvil  " "$OUT/all.txt" || fail "the evil name is not shown quoted"
cat "$OUT/all.txt"

# each sampled process against its malloc_info
python3 - "$OUT/all.json" "$OUT" <<'PY' || exit 99
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["processes"]:
    json.dump({"snapshot": p}, open("%s/all-%d.json" % (sys.argv[2], p["pid"]), "w"))
PY
compare() {	# NAME PID FILE: FILE's last malloc_info against the snapshot
	awk '/^<malloc version=/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$3" >"$OUT/$1.mi.xml"
	grep -q '</malloc>' "$OUT/$1.mi.xml" || fail "$1: no malloc_info in $3"
	expect_snapshot "$OUT/$1.mi.xml" "$OUT/all-$2.json" "$OUT/$1"
	echo "ok: $1 (pid $2): equal to its malloc_info: $(tail -n 1 "$OUT/$1/actual.txt"), $(grep -c '^arena' "$OUT/$1/actual.txt") lines of arenas"
}
compare memcached $MCPID "$OUT/mc.err"
compare python3-1 $PY1 "$OUT/py1.err"
compare python3-2 $PY2 "$OUT/py2.err"
compare hold-probes-4 $HP1 "$OUT/HP1.xml"
compare hold-probes-1 $HP2 "$OUT/HP2.xml"
compare hold-system-3 $HS "$OUT/HS.xml"

# the table and the JSON: sorted, both libcs, reasons, where
python3 - "$OUT/all.json" "$OUT/all.txt" $MCPID $PY1 $PY2 $PY3 $HP1 $HP2 $HS $ND "$NS" "$GLIBC_PREFIX" <<'PY' || fail "--all table"
import json, sys
d, txt = json.load(open(sys.argv[1])), open(sys.argv[2]).read().splitlines()
mc, py1, py2, py3, hp1, hp2, hs, nd = map(int, sys.argv[3:11])
ns, prefix = int(sys.argv[11] or 0), sys.argv[12]
assert d["version"] == 1 and d["mode"] == "all" and d["processes_seen"] >= len(d["processes"]), d["mode"]
procs = {p["pid"]: p for p in d["processes"]}
for pid in (mc, py1, py2, py3, hp1, hp2, hs):
    assert pid in procs and procs[pid]["error"] is None, (pid, procs.get(pid, {}).get("error"))
assert procs[mc]["comm"] == "memcached" and procs[py1]["comm"] == "python3", procs[mc]["comm"]
# side by side: the probe-enabled glibc's and Debian's
assert procs[hp1]["libc"] == prefix + "/lib/libc.so.6", procs[hp1]["libc"]
assert procs[hs]["libc"].endswith("x86_64-linux-gnu/libc.so.6") and procs[hs]["dwarf"].startswith("/usr/lib/debug/"), procs[hs]
# most free-but-retained bytes first; those read inconsistently (a
# debugger's, whose libc is mapped twice), then those not read after them
read = [p for p in d["processes"] if p["error"] is None and p["consistent"]]
frees = [p["totals"]["free_bytes"] for p in read]
assert frees == sorted(frees, reverse=True), frees
assert d["processes"][:len(read)] == read, "a process not read before one read"
e = procs[nd]["error"]
assert e["kind"] == "no_symbols" and "no DWARF for" in e["message"], e
t = d["totals"]
assert t["processes_read"] == len(read) and t["free_bytes"] == sum(frees), t
# the text: one row per process, in the same order, the reason on the row
rows = [l for l in txt if l[:8].strip().isdigit()]
assert [int(l.split()[0]) for l in rows] == [p["pid"] for p in d["processes"]], "text and JSON orders differ"
nd_row = [l for l in rows if int(l.split()[0]) == nd][0]
assert "  (no_symbols: no DWARF for " in nd_row, nd_row
if ns:
    w = procs[ns]["where"]
    assert w["pid_namespace"]["ours"] is False and w["pid_in_namespace"] == 1 and w["nspid"] == [ns, 1], w
    row, col = [l for l in rows if int(l.split()[0]) == ns][0], txt[1].index("NSPID")
    assert row[col - 1:col + 5].strip() == "1", row
    print("a pid namespace of its own: pid %d is pid 1 there, NSPID column 1" % ns)
print("--all: %d processes, %d read, sorted by free bytes; %s" % (len(d["processes"]), len(read), txt[0]))
PY

# --count, --interval: fresh tables; ^C and SIGTERM end with 0
"$MW" snapshot --all --count 2 --interval 0.1 -o "$OUT/count.txt" || fail "--count 2 exited $?"
[ "$(grep -c '^    PID COMMAND' "$OUT/count.txt")" = 2 ] || fail "--count 2: not two tables"
"$MW" snapshot --all --count 2 --interval 0.1 --json "$OUT/count.jsonl" -o /dev/null || fail "--count --json exited $?"
python3 -c 'import json, sys; ds = [json.loads(l) for l in open(sys.argv[1])]; assert len(ds) == 2 and all(d["mode"] == "all" for d in ds), len(ds)' \
	"$OUT/count.jsonl" || fail "--interval --json: not one document a line"
running() { [ "$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)" ] && ! grep -q ') Z' /proc/$1/stat 2>/dev/null; }
for sig in INT TERM; do
	rm -f "$OUT/sig-$sig.txt"
	"$MW" snapshot --all --interval 0.1 -o "$OUT/sig-$sig.txt" &
	mw=$!
	wait_for "$OUT/sig-$sig.txt" '^Total over' 60	# it is in its loop
	kill -$sig $mw
	i=0
	while running $mw && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
	running $mw && { kill -KILL $mw; fail "SIG$sig did not end --interval within 30 s"; }
	wait $mw
	rc=$?
	[ $rc = 0 ] || fail "SIG$sig ended --interval with $rc"
done
echo "ok: --count and --interval print fresh tables; ^C and SIGTERM end them with 0"
exec 3>&-
