#!/bin/sh
# One user cannot put out the libc layouts root's processes need
# (glibcinfo.c keeps the layouts of 64 libc files, each charged to the
# user whose processes it was read for).  nobody runs 70 processes, each
# on a libc.so.6 of its own (copies of Debian's: each another file to
# read, and more than the 64 kept); root runs one process on the system's
# libc and one on a copy of its own (a file no other process opens, so
# that its opens can be counted), first in serve's list as the older
# processes are in --all's.  serve is scraped until root's two have been
# read (their layouts kept), then until every one of nobody's processes
# has been read at least once (70 libc files read after root's), then
# until root's are read again:
#  - root's copy of libc is never opened again after the first reads
#    (inotify): its layouts were kept (serve forgets all of them each 60
#    s: one open a minute is allowed);
#  - root's processes are read again after nobody's.
# Before: the cache put out its oldest file, whoever's it was: after 64
# of nobody's files root's layouts were gone, read again (an open of
# root's copy) one libc at a time behind nobody's reads, and processes
# waiting for them past the budget counted timeout.  Whether a scrape
# reads a process within its budget depends on the machine's load (a
# reader kept from a CPU): root's reads are retried, not counted.
# needs: root serial
. tests/lib/lib.sh
need_root
command -v curl >/dev/null || skip "curl not installed"
need_libc6_dbg
need_system_libc
S= SP= R= W=
kill_at_exit -t SP S W R
mkdir "$OUT/root" && cp $LIBC "$OUT/root/libc.so.6" || exit 99

# root's processes: the system's libc, root's copy
/bin/sleep 3600 &
R=$!
$LDSO --library-path "$OUT/root" /bin/sleep 3600 &
R="$R $!"
N=70
nobody_libc_copies $N	# nobody's: SP, PIDS
maps_libc $R
list=$(echo $R $PIDS | tr ' ' ',')

"$MW" serve --listen 127.0.0.1:0 -p "$list" --budget 5 --min-interval 0.01 \
	2>"$OUT/serve.err" &
S=$!
started=$(date +%s)
serve_port "$OUT/serve.err" $S 200

# scrape K: one scrape into $OUT/mK.txt; nobody's processes read so far
# added to $OUT/seen; rooted=1 when root's were both read in it
: >"$OUT/seen"
scrape() {
	r=$(curl -sS -m 60 -o "$OUT/m$1.txt" -w '%{http_code}' "http://127.0.0.1:$port/metrics" 2>&1)
	[ "$r" = 200 ] || fail "scrape $1: '$r' (serve: $(tail -3 "$OUT/serve.err"))"
	rooted=1
	for p in $R; do
		grep -q "^mallocwatch_process_arenas{pid=\"$p\"," "$OUT/m$1.txt" || rooted=0
	done
	for p in $PIDS; do
		grep -q "^mallocwatch_process_arenas{pid=\"$p\"," "$OUT/m$1.txt" && echo $p
	done >>"$OUT/seen"
	sort -u -o "$OUT/seen" "$OUT/seen"
}
# root_read WHEN: scrape until root's processes are read, 20 tries
root_read() {
	_t=0
	while :; do
		k=$((k + 1)); _t=$((_t + 1))
		scrape $k
		[ $rooted = 1 ] && return 0
		[ $_t -lt 20 ] || fail "$1: root's processes not read in 20 scrapes: $(grep -v '^#' \
			"$OUT/m$k.txt" | grep -e unread | tr '\n' ' ')"
	done
}
k=0
root_read "at first"
python3 tests/lib/count_opens.py "$OUT/root/libc.so.6" "$OUT/opens" &
W=$!
wait_for "$OUT/opens" ready 30 $W
k0=$k
while [ "$(wc -l <"$OUT/seen")" -lt $N ]; do
	k=$((k + 1))
	[ $(($(date +%s) - started)) -lt 600 ] ||
		fail "after $k scrapes, only $(wc -l <"$OUT/seen") of nobody's $N processes read"
	scrape $k
done
root_read "after nobody's"
kill -TERM $W; wait $W; W=
opens=$(sed -n 's/^opens //p' "$OUT/opens")
took=$(($(date +%s) - started))
echo "$k scrapes in $took s ($((k - k0)) after root's first reads): nobody's $N processes read" \
	"at least once, then root's again; root's copy of libc opened $opens times after its" \
	"first read; load $(cut -d' ' -f1 /proc/loadavg)"
[ "$opens" -le $((took / 60)) ] ||
	fail "root's libc was read again ($opens opens in $took s): nobody's files put out its layouts"
kill -TERM $S; wait $S; rc=$?; S=
[ $rc = 0 ] || fail "serve: exit $rc after SIGTERM: $(cat "$OUT/serve.err")"
exit 0
