#!/bin/sh
# mallocwatch trim -p (issue 20, item 5): malloc_trim(0) called in a
# running process at a safe point.
#  - examples/frag-hold pages: 64 free chunks of 64 KiB, written, between
#    chunks in use: --dry-run predicts the resident whole free pages; trim
#    gives back that much RSS (within 2%; both read while the process is
#    held), the prediction after it is under 2% of the one before, and the
#    process goes on and exits 0.  On the probe-enabled glibc and on
#    Debian's own (libc6-dbg).
#  - frag-hold pinned: every free byte shares a page with bytes in use:
#    nothing predicted, nothing given back (within 2% of the pages case).
#  - tests/fixtures/busy-alloc, 8 threads in malloc and free all the time:
#    5 trims, each made or refused in one line; the process runs on and
#    exits 0 when told.
#  - busy-alloc SIGSTOPped with a thread inside malloc (an arena lock
#    held, checked by the refusal's reason): refused, "malloc_trim not
#    called", and the process is still stopped.
# needs: root
. tests/lib/lib.sh
need_root
[ "$(uname -m)" = x86_64 ] || skip "trim calls into the process on x86_64 only"
FIX=build/tests/fixtures/busy-alloc
BUSY_DUMP=$OUT/busy.xml
# MW_ROOT: the fixture and the file it writes are the root's
[ -z "$MW_ROOT" ] || BUSY_DUMP=/tmp/mw-busy.xml
[ -x "${MW_ROOT:-.}/$FIX" ] || { echo "no $FIX (make check builds it)"; exit 99; }
dbg=/usr/lib/debug/.build-id/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
	awk '/Build ID/ {print substr($3, 1, 2) "/" substr($3, 3)}').debug
pid= holder=
trap '[ -z "$pid" ] || { kill -CONT $pid; kill $pid; } 2>/dev/null; [ -z "$holder" ] || kill $holder 2>/dev/null' EXIT

# start NAME LIBC PROG ARGS...: PROG under LIBC (probes or system), its
# stdin a FIFO held open by a sleeper; $pid once it printed its first line
start() {
	name=$1 libc=$2
	shift 2
	rm -f "$OUT/$name.in"
	mkfifo "$OUT/$name.in"
	if [ $libc = probes ]; then
		(on_glibc "$@") <"$OUT/$name.in" >"$OUT/$name.out" 2>&1 &
	else
		"$@" <"$OUT/$name.in" >"$OUT/$name.out" 2>&1 &
	fi
	pid=$!
	sleep 1000 >"$OUT/$name.in" &
	holder=$!
	i=0
	until [ -s "$OUT/$name.out" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "$name never got ready"; sleep 0.05
	done
}
# finish: end the program (its stdin closes); it must exit 0
finish() {
	kill $holder; wait $holder 2>/dev/null; holder=
	wait $pid; rc=$?; pid=
	[ $rc = 0 ] || fail "$name exited $rc after the trims: $(cat "$OUT/$name.out")"
}
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trim'][sys.argv[2]])" "$@"; }

for libc in probes system; do
	if [ $libc = probes ]; then
		[ -f "$LIBC" ] || { echo "note: no probe-enabled glibc"; continue; }
	else
		[ -z "$MW_ROOT" ] || continue	# the root's own libc is the probe-enabled one
		[ -f "$dbg" ] || { echo "note: libc6-dbg is not installed"; continue; }
	fi
	start pages-$libc $libc ./examples/frag-hold pages 64
	"$MW" trim -p $pid --dry-run --json "$OUT/dry.json" -o "$OUT/dry.txt" 2>"$OUT/err" ||
		fail "$libc --dry-run: exit $?: $(cat "$OUT/err")"
	pred=$(jget "$OUT/dry.json" predicted)
	[ "$pred" -gt 3000000 ] || fail "$libc: predicted only $pred bytes: $(cat "$OUT/dry.txt")"
	"$MW" trim -p $pid --json "$OUT/trim.json" -o "$OUT/trim.txt" 2>"$OUT/err" ||
		fail "$libc trim: exit $?: $(cat "$OUT/err")"
	python3 - "$OUT/trim.json" <<'PY' || fail "$libc: $(cat "$OUT/trim.txt")"
import json, sys
t = json.load(open(sys.argv[1]))["trim"]
drop = t["rss_before"] - t["rss_after"]
assert t["returned"] == 1, t
assert t["predicted"] > 3000000 and abs(drop - t["predicted"]) <= 0.02 * t["predicted"], t
PY
	"$MW" trim -p $pid --dry-run --json "$OUT/after.json" -o /dev/null 2>"$OUT/err" ||
		fail "$libc second --dry-run: $(cat "$OUT/err")"
	[ "$(jget "$OUT/after.json" predicted)" -lt $((pred / 50)) ] ||
		fail "$libc: still predicted after the trim: $(cat "$OUT/after.json")"
	echo "ok: $libc: $(sed -n 2,3p "$OUT/trim.txt" | tr -s ' ')"
	finish

	start pinned-$libc $libc ./examples/frag-hold pinned 2000
	"$MW" trim -p $pid --json "$OUT/pinned.json" -o /dev/null 2>"$OUT/err" ||
		fail "$libc pinned: exit $?: $(cat "$OUT/err")"
	python3 - "$OUT/pinned.json" $pred <<'PY' || fail "$libc pinned: $(cat "$OUT/pinned.json")"
import json, sys
t = json.load(open(sys.argv[1]))["trim"]
tol = 0.02 * int(sys.argv[2])
assert t["predicted"] <= tol and abs(t["rss_before"] - t["rss_after"]) <= tol, t
PY
	echo "ok: $libc pinned: nothing to give back, nothing given"
	finish
done

[ -f "$LIBC" ] || exit 0
start busy probes $FIX 8 "$BUSY_DUMP"
made=0
for r in 1 2 3 4 5; do
	if "$MW" trim -p $pid -o "$OUT/busy.txt" 2>"$OUT/busy.err"; then
		made=$((made + 1))
	else
		[ "$(wc -l <"$OUT/busy.err")" = 1 ] && grep -q "malloc_trim not called$" "$OUT/busy.err" ||
			fail "busy trim $r: $(cat "$OUT/busy.err")"
	fi
	grep -q '^State:.*[RS] ' /proc/$pid/status || fail "busy: not running after trim $r"
done
echo "ok: busy-alloc: $made of 5 trims made, the others refused; it runs on"
kill -STOP $pid
i=0
until [ "$(grep -c '^State:.*T (stopped)' /proc/$pid/task/*/status | grep -c ':0$')" = 0 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "not stopped"; sleep 0.01
done
"$MW" trim -p $pid -o /dev/null 2>"$OUT/stopped.err" && fail "trimmed a process stopped inside malloc"
grep -q "is locked (a thread is inside malloc or free); malloc_trim not called" "$OUT/stopped.err" ||
	grep -q "job-control stop.*malloc_trim not called" "$OUT/stopped.err" ||
	fail "stopped: $(cat "$OUT/stopped.err")"
# a thread let go re-enters the group stop still in effect (the kernel's
# __ptrace_unlink wakes it to stop again): running until it is scheduled,
# which a loaded machine delays; one really let run never stops again
i=0
until grep -q '^State:.*T (stopped)' /proc/$pid/status; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the stopped process was let run"; sleep 0.05
done
echo "ok: stopped inside malloc: $(cat "$OUT/stopped.err")"
kill -CONT $pid
finish
