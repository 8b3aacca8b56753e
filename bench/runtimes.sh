#!/bin/sh
# bench/runtimes.sh - SystemTap's kernel-module runtime against stapbpf,
# same guest, same programs: what a probe hit costs and what the stop
# costs under each (issue 19).  The host loads no modules, so it runs in
# the guest (docs/testing.md, "The kernel runtime"), as root:
#
#	sh scripts/vm.sh sh bench/runtimes.sh
#
#   per hit  examples/heap-churn N thread (one memory_heap_more and one
#            memory_heap_less per iteration: 2N hits, aggregated in the
#            script under both runtimes), untraced through the
#            probe-enabled glibc's loader and under `mallocwatch
#            --runtime=R -c --interval 3600` (HITOPTS: every family, no
#            allocator sample but the exit snapshot: the samples cost per
#            second, not per hit, and with them a one-time ~0.8 s under
#            TCG, presumably the first reading's load of the libc's debug
#            information, fell into the loop of some runs and not others,
#            on the guest's one vCPU; HITOPTS= for the sampler's
#            defaults), at N iterations and at LO: the fixed
#            costs are taken out as the difference of the two, the same
#            program in the same round:
#              wall  ((R at N - R at LO) - (untraced at N - at LO)) / 2(N - LO)
#            and from the program's own loop timing (loop_ns):
#              loop  ((R at N - R at LO) - (untraced at N - at LO)) / 2(N - LO)
#            Also the wall against a zero-iteration run (2N hits), whose
#            wall is printed as start+stop.
#            The hits the report counted, and those lost (stap's skipped
#            probes included), are printed beside.
#   stop     bench/run's "1 stop": `mallocwatch -c sh -c 'sleep S; date
#            >STAMP'`, S 0 (bench/run's) and LIVE (3), with the
#            sampler's defaults;
#            from the stamp (the program's last act) to mallocwatch's exit
#            with the complete report (of which -v's "report complete
#            N ms after the program's exit": the flush, the tracer
#            printing its aggregates; and the exit snapshot's start and
#            duration, from the JSON report); then from that exit until the
#            tracer is gone: no stap/staprun/stapio/stapbpf or mallocwatch
#            process, no mallocwatch_k* module, no uprobe_events line
#            (the uprobes' removal, which mallocwatch leaves to a watcher
#            after the report).  Every traced run waits for that, so no
#            run starts with uprobes of the one before on the libc.
#
# Rounds interleave untraced, kernel and bpf runs (a change in the host's
# load hits all of them); figures are medians of REPS rounds (default 3).
# N (default 100000) and LO (default N/5) set the iterations; RUNTIMES
# (default "kernel bpf"); RAW=1 also prints every run's figures; OPTS,
# more mallocwatch options for every traced run; MW_HOST_LOAD, the host's
# load average, printed (the guest cannot see it; `make bench-vm` sets it).
# Under TCG everything is 10-50 times slower than on the host: read the
# ratios.  The kernel modules and bpf objects are the ones the end-to-end
# tests compiled (/var/cache/mallocwatch/modules); a script not compiled
# yet costs 4-8 minutes once.
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
N=${N:-100000}
LIVE=${LIVE:-3}
HITOPTS=${HITOPTS---interval 3600}
LO=${LO:-$((N / 5))}
RUNTIMES=${RUNTIMES:-"kernel bpf"}
MW=./build/mallocwatch
P=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
UE=/sys/kernel/tracing/uprobe_events
[ -f $UE ] || UE=/sys/kernel/debug/tracing/uprobe_events
if [ "${MW_IN_VM:-0}" != 1 ]; then
	echo "runtimes: runs in the guest: sh scripts/vm.sh sh bench/runtimes.sh" >&2
	exit 2
fi
make -s all
make -s -C examples
W=$(mktemp -d /tmp/mw-runtimes.XXXXXX)
trap 'rm -rf "$W"' EXIT

now() { date +%s.%N; }
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# Wait until the tracer of the last run is gone; prints the seconds since
# $1 (a now() stamp).  Gives up after 600 s.
settle() {
	i=0
	while pgrep -x 'stap[a-z]*' >/dev/null || pgrep -x mallocwatch >/dev/null ||
		grep -q '^mallocwatch_k' /proc/modules || grep -q . $UE 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 12000 ]; then
			echo "runtimes: the tracer is still there after 600 s" >&2
			exit 1
		fi
		sleep 0.05
	done
	echo "$(now) - $1" | bc -l
}
# one MODE N: MODE none | kernel | bpf; appends "wall loop_ns hits lost
# removal" to $W/MODE-N
one() {
	if [ "$1" = none ]; then
		s=$(now)
		$LOADER ./examples/heap-churn "$2" thread >$W/out
		e=$(now)
		hl="0 0 0"
	else
		s=$(now)
		$MW --runtime="$1" -q -o /dev/null --json $W/r.json $HITOPTS ${OPTS:-} \
			-c ./examples/heap-churn "$2" thread >$W/out
		e=$(now)
		d=$(settle "$e")
		hl="$(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["events"]; b = e["by_probe"]
print(b.get("memory_heap_more", 0) + b.get("memory_heap_less", 0), e["lost"])' $W/r.json) $d"
	fi
	echo "$(echo "$e - $s" | bc -l) $(awk '/^loop_ns/ { print $2 }' $W/out) $hl" >>"$W/$1-$2"
}
col() { cut -d' ' -f"$2" "$W/$1" | med; }	# FILE COLUMN: its median

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
case $cpu in
*TCG*) accel=tcg ;;
*) accel=$(dmesg 2>/dev/null | grep -q 'Hypervisor detected: KVM' && echo kvm || echo "?") ;;
esac
echo "runtimes: guest $(uname -sr), $(stap -V 2>&1 | head -n 1)"
echo "runtimes: accel $accel ($cpu), $(nproc) vCPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)${MW_HOST_LOAD:+, host load $MW_HOST_LOAD}"
echo "runtimes: heap-churn $N and $LO thread ($((2 * N)) and $((2 * LO)) hits), REPS=$REPS, $(date -u '+%Y-%m-%d %H:%M UTC')"
settle "$(now)" >/dev/null
start=$(now)

echo "1. per hit: heap-churn $N and $LO thread, untraced and under each runtime; per hit from the difference"
for i in $(seq "$REPS"); do
	for m in none $RUNTIMES; do
		one $m "$N"
		one $m "$LO"
		one $m 0
	done
	echo "  round $i done at +$(printf %.0f "$(echo "$(now) - $start" | bc -l)") s" >&2
done
u=$(col none-$N 1) ulo=$(col none-$LO 1) u0=$(col none-0 1)
ul=$(col none-$N 2) ullo=$(col none-$LO 2)
printf '  untraced: %.3f s, at %s %.3f s, at 0 %.3f s; loop %.3f s, at %s %.3f s\n' "$u" "$LO" "$ulo" \
	"$u0" "$(echo "$ul / 10^9" | bc -l)" "$LO" "$(echo "$ullo / 10^9" | bc -l)"
for r in $RUNTIMES; do
	w=$(col $r-$N 1) wlo=$(col $r-$LO 1) w0=$(col $r-0 1) l=$(col $r-$N 2) llo=$(col $r-$LO 2)
	pw=$(echo "(($w - $wlo) - ($u - $ulo)) * 10^6 / (2 * ($N - $LO))" | bc -l)
	pl=$(echo "(($l - $llo) - ($ul - $ullo)) / 1000 / (2 * ($N - $LO))" | bc -l)
	p0=$(echo "(($w - $w0) - ($u - $u0)) * 10^6 / (2 * $N)" | bc -l)
	echo "$pw $pl $p0" >$W/per-$r
	printf '  %-6s %.3f s, at %s %.3f s, at 0 %.3f s; loop %.3f s, at %s %.3f s; counted %s hits, %s lost\n' \
		"$r" "$w" "$LO" "$wlo" "$w0" "$(echo "$l / 10^9" | bc -l)" "$LO" "$(echo "$llo / 10^9" | bc -l)" \
		"$(cut -d' ' -f3 $W/$r-$N | sort -u | tr '\n' ' ' | sed 's/ $//')" \
		"$(cut -d' ' -f4 $W/$r-$N | sort -u | tr '\n' ' ' | sed 's/ $//')"
	printf '         per hit: %.2f us (wall), %.2f us (loop); wall against the zero-iteration run %.2f us\n' \
		"$pw" "$pl" "$p0"
done
if [ -f $W/per-kernel ] && [ -f $W/per-bpf ]; then
	read -r kw kl k0 <$W/per-kernel
	read -r bw bl b0 <$W/per-bpf
	printf '  kernel/bpf per hit: x%.2f (wall), x%.2f (loop), x%.2f (against zero iterations)\n' \
		"$(echo "$kw / $bw" | bc -l)" "$(echo "$kl / $bl" | bc -l)" "$(echo "$k0 / $b0" | bc -l)"
fi

echo "2. stop: program exit -> complete report and exit; then the tracer's removal"
for i in $(seq "$REPS"); do
	for r in $RUNTIMES; do
		for z in 0 $LIVE; do
			rm -f $W/stamp
			$MW --runtime="$r" -v -o $W/stop.txt --json $W/stop.json ${OPTS:-} \
				-c sh -c "sleep $z; date +%s.%N >$W/stamp" 2>$W/stop.err
			e=$(now)
			d=$(settle "$e")
			grep -q . $W/stop.txt || { echo "runtimes: $r: no report" >&2; exit 1; }
			f=$(sed -n 's/.*report complete \([0-9]*\) ms after.*/\1/p' $W/stop.err)
			x=$(python3 -c 'import json, sys
x = json.load(open(sys.argv[1]))["snapshots"]["exit"]
print(x["taken_unix_ns"] / 1e9 - float(sys.argv[2]), x["duration_ns"] / 1e9)' $W/stop.json "$(cat $W/stamp)")
			echo "$(echo "$e - $(cat $W/stamp)" | bc -l) $d ${f:-?} $x" >>$W/stop-$r-$z
		done
	done
done
for z in 0 $LIVE; do
	echo "  the program exits after ${z} s:"
	for r in $RUNTIMES; do
		printf '    %-6s exit -> report %.2f s (the exit snapshot from +%.2f s, %.3f s long; the flush %s ms); then the removal %.2f s\n' \
			"$r" "$(col stop-$r-$z 1)" "$(col stop-$r-$z 4)" "$(col stop-$r-$z 5)" \
			"$(col stop-$r-$z 3)" "$(col stop-$r-$z 2)"
	done
	if [ -f $W/stop-kernel-$z ] && [ -f $W/stop-bpf-$z ]; then
		printf '    kernel/bpf: exit -> report x%.2f, removal x%.2f\n' \
			"$(echo "$(col stop-kernel-$z 1) / $(col stop-bpf-$z 1)" | bc -l)" \
			"$(echo "$(col stop-kernel-$z 2) / $(col stop-bpf-$z 2)" | bc -l)"
	fi
done
printf '  start+stop, the whole run of heap-churn 0 thread:'
for r in $RUNTIMES; do printf ' %s %.2f s,' "$r" "$(col $r-0 1)"; done
printf ' untraced %.3f s\n' "$u0"
if [ "${RAW:-0}" = 1 ]; then	# every run: wall loop_ns hits lost removal
	for f in $W/*-*; do echo "  ${f##*/}: $(tr '\n' ';' <"$f")"; done
fi
echo "runtimes: load at the end $(cut -d' ' -f1-3 /proc/loadavg), $(printf %.0f "$(echo "$(now) - $start" | bc -l)") s"
