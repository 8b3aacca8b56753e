#!/bin/sh
# -p PID --duration N ends about N s after tracing started (issue 26,
# item 7: 3 s took 8.1 s of wall time, most of it the tracer removing its
# uprobes, about 0.11 s a probe site under stapbpf, before its end probe
# printed the totals).  Now the tracer is flushed at the end, as after a
# -c program's exit: the totals come at once and the removal goes on in
# the background.  The same for ^C.  The reports stay whole: the arenas
# hold-arenas made, the note that the tracer detaches in the background.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
now() { date +%s.%N; }
# run_until_end NAME ARGS...: mallocwatch -p $pid ARGS in the background;
# sets took: seconds from its "tracing process" note to its exit
run_until_end() {
	_name=$1
	shift
	"$MW" -v -p $pid -o "$OUT/$_name.txt" "$@" 2>"$OUT/$_name.err" &
	mwpid=$!
	wait_for "$OUT/$_name.err" "tracing process $pid" 120 $mwpid
	t0=$(now)
	[ "${STOP:-}" = int ] && kill -INT $mwpid
	wait $mwpid || fail "$_name: exit $?: $(cat "$OUT/$_name.err")"
	took=$(echo "$(now) - $t0" | bc)
	echo "$_name: $took s from tracing to the report"
	grep -q '^Arenas: 5$' "$OUT/$_name.txt" || fail "$_name: $(cat "$OUT/$_name.txt")"
	grep -q "goes on removing the uprobes of .* in the background" "$OUT/$_name.err" ||
		fail "$_name: the tracer was not left detaching: $(cat "$OUT/$_name.err")"
}
hold_arenas held 4
run_until_end duration --duration 2
[ "$(echo "$took < 3.5" | bc)" = 1 ] || fail "--duration 2 took $took s after tracing started"
STOP=int run_until_end int
[ "$(echo "$took < 1.5" | bc)" = 1 ] || fail "^C took $took s after tracing started"
release_hold
echo "-p ends on time; the tracer removes its uprobes in the background"
