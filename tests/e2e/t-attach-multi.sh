#!/bin/sh
# -p PID,PID,...: three running programs under the probe-enabled glibc,
# traced by one tracer session.  Each is held on a FIFO before its first
# allocation and released only once mallocwatch says it is tracing; each
# process's report (under "processes" in the JSON) must agree exactly with
# that process's own malloc_info(), whatever the others did: arenas made
# by one are never counted in another.  The run ends by itself when the
# last one exits.  Then: --check judges each process and names the one
# that fails; a process on another libc file is refused in one line; and
# a record of a process not in the run counts as garbled (unit-procs).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
L=$GLIBC_PREFIX/lib
pids=""
# the cgroup v2 hierarchy: /sys/fs/cgroup/unified on this host's hybrid
# layout, /sys/fs/cgroup in the guest of make check-vm
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=${V2:-/nonexistent}/mw-t-attach-multi-$$
mw=
cleanup() {
	# a mallocwatch left by a failed check (it may still be compiling)
	[ -z "$mw" ] || { kill "$mw" 2>/dev/null; wait "$mw" 2>/dev/null; }
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	i=0	# a cgroup goes once its processes are gone
	while [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
		i=$((i + 1)); sleep 0.1
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# storm NAME THREADS FD: arena-storm held on $OUT/NAME.in, whose writer is
# kept open on FD; appends its pid to pids
storm() {
	rm -f "$OUT/$1.in"
	mkfifo "$OUT/$1.in"
	"$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
		./examples/arena-storm "$2" 20 - <"$OUT/$1.in" >"$OUT/$1.xml" &
	_p=$!
	pids="$pids $_p"
	eval "exec $3>\"\$OUT/\$1.in\""
	wait_held $_p 30
}
# within 120 s; 1800 under the kernel runtime, whose first run of a script
# compiles its module (about 10 minutes in make check-vm's emulated guest)
WAIT=120
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=1800
wait_tracing() { wait_for "$1" "tracing $3 processes" $WAIT $2; }	# ERRFILE MWPID N

storm a 2 4
storm b 4 5
storm c 6 6
set -- $pids
"$MW" -p "$1,$2,$3" --json "$OUT/multi.json" -o "$OUT/multi.txt" 2>"$OUT/multi.err" 4>&- 5>&- 6>&- &
mw=$!
wait_tracing "$OUT/multi.err" $mw 3
echo go >&4; echo go >&5; echo go >&6
exec 4>&- 5>&- 6>&-
wait $mw
rc=$? mw=
[ $rc = 0 ] || fail "-p A,B,C exited $rc: $(cat "$OUT/multi.err")"
python3 - "$OUT/multi.json" "$OUT" "$1" "$2" "$3" <<'PY' || fail "the JSON of several processes"
import json, sys
r = json.load(open(sys.argv[1]))
want = [int(p) for p in sys.argv[3:]]
assert r["schema_version"] == 2, r["schema_version"]
got = [p["target"]["pid"] for p in r["processes"]]
assert got == want, (got, want)
assert r["target"]["pid"] == want[0]
assert r["totals"]["processes"] == 3, r["totals"]
assert r["totals"]["arenas"] == sum(len(p["arenas"]) for p in r["processes"]), r["totals"]
for name, p in zip("abc", r["processes"]):
    assert p["events"]["complete"], p["events"]
    json.dump(p, open("%s/%s.json" % (sys.argv[2], name), "w"))
PY
for n in a b c; do
	expect_malloc_info "$OUT/$n.xml" "$OUT/$n.json" "$OUT/$n" "$n"
done
[ "$(grep -c '^mallocwatch: process [0-9]* (ld-linux-x86-64)$' "$OUT/multi.txt")" = 3 ] || fail "not one summary per process"
grep -q "^mallocwatch: 3 processes in all: " "$OUT/multi.txt" || fail "no totals line"
for p in $pids; do wait $p || fail "a program failed"; done
pids=""

# --check per process: 2 threads stay within arenas<=4, 6 do not
storm a 2 4
storm b 6 5
set -- $pids
"$MW" -p "$1,$2" --check 'arenas<=4' -o /dev/null 2>"$OUT/check.err" 4>&- 5>&- 6>&- &
mw=$!
wait_tracing "$OUT/check.err" $mw 2
echo go >&4; echo go >&5
exec 4>&- 5>&-
wait $mw
rc=$? mw=
[ $rc = 3 ] || fail "--check over two processes exited $rc, expected 3: $(cat "$OUT/check.err")"
grep -q "^FAIL process $2 (.*): arenas 7, limit <= 4" "$OUT/check.err" ||
	fail "the failing process is not named: $(cat "$OUT/check.err")"
grep -q "^PASS process $1 (.*): arenas" "$OUT/check.err" ||
	fail "the passing process is not named: $(cat "$OUT/check.err")"
cat "$OUT/check.err"
for p in $pids; do wait $p; done
pids=""

# --cgroup DIR: the processes in it when the run starts, and one that
# joins it during the run (held before its first allocation until
# mallocwatch says it traces it): each exact
if [ -n "$V2" ] && [ -w "$V2/cgroup.procs" ] && mkdir "$CG"; then
	storm a 2 4
	storm b 4 5
	set -- $pids
	echo $1 >"$CG/cgroup.procs" && echo $2 >"$CG/cgroup.procs" || fail "cannot fill $CG"
	"$MW" --cgroup "$CG" --json "$OUT/cg.json" -o "$OUT/cg.txt" 2>"$OUT/cg.err" 4>&- 5>&- 6>&- &
	mw=$!
	wait_tracing "$OUT/cg.err" $mw 2
	storm c 3 6
	set -- $pids
	echo $3 >"$CG/cgroup.procs" || fail "cannot move $3 into $CG"
	_i=0
	until grep -q "process $3 (.*) joined the cgroup" "$OUT/cg.err"; do
		_i=$((_i + 1))
		[ $_i -lt 300 ] || fail "the joiner $3 was not traced: $(cat "$OUT/cg.err")"
		sleep 0.1
	done
	echo go >&4; echo go >&5; echo go >&6
	exec 4>&- 5>&- 6>&-
	wait $mw
	rc=$? mw=
	[ $rc = 0 ] || fail "--cgroup exited $rc: $(cat "$OUT/cg.err")"
	python3 - "$OUT/cg.json" "$OUT" "$1" "$2" "$3" <<'PY' || fail "--cgroup JSON"
import json, sys
r = json.load(open(sys.argv[1]))
got = sorted(p["target"]["pid"] for p in r["processes"])
assert got == sorted(int(p) for p in sys.argv[3:]), got
for p in r["processes"]:
    assert p["events"]["complete"], p["events"]
    json.dump(p, open("%s/cg-%d.json" % (sys.argv[2], p["target"]["pid"]), "w"))
PY
	for n in a b c; do
		p=$1
		shift
		expect_malloc_info "$OUT/$n.xml" "$OUT/cg-$p.json" "$OUT/cg-$n"
	done
	for p in $pids; do wait $p; done
	pids=""
	echo "--cgroup: both processes of $CG traced, and the one that joined during the run, each exact"
else
	echo "no writable cgroup v2: --cgroup not tried"
fi

# another libc file: refused, one line, nothing traced
hold_arenas sys 2 0 system
sys=$pid
storm a 2 4
"$MW" -p "$sys,$(echo $pids | awk '{print $NF}')" -o /dev/null 2>"$OUT/other.err" 3>&- 4>&-
rc=$?
echo go >&4
exec 4>&-
release_hold
[ $rc = 1 ] || fail "two libc files: exit $rc, expected 1"
[ "$(wc -l <"$OUT/other.err")" = 1 ] || fail "two libc files: $(cat "$OUT/other.err")"
grep -q "map different libc files" "$OUT/other.err" || fail "two libc files: $(cat "$OUT/other.err")"
cat "$OUT/other.err"
echo "-p A,B,C: each process exact, checks per process, another libc refused"
