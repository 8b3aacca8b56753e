#!/bin/sh
# mallocwatch serve (issue 23): the allocator state as Prometheus
# metrics, scraped by a real Prometheus (Debian's) started here on
# loopback with examples/prometheus/rules.yml loaded.
#  - the endpoint's figures, in its OpenMetrics text and through
#    Prometheus's HTTP API after a few scrapes, equal a running
#    process's own malloc_info() arena for arena (examples/hold-arenas);
#  - OpenMetrics when asked (# UNIT, # EOF, its Content-Type), else
#    text 0.0.4 that `promtool check metrics` accepts with no lint
#    message; a hostile command name (quote, backslash, ESC, a byte
#    that is not UTF-8) escaped (unit-metrics: the rest);
#  - a process that exits drops its series and is counted; one killed
#    while it is read is counted, the scrape answered; a --budget bounds
#    a scrape whatever the processes;
#  - 200 processes with --all within the budget;
#  - --textfile written atomically, promtool-clean, removed at exit;
#  - loopback only unless --allow-remote; SIGTERM exits 0; every fd of
#    the server close-on-exec; 404 and 405.
# needs: root serial
. tests/lib/lib.sh
need_root
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip "prometheus or promtool not installed (make deps)"
command -v curl >/dev/null || skip "curl not installed"
need_libc6_dbg
PIDS= SERVERS= PROM=
cleanup() {
	for p in $PROM $SERVERS $PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $PROM $SERVERS $PIDS; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# hold NAME FD N [EXTRA [BINARY]]: lib.sh hold_fd under Debian's libc
hold() { hold_fd "$1" "$2" "$3" "${4:-0}" system ${5:+"$5"}; }
# serve NAME ARGS...: mallocwatch serve --listen 127.0.0.1:0 ARGS in the
# background, stderr in $OUT/NAME.err; sets spid and port
serve() {
	_n=$1; shift
	"$MW" serve --listen 127.0.0.1:0 "$@" 2>"$OUT/$_n.err" 3>&- 4>&- 5>&- 6>&- 7>&- &
	spid=$!
	SERVERS="$SERVERS $spid"
	serve_port "$OUT/$_n.err" $spid 100 "$_n"
}
# stop PID NAME: SIGTERM, exit 0
stop() {
	kill -TERM "$1"; wait "$1"; _rc=$?
	[ $_rc = 0 ] || fail "$2: exit $_rc after SIGTERM: $(cat "$OUT/$2.err")"
}
compare() {	# compare NAME PID SOURCE
	mkdir -p "$OUT/cmp-$1"
	python3 tests/lib/metrics_compare.py "$OUT/${4:-$1}.xml" "$2" "$3" "$OUT/cmp-$1" ||
		fail "$1: metrics_compare.py failed"
	expect_same "$OUT/cmp-$1/expected.txt" "$OUT/cmp-$1/actual.txt"
}

# --- libmicrohttpd is loaded when serve starts (mhd_load.h): a mallocwatch
# that traces does not map it; serve without it says so in one line
ldd build/mallocwatch >"$OUT/ldd" || fail "ldd build/mallocwatch: $(cat "$OUT/ldd")"
! grep -E 'libmicrohttpd|libgnutls' "$OUT/ldd" ||
	fail "mallocwatch is linked with libmicrohttpd or GnuTLS"
lib=$(readlink -f "$(ldconfig -p | sed -n 's/.*libmicrohttpd\.so\.12 .*=> //p' | head -1)")
[ -f "$lib" ] || fail "no libmicrohttpd.so.12 found by ldconfig"
# (timeout: a serve that did load it would serve until killed)
unshare -m sh -c "mount --bind /dev/null '$lib' && exec timeout 10 '$MW' serve --listen 127.0.0.1:0 -p $$" \
	2>"$OUT/nomhd.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$OUT/nomhd.err")" = 1 ] &&
	grep -q "^mallocwatch: serve needs libmicrohttpd (libmicrohttpd.so.12): " "$OUT/nomhd.err" ||
	fail "serve without libmicrohttpd: exit $rc: $(cat "$OUT/nomhd.err")"
echo "ok: without libmicrohttpd: $(cat "$OUT/nomhd.err")"

# --- usage: loopback only unless asked
"$MW" serve --listen 0.0.0.0:0 -p $$ 2>"$OUT/remote.err"; rc=$?
[ $rc = 2 ] && grep -q 'not a loopback address.*--allow-remote' "$OUT/remote.err" ||
	fail "--listen 0.0.0.0 without --allow-remote: exit $rc: $(cat "$OUT/remote.err")"
for bad in "--listen 99999 -p 1" "--listen x:1 -p 1" "-p 1" "--listen 0"; do
	# shellcheck disable=SC2086
	"$MW" serve $bad 2>/dev/null; rc=$?
	[ $rc = 2 ] || fail "serve $bad: exit $rc, not 2"
done
"$MW" serve --listen 0.0.0.0:0 --allow-remote -p $$ 2>"$OUT/remote-ok.err" &
r=$!; SERVERS="$SERVERS $r"
i=0; until grep -q 'serving http://0.0.0.0:' "$OUT/remote-ok.err"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "--allow-remote: $(cat "$OUT/remote-ok.err")"; sleep 0.05
done
kill -TERM $r; wait $r || fail "--allow-remote: exit $? after SIGTERM"

# --- the processes: A (3 threads), one whose name is hostile, E (exits later)
hold a 3 3; A=$pid
BAD=$(printf 'x"y\\z\033\377\303\251')	# é after the byte 0xff
cp examples/hold-arenas "$OUT/$BAD" || fail "cannot copy hold-arenas"
hold h 4 1 0 "$OUT/$BAD"; H=$pid
hold e 5 2; E=$pid
serve s1 -p $A,$H,$E --min-interval 0.2
S1=$spid P1=$port
curl -sS -D "$OUT/om.hdr" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	"http://127.0.0.1:$P1/metrics" >"$OUT/om.txt" || fail "curl OpenMetrics"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$OUT/om.hdr" ||
	fail "OpenMetrics Content-Type: $(cat "$OUT/om.hdr")"
[ "$(tail -n 1 "$OUT/om.txt")" = "# EOF" ] || fail "OpenMetrics text does not end with # EOF"
grep -q '^# UNIT mallocwatch_arena_system_bytes bytes$' "$OUT/om.txt" || fail "no # UNIT line"
grep -qF "$(printf 'command="x\\"y\\\\\\\\z\\\\x1b\\\\xff\303\251"')" "$OUT/om.txt" ||
	fail "hostile command not escaped: $(grep -a "pid=\"$H\"" "$OUT/om.txt" | head -1)"
compare a $A "$OUT/om.txt"
compare h $H "$OUT/om.txt"
curl -sS -D "$OUT/text.hdr" "http://127.0.0.1:$P1/metrics" >"$OUT/text.txt" || fail "curl text"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$OUT/text.hdr" ||
	fail "0.0.4 Content-Type: $(cat "$OUT/text.hdr")"
! grep -q '^# EOF' "$OUT/text.txt" || fail "# EOF in 0.0.4 text"
promtool check metrics <"$OUT/text.txt" >"$OUT/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$OUT/promtool.out")"
[ ! -s "$OUT/promtool.out" ] || fail "promtool lint: $(cat "$OUT/promtool.out")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P1/nope")
[ "$code" = 404 ] || fail "/nope: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "http://127.0.0.1:$P1/metrics")
[ "$code" = 405 ] || fail "POST: $code"
# every descriptor the server opened close-on-exec (O_CLOEXEC 02000000);
# those it got from this shell are not its own
for f in /proc/$S1/fdinfo/*; do
	n=${f##*/}
	[ "$n" -le 2 ] && continue
	[ "$(readlink /proc/$$/fd/$n 2>/dev/null)" = "$(readlink /proc/$S1/fd/$n)" ] && continue
	fl=$(sed -n 's/^flags:[[:space:]]*//p' "$f" 2>/dev/null)
	# closed since it was listed (the last curl's connection, which
	# libmicrohttpd closes after the answer): nothing left to inherit
	[ -n "$fl" ] || [ -e "$f" ] || continue
	[ $(( 0$fl & 02000000 )) != 0 ] || fail "fd $n of serve ($(readlink /proc/$S1/fd/$n)) not close-on-exec"
done

# --- a real Prometheus scrapes it every second, with the example rules
promtool check config examples/prometheus/prometheus.yml >/dev/null 2>&1 ||
	fail "promtool check config examples/prometheus/prometheus.yml"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["panels"]' \
	examples/prometheus/dashboard.json || fail "examples/prometheus/dashboard.json"
prometheus_start "127.0.0.1:$P1"
i=0
until [ "$(prom_query 'count(mallocwatch_arena_system_bytes{pid="'$A'"})' 2>/dev/null)" = 4 ] &&
	[ "$(prom_query 'count(count_over_time(up{job="mallocwatch"}[1m]) >= 3)' 2>/dev/null)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 120 ] || fail "Prometheus has no series of $A: $(tail -5 "$OUT/prometheus.log")"
	sleep 0.5
done
[ "$(prom_query 'up{job="mallocwatch"}')" = 1 ] || fail "up is not 1"
compare prom-a $A "$PB" a
compare prom-h $H "$PB" h
[ -n "$(prom_query 'mallocwatch:process_retained_bytes{pid="'$A'"}')" ] ||
	fail "the example recording rules gave nothing"
[ "$(prom_query 'mallocwatch_processes')" = 3 ] || fail "mallocwatch_processes: $(prom_query mallocwatch_processes)"

# --- E exits: its series go, it is counted as exited
exec 5>&-
wait $E
PIDS=$(echo "$PIDS" | sed "s/ $E\b//")
i=0
until [ -z "$(prom_query 'mallocwatch_arena_system_bytes{pid="'$E'"}')" ]; do
	i=$((i + 1)); [ $i -lt 40 ] || fail "the series of $E (exited) are still there"
	sleep 0.25
done
[ "$(prom_query 'mallocwatch_processes_unread{reason="exited"}')" = 1 ] ||
	fail "exited: $(prom_query 'mallocwatch_processes_unread{reason="exited"}')"
[ "$(prom_query 'mallocwatch_read_errors_total{reason="exited"} > 0')" != "" ] || fail "read_errors_total"
[ "$(prom_query 'count(mallocwatch_arena_system_bytes{pid="'$A'"})')" = 4 ] || fail "A lost its series"
kill -TERM $PROM; wait $PROM; PROM=
stop $S1 s1

# --- a budget bounds a scrape; a process killed while it is read is counted
hold busy 6 0 3000000; B=$pid
# (3 M free chunks: 0.1 s would need 30 M/s; at 0.3 s the faster walk of
# a fresh clone read B in time once, 10 M/s being the goal)
serve s2 -p $B,$A --budget 0.1 --min-interval 0.01 --read-timeout 20
t0=$(date +%s.%N)
curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/budget.txt" || fail "budget scrape"
t=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$(echo "$t < 2" | bc)" = 1 ] || fail "a scrape with --budget 0.1 took $t s"
# B not read within it; A, read beside B (snapmulti.h), unless the load
# kept it too from being read within 0.1 s
grep -q '^mallocwatch_processes_unread{reason="timeout"} 1$' "$OUT/budget.txt" &&
	grep -q "pid=\"$A\"" "$OUT/budget.txt" ||
	grep -q '^mallocwatch_processes_unread{reason="timeout"} 2$' "$OUT/budget.txt" ||
	fail "budget: $(grep unread "$OUT/budget.txt")"
echo "budget 0.1 s: the scrape took $t s"
stop $spid s2
serve s3 -p $B,$A --min-interval 0.01 --read-timeout 20 --budget 30
curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/killed.txt" &
c=$!
sleep 0.1	# (B's read takes 0.2-0.4 s: a kill at 0.3 s can come after it)
kill -KILL $B
wait $c || fail "the scrape during which $B was killed failed"
exec 6>&-
grep -q '^mallocwatch_processes_unread{reason="exited"} 1$' "$OUT/killed.txt" ||
	fail "killed while read: $(grep unread "$OUT/killed.txt")"
! grep -q "pid=\"$B\"" "$OUT/killed.txt" || fail "series of $B, killed while read"
compare killed-a $A "$OUT/killed.txt" a
stop $spid s3

# --- --textfile: atomically, 0.0.4, removed at exit
mkdir -p "$OUT/tf"
"$MW" serve --textfile "$OUT/tf" --interval 0.2 -p $A 2>"$OUT/tf.err" 3>&- 4>&- 5>&- 6>&- &
T=$!; SERVERS="$SERVERS $T"
i=0; until [ -f "$OUT/tf/mallocwatch.prom" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no textfile: $(cat "$OUT/tf.err")"; sleep 0.05
done
sleep 0.5
promtool check metrics <"$OUT/tf/mallocwatch.prom" >"$OUT/tf-promtool.out" 2>&1 &&
	[ ! -s "$OUT/tf-promtool.out" ] || fail "textfile: promtool: $(cat "$OUT/tf-promtool.out")"
compare tf-a $A "$OUT/tf/mallocwatch.prom" a
# (and the next one being written, under a name of 12 random letters)
[ "$(ls -A "$OUT/tf" | grep -vx '\.mallocwatch\.prom\.[A-Za-z]\{12\}')" = mallocwatch.prom ] ||
	fail "textfile dir holds: $(ls -A "$OUT/tf")"
stop $T tf
[ -z "$(ls -A "$OUT/tf")" ] || fail "textfile left at exit: $(ls -A "$OUT/tf")"

# --- 200 processes with --all, within the budget
rm -f "$OUT/many.in"; mkfifo "$OUT/many.in"
mkdir -p "$OUT/many"
MANY=
for k in $(seq 1 200); do
	./examples/hold-arenas 1 many-$k 0 <"$OUT/many.in" >"$OUT/many/$k.xml" 2>/dev/null 3>&- 4>&- 6>&- &
	PIDS="$PIDS $!"; MANY="$MANY $!"
done
exec 7>"$OUT/many.in"
i=0
until [ "$(grep -l '</malloc>' "$OUT"/many/*.xml 2>/dev/null | wc -l)" = 200 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the 200 hold-arenas never all printed"
	sleep 0.1
done
# (the whole host's: a budget for what else runs - a stress round's other
# tests took 10.4 s once, 219 processes not read in 10 s - and the bound
# serve.1 states, the reading's own time within it)
serve s4 --all --budget 30 --min-interval 0.01
t0=$(date +%s.%N)
curl -sS "http://127.0.0.1:$port/metrics" >"$OUT/all.txt" || fail "--all scrape"
t=$(echo "$(date +%s.%N) - $t0" | bc)
d=$(sed -n 's/^mallocwatch_snapshot_duration_seconds //p' "$OUT/all.txt")
[ -n "$d" ] && [ "$(echo "$d <= 30" | bc)" = 1 ] || fail "--all: the reading took $d s of --budget 30"
got=0
for p in $MANY; do grep -q "^mallocwatch_process_arenas{pid=\"$p\"," "$OUT/all.txt" && got=$((got + 1)); done
[ $got = 200 ] || fail "--all: $got of the 200 processes have series"
# whole-host: another test's busy process may time out (its count is
# shown); none of the 200 may (each has its series, above)
grep -q '^mallocwatch_processes_unread{reason="timeout"} [0-9][0-9]*$' "$OUT/all.txt" ||
	fail "--all: no timeout count"
echo "--all: $(sed -n 's/^mallocwatch_processes //p' "$OUT/all.txt") processes read in $t s" \
	"(mallocwatch: $(sed -n 's/^mallocwatch_snapshot_duration_seconds //p' "$OUT/all.txt") s)"
stop $spid s4
exec 7>&- 3>&- 4>&-
exit 0
