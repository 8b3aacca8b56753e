#!/bin/sh
# mallocwatch serve's --budget bounds the reading of a scrape, whatever
# the processes cost (issue 44 items 2 and 6): 24 processes on 24 copies
# of Debian's libc (each copy another file, so each pays for loading its
# libc's symbols and DWARF, one after the other: 50 to 90 ms each quiet,
# far more under load) and 3 busy-alloc processes (read while they run,
# they never agree: their reads last until the deadline), scraped cold
# with --budget 1:
#  - the reading (mallocwatch_snapshot_duration_seconds, from the
#    request to the metrics written) ends within the budget, as the man
#    page says; the answer reached curl (its time is printed; the load
#    delays it, and no bound is asserted on it);
#  - every process is counted: read (its series), or not read (timeout);
#  - the next scrapes, the libcs loaded, the same.
# Before: the walk's timeout was "the budget left" when the process was
# begun, and the libc loaded after that came on top; the reading ended
# when the last process begun had been read (1.3 s and more of --budget 1).
# needs: root serial
. tests/lib/lib.sh
need_root
command -v curl >/dev/null || skip "curl not installed"
need_libc6_dbg
need_system_libc
PIDS= S=
kill_at_exit S PIDS

NL=24 NB=3
for k in $(seq 1 $NL); do
	mkdir -p "$OUT/l$k"
	cp $LIBC "$OUT/l$k/libc.so.6" || exit 99
	$LDSO --library-path "$OUT/l$k" /bin/sleep 3600 &
	PIDS="$PIDS $!"
done
rm -f "$OUT/busy.in"; mkfifo "$OUT/busy.in"
for k in $(seq 1 $NB); do
	./build/tests/fixtures/busy-alloc 2 "$OUT/busy$k.xml" <"$OUT/busy.in" >"$OUT/busy$k.out" 2>&1 &
	PIDS="$PIDS $!"
done
exec 3>"$OUT/busy.in"
for p in $PIDS; do
	i=0
	until grep -q 'libc\.so\.6' /proc/$p/maps 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 500 ] || fail "$p never mapped its libc"; sleep 0.02
	done
done
for k in $(seq 1 $NB); do wait_for "$OUT/busy$k.out" '^READY' 30; done
list=$(echo $PIDS | tr ' ' ',')
N=$((NL + NB))

serve_start "$MW" "$OUT/serve.err" -p "$list" --budget 1 --min-interval 0.01 --no-stop

# scrape K: one scrape; its reading within --budget 1, every process
# counted
scrape() {
	r=$(curl -sS -m 30 -o "$OUT/m$1.txt" -w '%{http_code} %{time_total}' \
		"http://127.0.0.1:$port/metrics" 2>&1)
	[ "${r%% *}" = 200 ] || fail "scrape $1: '$r' (serve: $(tail -3 "$OUT/serve.err"))"
	d=$(sed -n 's/^mallocwatch_snapshot_duration_seconds //p' "$OUT/m$1.txt")
	[ -n "$d" ] || fail "scrape $1: no mallocwatch_snapshot_duration_seconds"
	read_n=$(sed -n 's/^mallocwatch_processes //p' "$OUT/m$1.txt")
	unread=$(sed -n 's/^mallocwatch_processes_unread{reason="\([a-z_]*\)"} \([0-9]*\)$/\1 \2/p' \
		"$OUT/m$1.txt" | awk '{ s += $2 } END { print s + 0 }')
	timeout=$(sed -n 's/^mallocwatch_processes_unread{reason="timeout"} //p' "$OUT/m$1.txt")
	echo "scrape $1: the reading $d s (--budget 1), curl $(echo "$r" | cut -d' ' -f2) s;" \
		"$read_n read, $unread not read ($timeout timeout); load $(cut -d' ' -f1 /proc/loadavg)"
	[ "$(echo "$d <= 1" | bc)" = 1 ] || fail "scrape $1: the reading took $d s, past --budget 1"
	[ $((read_n + unread)) = $N ] || fail "scrape $1: $read_n read + $unread not read is not $N"
	got=0
	for p in $PIDS; do
		grep -q "^mallocwatch_process_arenas{pid=\"$p\"," "$OUT/m$1.txt" && got=$((got + 1))
	done
	[ $got = "$read_n" ] || fail "scrape $1: $got processes have series, $read_n read"
}
for k in 1 2 3 4 5; do scrape $k; done
kill -TERM $S; wait $S; rc=$?; S=
[ $rc = 0 ] || fail "serve: exit $rc after SIGTERM: $(cat "$OUT/serve.err")"
exec 3>&-
exit 0
