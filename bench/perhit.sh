#!/bin/sh
# bench/perhit.sh - what one probe hit costs: mallocwatch's handlers
# against a bare handler that only counts, on the same probes, same run.
#
# Usage: bench/perhit.sh LABEL HITS_PER_ITER N FAMILY PROBE... -- PROGRAM ARGS
#
# PROGRAM (run under the probe-enabled glibc's loader) must print
# "loop_ns NS", its own loop's duration, so that the tracer's start and
# stop are not in the figure.  Three runs of the program, each held
# before its first instruction until the tracer is ready:
#   untraced  no tracer
#   bare      stapbpf on  probe process(LIBC).mark(PROBE) { mw_bare++ }
#             (this and ours as mallocwatch runs a script: the object
#             stap compiled, its internal map made an array, bpfobj.h)
#   ours      stapbpf on  `mallocwatch script -e FAMILY` (what mallocwatch
#             runs; only the handlers of that family)
#   bpftrace  (when bpftrace is installed) bpftrace 0.17, system-wide on
#             the same probes of the same libc (its -c cannot attach to
#             glibc's probes here), counting hits by (probe, tid):
#             usdt:LIBC:libc:PROBE { @[probe, tid] = count(); }
#   bpftracek with KEYED=1: bpftrace counting by what ours keys by, the
#             probe, the thread and every argument of the probe:
#             @[probe, tid, arg0, ...] = count() (setjmp: the jmp_buf, the
#             value, the return address, as ours keeps them)
#   bpftraces with STREAM=1: bpftrace printing every hit as ours streams
#             the families it streams (the arena's): the thread, the time
#             and every argument, through bpftrace's printf (a perf event
#             output, as stapbpf's printf):
#             usdt:LIBC:libc:PROBE { printf("T %d %lld %lld...\n", tid,
#             nsecs, arg0, ...); }
#   empty     (when bench/uprobe-empty.c builds) an empty BPF program on
#             the same sites, attached through the uprobe PMU as bpftrace
#             attaches: the uprobe's own cost, the floor of any BPF
#             tracer; the hit cost above it is the handler's
#   emptym    where mallocwatch arms its sites as a uprobe_multi link
#             (umulti-shim.so, Linux 6.6): the same empty program through
#             one such link, the floor of that way of attaching
#   emptyd    there too: the same empty program behind umulti-shim.so's
#             dispatcher (the cookie as the index of a tail call), as
#             every handler of ours runs through the link: what the
#             dispatcher adds to a hit, wall and alone
#   ourstf    there too: ours through stapbpf's own tracefs events
#             (MALLOCWATCH_ATTACH=tracefs), its handlers as stapbpf made
#             them: what the link and the counts added in place changed
#   floor     with KEYED=1: ours cut down to the pid filter, the argument
#             reads and one counter keyed by the first argument (the heap,
#             the jmp_buf, ...): the least a handler that keeps anything
#             per heap or per jmp_buf can do; ours against it shows what
#             our handlers add beyond that
# Per hit = (loop_ns traced - loop_ns untraced) / (HITS_PER_ITER x N).
# The handler alone is also read from the kernel (kernel.bpf_stats_enabled:
# run_time_ns / run_cnt of each BPF program in /proc/PID/fdinfo).
# Prints one line: LABEL, ns per hit bare and ours, ratio, and the
# handler-only ns.  Medians of REPS (default 3).
set -eu
cd "$(dirname "$0")/.."
label=$1 per=$2 n=$3 family=$4
shift 4
probes=""
while [ "$1" != "--" ]; do probes="$probes $1"; shift; done
shift
REPS=${REPS:-3}
MW=./build/mallocwatch
PREFIX=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}
P=$PREFIX/lib
LIBC=$P/libc.so.6
LOADER="$P/ld-linux-x86-64.so.2 --library-path $P:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
KSTUB=/var/cache/mallocwatch/kernel-$(uname -r)
SHIM=$PWD/build/memlock-shim.so
# the shims mallocwatch preloads into stapbpf: umulti-shim.so too when it
# arms a uprobe_multi link (its -v note says so)
UMULTI=
if $MW -v -o /dev/null -c /bin/true 2>&1 | grep -q 'one uprobe_multi link'; then
	UMULTI=1
fi
W=$(mktemp -d /tmp/mw-perhit.XXXXXX)
# A stapbpf that dies by SIGKILL (the stop below, or the bench killed)
# leaves its uprobe definitions (stapprobe_PID_N) in tracefs; they are
# not mallocwatch's, so no sweep of its removes them: the bench does.
UE=/sys/kernel/debug/tracing/uprobe_events
[ -f $UE ] || UE=/sys/kernel/tracing/uprobe_events
STARTED=
drop_defs() {	# PID...: the dead tracers' definitions
	for p in "$@"; do
		[ -e /proc/$p ] && continue
		for e in $(grep -o "stapprobe_${p}_[0-9]*" $UE 2>/dev/null || true); do
			echo "-:uprobes/$e" >>$UE 2>/dev/null || true
		done
	done
}
trap 'kill -KILL $STARTED 2>/dev/null || true; sleep 0.1; drop_defs $STARTED; rm -rf "$W"' EXIT
# PRIVATE=0: the cached glibc itself, shared with every tracer on the machine
if [ "${PRIVATE:-1}" = 1 ]; then
	. bench/privlibc.sh
	private_glibc "$W/glibc"
	export MW_GLIBC_PREFIX="$PREFIX"
fi

for p in $probes; do
	printf 'probe process("%s").mark("%s") { mw_bare++ }\n' "$LIBC" "$p"
done >"$W/bare.stp"
printf 'global mw_bare\nprobe begin { printf("MW 1 ready\\n") }\n' >>"$W/bare.stp"
# mallocwatch's script for the family, the handlers of the other probes
# left out (their hits would be counted in the handlers' times)
$MW script --runtime=bpf -e "$family" --libc "$LIBC" 2>/dev/null |
	awk -v keep="$probes" '
	BEGIN { n = split(keep, k, " "); for (i = 1; i <= n; i++) want[k[i]] = 1 }
	/^probe process\(".*"\)\.mark\("/ {
		name = $0; sub(/.*\.mark\("/, "", name); sub(/"\).*/, "", name)
		skip = !(name in want)
	}
	!skip { print }
	skip && /^}$/ { skip = 0 }' >"$W/ours.stp"
MODES="bare ours"
[ -z "$UMULTI" ] || MODES="$MODES ourstf"
BT=
if command -v bpftrace >/dev/null 2>&1; then
	BT=bpftrace
	for p in $probes; do
		printf 'usdt:%s:libc:%s { @[probe, tid] = count(); }\n' "$LIBC" "$p"
	done >"$W/bpftrace.bt"
	# bpftrace runs BEGIN once every probe is attached; its "Attaching
	# N probes..." comes before the attaching (a program released on it
	# ran partly untraced, and a SIGINT while it attached could leave
	# it running: the hang of the setjmp row)
	printf '%s\n' 'BEGIN { printf("MW 1 ready\n"); }' >>"$W/bpftrace.bt"
	# bpftrace on every argument of each probe (their count from its
	# first site's specs): counting by (probe, tid, arguments), or
	# printing each hit (tid, time, arguments)
	bt_args() {	# count|print
		$MW probes --libc "$LIBC" --json 2>/dev/null | python3 -c '
import json, sys
how, libc, probes = sys.argv[1], sys.argv[2], sys.argv[3:]
seen = {}
for s in json.load(sys.stdin)["sites"]:
    if s["name"] in probes and s["name"] not in seen:
        seen[s["name"]] = len(s["args"].split())
for p in probes:
    n = seen.get(p, 0)
    args = "".join(", arg%d" % i for i in range(n))
    if how == "count":
        print("usdt:%s:libc:%s { @[probe, tid%s] = count(); }" % (libc, p, args))
    else:
        print("usdt:%s:libc:%s { printf(\"T %%d %%lld%s\\n\", tid, nsecs%s); }"
              % (libc, p, " %lld" * n, args))
print("BEGIN { printf(\"MW 1 ready\\n\"); }")' "$1" "$LIBC" $probes
	}
	if [ "${KEYED:-0}" = 1 ]; then
		BT="bpftrace bpftracek"
		bt_args count >"$W/bpftracek.bt"
	fi
	if [ "${STREAM:-0}" = 1 ]; then
		BT="$BT bpftraces"
		bt_args print >"$W/bpftraces.bt"
	fi
fi
# the empty program, on the file offsets of the probes' sites
EMPTY=
if cc -O2 -Isrc/runtime -Isrc/protocol -o "$W/uprobe-empty" bench/uprobe-empty.c src/runtime/uprobe_multi_link.c -lbpf 2>/dev/null; then
	EMPTY=empty
	[ -z "$UMULTI" ] || EMPTY="empty emptym emptyd"
	$MW probes --libc "$LIBC" --json 2>/dev/null | python3 bench/sites.py "$LIBC" $probes \
		>"$W/sites"
fi
if [ "${KEYED:-0}" = 1 ]; then
	MODES="bare floor ours"
	[ -z "$UMULTI" ] || MODES="$MODES ourstf"
	awk '
	/^global mw_n/ { print "global mw_k[65536]" }
	/^probe process\(".*"\)\.mark\("/ { inmark = 1; done = 0; print; next }
	inmark && /^}$/ { inmark = 0; print; next }
	inmark && /^\t(pg = |pi = |ti = |if \(pi |ip = |bias = |a[0-9]+ = )/ { print; next }
	inmark { if (!done) print "\tmw_k[a1]++"; done = 1; next }
	{ print }' "$W/ours.stp" >"$W/floor.stp"
fi
# each object as mallocwatch runs it: stapbpf's internal map an array
# (src/runtime/bpfobj.h), done by mallocwatch's own code
cc -O2 -Isrc/runtime -o "$W/bpfobj-tune" bench/bpfobj-tune.c src/runtime/bpfobj.c -lelf
cp "$W/ours.stp" "$W/ourstf.stp"
for s in $MODES; do
	(cd "$W" && stap --runtime=bpf -g -w -r "$KSTUB" -p4 -m "mwbench_$s" "$s.stp" >/dev/null)
	"$W/bpfobj-tune" "$W/mwbench_$s.bo"
done

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
# wait for the tracer's ready line (in FILE, default tracer.out); a
# tracer that died or never got ready in 120 s ends the bench with its
# output
ready() {
	rf=${1:-$W/tracer.out}
	i=0
	until grep -q '^MW 1 ready' "$rf" 2>/dev/null; do
		if ! kill -0 $tracer 2>/dev/null || [ $i -ge 6000 ]; then
			echo "perhit: $mode tracer not ready:" >&2
			cat "$rf" >&2
			kill $tracer $prog 2>/dev/null || true
			exit 1
		fi
		i=$((i + 1))
		sleep 0.02
	done
}
# stop the tracer: SIGINT, SIGTERM after 10 s, SIGKILL after 20
stop() {
	kill -INT $tracer 2>/dev/null || true
	i=0
	while kill -0 $tracer 2>/dev/null; do
		i=$((i + 1))
		[ $i = 100 ] && kill -TERM $tracer 2>/dev/null
		[ $i = 200 ] && kill -KILL $tracer 2>/dev/null
		sleep 0.1
	done
	wait $tracer || true
	drop_defs $tracer
}
# start the tracer of $mode on $prog, its output into FILE; its pid in
# $tracer
launch() {
	out=$1
	if [ "$mode" = bpftrace ] || [ "$mode" = bpftracek ] || [ "$mode" = bpftraces ]; then
		bpftrace "$W/$mode.bt" >"$out" 2>&1 &
		tracer=$!; STARTED="$STARTED $tracer"
	elif [ "$mode" = empty ] || [ "$mode" = emptym ] || [ "$mode" = emptyd ]; then
		# shellcheck disable=SC2046
		"$W/uprobe-empty" $([ $mode = emptym ] && echo --multi) \
			$([ $mode = emptyd ] && echo --dispatch) "$LIBC" $(cat "$W/sites") \
			>"$out" 2>&1 &
		tracer=$!; STARTED="$STARTED $tracer"
	elif [ "$mode" = ourstf ] || [ -z "$UMULTI" ]; then
		LD_PRELOAD=$SHIM stapbpf -w -x $prog "$W/mwbench_$mode.bo" >"$out" 2>&1 &
		tracer=$!; STARTED="$STARTED $tracer"
	else
		LD_PRELOAD=$SHIM:$PWD/build/umulti-shim.so stapbpf -w -x $prog "$W/mwbench_$mode.bo" \
			>"$out" 2>&1 &
		tracer=$!; STARTED="$STARTED $tracer"
	fi
}
# the handlers' own time in tracer PID, from the kernel's per-program
# counters (ns a run, over all of its programs)
alone() {
	cat /proc/$1/fdinfo/* 2>/dev/null | awk '
		/^run_time_ns:/ { t += $2 } /^run_cnt:/ { c += $2 }
		END { if (c) printf "%.1f", t / c; else print 0 }'
}
# ours and bpftrace on the same hits: both attached, in the order given,
# then one run of the program; each one's handler alone.  The same hits,
# the same moment: what drifts from one run to the next (a run's figure
# moved by a third) hits both.  Prints "ours_ns bpftrace_ns"
side() {
	rm -f "$W/go" "$W/side-ours.out" "$W/side-bpftrace.out"
	mkfifo "$W/go"
	sh -c 'read _ <"$0"; exec "$@"' "$W/go" $LOADER "$@" >"$W/prog.out" &
	prog=$!
	for mode in $ORDER; do
		launch "$W/side-$mode.out"
		ready "$W/side-$mode.out"
		eval "pid_$mode=\$tracer"
	done
	echo >"$W/go"
	wait $prog
	echo "$(alone $pid_ours) $(alone $pid_bpftrace)"
	for tracer in $pid_ours $pid_bpftrace; do stop; done
}
# one run: $1 = bare | ours | none; prints "loop_ns handler_ns"
one() {
	# (the last tracer's ready line must not pass for this one's: the
	# redirection below truncates the file only once the tracer's shell
	# has forked, and an empty program's run was seen released before
	# its uprobes were attached)
	rm -f "$W/go" "$W/tracer.out"
	mkfifo "$W/go"
	sh -c 'read _ <"$0"; exec "$@"' "$W/go" $LOADER "$@" >"$W/prog.out" &
	prog=$!
	if [ "$mode" = none ]; then
		echo >"$W/go"
		wait $prog
		echo "$(awk '/^loop_ns/ { print $2 }' "$W/prog.out") 0"
		return
	fi
	launch "$W/tracer.out"
	ready
	echo >"$W/go"
	wait $prog
	h=$(alone $tracer)
	stop
	echo "$(awk '/^loop_ns/ { print $2 }' "$W/prog.out") $h"
}
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# wall time with the kernel's statistics off (they cost two clock reads a
# run), interleaved so that a change in the machine's load hits all three
sysctl -q -w kernel.bpf_stats_enabled=0
for i in $(seq "$REPS"); do
	for mode in none $EMPTY $MODES $BT; do one "$@" >>"$W/$mode.txt"; done
done
# the handlers alone, statistics on: the median of SREPS runs (default
# REPS), interleaved as above, and each mode's ratio paired by round
sysctl -q -w kernel.bpf_stats_enabled=1
# (REPS rounds, as the wall times: one run's figure moved by a third
# between runs of one build; SREPS=1 for a quick look)
sreps=${SREPS:-$REPS}
# the empty program alone through the link, with the dispatcher and without
SEMPTY=
case "$EMPTY" in *emptyd*) [ "$per" = 0 ] || SEMPTY="emptym emptyd" ;; esac
for i in $(seq $sreps); do
	for mode in $MODES $BT $SEMPTY; do one "$@" | cut -d' ' -f2 >>"$W/$mode.allstats"; done
done
for mode in $MODES $BT $SEMPTY; do med <"$W/$mode.allstats" >"$W/$mode.stats"; done
# side by side (bench/perhit.sh's other figures are runs one after the
# other): SREPS rounds, bpftrace attached first in odd ones, ours in even
if [ -n "$BT" ]; then
	for i in $(seq $sreps); do
		ORDER="bpftrace ours"
		[ $((i % 2)) = 0 ] && ORDER="ours bpftrace"
		echo "$(side "$@") $i" >>"$W/side.txt"
	done
fi
sysctl -q -w kernel.bpf_stats_enabled="$old_stats"
hits=$((per * n))
base=$(cut -d' ' -f1 "$W/none.txt" | med)
bare=$(cut -d' ' -f1 "$W/bare.txt" | med)
ours=$(cut -d' ' -f1 "$W/ours.txt" | med)
hb=$(cat "$W/bare.stats")
ho=$(cat "$W/ours.stats")
floor="" hf=0 bt="" hbt=0 empty="" emptym="" tf="" htf=0
[ -z "$EMPTY" ] || empty=$(cut -d' ' -f1 "$W/empty.txt" | med)
[ ! -f "$W/emptym.txt" ] || emptym=$(cut -d' ' -f1 "$W/emptym.txt" | med)
emptyd="" hem=0 hed=0
[ ! -f "$W/emptyd.txt" ] || emptyd=$(cut -d' ' -f1 "$W/emptyd.txt" | med)
[ ! -f "$W/emptym.stats" ] || hem=$(cat "$W/emptym.stats")
[ ! -f "$W/emptyd.stats" ] || hed=$(cat "$W/emptyd.stats")
if [ -f "$W/ourstf.txt" ]; then
	tf=$(cut -d' ' -f1 "$W/ourstf.txt" | med)
	htf=$(cat "$W/ourstf.stats")
fi
if [ -n "$BT" ]; then
	bt=$(cut -d' ' -f1 "$W/bpftrace.txt" | med)
	hbt=$(cat "$W/bpftrace.stats")
fi
if [ -f "$W/floor.txt" ]; then
	floor=$(cut -d' ' -f1 "$W/floor.txt" | med)
	hf=$(cat "$W/floor.stats")
fi
awk -v l="$label" -v h=$hits -v b0="$base" -v b="$bare" -v o="$ours" -v f="$floor" -v hb=$hb \
	-v ho=$ho -v hf=$hf -v bt="$bt" -v hbt=$hbt -v e="$empty" -v em="$emptym" -v tf="$tf" \
	-v htf=$htf -v ed="$emptyd" -v hem="$hem" -v hed="$hed" 'BEGIN {
	if (b0 == "") {	# no loop_ns: the handlers alone
		printf "  %-30s %9s       (no loop timing)                       handler alone: bare %5.0f ns, ours %5.0f ns (x%.2f)",
			l, "", hb, ho, (hb > 0 ? ho / hb : 0)
		if (hf > 0)
			printf "; floor (one keyed count) %5.0f ns (x%.2f)", hf, hf / hb
		if (hbt > 0)
			printf "; bpftrace %5.0f ns (ours x%.2f of it)", hbt, ho / hbt
		if (htf > 0)
			printf "; ours through tracefs events %5.0f ns", htf
		printf "\n"
		exit
	}
	pb = (b - b0) / h; po = (o - b0) / h
	printf "  %-30s %9d hits  bare %6.3f us/hit  ours %6.3f us/hit  x%.2f   handler alone: bare %5.0f ns, ours %5.0f ns (x%.2f)",
		l, h, pb / 1000, po / 1000, po / pb, hb, ho, (hb > 0 ? ho / hb : 0)
	if (f != "") {
		pf = (f - b0) / h
		printf "; floor (one keyed count) %6.3f us/hit x%.2f, alone %5.0f ns (x%.2f)", pf / 1000,
			pf / pb, hf, hf / hb
	}
	if (bt != "") {
		pt = (bt - b0) / h
		printf "; bpftrace %6.3f us/hit, alone %5.0f ns: ours x%.2f of bpftrace per hit",
			pt / 1000, hbt, po / pt
	}
	if (e != "") {	# the uprobe alone; what each handler adds above it
		pe = (e - b0) / h
		printf "; empty program (the uprobe alone) %6.3f us/hit: above it ours %+.3f",
			pe / 1000, (po - pe) / 1000
		if (bt != "")
			printf ", bpftrace %+.3f", (pt - pe) / 1000
	}
	if (em != "") {	# the same through one uprobe_multi link
		pm = (em - b0) / h
		printf "; empty program through a uprobe_multi link %6.3f us/hit: above it ours %+.3f",
			pm / 1000, (po - pm) / 1000
	}
	if (ed != "") {	# and behind the dispatcher ours runs behind
		pd = (ed - b0) / h
		printf "; behind the dispatcher %6.3f us/hit (%+.3f)", pd / 1000, (pd - pm) / 1000
		if (hem > 0 && hed > 0)
			printf ", alone %5.0f ns against %5.0f without", hed, hem
	}
	if (tf != "") {	# ours attached by stapbpf itself (tracefs events)
		ptf = (tf - b0) / h
		printf "; ours through tracefs events %6.3f us/hit (the link x%.2f of it), alone %5.0f ns",
			ptf / 1000, po / ptf, htf
	}
	printf "\n"
}'
if [ -f "$W/bpftracek.txt" ]; then
	awk -v h=$hits -v b0="$base" -v o="$ours" -v k="$(cut -d' ' -f1 "$W/bpftracek.txt" | med)" \
		-v ho=$ho -v hk="$(cat "$W/bpftracek.stats")" 'BEGIN {
		if (b0 == "") {
			printf "    bpftrace keyed as ours (probe, tid, every argument): alone %5.0f ns, ours x%.2f of it\n",
				hk, (hk > 0 ? ho / hk : 0)
			exit
		}
		pk = (k - b0) / h; po = (o - b0) / h
		printf "    bpftrace keyed as ours (probe, tid, every argument) %6.3f us/hit, alone %5.0f ns: ours x%.2f of it per hit, x%.2f alone\n",
			pk / 1000, hk, po / pk, (hk > 0 ? ho / hk : 0)
	}'
fi
if [ -f "$W/bpftraces.stats" ]; then
	awk -v h=$hits -v b0="$base" -v o="$ours" -v k="$(cut -d' ' -f1 "$W/bpftraces.txt" | med)" \
		-v ho=$ho -v hk="$(cat "$W/bpftraces.stats")" 'BEGIN {
		printf "    bpftrace streaming every hit (printf of tid, time, every argument):"
		if (b0 != "" && h > 0) {
			pk = (k - b0) / h; po = (o - b0) / h
			printf " %6.3f us/hit, ours x%.2f of it per hit;", pk / 1000, po / pk
		}
		printf " alone %5.0f ns, ours x%.2f of it\n", hk, (hk > 0 ? ho / hk : 0)
	}'
fi
# the same ratios rep by rep: each traced run against the untraced run of
# its own round (the machine's speed drifts between rounds; a ratio of
# medians mixes rounds), median and range over the rounds
mrange() {	# ratios, one a line: "xMEDIAN (xMIN-xMAX)" of them, or nothing
	sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "x%.2f (x%.2f-x%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
pair() {	# A B: "xMEDIAN (xMIN-xMAX)" of (A - none) / (B - none)
	[ -f "$W/$1.txt" ] && [ -f "$W/$2.txt" ] || return 0
	paste -d' ' "$W/none.txt" "$W/$1.txt" "$W/$2.txt" |
		awk '$5 - $1 > 0 { print ($3 - $1) / ($5 - $1) }' | mrange
}
# the handlers alone, paired by round the same way
pair_alone() {	# A B: "xMEDIAN (xMIN-xMAX)" of A's handler alone / B's
	[ -f "$W/$1.allstats" ] && [ -f "$W/$2.allstats" ] || return 0
	paste -d' ' "$W/$1.allstats" "$W/$2.allstats" | awk '$2 > 0 { print $1 / $2 }' | mrange
}
if [ -f "$W/side.txt" ]; then
	# the two handlers run one after the other in an order that follows
	# the attach order (a uprobe's consumers are a list), and the order
	# favours one (the heap family: x0.85 one way, x1.04 the other): the
	# figure is the geometric mean of the two orders' medians
	awk '$2 > 0 { print $1 / $2, $3 % 2 }' "$W/side.txt" | sort -n | awk '
		{ r[$2, ++n[$2]] = $1; all[++na] = $1; below += $1 < 1 }
		function med(o) { return r[o, int((n[o] + 1) / 2)] }
		END {
			if (!na) exit
			f = n[0] && n[1] ? sqrt(med(0) * med(1)) : all[int((na + 1) / 2)]
			printf "    side by side, ours and bpftrace on the same hits (bpf_stats), %d runs: ours/bpftrace alone x%.2f", na, f
			printf " (median x%.2f with bpftrace attached first, x%.2f with ours; runs x%.2f-x%.2f), below in %d of %d\n",
				n[1] ? med(1) : 0, n[0] ? med(0) : 0, all[1], all[na], below, na
		}'
	awk '$2 > 0 { printf "      run %d (%s first): ours %5.0f ns, bpftrace %5.0f ns (x%.2f)\n", $3,
		($3 % 2 ? "bpftrace" : "ours"), $1, $2, $1 / $2 }' "$W/side.txt"
fi
if [ "$sreps" -gt 1 ]; then
	line="    handlers alone, paired by round, median (range) of $sreps:"
	[ -z "$BT" ] || line="$line ours/bpftrace $(pair_alone ours bpftrace);"
	[ ! -f "$W/bpftracek.allstats" ] || line="$line ours/bpftrace keyed as ours $(pair_alone ours bpftracek);"
	[ ! -f "$W/floor.allstats" ] || line="$line ours/floor $(pair_alone ours floor);"
	[ ! -f "$W/emptyd.allstats" ] || line="$line empty behind the dispatcher/link $(pair_alone emptyd emptym)"
	echo "$line"
fi
if [ -n "$base" ]; then
	line="    paired by round, median (range) of $REPS:"
	[ -z "$BT" ] || line="$line ours/bpftrace $(pair ours bpftrace);"
	[ ! -f "$W/bpftracek.txt" ] || line="$line ours/bpftrace keyed as ours $(pair ours bpftracek);"
	[ ! -f "$W/ourstf.txt" ] || line="$line ours link/tracefs $(pair ours ourstf);"
	[ ! -f "$W/emptym.txt" ] || line="$line empty link/PMU $(pair emptym empty);"
	[ ! -f "$W/emptyd.txt" ] || line="$line empty behind the dispatcher/link $(pair emptyd emptym);"
	[ -z "$EMPTY" ] || line="$line bpftrace/empty $(pair bpftrace empty); ours/empty $(pair ours empty)"
	echo "$line"
fi
