#!/bin/sh
# mallocwatch serve --probes (issue 23): the SDT probes' counters per
# process, from one tracer session, scraped by a real Prometheus.
#  - tests/fixtures/serve-counts under the probe-enabled glibc: "storm 6"
#    makes exactly 6 arenas (6 threads released together, none leaves
#    before all have attached), "waits 5" exactly 5 arena lock waits and
#    5 reuses (M_ARENA_MAX 1, main_arena's lock held by malloc_stats()
#    blocked on a full stderr pipe while 5 new threads allocate); both
#    start only once serve says they are traced.  Prometheus's HTTP API
#    gives those figures (and 7 arenas in the snapshot: the 6 and
#    main_arena), the example rules' lock-wait rate;
#  - a process on Debian's libc (no probes) is read but says
#    probes_traced 0 and has no counter series;
#  - `promtool check metrics` is clean; OpenMetrics has the counters'
#    # TYPE ... counter and # EOF;
#  - a process that exits drops its series and leaves the tracer's set;
#  - SIGTERM: serve exits 0, its tracer (a stapbpf child of it while it
#    ran) ends and leaves none of its uprobe definitions.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip "prometheus or promtool not installed (make deps)"
command -v curl >/dev/null || skip "curl not installed"
command -v stap >/dev/null || skip "stap not installed (make deps)"
need_libc6_dbg
FIX=build/tests/fixtures/serve-counts
[ -x $FIX ] || make -s $FIX >/dev/null || exit 99
[ -x examples/hold-arenas ] || make -s -C examples >/dev/null || exit 99
PIDS= S= PROM=
cleanup() {
	for p in $PROM $S $PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $PROM $S $PIDS; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# counts NAME FD MODE N: the fixture under the probe-enabled glibc, its
# stdin on the FIFO $OUT/NAME.in held open here on FD, stdout in
# $OUT/NAME.out; sets pid
counts() {
	rm -f "$OUT/$1.in"; mkfifo "$OUT/$1.in"
	(exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
	 exec "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" \
		$FIX "$3" "$4") <"$OUT/$1.in" >"$OUT/$1.out" 2>/dev/null &
	pid=$!
	PIDS="$PIDS $pid"
	eval "exec $2>\"\$OUT/\$1.in\""
}
metrics() { curl -sS ${1:+-H "Accept: application/openmetrics-text"} "http://127.0.0.1:$port/metrics"; }
# value NAME LABELS: the sample's value in the last $OUT/m.txt
value() { grep "^$1{pid=\"$2\"," "$OUT/m.txt" | grep -- "${3:-}" | awk '{print $2}'; }

counts storm 3 storm 6; A=$pid
counts waits 4 waits 5; B=$pid
hold_fd deb 5 2 0 system; D=$pid

# --- the old code has no --probes: this is where it fails
"$MW" serve --listen 127.0.0.1:0 --probes -v -p "$A,$B,$D" 2>"$OUT/serve.err" 3>&- 4>&- 5>&- &
S=$!
serve_port "$OUT/serve.err" $S 100 "serve --probes"
# the tracer compiles and joins A and B (a look every second)
i=0
until metrics >"$OUT/m.txt" 2>/dev/null && [ "$(value mallocwatch_process_probes_traced $A)" = 1 ] &&
	[ "$(value mallocwatch_process_probes_traced $B)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "A and B never traced: $(cat "$OUT/serve.err")"
	kill -0 $S 2>/dev/null || fail "serve --probes exited: $(cat "$OUT/serve.err")"
	sleep 0.2
done
grep -q '^mallocwatch_probes_tracing 1$' "$OUT/m.txt" || fail "probes_tracing is not 1"
[ "$(value mallocwatch_process_probes_traced $D)" = 0 ] || fail "Debian's libc process: traced?"
! grep -q "_total{pid=\"$D\"" "$OUT/m.txt" || fail "counters for a process without probes"
T=$(pgrep -P $S -x stapbpf) || fail "no stapbpf child of serve"
[ "$(tracer_sites $T | wc -l)" -gt 0 ] || fail "tracer $T holds no uprobe site"

# --- a real Prometheus scrapes it every second, with the example rules
promtool check rules examples/prometheus/rules.yml >"$OUT/rules.out" 2>&1 ||
	fail "promtool check rules: $(cat "$OUT/rules.out")"
prometheus_start "127.0.0.1:$port"
# Prometheus sees the counters at 0 first (the rate needs the rise)
i=0
until [ "$(prom_query 'mallocwatch_process_arena_lock_waits_total{pid="'$B'"}' 2>/dev/null)" = 0 ]; do
	i=$((i + 1)); [ $i -lt 240 ] || fail "Prometheus has no counter of $B: $(tail -5 "$OUT/prometheus.log")"
	sleep 0.5
done

# --- now the work, counted from the start
echo go >&3
echo go >&4
for n in storm waits; do
	i=0; until grep -q done "$OUT/$n.out"; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "$n never done"; sleep 0.05
	done
done

# the lock waits come with the live reading (every second), the arenas
# with a snapshot (each scrape, at most one a second): wait for both,
# then every figure must be exact
i=0
until [ "$(prom_query 'mallocwatch_process_arena_lock_waits_total{pid="'$B'"}' 2>/dev/null)" = 5 ] &&
	[ "$(prom_query 'mallocwatch_process_arenas{pid="'$A'"}' 2>/dev/null)" = 7 ] &&
	[ -n "$(prom_query 'mallocwatch:process_arena_lock_waits:rate5m{pid="'$B'"} > 0' 2>/dev/null)" ]; do
	i=$((i + 1)); [ $i -lt 240 ] || fail "Prometheus: lock waits of $B: '$(prom_query 'mallocwatch_process_arena_lock_waits_total{pid="'$B'"}')'"
	sleep 0.5
done
check() {	# check EXPR VALUE
	got=$(prom_query "$1")
	[ "$got" = "$2" ] || fail "$1: '$got', not '$2'"
	echo "$1 = $got"
}
check 'mallocwatch_process_arenas_created_total{pid="'$A'"}' 6
check 'mallocwatch_process_arenas{pid="'$A'"} - 1' 6
check 'mallocwatch_process_heaps_created_total{pid="'$A'"}' 6
check 'mallocwatch_process_arena_reuses_total{pid="'$A'",how="limit"}' 0
check 'mallocwatch_process_arena_lock_waits_total{pid="'$A'"}' 0
check 'mallocwatch_process_arena_lock_waits_total{pid="'$B'"}' 5
check 'mallocwatch_process_arena_reuses_total{pid="'$B'",how="limit"}' 5
check 'mallocwatch_process_arenas_created_total{pid="'$B'"}' 0
check 'mallocwatch_process_arenas{pid="'$B'"}' 1
check 'mallocwatch_process_probes_traced{pid="'$D'"}' 0
check 'count(mallocwatch_process_arenas_created_total{pid="'$D'"})' ''
[ "$(prom_query 'mallocwatch_process_heap_resizes_total{pid="'$A'",direction="grow"} > 0')" != "" ] ||
	fail "A's heaps never grew?"

# --- the formats
metrics >"$OUT/text.txt" || fail "scrape"
promtool check metrics <"$OUT/text.txt" >"$OUT/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$OUT/promtool.out")"
[ ! -s "$OUT/promtool.out" ] || fail "promtool lint: $(cat "$OUT/promtool.out")"
grep -q '^# TYPE mallocwatch_process_arena_lock_waits_total counter$' "$OUT/text.txt" ||
	fail "0.0.4: no counter TYPE line"
metrics om >"$OUT/om.txt" || fail "scrape (OpenMetrics)"
grep -q '^# TYPE mallocwatch_process_arena_lock_waits counter$' "$OUT/om.txt" &&
	grep -q '^# TYPE mallocwatch_process_sbrk_bytes counter$' "$OUT/om.txt" &&
	grep -q '^# UNIT mallocwatch_process_sbrk_bytes bytes$' "$OUT/om.txt" &&
	grep -q '^mallocwatch_process_sbrk_bytes_total{.*direction="more"}' "$OUT/om.txt" &&
	[ "$(tail -1 "$OUT/om.txt")" = "# EOF" ] || fail "OpenMetrics: counters' families"
# scrape time with the tracer running (min-interval 1 s: a fresh reading)
sleep 1.1
curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >"$OUT/scrape-time.txt"
echo "scrape with the tracer running (3 processes, a fresh reading): $(cat "$OUT/scrape-time.txt") s"

# --- A exits: its series go, it leaves the set
exec 3>&-
wait $A
i=0
until metrics >"$OUT/m.txt" && ! grep -q "pid=\"$A\"" "$OUT/m.txt" &&
	grep -q "process $A no longer traced" "$OUT/serve.err"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "A's series or set entry stayed: $(tail -3 "$OUT/serve.err")"
	sleep 0.1
done
[ "$(value mallocwatch_process_arena_lock_waits_total $B)" = 5 ] || fail "B's counter changed"

# --- SIGTERM: exit 0, the tracer ends and leaves no uprobe definitions
kill -TERM $S; wait $S; rc=$?
S=
[ $rc = 0 ] || fail "exit $rc after SIGTERM: $(cat "$OUT/serve.err")"
i=0
while kill -0 $T 2>/dev/null && [ "$(cat /proc/$T/comm 2>/dev/null)" = stapbpf ]; do
	i=$((i + 1)); [ $i -lt 3000 ] || fail "tracer $T still there 300 s after serve's exit"
	sleep 0.1
done
echo "the tracer was gone $((i / 10)).$((i % 10)) s after serve's exit"
! grep -q "stapprobe_${T}_" /sys/kernel/debug/tracing/uprobe_events ||
	fail "tracer $T left uprobe definitions"
exec 4>&- 5>&-
echo PASS
