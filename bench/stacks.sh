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
#   unstacked  examples/heap-churn N thread: a thread's heap grows and
#              shrinks (memory_heap_more/less: hot, aggregated, never
#              stacked).  --stacks must add nothing: the ratio of the loop
#              with --stacks to the loop without is the figure (goal 1.0).
#
# The programs print "loop_ns NS", their loop alone: the tracer's start
# and stop are not in the figures.  Also printed: the samples --stacks
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

median() { sort -n | awk '{ t[NR] = $1 } END { printf "%d", t[int((NR + 1) / 2)] }'; }
loop_ns() { sed -n 's/^loop_ns //p' "$1"; }

# MODE N KIND: one run's loop_ns (stacks: also its Stacks line in $W/last)
run() {
	case $1 in
	untraced) $LOADER ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	traced) $MW -q -o /dev/null -c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null ;;
	stacks) $MW -q --stacks -o "$W/sum" -c ./examples/heap-churn "$2" "$3" >"$W/out" 2>/dev/null
		grep '^Stacks' "$W/sum" >"$W/last" || : ;;
	esac
	loop_ns "$W/out"
}

for kind in main thread; do
	n=$N
	[ $kind = thread ] && n=$NT
	: >"$W/$kind.untraced"; : >"$W/$kind.traced"; : >"$W/$kind.stacks"
	for i in $(seq "$REPS"); do
		for m in untraced traced stacks; do
			run $m $n $kind >>"$W/$kind.$m"
		done
	done
	for m in untraced traced stacks; do
		eval "${kind}_$m=\$(median <\"\$W/\$kind.\$m\")"
	done
	[ $kind = main ] && cp "$W/last" "$W/main.last"
done

per=$(echo "scale=2; ($main_stacks - $main_traced) / $N / 1000" | bc -l)
base=$(echo "scale=2; ($main_traced - $main_untraced) / $N / 1000" | bc -l)
hot=$(echo "scale=3; $thread_stacks / $thread_traced" | bc -l)
printf '  stacked (heap-churn %s main, memory_sbrk_more): loop untraced %.1f ms, traced %.1f ms, --stacks %.1f ms\n' \
	"$N" "$(echo "$main_untraced / 1000000" | bc -l)" "$(echo "$main_traced / 1000000" | bc -l)" \
	"$(echo "$main_stacks / 1000000" | bc -l)"
printf '    per stacked event: %s us (goal <= 20 us); the tracer alone per iteration (2 hits): %s us\n' \
	"$per" "$base"
printf '    last --stacks run: %s\n' "$(sed 's/^Stacks (--stacks): //' "$W/main.last")"
printf '  unstacked hot probe (heap-churn %s thread, memory_heap_more/less): traced %.1f ms, --stacks %.1f ms: x%s (goal 1.0)\n' \
	"$NT" "$(echo "$thread_traced / 1000000" | bc -l)" "$(echo "$thread_stacks / 1000000" | bc -l)" "$hot"
echo "stacks per_event_us=$per hot_ratio=$hot" >"${STACKS_RESULT:-/dev/null}"
