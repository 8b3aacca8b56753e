#!/bin/sh
# bench/uprobes.sh - the kernel's floor under runs that follow each other
# (issue 21, item 3): arming and removing the uprobes of mallocwatch's
# default sites with no tracer in the way (bench/uprobe-close.c), through
# tracefs events as stapbpf does and through the uprobe PMU as bpftrace
# and libbpf do, and as one uprobe_multi link (Linux 6.6; mallocwatch's
# umulti-shim.so, where the kernel has it).  A run's tracer removes its uprobes when it ends, and the
# next run's arming waits behind that removal (the kernel's event_mutex);
# if one interface removed much faster, a tracer on it would let runs
# follow each other sooner.  Prints per site: arm and removal (close +
# delete) in ms, medians of REPS (default 3), and the load.
set -eu
cd "$(dirname "$0")/.."
MW=./build/mallocwatch
REPS=${REPS:-3}
LIBC=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib/libc.so.6
B=build/bench
mkdir -p $B
cc -O2 -Wall -Isrc/runtime -Isrc/protocol -o $B/uprobe-close bench/uprobe-close.c src/runtime/uprobe_multi_link.c
# the traced sites' file offsets (bench/sites.py)
offs=$($MW probes --libc "$LIBC" --json 2>/dev/null | python3 bench/sites.py "$LIBC")
n=$(echo "$offs" | wc -l)
EVENTS=/sys/kernel/debug/tracing/uprobe_events
leftovers() {	# a killed run's events (uprobe-close.c names them)
	grep -o 'mwbench_[0-9]*_[0-9]*' $EVENTS 2>/dev/null | while read -r e; do
		echo "-:$e" >>$EVENTS 2>/dev/null || true
	done
}
trap leftovers EXIT
median() { sort -n | awk '{ t[NR] = $1 } END { printf "%.1f", t[int((NR + 1) / 2)] }'; }
echo "  load: $(cut -d' ' -f1-3 /proc/loadavg); $n sites of $LIBC"
modes="tracefs pmu"
if $B/uprobe-close multi "$LIBC" $(echo "$offs" | head -1) >/dev/null 2>&1; then
	modes="$modes multi"
fi
for mode in $modes; do
	for r in $(seq "$REPS"); do
		# shellcheck disable=SC2086
		$B/uprobe-close $mode "$LIBC" $offs
	done >$B/uprobes-$mode.txt
	arm=$(awk -v n="$n" '{ print $5 * 1000 / n }' $B/uprobes-$mode.txt | median)
	rm_=$(awk -v n="$n" '{ print ($7 + $9) * 1000 / n }' $B/uprobes-$mode.txt | median)
	printf '  %-8s arm %6s ms per site, removal %6s ms per site (%s)\n' "$mode" "$arm" "$rm_" \
		"$(case $mode in tracefs) echo "stapbpf's own way";; pmu) echo "bpftrace's and libbpf's way";;
			multi) echo "one uprobe_multi link: mallocwatch's way on Linux 6.6+";; esac)"
	eval "rm_$mode=\$rm_"
done
# the floor: what one run's removal takes, by interface; through tracefs
# and the PMU it holds the kernel's event_mutex, and the next run's
# arming waits behind it
printf 'floor 6 removal of %d uprobes: %.2f s (tracefs) / %.2f s (uprobe PMU) / %s (one uprobe_multi link)\n' \
	"$n" "$(echo "$n * $rm_tracefs / 1000" | bc -l)" "$(echo "$n * $rm_pmu / 1000" | bc -l)" \
	"$([ -n "${rm_multi:-}" ] && printf '%.3f s' "$(echo "$n * $rm_multi / 1000" | bc -l)" || echo "not on this kernel")"
