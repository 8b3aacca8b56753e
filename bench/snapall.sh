#!/bin/sh
# bench/snapall.sh [N] - `mallocwatch snapshot --all` over N more idle
# glibc processes (default 200: half /bin/sleep on Debian's libc, half on
# the probe-enabled glibc), against same-run baselines: `ps -e`, and
# reading every /proc/PID/maps once (what finding the glibc processes
# costs at least).  Wall-clock medians of REPS runs (default 3).  Run as
# root; bench/run calls it, or run it alone.  Prints the figures and one
# "goal" line (target: --all over 200 processes in at most 0.5 s, quiet).
set -eu
cd "$(dirname "$0")/.."
N=${1:-200}
REPS=${REPS:-3}
MW=${MW:-./build/mallocwatch}
P=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
OUT=build/bench
mkdir -p $OUT

now() { date +%s.%N; }
median() { sort -n | awk '{ t[NR] = $1 } END { printf "%.3f", t[int((NR + 1) / 2)] }'; }
timeit() {
	for i in $(seq "$REPS"); do
		s=$(now); "$@" >/dev/null 2>&1; e=$(now)
		echo "$e - $s" | bc -l
	done | median
}
ratio() { echo "scale=1; $1 / $2" | bc -l; }

. bench/idleprocs.sh
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null' EXIT
idle_procs "$N"
maps_all() { cat /proc/[0-9]*/maps 2>/dev/null || true; }	# one process
ps_t=$(timeit ps -e)
maps_t=$(timeit maps_all)
all_t=$(timeit $MW snapshot --all -o /dev/null)
$MW snapshot --all --json $OUT/snapall.json -o /dev/null
set -- $(python3 - $OUT/snapall.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ps = d["processes"]
read = [p for p in ps if p["error"] is None]
walk = sum(p["duration_ns"] for p in read) / 1e9      # the allocator walks alone
print(len(ps), len(read), d["processes_seen"], "%.3f" % walk, "%.3f" % (d["duration_ns"] / 1e9))
PY
)
printf '  snapshot --all: %ss for %s glibc processes (%s read; %s started here, %s in /proc): x%s ps -e (%ss), x%s reading every maps once (%ss); %.1f ms a process (goal: 200 in <= 0.5 s)\n' \
	"$all_t" "$1" "$2" "$N" "$3" "$(ratio "$all_t" "$ps_t")" "$ps_t" \
	"$(ratio "$all_t" "$maps_t")" "$maps_t" "$(echo "$all_t * 1000 / $1" | bc -l)"
printf '  of one run'"'"'s %ss reading them (several at once), the allocator walks took %ss summed over the processes (those read at once overlap); the rest is finding each process'"'"'s libc and its symbols and DWARF (mw_glibc_load; kept per libc file)\n' "$5" "$4"
echo "goal snapshot --all ${all_t}s over $1 processes (200 in <= 0.5 s): $(echo "$all_t * 200 / $1 <= 0.5" | bc -l)"
