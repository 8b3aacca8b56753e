#!/bin/sh
# bench/real.sh - what tracing costs real programs: wall and CPU time of
# each program untraced, under mallocwatch and under its peers, measured
# in the same run (issue 21 item 2).
#
# Usage: bench/real.sh [PROGRAM...]   (xz pbzip2 sort python; default all)
#
# Programs, on input generated here (sizes for a few seconds on 2 cores;
# SCALE=2 doubles them):
#   xz       xz -T2 -c of base64 text (random bytes, so it compresses ~25%)
#   pbzip2   pbzip2 -p4 -c of the same
#   sort     sort --parallel=4 -S 64M of random numbers, one a line
#   python   python3, 4 threads (started at a barrier) building and
#            dropping dicts, lists and strings of mixed sizes
# Modes, each program under the probe-enabled glibc (as mallocwatch -c
# runs it), interleaved so that the machine's load hits each alike:
#   untraced    the program alone, through the glibc's loader
#   untraced2   the same again, in the same round: its ratio to untraced
#               (paired by round) is the machine's own spread, what no
#               tracer's figure can be read more finely than
#   mw          mallocwatch -q -o /dev/null -c (defaults: every family,
#               the 0.1 s sampler, the exit snapshot, the report)
#   start       mallocwatch -q -o /dev/null -c /bin/true: its start
#               (the compile cache, arming every site, which waits behind
#               every uprobe removal under way on the machine) and stop;
#               -START/U is mallocwatch's wall less this, over untraced
#   mw-e        the same with -e $MW_CHEAP (default arena,heap,sbrk: what
#               arenas, heaps and the break do, no setjmp and no
#               mallopt/tunable/retry sites)
#   heaptrack   heaptrack -o FILE (its LD_PRELOAD; the system glibc)
#   bpftrace    bpftrace 0.17 (when installed) system-wide on the probes
#               mw traces, counting by (probe, tid); its attach and its
#               exit are not in the figure, only the program's run; its
#               start (launch to BEGIN) is printed beside
#   empty       (when bench/uprobe-empty.c builds) an empty BPF program
#               on the sites mallocwatch arms by default, attached as
#               mallocwatch attaches them (one uprobe_multi link where
#               it uses one, else the uprobe PMU), timed as bpftrace is:
#               what the uprobe traps alone cost the program, the floor
#               of any tracer of those probes
# and the probe hits of one more, untimed, mallocwatch run (what every
# tracer of those probes pays a uprobe trap for: bench/perhit.sh's
# empty program measures one)
# The mallocwatch figures are the whole command: start (compile cache,
# attach), the run, the exit snapshot, the report, the exit.
# Prints per program: each mode's median wall and CPU (user+sys of the
# command and its children) seconds and the wall ratio to untraced.
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
SCALE=${SCALE:-1}
MW=${MW:-./build/mallocwatch}
MW_CHEAP=${MW_CHEAP:-arena,heap,sbrk}
PREFIX=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}
P=$PREFIX/lib
LIBC=$P/libc.so.6
LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
[ "${DEBUG:-}" ] && set -x
PROGS=${*:-xz pbzip2 sort python}
W=$(mktemp -d /tmp/mw-real.XXXXXX)
trap 'rm -rf "$W"' EXIT
# PRIVATE=0: the cached glibc itself, shared with every tracer on the machine
if [ "${PRIVATE:-1}" = 1 ]; then
	. bench/privlibc.sh
	private_glibc "$W/glibc"
	export MW_GLIBC_PREFIX="$PREFIX"
fi

# inputs
head -c $((9000000 * SCALE)) /dev/urandom | base64 >"$W/text"
head -c $((30000000 * SCALE)) /dev/urandom | base64 >"$W/bz"
awk -v n=$((1500000 * SCALE)) 'BEGIN { srand(1); for (i = 0; i < n; i++)
	printf "%d %.6f\n", int(rand() * 1e9), rand() }' >"$W/lines"
cat >"$W/threads.py" <<'EOF'
import sys, threading
n = int(sys.argv[1])
go = threading.Barrier(4)
def work(seed):
    go.wait()
    keep = []
    for i in range(n):
        d = {j: "x" * ((i * 7 + j * seed) % 3000) for j in range(20)}
        keep.append([d, bytearray((i * 131 + seed) % 70000)])
        if len(keep) > 200:
            del keep[:100]
t = [threading.Thread(target=work, args=(s,)) for s in range(1, 5)]
for x in t: x.start()
for x in t: x.join()
EOF

cmd() {	# the program's command line
	case $1 in
	xz) echo "/usr/bin/xz -T2 -c $W/text" ;;
	pbzip2) echo "/usr/bin/pbzip2 -p4 -c $W/bz" ;;
	sort) echo "/usr/bin/sort --parallel=4 -S 64M -n $W/lines" ;;
	python) echo "/usr/bin/python3 $W/threads.py $((30000 * SCALE))" ;;
	esac
}

# the probes mallocwatch traces by default, for bpftrace
probes=$($MW script --runtime=bpf --libc "$LIBC" 2>/dev/null |
	sed -n 's/^probe process(".*")\.mark("\([a-z_0-9]*\)").*/\1/p' | sort -u)
BT=
if command -v bpftrace >/dev/null 2>&1; then
	BT=bpftrace
	for p in $probes; do
		printf 'usdt:%s:libc:%s { @[probe, tid] = count(); }\n' "$LIBC" "$p"
	done >"$W/bt.bt"
	printf '%s\n' 'BEGIN { printf("MW 1 ready\n"); }' >>"$W/bt.bt"
fi

# the empty program on the same sites (bench/perhit.sh's): the floor
EMPTY= MULTI=
if cc -O2 -Isrc/runtime -Isrc/protocol -o "$W/uprobe-empty" bench/uprobe-empty.c src/runtime/uprobe_multi_link.c -lbpf \
	2>/dev/null; then
	# shellcheck disable=SC2086
	$MW probes --libc "$LIBC" --json 2>/dev/null | python3 bench/sites.py "$LIBC" $probes \
		>"$W/sites"
	[ -s "$W/sites" ] && EMPTY=empty
	$MW -v -o /dev/null -c /bin/true 2>&1 | grep -q 'one uprobe_multi link' && MULTI=--multi
fi

# one timed run: prints "wall cpu"
timed() {
	/usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >/dev/null 2>"$W/err" ||
		{ echo "real: '$*' failed:" >&2; tail -3 "$W/err" >&2; }
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$W/time"
}
# The tracers a run left removing their uprobes (stapbpf goes on after
# mallocwatch has exited, ~0.11 s a site): the next run's arming would
# wait behind that removal (the kernel serializes both), so each run
# starts when the tracers the bench's earlier runs left are gone (at
# most 30 s), outside its timing.
tracers() { pgrep -x stapbpf; pgrep -x bpftrace; pgrep -x uprobe-empty; }
settle() {
	i=0
	while [ -s "$W/left" ] && [ $i -lt 300 ]; do
		for p in $(cat "$W/left"); do
			kill -0 $p 2>/dev/null && echo $p
		done >"$W/left.now"
		mv "$W/left.now" "$W/left"
		[ -s "$W/left" ] && sleep 0.1
		i=$((i + 1))
	done
	: >"$W/left"
}
one() {	# MODE PROGRAM
	settle
	tracers | sort >"$W/before" || true
	one_run "$@"
	tracers | sort | comm -13 "$W/before" - >>"$W/left" || true
}
one_run() {
	c=$(cmd $2)
	case $1 in
	untraced|untraced2) timed $LOADER $c ;;
	mw) timed $MW -q -o /dev/null -c $c ;;
	start) timed $MW -q -o /dev/null -c /bin/true ;;
	mw-e) timed $MW -q -o /dev/null -e "$MW_CHEAP" -c $c ;;
	heaptrack) timed heaptrack -o "$W/ht" $c; rm -f "$W"/ht* ;;
	empty)
		# shellcheck disable=SC2046,SC2086
		: >"$W/empty.out"	# there before the grep below
		"$W/uprobe-empty" $MULTI "$LIBC" $(cat "$W/sites") >"$W/empty.out" 2>&1 &
		ue=$!
		until grep -q '^MW 1 ready' "$W/empty.out"; do
			kill -0 $ue 2>/dev/null || { cat "$W/empty.out" >&2; exit 1; }
			sleep 0.01
		done
		timed $LOADER $c
		kill -INT $ue
		wait $ue || true ;;
	bpftrace)
		t0=$(date +%s%N)
		bpftrace "$W/bt.bt" >"$W/bt.out" 2>&1 &
		bt=$!
		until grep -q '^MW 1 ready' "$W/bt.out"; do
			kill -0 $bt 2>/dev/null || { cat "$W/bt.out" >&2; exit 1; }
			sleep 0.01
		done
		# its start, launch to BEGIN (every probe attached), to set
		# beside mallocwatch's (start): not in its figure
		echo "$(( ($(date +%s%N) - t0) / 1000000 ))" >>"$W/$2.btstart"
		timed $LOADER $c
		kill -INT $bt
		i=0
		while kill -0 $bt 2>/dev/null; do
			i=$((i + 1)); [ $i = 100 ] && kill -TERM $bt; sleep 0.1
		done
		wait $bt || true ;;
	esac
}
med() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }

MODES=${MODES:-"untraced untraced2 start mw mw-e heaptrack $BT $EMPTY"}
echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-8s %-10s %8s %8s %7s %7s %9s\n' PROGRAM MODE WALL CPU "WALL/U" "CPU/U" "-START/U"
for prog in $PROGS; do
	for i in $(seq "$REPS"); do
		# each round starts one mode further on, so that no mode is
		# always the one after a pause or after a given other
		set -- $MODES
		k=$(( (i - 1) % $# ))
		while [ $k -gt 0 ]; do m=$1; shift; set -- "$@" "$m"; k=$((k - 1)); done
		for m in "$@"; do one $m $prog >>"$W/$prog.$m"; done
	done
	uw=$(cut -d' ' -f1 "$W/$prog.untraced" | med)
	uc=$(cut -d' ' -f2 "$W/$prog.untraced" | med)
	sw=0
	[ -f "$W/$prog.start" ] && sw=$(cut -d' ' -f1 "$W/$prog.start" | med)
	for m in $MODES; do
		w=$(cut -d' ' -f1 "$W/$prog.$m" | med)
		c=$(cut -d' ' -f2 "$W/$prog.$m" | med)
		# mallocwatch's wall less its start and stop (-c /bin/true's
		# wall in the same rounds): the run's own cost
		r=""
		case $m in mw*) r=$(printf '%.3f' "$(echo "($w - $sw) / $uw" | bc -l)") ;; esac
		printf '  %-8s %-10s %7.2fs %7.2fs %7.3f %7.3f %9s\n' $prog $m $w $c \
			"$(echo "$w / $uw" | bc -l)" "$(echo "$c / $uc" | bc -l)" "$r"
	done
	# each mode's wall against the untraced run of its own round (the
	# machine's drift from round to round cancels): median and range
	paired=""
	for m in $MODES; do
		case $m in untraced|start) continue ;; esac
		paired="$paired$(paste -d' ' "$W/$prog.$m" "$W/$prog.untraced" |
			awk '{ print $1 / $3 }' | sort -n | awk -v m=$m '{ v[NR] = $1 }
			END { printf "%s x%.3f (x%.3f-x%.3f); ", m, v[int((NR + 1) / 2)], v[1], v[NR] }')"
	done
	echo "  $prog paired by round, median (range) of $REPS: $paired"
	# what any tracer of the same probes pays in traps: the probe hits
	# of one more (untimed) mallocwatch run, by probe
	if $MW -q -o /dev/null --json "$W/$prog.json" -c $(cmd $prog) >/dev/null 2>&1; then
		python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["events"]
top = sorted(((n, p) for p, n in e["by_probe"].items() if n), reverse=True)[:3]
print("  %-8s probe hits in one run: %d (%s)" % (sys.argv[2], e["total"],
      ", ".join("%s %d" % (p, n) for n, p in top)))' "$W/$prog.json" $prog
	fi
	[ -f "$W/$prog.btstart" ] &&
		printf '  %-8s bpftrace start (launch to BEGIN, not in its figure): %.2fs\n' $prog \
			"$(echo "$(med <"$W/$prog.btstart") / 1000" | bc -l)"
done
echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
