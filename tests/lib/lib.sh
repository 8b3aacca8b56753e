# tests/lib/lib.sh - helpers for the test scripts (tests/e2e/t-*.sh,
# tests/vm/t-*.sh); source it first.
set -u
cd "$(dirname "$0")/../.." || exit 99
MW=${MW:-$PWD/build/mallocwatch}
OUT=$PWD/tests/out/$(basename "$0" .sh)
GLIBC_PREFIX=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}
# MW_ROOT=DIR (make check-glibc, scripts/check-glibc.sh): the tests that
# use IN and on_glibc run their programs inside that Debian root
# (scripts/glibc-root.sh), on its own probe-enabled glibc, compiled there
# with its gcc (at DIR/examples and DIR/build/tests/fixtures: chroot's
# working directory is the root's /, so ./examples/NAME names them).
# IN is the words that start a program there ("chroot DIR"; empty
# without MW_ROOT), LIBC the libc.so.6 its programs map (here: the
# probe-enabled glibc's), and OUT gets the root's name, so that runs on
# the host and on each root keep their outputs apart.
MW_ROOT=${MW_ROOT:-}
IN= LIBC=$GLIBC_PREFIX/lib/libc.so.6
if [ -n "$MW_ROOT" ]; then
	case $MW_ROOT in /*) ;; *) echo "MW_ROOT: an absolute path"; exit 99 ;; esac
	case $MW_ROOT in *[!A-Za-z0-9/._-]*) echo "MW_ROOT: letters, digits, '/._-' only"; exit 99 ;; esac
	IN="chroot $MW_ROOT"
	LIBC=$MW_ROOT$(chroot "$MW_ROOT" readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
	OUT=$OUT-$(basename "$MW_ROOT")
fi
rm -rf "$OUT" && mkdir -p "$OUT" || exit 99
# MW_TEST_RUNTIME=kernel|bpf: the tests trace with that runtime (make
# check-vm runs the end-to-end tests under each, in the guest); unset,
# mallocwatch picks (auto).  $MW is then a wrapper that adds --runtime
# to every trace command (not to snapshot, script, check, diff, probes, replay, release,
# serve, which take no runtime or choose it themselves).
if [ -n "${MW_TEST_RUNTIME:-}" ]; then
	case $MW_TEST_RUNTIME in kernel|bpf) ;; *) echo "MW_TEST_RUNTIME: kernel or bpf"; exit 99 ;; esac
	cat >"$OUT/mallocwatch" <<EOF || exit 99
#!/bin/sh
case "\${1:-}" in
snapshot|script|check|diff|probes|serve|replay|release) exec '$MW' "\$@" ;;
esac
exec '$MW' --runtime=$MW_TEST_RUNTIME "\$@"
EOF
	chmod 755 "$OUT/mallocwatch" || exit 99
	MW=$OUT/mallocwatch
fi

fail() { echo "FAIL: $*"; exit 1; }
# wait_for FILE PATTERN SECONDS [PID]: until a line of FILE matches the
# grep pattern PATTERN (FILE may not exist yet), looking every 0.05 s.
# Fails, quoting FILE's last lines, after SECONDS worth of looks (a loaded
# machine makes them take longer, never shorter) or, with PID, as soon as
# process PID is gone without FILE matching.
wait_for() {
	_wf_n=$(($3 * 20))
	until grep -q -e "$2" "$1" 2>/dev/null; do
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -q -e "$2" "$1" 2>/dev/null && return 0
			fail "process $4 ended before '$2' in $1: $(tail -5 "$1" 2>/dev/null)"
		fi
		_wf_n=$((_wf_n - 1))
		[ $_wf_n -gt 0 ] || fail "waited $3 s for '$2' in $1: $(tail -5 "$1" 2>/dev/null)"
		sleep 0.05
	done
}
# need_libc6_dbg: skip unless Debian's libc can be read (its DWARF from
# libc6-dbg, which make deps installs)
need_libc6_dbg() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' libc6-dbg 2>/dev/null)" = installed ] ||
		skip "libc6-dbg not installed (make deps): Debian's libc cannot be read"
}
# wait_held PID SECONDS [NR]: until process PID waits in system call NR
# (0, read(2), on its stdin when not given: a program held on a FIFO), as
# /proc/PID/syscall says ("0 0x0 ...", root's to read): its program runs,
# which its maps alone do not tell (the loader maps a library whole, then
# its code and data, then relocates it).  Fails as wait_for does.
wait_held() {
	if [ -z "${3:-}" ]; then
		wait_for "/proc/$1/syscall" "^0 0x0 " "$2" "$1"
	else
		wait_for "/proc/$1/syscall" "^$3 " "$2" "$1"
	fi
}
# wrap_tool DIR TOOL PREFIX...: make DIR/TOOL a script that runs the real
# TOOL (found in PATH now) under PREFIX (a command and its arguments, or
# env VAR=value), so a run with DIR first in PATH gets the wrapped one
wrap_tool() {
	_wt_real=$(command -v "$2") || skip "no $2"
	mkdir -p "$1" || exit 99
	_wt_dir=$1 _wt_tool=$2
	shift 2
	printf '#!/bin/sh\nexec %s %s "$@"\n' "$*" "$_wt_real" >"$_wt_dir/$_wt_tool" &&
		chmod 755 "$_wt_dir/$_wt_tool" || exit 99
}
skip() { echo "$*"; exit 77; }
# $NOBODY COMMAND...: COMMAND as the unprivileged user nobody (the attacks)
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
need_root() { [ "$(id -u)" = 0 ] || skip "needs root to trace (uprobes)"; }
need_libc() {
	if [ -n "$MW_ROOT" ]; then
		[ -f "$MW_ROOT/.mallocwatch-stamp" ] && [ -f "$LIBC" ] ||
			skip "no probe-enabled root at $MW_ROOT (make glibc-root)"
		return
	fi
	[ -f "$GLIBC_PREFIX/lib/libc.so.6" ] || skip "no probe-enabled glibc at $GLIBC_PREFIX (make glibc)"
}
# exec_setup FIXTURE: the start of the tests whose programs replace their
# image (t-e2e-exec, t-fork-exec).  Skips without root or the
# probe-enabled glibc; sets FIX to build/tests/fixtures/FIXTURE (exit 99
# when it is not built) and KL to what an exec goes through to run on
# that glibc: nothing under the bpf runtime (the program's tree runs on
# it, docs/install.md); under the kernel runtime (make check-vm) its
# loader, else what a program execs runs on the system libc, untraced.
# Then traces examples/sbrk-trim 8 alone into $OUT/alone.json (.txt,
# .xml): its hits, probe by probe, are what a report of it after an exec
# must hold (tests/lib/alone_hits.py checks them).
exec_setup() {
	need_root
	need_libc
	FIX=build/tests/fixtures/$1
	[ -x "$FIX" ] || exit 99
	KL=
	if [ "${MW_TEST_RUNTIME:-}" = kernel ]; then
		KL="$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2 --library-path $GLIBC_PREFIX/lib"
	fi
	"$MW" -q --json "$OUT/alone.json" -o "$OUT/alone.txt" -c ./examples/sbrk-trim 8 \
		>"$OUT/alone.xml" || fail "alone: mallocwatch exited $?"
}
# on_glibc PROGRAM ARGS...: exec PROGRAM on the probe-enabled glibc, in
# place of the shell (run it as "(on_glibc ...) &" to have its pid in
# $!): through the cached glibc's loader, or with MW_ROOT inside that root
on_glibc() {
	[ -z "$MW_ROOT" ] || exec chroot "$MW_ROOT" "$@"
	exec "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" --library-path "$GLIBC_PREFIX/lib:/lib/x86_64-linux-gnu" "$@"
}
# need_kernel_runtime: skip unless SystemTap's kernel runtime can run here
# (loadable modules and this kernel's build tree; make check-vm's guest)
need_kernel_runtime() {
	[ -e /proc/modules ] && [ -d "/lib/modules/$(uname -r)/build" ] ||
		skip "the kernel runtime cannot run here (no loadable modules or no kernel build tree)"
}
# chain_stacks LABEL SUMMARY FOLDED: the --stacks report (summary and
# --folded lines) of tests/fixtures/stack-chains 3 double, what glibc
# guarantees there (t-stacks): 3 arenas created under chain_c <- chain_b
# <- chain_a, the top sbrk stack grow_c <- grow_b <- grow_a <- main, the
# tcache double free under twice_c <- twice_b <- twice_a, and 3.5 MiB or
# more of folded sbrk bytes under grow_c (left in $bytes); fails with
# LABEL otherwise
chain_stacks() {
	_n=$(grep -c 'created by thread [0-9]* at: chain_c <- chain_b <- chain_a' "$2")
	[ "$_n" = 3 ] || fail "$1: $_n arenas named chain_c <- chain_b <- chain_a, not 3"
	_line=$(grep -A1 'memory_sbrk_more:' "$2" | tail -1)
	case "$_line" in
	*"grow_c <- grow_b <- grow_a <- main"*) ;;
	*) fail "$1: the top sbrk stack is not grow_c <- grow_b <- grow_a <- main: $_line" ;;
	esac
	grep -q 'tcache double free of 0x[0-9a-f]* by thread [0-9]* at: twice_c <- twice_b <- twice_a <- main' \
		"$2" || fail "$1: no double free under twice_c <- twice_b <- twice_a"
	bytes=$(grep ';main;grow_a;grow_b;grow_c;' "$3" | awk '{s += $NF} END {print s + 0}')
	[ "$bytes" -ge 3670016 ] || fail "$1: --folded has $bytes bytes under grow_c, not 3.5 MiB or more"
}
# serve_port ERRFILE PID [TRIES] [LABEL]: wait for `mallocwatch serve`
# (PID, its stderr in ERRFILE) to say where it serves on 127.0.0.1; sets
# port.  Fails when PID exits first or after TRIES looks 0.05 s apart
# (default 100); LABEL (default "serve") names it in the failure.
serve_port() {
	_i=0
	until port=$(sed -n 's|^mallocwatch: serving http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$1" 2>/dev/null) &&
		[ -n "$port" ]; do
		_i=$((_i + 1)); [ $_i -lt "${3:-100}" ] || fail "${4:-serve}: no 'serving' line: $(cat "$1")"
		kill -0 "$2" 2>/dev/null || fail "${4:-serve} exited: $(cat "$1")"
		sleep 0.05
	done
}
# serve_start BIN ERRFILE ARGS...: BIN serve --listen 127.0.0.1:0 ARGS
# in the background, its stderr into ERRFILE and the descriptors 3 to 9
# (the tests' FIFOs: a writer left open in serve would keep their readers
# from ever seeing the end) closed in it; sets S (its pid) and port
# (serve_port, up to 200 looks)
serve_start() {
	_ss_bin=$1 _ss_err=$2
	shift 2
	"$_ss_bin" serve --listen 127.0.0.1:0 "$@" 2>"$_ss_err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	S=$!
	serve_port "$_ss_err" $S 200
}
# kill_at_exit [-t TREE] VAR...: when the test exits (SIGINT and SIGTERM
# make it exit 1), the processes whose pids the shell variables VAR...
# hold then (a list each, maybe empty) are killed (SIGKILL) and reaped;
# with -t, the children of the pid variable TREE holds are killed first,
# then it (a tree a test started as nobody, say).  A test empties a
# variable (S=) once it has reaped that process itself.
kill_at_exit() {
	_kae_tree=
	[ "$1" != -t ] || { _kae_tree=$2; shift 2; }
	_kae_vars=$*
	trap _kae_cleanup EXIT
	trap 'exit 1' INT TERM
}
_kae_cleanup() {
	_kae_pids=
	for _kae_v in $_kae_vars; do
		eval "_kae_pids=\"\$_kae_pids \$$_kae_v\""
	done
	for _kae_p in $_kae_pids; do kill -KILL "$_kae_p" 2>/dev/null; done
	[ -z "$_kae_tree" ] || eval "_kae_t=\$$_kae_tree"
	if [ -n "$_kae_tree" ] && [ -n "$_kae_t" ]; then
		pkill -KILL -P "$_kae_t" 2>/dev/null
		kill -KILL "$_kae_t" 2>/dev/null
		_kae_pids="$_kae_pids $_kae_t"
	fi
	for _kae_p in $_kae_pids; do wait "$_kae_p" 2>/dev/null; done
}
# nobody_libc_copies N [SIZE]: N processes of nobody's (a sleep each), each
# on a copy of Debian's libc of its own in $OUT/nobody/lK (truncated to
# SIZE, sparse, when given), started by one shell of nobody's: sets SP
# (that shell: kill_at_exit -t SP) and PIDS (theirs), and returns once
# each maps its libc.  Needs root (the copies' directory is chowned).
nobody_libc_copies() {
	chmod 755 "$OUT"
	mkdir -m 0755 "$OUT/nobody" && chown 65534:65534 "$OUT/nobody" || exit 99
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'D=$1 N=$2 SIZE=$3
		for k in $(seq 1 $N); do
			mkdir "$D/l$k" && cp /lib/x86_64-linux-gnu/libc.so.6 "$D/l$k/" || exit 1
			[ -z "$SIZE" ] || truncate -s "$SIZE" "$D/l$k/libc.so.6" || exit 1
			/lib64/ld-linux-x86-64.so.2 --library-path "$D/l$k" /bin/sleep 3600 &
			echo $! >>"$D/pids"
		done
		echo spawned >"$D/done"
		wait' sh "$OUT/nobody" "$1" "${2:-}" &
	SP=$!
	wait_for "$OUT/nobody/done" spawned 120
	PIDS=$(cat "$OUT/nobody/pids")
	maps_libc $PIDS
}
# maps_libc PID...: until each maps a libc.so.6 (0.02 s apart, 10 s each)
maps_libc() {
	for _ml_p in "$@"; do
		_ml_i=0
		until grep -q 'libc\.so\.6' /proc/$_ml_p/maps 2>/dev/null; do
			_ml_i=$((_ml_i + 1))
			[ $_ml_i -lt 500 ] || fail "$_ml_p never mapped its libc"
			sleep 0.02
		done
	done
}
# need_system_libc: LIBC and LDSO, Debian's libc.so.6 and its loader
# (amd64's paths), or the test skips
need_system_libc() {
	LIBC=/lib/x86_64-linux-gnu/libc.so.6
	LDSO=/lib64/ld-linux-x86-64.so.2
	[ -f $LIBC ] && [ -x $LDSO ] || skip "no $LIBC or $LDSO"
}
# free_port: a TCP port of 127.0.0.1 that is free now (the kernel's pick)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# prometheus_start TARGET: a real Prometheus on a free port of 127.0.0.1
# that scrapes TARGET (HOST:PORT, job "mallocwatch") and evaluates
# examples/prometheus/rules.yml every second.  Its configuration,
# $OUT/prometheus.yml, must pass `promtool check config` (the test fails
# otherwise); its data go to $OUT/tsdb, its output to
# $OUT/prometheus.log; fds 3 to 9 (the tests' FIFOs) are closed in it.
# Sets PROM (its pid: the test's cleanup kills it) and PB (its URL).
prometheus_start() {
	_pp=$(free_port) || exit 99
	cat >"$OUT/prometheus.yml" <<EOF || exit 99
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/examples/prometheus/rules.yml
scrape_configs:
  - job_name: mallocwatch
    static_configs:
      - targets: ["$1"]
EOF
	promtool check config "$OUT/prometheus.yml" >"$OUT/check-config.out" 2>&1 ||
		fail "promtool check config: $(cat "$OUT/check-config.out")"
	prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
		--web.listen-address="127.0.0.1:$_pp" >"$OUT/prometheus.log" 2>&1 \
		3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	PROM=$!
	PB=http://127.0.0.1:$_pp
}
# prom_query EXPR: the values of the instant vector EXPR at the
# Prometheus $PB (prometheus_start), one a line, sorted
prom_query() {
	curl -sS --get --data-urlencode "query=$1" "$PB/api/v1/query" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print("\n".join(sorted(r["value"][1] for r in d["data"]["result"])))'
}
# run CMD..., which must exit 0
ok() { "$@" || fail "'$*' exited $?"; }
# expect_same EXPECTED ACTUAL: show diff -u and fail when they differ
expect_same() { diff -u "$1" "$2" || fail "$2 differs from $1"; }
# canon_lines SCRIPT XML JSON DIR: tests/lib/SCRIPT writes what XML (a
# program's own malloc_info(0, fp) output) states to DIR/expected.txt
# and what JSON (mallocwatch's) states to DIR/actual.txt, as the same
# canonical lines (the script's opening comment lists them); makes DIR.
# SCRIPT: malloc_info_compare.py, JSON a traced run's --json report
# (main_arena's system bytes, each other arena's heaps and heap bytes
# sorted, the number of arenas, and a line where the main heap differs
# from sbrk's net moves when the run traced them all);
# snapshot_compare.py, JSON a snapshot's (per arena in the ring's order:
# system bytes, fast and rest chunks, heaps; the mmapped chunks; the
# number of arenas; a line when it is inconsistent).  Exits 99 (harness
# error) when the script fails (cannot read XML or JSON).
canon_lines() {
	mkdir -p "$4" || exit 99
	python3 "tests/lib/$1" "$2" "$3" "$4" ||
		{ echo "$1 failed on $2 and $3"; exit 99; }
}
# expect_canon SCRIPT XML JSON DIR [LABEL]: canon_lines' two files must
# be the same.  Fails with their diff -u when they differ, naming LABEL
# (default DIR); with LABEL, prints "ok: LABEL: " and the lines when same.
expect_canon() {
	canon_lines "$1" "$2" "$3" "$4"
	diff -u "$4/expected.txt" "$4/actual.txt" ||
		fail "${5:-$4}: the figures mallocwatch states ($4/actual.txt, from $3) differ from malloc_info's ($4/expected.txt)"
	[ -z "${5:-}" ] || echo "ok: $5: $(tr '\n' ' ' <"$4/actual.txt")"
}
# expect_malloc_info XML JSON DIR [LABEL]: a traced run's --json report
# JSON states exactly the arenas its program's malloc_info XML does
# (expect_canon malloc_info_compare.py)
expect_malloc_info() { expect_canon malloc_info_compare.py "$@"; }
# expect_snapshot XML JSON DIR [LABEL]: a snapshot's --json JSON states
# exactly what the process's malloc_info XML does (expect_canon
# snapshot_compare.py)
expect_snapshot() { expect_canon snapshot_compare.py "$@"; }
# need_gdb_call: skip unless gdb can call a function in a process here
# and give it back intact.  gdb 13 on some CPUs and kernels (seen: Xeon
# with AMX, kernel 6.18) runs the call, then fails to restore the
# process's registers ("Couldn't write extended state status: Bad
# address") and leaves it broken (a sleep then said "cannot read
# realtime clock").
need_gdb_call() {
	sleep 30 &
	_s=$!
	_g=$(gdb -q -batch -nx -p $_s -ex 'call (int) getpid()' 2>&1)
	kill $_s 2>/dev/null
	wait $_s 2>/dev/null
	echo "$_g" | grep -q "^\$1 = $_s\$" && ! echo "$_g" | grep -q "extended state" ||
		skip "gdb cannot call a function in a process here: $(echo "$_g" | grep -m1 -i 'couldn.t\|error' || echo "$_g" | tail -n 1)"
}
# tracer_sites PID [NAME]: the uprobe sites the stapbpf PID holds, one
# "PATH OFFSET" line each: its uprobe_multi links (their fdinfo; how
# umulti-shim.so attaches, Linux 6.6 and later) and its tracefs
# definitions stapprobe_NAME_N (NAME: its pid in its own pid namespace,
# default PID; how stapbpf attaches by itself, MALLOCWATCH_ATTACH=tracefs)
tracer_sites() {
	for _f in /proc/"$1"/fdinfo/*; do
		awk '/^link_type:/ { m = $2 == "uprobe_multi" }
		     m && /^path:/ { p = $2 }
		     m && p != "" && /^[0-9]+\t/ { print p, $2 }' "$_f" 2>/dev/null
	done
	sed -n "s/^p:uprobes\/stapprobe_${2:-$1}_[0-9]* \(.*\):\(0x[0-9a-f]*\)\$/\1 \2/p" \
		/sys/kernel/debug/tracing/uprobe_events 2>/dev/null
}
# stap_p3 SCRIPT: translate SCRIPT for the kernel runtime (stap -g -p3, guru
# mode as mallocwatch compiles it: kernel.stp has embedded C) with a
# kernel-config stub as the build tree (this kernel has no headers for
# pass 4); fails the test on an error.  Skips when stap or
# /proc/config.gz is missing.
stap_p3() {
	command -v stap >/dev/null || skip "stap not installed"
	K=$OUT/kbuild
	if [ ! -f "$K/include/config/kernel.release" ]; then
		mkdir -p "$K/include/config"
		zcat /proc/config.gz >"$K/.config" 2>/dev/null || skip "no /proc/config.gz"
		: >"$K/Module.symvers"
		uname -r >"$K/include/config/kernel.release"
	fi
	(cd "$(dirname "$1")" && stap -g -w -r "$K" -p3 "$(basename "$1")" >"$1.c" 2>"$1.err") ||
		{ cat "$1.err"; fail "stap -p3 failed on $1"; }
}
# hold_arenas NAME N [EXTRA] [system]: start examples/hold-arenas N with its
# stdin on the FIFO $OUT/NAME.in (held open on fd 3) and its malloc_info in
# $OUT/NAME.xml; returns once that is printed (the state is built and
# held).  Under the probe-enabled glibc, or Debian's own libc with
# "system".  Sets pid.  Close fd 3 (release_hold) to let it exit.
hold_arenas() {
	_n=$1
	rm -f "$OUT/$_n.in"
	mkfifo "$OUT/$_n.in"
	if [ "${4:-}" = system ]; then
		./examples/hold-arenas "$2" "$_n" "${3:-0}" <"$OUT/$_n.in" >"$OUT/$_n.xml" 2>"$OUT/$_n.stderr" &
	else
		(on_glibc ./examples/hold-arenas "$2" "$_n" "${3:-0}") <"$OUT/$_n.in" >"$OUT/$_n.xml" \
			2>"$OUT/$_n.stderr" &
	fi
	pid=$!
	exec 3>"$OUT/$_n.in"
	held_info "$_n"
}
release_hold() { exec 3>&-; wait $pid; }
# hold_fd NAME FD N [EXTRA [system [BINARY]]]: examples/hold-arenas (or
# BINARY, a copy of it) with N threads and its stdin on the FIFO
# $OUT/NAME.in held open on fd FD (3 to 9), its malloc_info in
# $OUT/NAME.xml, under the probe-enabled glibc or, with "system",
# Debian's own; the other fds 3 to 9 are closed in it, so that closing FD
# here lets it exit.  Appends its pid to PIDS; sets pid once it printed.
hold_fd() {
	rm -f "$OUT/$1.in"; mkfifo "$OUT/$1.in"
	if [ "${5:-}" = system ]; then
		(exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; exec "${6:-./examples/hold-arenas}" "$3" "$1" "${4:-0}") \
			<"$OUT/$1.in" >"$OUT/$1.xml" 2>/dev/null &
	else
		(exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
		 on_glibc "${6:-./examples/hold-arenas}" "$3" "$1" "${4:-0}") <"$OUT/$1.in" >"$OUT/$1.xml" 2>/dev/null &
	fi
	pid=$!
	PIDS="${PIDS:-} $pid"
	eval "exec $2>\"\$OUT/\$1.in\""
	held_info "$1"
}
# held_info NAME: until hold_arenas' or hold_fd's NAME has printed its
# malloc_info to $OUT/NAME.xml (the state is built and held), looking
# every 0.05 s; fails after 1200 looks
held_info() {
	_i=0
	until grep -q '</malloc>' "$OUT/$1.xml" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 1200 ] || fail "$1: hold-arenas never printed malloc_info"
		sleep 0.05
	done
}
