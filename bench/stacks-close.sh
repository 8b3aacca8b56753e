#!/bin/sh
# bench/stacks-close.sh - what opening and closing --stacks' perf events
# cost (issue 22).  Each uprobe perf event's close waits for the kernel to
# remove its uprobe, so mallocwatch leaves the closes to a detached
# process (src/stacks/stacks.c, close_behind: a grandchild, session
# leader, that holds the events and exits: the closes happen in its exit).
#
#   closer   how long that process lives after `--stacks -c true` (the
#            new session leaders named mallocwatch whose parent is init,
#            polled every 20 ms in /proc): the closes of SITES x CPUs
#            events.
#   opens    the run's perf_event_open(2) calls, each timed by strace -T
#            (mallocwatch's main thread alone: its -c child is not
#            traced by strace, so mallocwatch may ptrace it): in a run
#            started with no closer of ours at work ("idle") and in one
#            started at once after another ("busy", that one's closer at
#            work).  The difference is the delay a closer gives the next
#            run.
# Pairs interleaved, REPS of them (default 3), medians.  Other people's
# uprobes come and go on a shared machine: the load average is printed.
# Prints lines for bench/run; asserts nothing.
set -eu
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
MW=./build/mallocwatch
W=$(mktemp -d /tmp/mw-stacks-close.XXXXXX)
trap 'rm -rf "$W"' EXIT
command -v strace >/dev/null || { echo "  (no strace: skipped)"; exit 0; }

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ t[NR] = $1 } END { printf "%s", t[int((NR + 1) / 2)] }'; }

# session leaders named mallocwatch whose parent is init: closers
closers() {
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$(cat /proc/$p/comm 2>/dev/null)" = mallocwatch ] || continue
		awk -v p="$p" '{ sub(/.*\) /, "") } $2 == 1 && $4 == p { ok = 1 } END { exit !ok }' \
			/proc/$p/stat 2>/dev/null && echo "$p"
	done
}
# one run under strace: "OPENS_S N" (the perf_event_open calls' seconds)
traced_run() {
	strace -T -e trace=perf_event_open -o "$W/st" $MW -q --stacks -o /dev/null -c true \
		>/dev/null 2>&1 || :
	awk -F'<' '/^perf_event_open/ { sub(/>.*/, "", $NF); n++; s += $NF }
		END { printf "%.3f %d\n", s, n }' "$W/st"
}
# run; then how long its new closer lives, ms
closer_life() {
	closers >"$W/before"
	$MW -q --stacks -o /dev/null -c true >/dev/null 2>&1 || :
	t0=$(now_ms)
	closers | grep -vxF -f "$W/before" >"$W/new" || :
	[ -s "$W/new" ] || { echo 0; return; }
	while [ -n "$(for p in $(cat "$W/new"); do [ -d /proc/$p ] && echo $p; done)" ]; do
		sleep 0.02
	done
	echo $(( $(now_ms) - t0 ))
}
quiet() {	# until no closer is left (at most 120 s)
	_i=0
	while [ -n "$(closers)" ] && [ $_i -lt 6000 ]; do sleep 0.02; _i=$((_i + 1)); done
}

: >"$W/life"; : >"$W/idle"; : >"$W/busy"
for i in $(seq "$REPS"); do
	quiet
	closer_life >>"$W/life"
	quiet
	traced_run >>"$W/idle"
	$MW -q --stacks -o /dev/null -c true >/dev/null 2>&1 || :
	traced_run >>"$W/busy"	# at once: the run before's closer at work
done
n=$(awk '{ print $2 }' "$W/idle" | median)
printf '  closer: lives %s ms after a --stacks -c true run (%s events; medians of %s: %s)\n' \
	"$(median <"$W/life")" "$n" "$REPS" "$(tr '\n' ' ' <"$W/life")"
printf '  the next run'"'"'s %s perf_event_open calls: %s s with no closer at work, %s s at once after a run (%s / %s)\n' \
	"$n" "$(awk '{ print $1 }' "$W/idle" | median)" "$(awk '{ print $1 }' "$W/busy" | median)" \
	"$(awk '{ printf "%s ", $1 }' "$W/idle")" "$(awk '{ printf "%s ", $1 }' "$W/busy")"
printf '  load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
