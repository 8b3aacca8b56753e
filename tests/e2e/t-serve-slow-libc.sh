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
LIBC=/lib/x86_64-linux-gnu/libc.so.6
LDSO=/lib64/ld-linux-x86-64.so.2
[ -f $LIBC ] && [ -x $LDSO ] || skip "no $LIBC or $LDSO"
S= SP=
cleanup() {
	[ -n "$S" ] && kill -KILL "$S" 2>/dev/null
	[ -n "$SP" ] && pkill -KILL -P "$SP" 2>/dev/null
	[ -n "$SP" ] && kill -KILL "$SP" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
chmod 755 "$OUT"
D=$OUT/nobody
mkdir -m 0755 "$D" && chown 65534:65534 "$D" || exit 99

N=100
# nobody's processes: their pids into $D/pids, then they sleep
$NOBODY sh -c 'D=$1 N=$2
	for k in $(seq 1 $N); do
		mkdir "$D/l$k" && cp /lib/x86_64-linux-gnu/libc.so.6 "$D/l$k/" &&
			truncate -s 240M "$D/l$k/libc.so.6" || exit 1
		/lib64/ld-linux-x86-64.so.2 --library-path "$D/l$k" /bin/sleep 3600 &
		echo $! >>"$D/pids"
	done
	echo spawned >"$D/done"
	wait' sh "$D" $N &
SP=$!
wait_for "$D/done" spawned 120
PIDS=$(cat "$D/pids")
for p in $PIDS; do
	i=0
	until grep -q 'libc\.so\.6' /proc/$p/maps 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 500 ] || fail "$p never mapped its libc"; sleep 0.02
	done
done
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
