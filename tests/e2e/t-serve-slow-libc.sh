#!/bin/sh
# A scrape's readers past its deadline do not pile up behind libc reads a
# hostile process makes slow.  nobody runs 100 processes, each on a
# libc.so.6 of its own (a copy of Debian's, grown sparse to 240 MiB: a
# file another user owns is copied whole before it is read, mapped.h's
# mw_elf_vet; some 0.2 to 0.4 s each, one at a time, and more than the 64
# libcs glibcinfo keeps), and serve --budget 0.3 is scraped back to back.
# Before: a reader that began a process before the deadline waited for
# the libc reads ahead of it however long they took, and each scrape left
# its readers waiting: 47 to 67 threads in serve (4 readers a scrape on 2
# CPUs) and 300 MB resident after 200 scrapes, growing with the files.
# Now a reader waits for another's libc read only until the deadline:
# serve has its own threads, one scrape's readers and the one libc read
# begun before the last deadline.
# needs: root serial
. tests/lib/lib.sh
need_root
command -v curl >/dev/null || skip "curl not installed"
need_libc6_dbg
need_system_libc
S= SP=
kill_at_exit -t SP S
N=100
nobody_libc_copies $N 240M	# nobody's, on sparse 240 MiB copies: SP, PIDS
list=$(echo $PIDS | tr ' ' ',')

"$MW" serve --listen 127.0.0.1:0 -p "$list" --budget 0.3 --min-interval 0.01 \
	2>"$OUT/serve.err" &
S=$!
serve_port "$OUT/serve.err" $S 200
base=$(awk '/^Threads:/ { print $2 }' /proc/$S/status)
nt=$(( $(nproc) * 2 )); [ $nt -le 16 ] || nt=16

# 120 scrapes back to back; serve's threads looked at after each
max=0
for k in $(seq 1 120); do
	r=$(curl -sS -m 30 -o "$OUT/m.txt" -w '%{http_code}' "http://127.0.0.1:$port/metrics" 2>&1)
	[ "$r" = 200 ] || fail "scrape $k: '$r' (serve: $(tail -3 "$OUT/serve.err"))"
	th=$(awk '/^Threads:/ { print $2 }' /proc/$S/status)
	[ "$th" -gt $max ] && max=$th
done
read_n=$(sed -n 's/^mallocwatch_processes //p' "$OUT/m.txt")
unread=$(sed -n 's/^mallocwatch_processes_unread{reason="[a-z_]*"} \([0-9]*\)$/\1/p' \
	"$OUT/m.txt" | awk '{ s += $1 } END { print s + 0 }')
echo "serve: $base threads idle, at most $max after a scrape ($nt readers a scrape);" \
	"the last: $read_n read, $unread not read; $(awk '/^VmRSS/ { print $2, $3 }' /proc/$S/status)" \
	"resident; load $(cut -d' ' -f1 /proc/loadavg)"
[ $((read_n + unread)) = $N ] || fail "the last scrape: $read_n read + $unread not read is not $N"
# its own, the scrape's readers, and twice as many again leaving (the one
# in a libc read, the others on their way out, late under load)
[ "$max" -le $((base + 3 * nt + 2)) ] ||
	fail "serve had $max threads after a scrape: readers past their deadline piled up"
kill -TERM $S; wait $S; rc=$?; S=
[ $rc = 0 ] || fail "serve: exit $rc after SIGTERM: $(cat "$OUT/serve.err")"
exit 0
