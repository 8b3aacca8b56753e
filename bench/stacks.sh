#!/bin/sh
# bench/stacks.sh - what --stacks costs the traced program (issue 22):
# the same loop untraced, traced without --stacks and traced with it, in
# one run, modes interleaved, medians of REPS (default 3).
#
#   stacked    examples/heap-churn N main: each iteration grows the break
#              (memory_sbrk_more, a stacked probe: one uprobe perf event
#              sample with the user registers and 16 KiB of stack, read
#              and unwound beside the tracer) and trims it back
#              (memory_sbrk_less, not stacked).  Per stacked event =
#              (loop_ns with --stacks - loop_ns without) / N.  Goal: at
#              most 20 us.
#   hot        examples/heap-churn NT thread: a thread's heap grows and
#              shrinks (memory_heap_more/less: hot, aggregated by the
#              tracer).  memory_heap_less is never stacked; memory_heap_more
#              is sampled, 1 in MW_STACKS_HEAP_PERIOD hits per CPU (the perf
#              event's sample_period; the kernel only counts the others).
#              Each against the loop traced without --stacks, same run:
#                --stacks, heap_more not stacked (period 0): the rare
#                  probes' events alone;
#                --stacks, period 1000000: heap_more's event on, no sample
#                  taken (NT < 1000000): the cost of an un-sampled hit;
#                --stacks, the default period (64): what a user pays.
#              Per un-sampled hit = (count - off) / NT; goal: noise.
#
# The programs print "loop_ns NS", their loop alone: the tracer's start
# and stop are not in the figures, and "loop_cpu_ns NS", the looping
# thread's CPU time (its uprobe traps and perf samples are taken in its
# context; on a loaded machine the wall time also holds its waits for a
# CPU: the CPU ratios are the steadier).  Also printed: the samples --stacks
# kept and lost (its rings full: the reader unwinds ~30 us a sample, so a
# storm of stacked events outruns it; the program's cost is the same).
# Prints the lines for bench/run; nothing here asserts a bound.
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
MW=./build/mallocwatch
P=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
N=${N:-5000}
NT=${NT:-100000}
W=$(mktemp -d /tmp/mw-stacks-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -x examples/heap-churn ] || make -s -C examples heap-churn

# median FILE COLUMN: of a file of "loop_ns loop_cpu_ns" lines
median() { awk -v c="$2" '{ print $c }' "$1" | sort -n |
	awk '{ t[NR] = $1 } END { printf "%d", t[int((NR + 1) / 2)] }'; }
loop_ns() { awk '/^loop_ns / { w = $2 } /^loop_cpu_ns / { c = $2 } END { print w, c }' "$1"; }

# MODE N KIND: one run's loop_ns (stacks: also its Stacks line in $W/last)
run() {
	case $1 in
	untraced) $LOADER ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	traced) $MW -q -o /dev/null -c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	stacks) $MW -q --stacks -o "$W/sum" -c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null
		grep '^Stacks\|^  memory_heap_more' "$W/sum" >"$W/last" || : ;;
	off) MW_STACKS_HEAP_PERIOD=0 $MW -q --stacks -o /dev/null \
		-c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	count) MW_STACKS_HEAP_PERIOD=1000000 $MW -q --stacks -o /dev/null \
		-c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	esac
	loop_ns "$W/out"
}

# ONLY=heap: the hot loop's period 0 against period 1000000 alone (the
# cost of an un-sampled heap_more hit; more REPS in the same time)
for kind in main thread; do
	n=$N modes="untraced traced stacks"
	[ $kind = thread ] && n=$NT modes="untraced traced off count stacks"
	if [ "${ONLY:-}" = heap ]; then
		[ $kind = main ] && continue
		modes="off count"
	fi
	for m in $modes; do : >"$W/$kind.$m"; done
	for i in $(seq "$REPS"); do
		for m in $modes; do
			run $m $n $kind >>"$W/$kind.$m"
		done
	done
	for m in $modes; do
		eval "${kind}_$m=\$(median \"\$W/\$kind.\$m\" 1)"
		eval "${kind}_${m}_cpu=\$(median \"\$W/\$kind.\$m\" 2)"
	done
	cp "$W/last" "$W/$kind.last" 2>/dev/null || :
done

if [ "${ONLY:-}" = heap ]; then
	for m in off count; do
		printf '  heap-churn %s thread, --stacks, heap_more period %s: loop (wall CPU) ns: %s\n' \
			"$NT" "$([ $m = off ] && echo 0 || echo 1000000)" "$(tr '\n' ' ' <"$W/thread.$m")"
	done
	printf '  per un-sampled heap_more hit (medians of %s): wall %s us, CPU %s us; CPU x%s\n' "$REPS" \
		"$(echo "scale=3; ($thread_count - $thread_off) / $NT / 1000" | bc -l)" \
		"$(echo "scale=3; ($thread_count_cpu - $thread_off_cpu) / $NT / 1000" | bc -l)" \
		"$(echo "scale=3; $thread_count_cpu / $thread_off_cpu" | bc -l)"
	printf '  load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi

per=$(echo "scale=2; ($main_stacks - $main_traced) / $N / 1000" | bc -l)
base=$(echo "scale=2; ($main_traced - $main_untraced) / $N / 1000" | bc -l)
hot=$(echo "scale=3; $thread_stacks / $thread_traced" | bc -l)
hoff=$(echo "scale=3; $thread_off / $thread_traced" | bc -l)
hcount=$(echo "scale=3; $thread_count / $thread_traced" | bc -l)
unsampled=$(echo "scale=3; ($thread_count - $thread_off) / $NT / 1000" | bc -l)
sampled=$(echo "scale=3; ($thread_stacks - $thread_off) / $NT / 1000" | bc -l)
ms() { echo "$1 / 1000000" | bc -l; }
# the looping thread's CPU time (its traps and samples are in it; a loaded
# machine's waits for a CPU are not): the same ratios
choff=$(echo "scale=3; $thread_off_cpu / $thread_traced_cpu" | bc -l)
chcount=$(echo "scale=3; $thread_count_cpu / $thread_traced_cpu" | bc -l)
chot=$(echo "scale=3; $thread_stacks_cpu / $thread_traced_cpu" | bc -l)
cunsampled=$(echo "scale=3; ($thread_count_cpu - $thread_off_cpu) / $NT / 1000" | bc -l)
csampled=$(echo "scale=3; ($thread_stacks_cpu - $thread_off_cpu) / $NT / 1000" | bc -l)
printf '  stacked (heap-churn %s main, memory_sbrk_more): loop untraced %.1f ms, traced %.1f ms, --stacks %.1f ms\n' \
	"$N" "$(echo "$main_untraced / 1000000" | bc -l)" "$(echo "$main_traced / 1000000" | bc -l)" \
	"$(echo "$main_stacks / 1000000" | bc -l)"
printf '    per stacked event: %s us (goal <= 20 us); the tracer alone per iteration (2 hits): %s us\n' \
	"$per" "$base"
printf '    CPU time of the loop: per stacked event %s us\n' \
	"$(echo "scale=2; ($main_stacks_cpu - $main_traced_cpu) / $N / 1000" | bc -l)"
printf '    last --stacks run: %s\n' "$(sed 's/^Stacks (--stacks): //' "$W/main.last")"
printf '  hot probes (heap-churn %s thread, memory_heap_more/less): loop untraced %.1f ms, traced %.1f ms\n' \
	"$NT" "$(ms "$thread_untraced")" "$(ms "$thread_traced")"
printf '    --stacks, heap_more not stacked (period 0): %.1f ms: x%s\n' "$(ms "$thread_off")" "$hoff"
printf '    --stacks, heap_more counted, never sampled (period 1000000): %.1f ms: x%s; per un-sampled hit %s us\n' \
	"$(ms "$thread_count")" "$hcount" "$unsampled"
printf '    --stacks, heap_more sampled 1 in 64 (the default): %.1f ms: x%s; per heap_more hit, samples included, %s us\n' \
	"$(ms "$thread_stacks")" "$hot" "$sampled"
printf '    CPU time of the looping thread: untraced %.1f ms, traced %.1f ms; period 0 x%s, 1000000 x%s (per un-sampled hit %s us), 64 x%s (per hit %s us)\n' \
	"$(ms "$thread_untraced_cpu")" "$(ms "$thread_traced_cpu")" "$choff" "$chcount" "$cunsampled" \
	"$chot" "$csampled"
printf '    load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '    last --stacks run: %s\n' "$(sed 's/^Stacks (--stacks): //' "$W/thread.last" | tr '\n' ' ')"
echo "stacks per_event_us=$per hot_ratio=$hot heap_off_ratio=$hoff heap_count_ratio=$hcount heap_count_cpu_ratio=$chcount" \
	>"${STACKS_RESULT:-/dev/null}"
