#!/bin/sh
# bench/repeat.sh - runs that follow each other (issue 21, item 3): -c
# /bin/true five times, as --repeat 5 (one tracer session, armed once) and
# as five separate invocations back to back, and as five separate
# invocations with --linger (MALLOCWATCH_LINGER=LINGER: the first arms a
# session that serves the other four), against baselines measured here:
# untraced /bin/true five times, and one traced run on a machine with no
# tracer detaching.  For the lingering runs also the time from the last
# run's end until the session, its tracer and its uprobe definitions are
# gone (LINGER s idle, then the removal).  Where mallocwatch arms its
# sites as a uprobe_multi link (umulti-shim.so), the five separate runs
# are also timed through stapbpf's own tracefs events.  Each lingering
# series gets a rendezvous directory of its own (MALLOCWATCH_LINGER_DIR),
# so its first run arms.  Prints the figures and "goal ..." lines (bench/run collects
# them).
#
# SETTLE: the command that waits until no tracer of ours is left
# removing its uprobes (bench/run: mallocwatch --cleanup); REPS: medians
# of that many (default 3).  The load average is printed: other tracers
# on the machine remove uprobes too, and each removal holds the kernel's
# lock that arming needs (docs/platform.md).
set -eu
cd "$(dirname "$0")/.."
MW=./build/mallocwatch
REPS=${REPS:-3}
LINGER=${LINGER:-5}
EVENTS=/sys/kernel/tracing/uprobe_events
[ -r $EVENTS ] || EVENTS=/sys/kernel/debug/tracing/uprobe_events
SETTLE=${SETTLE:-"$MW --cleanup"}
now() { date +%s.%N; }
median() { sort -n | awk '{ t[NR] = $1 } END { printf "%.3f", t[int((NR + 1) / 2)] }'; }
settle() { $SETTLE >/dev/null 2>&1 || true; }
since() { echo "$(now) - $1" | bc -l; }
# median over REPS of "$@" run five times in a row, settled before each
five() {
	for r in $(seq "$REPS"); do
		settle
		s=$(now)
		for i in 1 2 3 4 5; do "$@" >/dev/null 2>&1 || true; done
		since "$s"
	done | median
}
untraced=$(five /bin/true)
single=$(for r in $(seq "$REPS"); do
	settle; s=$(now); $MW -q -o /dev/null -c /bin/true >/dev/null 2>&1; since "$s"
done | median)
repeat=$(for r in $(seq "$REPS"); do
	settle; s=$(now); $MW -q -o /dev/null --repeat 5 -c /bin/true >/dev/null 2>&1; since "$s"
done | median)
b2b=$(five $MW -q -o /dev/null -c /bin/true)
# the same through stapbpf's own tracefs events, where mallocwatch arms a
# uprobe_multi link (umulti-shim.so): what the link changed
b2btf=
if $MW -v -o /dev/null -c /bin/true 2>&1 | grep -q 'one uprobe_multi link'; then
	b2btf=$(five env MALLOCWATCH_ATTACH=tracefs $MW -q -o /dev/null -c /bin/true)
fi
# five lingering runs: "TOTAL GONE" per series (GONE: last run's end to
# nothing left of the session)
lingering() {
	settle
	rdv=$(mktemp -d /tmp/mw-linger-bench.XXXXXX)
	s=$(now)
	for i in 1 2 3 4 5; do
		MALLOCWATCH_LINGER_DIR=$rdv MALLOCWATCH_LINGER=$LINGER \
			$MW -v -o /dev/null -c /bin/true >/dev/null 2>>"$rdv.err" || true
	done
	e=$(now)
	t=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$rdv.err")
	joined=$(grep -c 'joined a tracer session' "$rdv.err")
	while [ -n "$t" ] && { kill -0 "$t" 2>/dev/null || grep -q "stapprobe_${t}_" $EVENTS; }; do
		sleep 0.05
	done
	echo "$(echo "$e - $s" | bc -l) $(since "$e") $joined"
	rm -rf "$rdv" "$rdv.err"
}
for r in $(seq "$REPS"); do lingering; done >"${TMPDIR:-/tmp}/mw-linger-bench.$$"
lin=$(cut -d' ' -f1 "${TMPDIR:-/tmp}/mw-linger-bench.$$" | median)
lgone=$(cut -d' ' -f2 "${TMPDIR:-/tmp}/mw-linger-bench.$$" | median)
ljoined=$(cut -d' ' -f3 "${TMPDIR:-/tmp}/mw-linger-bench.$$" | tr '\n' ' ')
rm -f "${TMPDIR:-/tmp}/mw-linger-bench.$$"
settle
ratio() { echo "scale=2; $1 / $2" | bc -l; }
printf '  load average %s (other tracers removing uprobes slow arming)\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  baselines: /bin/true x5 untraced %ss; one traced run (-c /bin/true) %ss\n' "$untraced" "$single"
printf '  --repeat 5 -c /bin/true: %ss, x%s one traced run (goal <= 1.5 s; a session per run: 4.2 s)\n' \
	"$repeat" "$(ratio "$repeat" "$single")"
printf '  five separate -c /bin/true back to back: %ss, x%s five lone runs (goal <= 2 s)\n' \
	"$b2b" "$(ratio "$b2b" "$(echo "5 * $single" | bc -l)")"
[ -z "$b2btf" ] || printf '  the same through tracefs events (MALLOCWATCH_ATTACH=tracefs): %ss; the uprobe_multi link x%s of it\n' \
	"$b2btf" "$(ratio "$b2b" "$b2btf")"
printf '  five separate -c /bin/true with --linger %s: %ss, x%s without, x%s untraced (goal <= 2 s; runs joined per series: %s)\n' \
	"$LINGER" "$lin" "$(ratio "$lin" "$b2b")" "$(ratio "$lin" "$untraced")" "$ljoined"
printf '  their session gone (no tracer, no uprobe definition) %ss after the last run (%s s idle, then the removal)\n' \
	"$lgone" "$LINGER"
echo "goal 6 --repeat 5 -c /bin/true ${repeat}s (<= 1.5): $(echo "$repeat <= 1.5" | bc)"
echo "goal 6 five back-to-back -c /bin/true ${b2b}s (<= 2): $(echo "$b2b <= 2" | bc)"
echo "goal 6 five back-to-back -c /bin/true with --linger ${lin}s (<= 2): $(echo "$lin <= 2" | bc)"
