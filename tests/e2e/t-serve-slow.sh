#!/bin/sh
# mallocwatch serve against clients that hold connections (issue 43
# item 5), as any local user (nobody) can: serve keeps answering scrapes.
#  - 64 connections, each sending a header line every 2 s and never the
#    end of its headers (before: 32 of them filled every place and each
#    scrape got no answer); then 400 such (past serve's 256 places);
#    then 64 that send nothing at all: every scrape meanwhile answered
#    200 within 2 s (the bound: a scrape of one process takes some
#    milliseconds; 2 s leaves room for a loaded machine);
#  - the connections dropped are warned about at most once a minute,
#    summed: a handful of lines on stderr, not one per connection;
#  - SIGTERM still exits 0.
# needs: root slow
. tests/lib/lib.sh
need_root
command -v curl >/dev/null || skip "curl not installed"
PY=/usr/bin/python3	# nobody cannot run root's pyenv shims
[ -x $PY ] || skip "no /usr/bin/python3"
S= H=
kill_at_exit H S
cp tests/lib/slow_clients.py "$OUT/" && chmod 755 "$OUT" || exit 99

serve_start "$MW" "$OUT/serve.err" -p $$ --min-interval 0.01
URL=http://127.0.0.1:$port/metrics

# scrapes NAME N: N scrapes 0.5 s apart, each answered 200 within 2 s
scrapes() {
	_k=0
	while [ $_k -lt "$2" ]; do
		_k=$((_k + 1))
		r=$(curl -sS -m 10 -o "$OUT/$1.txt" -w '%{http_code} %{time_total}' "$URL" 2>&1)
		code=${r%% *} t=${r##* }
		[ "$code" = 200 ] || fail "$1: scrape $_k: '$r' (serve: $(tail -3 "$OUT/serve.err"))"
		[ "$(echo "$t < 2" | bc)" = 1 ] || fail "$1: scrape $_k took $t s"
		grep -q '^mallocwatch_processes ' "$OUT/$1.txt" || fail "$1: scrape $_k: no metrics"
		echo "$1: scrape $_k: $code in $t s"
		sleep 0.5
	done
}
# attack NAME MODE N SECONDS [GAP]: slow_clients.py as nobody until its
# first round is open
attack() {
	if [ "$2" = slow ]; then
		$NOBODY $PY "$OUT/slow_clients.py" slow 127.0.0.1 $port "$3" "$5" "$4" >"$OUT/$1.out" 2>&1 &
	else
		$NOBODY $PY "$OUT/slow_clients.py" "$2" 127.0.0.1 $port "$3" "$4" >"$OUT/$1.out" 2>&1 &
	fi
	H=$!
	wait_for "$OUT/$1.out" '^open ' 10 $H
	echo "$1: $(head -1 "$OUT/$1.out") connections"
}
done_attack() {
	wait $H || fail "$1: slow_clients.py: $(cat "$OUT/$1.out")"
	H=
	echo "$1: $(tail -1 "$OUT/$1.out")"
}

# --- 64 slow connections: 16 scrapes over 12 s (past the 5 s after which
# serve shuts down a connection that has sent no whole request)
attack slow64 slow 64 14 2
scrapes slow64 16
done_attack slow64
# --- 400: past the 256 places; each new one makes room
attack slow400 slow 400 10 2
scrapes slow400 10
done_attack slow400
# --- 64 that send nothing
attack silent64 silent 64 8
scrapes silent64 6
done_attack silent64

kill -TERM $S; wait $S; rc=$?; S=
[ $rc = 0 ] || fail "exit $rc after SIGTERM: $(cat "$OUT/serve.err")"
n=$(grep -c 'warning' "$OUT/serve.err")
[ "$n" -le 6 ] || fail "$n warnings on serve's stderr: $(head -20 "$OUT/serve.err")"
grep -q 'warning: http: connections shut down: .* that sent no whole request within 5 s' \
	"$OUT/serve.err" || fail "no summary of the connections shut down: $(cat "$OUT/serve.err")"
echo "serve's stderr:"
cat "$OUT/serve.err"
exit 0
