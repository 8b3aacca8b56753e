#!/bin/sh
# bench/procs-start.sh - a run's start on a busy machine: `mallocwatch -c
# /bin/true` with NPROCS more idle processes (default 2000: sleeping
# children of one python3, as a CI runner or a server has them) against
# the same run without them, alternating, ROUNDS rounds (default 8);
# medians and the ratio.  A run's sweep for what killed runs left had
# looked at every process twice (its tracers, and the liveness of
# recorded tracers): 2090 processes cost each start 50 to 190 ms.  Prints
# a "goal" line (bench/run collects it): with the processes at most
# x1.25 the start without.
set -eu
cd "$(dirname "$0")/.."
MW=${MW:-./build/mallocwatch}
NPROCS=${NPROCS:-2000}
ROUNDS=${ROUNDS:-8}
ms() { s=$(date +%s%N); "$MW" -q -o /dev/null -c /bin/true >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
median() { sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'; }
"$MW" --cleanup >/dev/null 2>&1 || true
ms >/dev/null	# the compiled script cached
: >build/procs-start.quiet
: >build/procs-start.busy
for r in $(seq "$ROUNDS"); do
	ms >>build/procs-start.quiet
	python3 -c 'import os, sys, time
n = int(sys.argv[1])
for i in range(n):
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
print("up", flush=True)
time.sleep(600)' "$NPROCS" >build/procs-start.up &
	holder=$!
	until grep -q up build/procs-start.up 2>/dev/null; do sleep 0.1; done
	ms >>build/procs-start.busy
	pkill -P $holder 2>/dev/null || true
	kill $holder 2>/dev/null || true
	wait $holder 2>/dev/null || true
done
q=$(median <build/procs-start.quiet)
b=$(median <build/procs-start.busy)
r=$(echo "scale=2; $b / $q" | bc -l)
echo "  -c /bin/true: ${q} ms; with $NPROCS more processes: ${b} ms (x$r); rounds: $(tr '\n' ' ' <build/procs-start.quiet)/ $(tr '\n' ' ' <build/procs-start.busy)"
echo "goal 6 start with $NPROCS more processes x$r (<= 1.25): $(echo "$r <= 1.25" | bc)"
rm -f build/procs-start.quiet build/procs-start.busy build/procs-start.up
