#!/bin/sh
# bench/walk.sh - how fast a snapshot walks a heap of many free chunks
# (issue 44, item 3), against a same-run baseline: the raw
# process_vm_readv of the same bytes (the main heap and every heap_info
# heap, 1 MiB a call, into a fresh buffer: bench/rawread.c; also into
# one 1 MiB buffer used again, the copy alone; the walk copies in 64 KiB
# blocks as it goes, and since 2026-11-29 a second thread copies the
# blocks ahead of it once it goes through a mapping block after block:
# src/live/procahead.c; the CPU printed is both threads'; since speed4 an
# arena's lists are walked side by side and the blocks' buffers are a
# pool of 16 MiB used again, grown when blocks are copied again:
# src/live/snapshot_lists.c, procblocks.c).  Processes:
# tests/fixtures/many-free chunks 2000000 3 (2 M free chunks of 80 and
# 320 bytes in 4 arenas) on Debian's libc (libc6-dbg) and on the
# probe-enabled glibc, and python3 with PYTHONMALLOC=malloc (4 threads,
# each in its own arena, freeing every other object of 500,000: 2 M free
# chunks; trim_threshold raised).  Each is read with `snapshot -p PID,X`
# (the snapshot alone, no RSS ledger; X an idle process), REPS times
# (default 3), medians.  A snapshot reads a process twice: the first
# walks the lists, the later ones re-read the words that walk read
# (src/live/snapshot_record.c; before 2026-11-28 each was a whole walk);
# since 2026-11-29 once when no thread of it ran meanwhile (quiet.c: these
# processes are idle), the JSON's "check" then "idle" (else "reread").  The
# rate is the free chunks over the whole snapshot's time (before
# 2026-11-28 this bench multiplied by the reads).  Prints one line each
# and "goal" lines (>= 10 M free chunks a second, a snapshot of 2 M in
# about 0.2 s), and how long
# `mallocwatch trim` holds each against gdb's call of malloc_trim(0)
# (trimbench, below; goal: at most 1.5 times).  Run as root
# after `make all` and the test fixtures (bench/run calls it).
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
# GAP=S: S seconds idle before each snapshot (default 0).  This VM hands
# free memory back to its host about 2 s after it is freed (docs/
# performance.md), and a page given back costs 2-7 ms/MiB to fault in
# again: GAP=3 measures the snapshot a user runs now and then, its copy
# buffers all fresh; GAP=0 the ones run back to back.
GAP=${GAP:-0}
MW=${MW:-./build/mallocwatch}
P=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
OUT=build/bench
FIX=build/tests/fixtures/many-free
mkdir -p $OUT
[ -x $FIX ] || make -s $FIX
cc -O2 -o $OUT/rawread bench/rawread.c

pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null' EXIT
sleep 3600 &
idle=$!
pids="$pids $idle"

# start NAME COMMAND...: COMMAND with its stdin a FIFO kept open, until
# it prints "ready"; sets pid
start() {
	name=$1
	shift
	rm -f $OUT/$name.in $OUT/$name.out
	mkfifo $OUT/$name.in
	"$@" <$OUT/$name.in >$OUT/$name.out 2>&1 &
	pid=$!
	sleep 3600 >$OUT/$name.in &
	pids="$pids $pid $!"
	until grep -q ready $OUT/$name.out 2>/dev/null; do sleep 0.1; done
}

# measure NAME: REPS snapshots of $pid, and the raw read of its heaps
# median: the middle line of stdin's REPS lines, sorted by their first number
median() {
	sort -n | awk -v m=$(( (REPS + 1) / 2 )) 'NR == m'
}

measure() {
	for i in $(seq "$REPS"); do
		sleep "$GAP"
		/usr/bin/time -f '%U %S' -o $OUT/$1.cpu \
			$MW snapshot -p $pid,$idle --json $OUT/$1.json -o /dev/null --read-timeout 60
		python3 - $OUT/$1.json $pid $OUT/$1.cpu <<'PY'
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["processes"] if p["pid"] == int(sys.argv[2])][0]
assert p["error"] is None, p["error"]
chunks = sum(a["malloc_info"]["fast_count"] + a["malloc_info"]["rest_count"] - 1 for a in p["arenas"])
cpu = sum(float(x) for x in open(sys.argv[3]).read().split()[-2:])
r = ["%s-%s" % (p["main_heap"]["sbrk_base"], p["main_heap"]["end"])]
r += ["%s-%x" % (h["address"], int(h["address"], 16) + h["size"]) for a in p["arenas"] for h in a["heaps"]]
print(p["duration_ns"] / 1e9, p["tries"], chunks, len(p["arenas"]), cpu, p.get("check", "reread"),
      " ".join(r))
PY
	done | sort -n >$OUT/$1.runs
	set -- "$1" $(median <$OUT/$1.runs)
	name=$1 secs=$2 walks=$3 chunks=$4 arenas=$5 check=$7
	cpu=$(awk '{ print $5 }' $OUT/$1.runs | sort -n | median)
	shift 7
	raw=$(for i in $(seq "$REPS"); do $OUT/rawread $pid "$@"; done | median)
	rawsecs=${raw% *} bytes=${raw#* }
	reused=$(for i in $(seq "$REPS"); do $OUT/rawread -r $pid "$@"; done | median)
	reused=${reused% *}
	rate=$(echo "$chunks / $secs / 1000000" | bc -l)
	printf '  %-14s %d free chunks in %d arenas, %.0f MiB of heaps: a snapshot %.3f s (%d read%s, %s: %.1f M free chunks/s; CPU %.2f s, the whole command); raw process_vm_readv of the heaps %.3f s (%.1f M free chunks/s), into a buffer used again %.3f s; snapshot x%.2f the raw read\n' \
		"$name" "$chunks" "$arenas" "$(echo "$bytes / 1048576" | bc -l)" "$secs" "$walks" "$([ "$walks" = 1 ] || echo s)" "$check" "$rate" \
		"$cpu" "$rawsecs" "$(echo "$chunks / $rawsecs / 1000000" | bc -l)" "$reused" \
		"$(echo "$secs / $rawsecs" | bc -l)"
	echo "goal walk $name $(printf %.1f "$rate") M free chunks/s (>= 10): $(echo "$rate >= 10" | bc)" >>$OUT/walk.goals
	trimbench "$name"
}

# trimbench NAME: how long `mallocwatch trim` holds $pid (its held_ns:
# the stopped read, the RSS ledger and the malloc_trim(0) call) against
# gdb's `call malloc_trim(0)` on the same process (gdb's whole run, from
# its start to its exit: it holds the process from the attach on),
# interleaved REPS times, medians; the stop bounds raised (a 2 M-chunk
# python3 is read in more than the default --max-stop 1000 ms under
# load, and trim then refuses).  Goal: at most 1.5 times gdb's.
trimbench() {
	for i in $(seq "$REPS"); do
		$MW trim -p $pid --json $OUT/$1.trim.json -o /dev/null --read-timeout 60 \
			--max-stop 60000 --max-stopped 120000 >/dev/null 2>&1 || true
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trim"]["held_ns"] / 1e9)' \
			$OUT/$1.trim.json >>$OUT/$1.held
		t0=$(date +%s%N)
		gdb -q -nx -p $pid -batch -ex 'call (int)malloc_trim(0)' >/dev/null 2>&1
		echo "($(date +%s%N) - $t0) / 1000000000" | bc -l >>$OUT/$1.gdb
	done
	held=$(median <$OUT/$1.held)
	gdbs=$(median <$OUT/$1.gdb)
	rm -f $OUT/$1.held $OUT/$1.gdb
	printf '  %-14s trim held it %.3f s; gdb call malloc_trim(0) %.3f s; x%.2f gdb\n' "$1" "$held" "$gdbs" \
		"$(echo "$held / $gdbs" | bc -l)"
	echo "goal trim $1 x$(printf %.2f "$(echo "$held / $gdbs" | bc -l)") gdb's call (<= 1.5): $(echo "$held <= 1.5 * $gdbs" | bc)" >>$OUT/walk.goals
}

: >$OUT/walk.goals
echo "bench/walk.sh: $REPS snapshots a process, $GAP s idle before each"
start c-debian $FIX chunks 2000000 3
measure c-debian
kill $pid; wait $pid 2>/dev/null || true
if [ -f "$P/libc.so.6" ]; then
	start c-probes "$P/ld-linux-x86-64.so.2" --library-path "$P:/lib/x86_64-linux-gnu" $FIX chunks 2000000 3
	measure c-probes
	kill $pid; wait $pid 2>/dev/null || true
fi
cat >$OUT/walk.py <<'PY'
import sys, threading
keep, n = [], int(sys.argv[1])
def work(k):
    a = [bytes(16 + (i * 37) % 300) for i in range(n)]
    keep.append(a[1::2])    # every other object stays: the others are freed
    del a[:]
    done.wait()
done = threading.Event()
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
[t.start() for t in ts]
while len(keep) < 4:
    threading.Event().wait(0.05)
print("ready", flush=True)
sys.stdin.read(1)
done.set()
PY
start python3 env PYTHONMALLOC=malloc GLIBC_TUNABLES=glibc.malloc.trim_threshold=4294967296 \
	/usr/bin/python3 $OUT/walk.py 1000000
measure python3
sed 's/^goal //' $OUT/walk.goals | sed 's/^/goal /'
