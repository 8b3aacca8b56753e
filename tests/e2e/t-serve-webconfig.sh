#!/bin/sh
# Who can read mallocwatch serve's metrics (issue 43 item 6).
#  - by default (127.0.0.1) every local user: nobody's curl gets them;
#  - --web.config.file in the exporter-toolkit format: TLS from
#    cert_file/key_file (relative to the file), basic_auth_users with a
#    bcrypt hash, a header of http_server_config: without a password, with
#    a wrong one, with an unknown user: 401 and WWW-Authenticate; with the
#    right one: the metrics, over TLS 1.2 or 1.3 only (curl --cacert);
#    plain HTTP on that port gets nothing;
#  - a real Prometheus scrapes it with basic_auth and tls_config: up 1
#    and the series; a job with a wrong password: up 0;
#  - nobody hammering wrong passwords (bcrypt, 80 ms a check) from 4
#    threads: the scraper, whose password passed before, is answered
#    within 2 s every time; the hammering gets 401 or 429;
#  - 64 connections holding the TLS port without a handshake: scrapes
#    answered;
#  - files refused with one line and exit 1: keys outside the subset,
#    client certificates, a hash that is not bcrypt, a cost above 14, a
#    key given twice, not YAML; a FIFO or /dev/zero named as the file (or
#    as cert_file) is refused at once, not waited on; an empty file is no
#    TLS and no authentication, as in exporter-toolkit;
#  - --listen unix:PATH: mode 0600 by default (nobody cannot connect),
#    --socket-mode 0666 lets nobody in; a link planted at PATH or a
#    directory others can write is refused; the socket is removed at exit.
# needs: root slow
. tests/lib/lib.sh
need_root
command -v curl >/dev/null || skip "curl not installed"
command -v openssl >/dev/null || skip "openssl not installed (make deps)"
command -v prometheus >/dev/null || skip "prometheus not installed (make deps)"
PY=/usr/bin/python3
[ -x $PY ] || skip "no /usr/bin/python3"
S= H= PROM= RUN=
cleanup() {
	for p in $PROM $H $S; do kill -KILL "$p" 2>/dev/null; done
	for p in $PROM $H $S; do wait "$p" 2>/dev/null; done
	[ -n "$RUN" ] && rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
cp tests/lib/slow_clients.py "$OUT/" && chmod 755 "$OUT" || exit 99

# bcrypt with the system's crypt(3), as htpasswd -B makes it
HASH=$($PY -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' 2>/dev/null)
case $HASH in '$2b$10$'*) ;; *) skip "python3's crypt cannot make a bcrypt hash: '$HASH'" ;; esac
mkdir -p "$OUT/etc" || exit 99
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-keyout "$OUT/etc/server.key" -out "$OUT/etc/server.crt" -subj /CN=mallocwatch-test \
	-addext subjectAltName=IP:127.0.0.1 >"$OUT/openssl.out" 2>&1 ||
	fail "openssl req: $(cat "$OUT/openssl.out")"
cat >"$OUT/etc/web.yml" <<EOF
# exporter-toolkit's example, as mallocwatch takes it
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS12
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
basic_auth_users:
  alice: $HASH
EOF

# start NAME ARGS...: serve ARGS in the background; sets S and port
start() {
	_n=$1; shift
	"$MW" serve -p $$ --min-interval 0.01 "$@" 2>"$OUT/$_n.err" &
	S=$!
	_i=0
	until port=$(sed -n 's|^mallocwatch: serving https*://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$OUT/$_n.err") &&
		[ -n "$port" ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "$_n: no 'serving' line: $(cat "$OUT/$_n.err")"
		kill -0 $S 2>/dev/null || fail "$_n exited: $(cat "$OUT/$_n.err")"
		sleep 0.05
	done
}
stop() {
	kill -TERM $S; wait $S; _rc=$?; S=
	[ $_rc = 0 ] || fail "$1: exit $_rc after SIGTERM: $(cat "$OUT/$1.err")"
}
code() { curl -sS -o "$OUT/body" -D "$OUT/headers" -w '%{http_code}' "$@" 2>"$OUT/curl.err"; }
# code_pw ARGS...: code, asked again a second later while the answer is
# 429 (the password checks' budget is bcrypt's wall time, 1 s at once
# and 0.25 s a second after it: on a loaded machine a few checks in a
# row spend it), 30 times at most
code_pw() {
	_i=0
	while _c=$(code "$@") && [ "$_c" = 429 ] && [ $_i -lt 30 ]; do
		_i=$((_i + 1)); sleep 1
	done
	echo "$_c"
}

# --- the default: every local user reads it
start plain --listen 127.0.0.1:0
$NOBODY curl -sSf http://127.0.0.1:$port/metrics >"$OUT/nobody.txt"; rc=$?
[ $rc = 0 ] && grep -q "^mallocwatch_process_arenas{pid=\"$$\"" "$OUT/nobody.txt" ||
	fail "default: nobody's curl: exit $rc (the documented default: every local user reads them)"
stop plain

# --- TLS and basic authentication
start tls --listen 127.0.0.1:0 --web.config.file "$OUT/etc/web.yml"
grep -q '^mallocwatch: serving https://' "$OUT/tls.err" || fail "not https: $(cat "$OUT/tls.err")"
U=https://127.0.0.1:$port/metrics
CA="--cacert $OUT/etc/server.crt"
# shellcheck disable=SC2086
for who in "" "-u alice:wrong" "-u mallory:s3cret" "-u alice:"; do
	c=$(code_pw $CA $who "$U")
	[ "$c" = 401 ] || fail "'$who': $c, not 401"
	grep -qi '^www-authenticate: basic realm="mallocwatch"' "$OUT/headers" ||
		fail "'$who': no WWW-Authenticate: $(cat "$OUT/headers")"
	! grep -q mallocwatch_ "$OUT/body" || fail "'$who': metrics in a 401"
done
# shellcheck disable=SC2086
c=$(code_pw $CA -u alice:s3cret "$U")
[ "$c" = 200 ] && grep -q "^mallocwatch_process_arenas{pid=\"$$\"" "$OUT/body" ||
	fail "alice: $c: $(head -3 "$OUT/body")"
grep -qi '^x-content-type-options: nosniff' "$OUT/headers" || fail "no header of the file"
# shellcheck disable=SC2086
c=$(code $CA --tlsv1.2 --tls-max 1.2 -u alice:s3cret "$U")
[ "$c" = 200 ] || fail "TLS 1.2: $c: $(cat "$OUT/curl.err")"
# shellcheck disable=SC2086
c=$(code $CA --tlsv1.1 --tls-max 1.1 -u alice:s3cret "$U")
[ "$c" = 000 ] || fail "TLS 1.1 (min_version TLS12): $c"
c=$(code -u alice:s3cret "http://127.0.0.1:$port/metrics")
[ "$c" = 000 ] || fail "plain HTTP on the TLS port: $c"
echo "TLS and basic auth: 401 x4, 200 with the password, TLS 1.1 and plain HTTP refused"

# --- a real Prometheus: basic_auth and tls_config
PP=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$OUT/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: mallocwatch
    scheme: https
    tls_config:
      ca_file: $OUT/etc/server.crt
    basic_auth:
      username: alice
      password: s3cret
    static_configs:
      - targets: ["127.0.0.1:$port"]
  - job_name: wrong
    scheme: https
    tls_config:
      ca_file: $OUT/etc/server.crt
    basic_auth:
      username: alice
      password: guess
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
	--web.listen-address="127.0.0.1:$PP" >"$OUT/prometheus.log" 2>&1 &
PROM=$!
query() {
	curl -sS --get --data-urlencode "query=$1" "http://127.0.0.1:$PP/api/v1/query" |
		$PY -c 'import json, sys; d = json.load(sys.stdin); print(" ".join(sorted(r["value"][1] for r in d["data"]["result"])))'
}
i=0
until [ "$(query 'up{job="mallocwatch"}' 2>/dev/null)" = 1 ] &&
	[ "$(query 'up{job="wrong"}' 2>/dev/null)" = 0 ]; do
	i=$((i + 1)); [ $i -lt 120 ] || fail "Prometheus: up $(query up 2>&1): $(tail -5 "$OUT/prometheus.log")"
	sleep 0.5
done
[ -n "$(query "mallocwatch_process_arenas{pid=\"$$\"}")" ] || fail "Prometheus has no series"
echo "Prometheus: up 1 with the password, up 0 with a wrong one"
kill -TERM $PROM; wait $PROM; PROM=

# --- nobody hammers wrong passwords; the scraper's passed before
$NOBODY $PY "$OUT/slow_clients.py" badauth 127.0.0.1 $port 4 6 >"$OUT/badauth.out" 2>&1 &
H=$!
sleep 1
for k in 1 2 3 4 5 6 7 8; do
	# shellcheck disable=SC2086
	r=$(curl -sS -m 10 $CA -u alice:s3cret -o "$OUT/s.txt" -w '%{http_code} %{time_total}' "$U" 2>&1)
	[ "${r%% *}" = 200 ] || fail "scrape $k under bad passwords: $r"
	[ "$(echo "${r##* } < 2" | bc)" = 1 ] || fail "scrape $k under bad passwords took ${r##* } s"
	echo "under bad passwords: scrape $k: $r"
	sleep 0.5
done
wait $H || fail "badauth: $(cat "$OUT/badauth.out")"; H=
echo "the bad passwords got: $(tr '\n' ' ' <"$OUT/badauth.out")"
! grep -qv -e '^401 ' -e '^429 ' "$OUT/badauth.out" || fail "bad passwords got: $(cat "$OUT/badauth.out")"
grep -q '^429 ' "$OUT/badauth.out" || fail "no 429: bcrypt checks were not bounded: $(cat "$OUT/badauth.out")"

# --- connections without a handshake
$NOBODY $PY "$OUT/slow_clients.py" silent 127.0.0.1 $port 64 8 >"$OUT/silent.out" 2>&1 &
H=$!
sleep 1
for k in 1 2 3 4 5 6 7 8 9 10; do
	# shellcheck disable=SC2086
	r=$(curl -sS -m 10 $CA -u alice:s3cret -o /dev/null -w '%{http_code} %{time_total}' "$U" 2>&1)
	[ "${r%% *}" = 200 ] && [ "$(echo "${r##* } < 2" | bc)" = 1 ] ||
		fail "scrape $k beside 64 silent TLS connections: $r"
	sleep 0.5
done
wait $H; H=
echo "beside 64 silent TLS connections: 10 scrapes answered"
stop tls

# --- refused files: one line, exit 1, at once
# refuse NAME TEXT PATTERN: a file of TEXT makes serve exit 1 with a line
# matching PATTERN
refuse() {
	printf '%s\n' "$2" >"$OUT/etc/$1.yml"
	timeout 10 "$MW" serve --listen 127.0.0.1:0 -p $$ --web.config.file "$OUT/etc/$1.yml" \
		2>"$OUT/$1.err"; _rc=$?
	[ $_rc = 1 ] && [ "$(wc -l <"$OUT/$1.err")" = 1 ] && grep -q "$3" "$OUT/$1.err" ||
		fail "$1: exit $_rc: $(cat "$OUT/$1.err")"
	echo "refused: $(cat "$OUT/$1.err")"
}
refuse unknown "basic_auth_user: {}" "line 1: unknown key 'basic_auth_user'"
refuse clientca "tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_ca_file: ca.crt" "line 4: tls_server_config.client_ca_file is not supported"
refuse notbcrypt "basic_auth_users:
  alice: s3cret" "line 2: basic_auth_users.alice: not a bcrypt hash"
refuse cost "basic_auth_users:
  alice: \$2b\$15\$$(echo "$HASH" | cut -c8-)" "bcrypt cost 15 is not 4 to 14"
refuse twice "basic_auth_users:
  alice: $HASH
  alice: $HASH" "line 3: basic_auth_users: 'alice' given twice"
refuse notyaml "tls_server_config: [" "line 2: "
refuse ratelimit "rate_limit:
  interval: 1s" "rate_limit is not supported"
refuse nokey "tls_server_config:
  cert_file: server.crt" "no key_file"
mkfifo "$OUT/etc/cert.fifo" "$OUT/etc/web.fifo" || exit 99
refuse fifocert "tls_server_config:
  cert_file: cert.fifo
  key_file: server.key" "cert_file: '.*cert.fifo' is not a regular file"
for f in "$OUT/etc/web.fifo" /dev/zero; do
	timeout 10 "$MW" serve --listen 127.0.0.1:0 -p $$ --web.config.file "$f" 2>"$OUT/special.err"
	rc=$?
	[ $rc = 1 ] && grep -q "is not a regular file of at most 1 MiB" "$OUT/special.err" ||
		fail "--web.config.file $f: exit $rc: $(cat "$OUT/special.err")"
done
# whoever may change the file decides who reads serve: another user's file,
# one others may write, and a link (to /etc/shadow: its first line must not
# be printed) are refused
printf 'basic_auth_users:\n' >"$OUT/etc/theirs.yml" && chown 65534 "$OUT/etc/theirs.yml" || exit 99
printf 'basic_auth_users:\n' >"$OUT/etc/shared.yml" && chmod 0666 "$OUT/etc/shared.yml" || exit 99
ln -sf /etc/shadow "$OUT/etc/shadow.yml" || exit 99
for f in theirs shared shadow; do
	timeout 10 "$MW" serve --listen 127.0.0.1:0 -p $$ --web.config.file "$OUT/etc/$f.yml" \
		2>"$OUT/owner.err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$OUT/owner.err")" = 1 ] &&
		grep -q "belongs to uid\|it is a symbolic link" "$OUT/owner.err" &&
		! grep -q "root:" "$OUT/owner.err" ||
		fail "--web.config.file $f: exit $rc: $(cat "$OUT/owner.err")"
	echo "refused: $(cat "$OUT/owner.err")"
done
: >"$OUT/etc/empty.yml"
start empty --listen 127.0.0.1:0 --web.config.file "$OUT/etc/empty.yml"
[ "$(code "http://127.0.0.1:$port/metrics")" = 200 ] || fail "an empty file: not plain HTTP"
stop empty

# --- a unix socket
RUN=$(mktemp -d /run/mallocwatch-test.XXXXXX) && chmod 0755 "$RUN" || skip "cannot make a directory in /run"
sock=$RUN/metrics.sock
serve_unix() {	# serve_unix NAME ARGS...
	_n=$1; shift
	"$MW" serve -p $$ --listen "unix:$sock" "$@" 2>"$OUT/$_n.err" &
	S=$!
	_i=0
	until grep -q "^mallocwatch: serving http://localhost/metrics on the unix socket $sock" \
		"$OUT/$_n.err"; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "$_n: $(cat "$OUT/$_n.err")"
		sleep 0.05
	done
}
serve_unix u1
[ "$(stat -c %a "$sock")" = 600 ] || fail "the socket's mode: $(stat -c %a "$sock")"
[ "$(code --unix-socket "$sock" http://localhost/metrics)" = 200 ] || fail "root over the socket"
c=$($NOBODY curl -sS -o /dev/null -w '%{http_code}' --unix-socket "$sock" http://localhost/metrics 2>/dev/null)
[ "$c" = 000 ] || fail "nobody connected to a 0600 socket: $c"
stop u1
[ ! -e "$sock" ] || fail "the socket is left"
serve_unix u2 --socket-mode 0666
c=$($NOBODY curl -sS -o /dev/null -w '%{http_code}' --unix-socket "$sock" http://localhost/metrics)
[ "$c" = 200 ] || fail "nobody on a 0666 socket: $c"
stop u2
ln -s /etc/shadow "$sock" || exit 99
"$MW" serve -p $$ --listen "unix:$sock" 2>"$OUT/u3.err"; rc=$?
[ $rc = 1 ] && grep -q "it exists and is not a socket" "$OUT/u3.err" ||
	fail "a link at the socket's name: exit $rc: $(cat "$OUT/u3.err")"
[ -L "$sock" ] || fail "the link went"
rm "$sock"
chmod 0777 "$RUN" || exit 99
"$MW" serve -p $$ --listen "unix:$sock" 2>"$OUT/u4.err"; rc=$?
[ $rc = 1 ] && grep -q "is writable by others" "$OUT/u4.err" ||
	fail "a directory others can write: exit $rc: $(cat "$OUT/u4.err")"
echo "unix socket: 0600 root only, 0666 nobody too, a link and a shared directory refused"
exit 0
