#!/bin/sh
# prometheus-demo.sh - a real Prometheus graphs the arenas of a running
# python3 and a memcached from `mallocwatch serve` (issue 23's "done
# when"), and the capture goes to examples/prometheus/: capture.txt (the
# series Prometheus holds, through its HTTP API) and graph.png (its own
# graph page, drawn by headless Chromium).
#
# Usage: sudo sh scripts/prometheus-demo.sh [SECONDS]   (default 30)
# Needs: build/mallocwatch, Debian's prometheus, memcached, python3,
# curl, chromium, libc6-dbg (make deps).  Everything it starts listens on
# loopback and is stopped at the end, by pid.
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-30}
OUT=$(mktemp -d /tmp/mw-prom-demo.XXXXXX)
DEST=examples/prometheus
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# memcached with 4 worker threads, each given work (an arena each)
MP=$(port)
memcached -l 127.0.0.1 -p "$MP" -U 0 -t 4 -u nobody -m 64 &
MC=$!; PIDS="$PIDS $MC"
sleep 0.5
python3 - "$MP" <<'PY'
import socket, sys
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(16)]
for i in range(4000):
    c = conns[i % len(conns)]
    v = b"x" * (100 + i % 3000)
    c.sendall(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(v), v))
    c.recv(64)
PY
# python3 with 4 threads that keep allocating (each thread gets an arena)
/usr/bin/python3 - <<'PY' &
import threading, time
def work(n):
    keep = []
    while True:
        keep.append(bytearray(1000 + n * 200) * 50)
        if len(keep) > 400:
            del keep[:200]
        time.sleep(0.01)
for n in range(4):
    threading.Thread(target=work, args=(n,), daemon=True).start()
time.sleep(3600)
PY
PY=$!; PIDS="$PIDS $PY"
sleep 1

./build/mallocwatch serve --listen 127.0.0.1:0 -p "$PY,$MC" 2>"$OUT/serve.err" &
PIDS="$PIDS $!"
i=0
until SP=$(sed -n 's|^mallocwatch: serving http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$OUT/serve.err") &&
	[ -n "$SP" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$OUT/serve.err"; exit 1; }
	sleep 0.05
done
PP=$(port)
cat >"$OUT/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/$DEST/rules.yml
scrape_configs:
  - job_name: mallocwatch
    static_configs:
      - targets: ["127.0.0.1:$SP"]
EOF
prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
	--web.listen-address="127.0.0.1:$PP" >"$OUT/prometheus.log" 2>&1 &
PIDS="$PIDS $!"
echo "prometheus-demo: python3 $PY and memcached $MC, scraped for $SECS s" >&2
sleep "$SECS"

EXPR='mallocwatch_arena_system_bytes{command=~"python3|memcached"}'
{
	echo "# mallocwatch serve -p $PY,$MC, scraped every second by Debian's prometheus $(prometheus --version 2>&1 | sed -n '1s/^prometheus, version \([^ ]*\).*/\1/p') for $SECS s"
	echo "# query_range $EXPR: command, pid, arena, main, samples, last value"
	curl -sS --get --data-urlencode "query=$EXPR" --data-urlencode "start=$(($(date +%s) - SECS))" \
		--data-urlencode "end=$(date +%s)" --data-urlencode step=1 \
		"http://127.0.0.1:$PP/api/v1/query_range" |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in sorted(d["data"]["result"], key=lambda r: (r["metric"]["command"], int(r["metric"]["arena"]))):
    m = r["metric"]
    print(m["command"], m["pid"], "arena", m["arena"], "main" if m["main"] == "true" else "-",
          len(r["values"]), r["values"][-1][1])'
	echo "# mallocwatch_process_arenas, mallocwatch_process_arena_limit, mallocwatch:process_retained_bytes (a recording rule)"
	for q in mallocwatch_process_arenas mallocwatch_process_arena_limit mallocwatch:process_retained_bytes; do
		curl -sS --get --data-urlencode "query=$q" "http://127.0.0.1:$PP/api/v1/query" |
			python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print(sys.argv[1], r["metric"]["command"], r["value"][1])' "$q"
	done
} >"$DEST/capture.txt"
cat "$DEST/capture.txt"
URL="http://127.0.0.1:$PP/graph?g0.expr=$(python3 -c 'import urllib.parse, sys; print(urllib.parse.quote(sys.argv[1]))' "$EXPR")&g0.tab=0&g0.stacked=1&g0.range_input=1m"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 \
	--virtual-time-budget=15000 --screenshot="$OUT/graph.png" "$URL" >/dev/null 2>&1 || true
if [ -s "$OUT/graph.png" ]; then
	cp "$OUT/graph.png" "$DEST/graph.png"
	echo "prometheus-demo: $DEST/graph.png" >&2
else
	echo "prometheus-demo: no screenshot (chromium)" >&2
fi
