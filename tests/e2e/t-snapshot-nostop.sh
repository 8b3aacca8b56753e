#!/bin/sh
# snapshot --all, a whole-host view (issue 43, item 11; issue 44, item
# 6): root's table must stop no process, other users' least of all.
# tests/fixtures/busy-alloc, run as nobody, mallocs and frees in 4
# threads without pause; `snapshot --all` run as root under strace (every
# ptrace call of its threads) must make no PTRACE_SEIZE, ATTACH or
# INTERRUPT, and the busy process's TracerPid (sampled through a run)
# is never mallocwatch's; its row is read or refused with the reason, which says it was
# not stopped.  `snapshot -p` of it stops it (the same check fails: the
# test can tell; --all --stop is not run here, to stop no other process on
# the machine: t-snapshot-all runs it).  --stop goes with --all only.  A process listed and gone
# before its read keeps its row: "exited before it was read" (short-lived
# processes started all through a few tables).
# needs: root serial
. tests/lib/lib.sh
need_root
command -v strace >/dev/null || skip "needs strace (scripts/install-deps.sh installs it)"
FIX=$PWD/build/tests/fixtures/busy-alloc
[ -x $FIX ] || { echo "no $FIX (make check builds it)"; exit 99; }
pid= holder= churn=
trap 'kill $holder $pid $churn ${mw:-} 2>/dev/null' EXIT

chmod 755 "$OUT" && rm -f "$OUT/busy.in" && mkfifo -m 644 "$OUT/busy.in" || exit 99
touch "$OUT/dump" && chmod 666 "$OUT/dump" || exit 99
$NOBODY $FIX 4 "$OUT/dump" <"$OUT/busy.in" >"$OUT/busy.out" 2>&1 &
pid=$!
sleep 1000 >"$OUT/busy.in" &
holder=$!
wait_for "$OUT/busy.out" READY 30
[ "$(stat -c %u /proc/$pid)" = 65534 ] || fail "busy-alloc is not nobody's"

# seizes FILE: the ptrace calls that stop a process, in strace's FILE
seizes() { grep -cE 'PTRACE_(SEIZE|ATTACH|INTERRUPT)' "$1"; }

for run in 1 2 3; do
	strace -f -qq --seccomp-bpf -e trace=ptrace -o "$OUT/strace-$run.txt" \
		"$MW" snapshot --all --json "$OUT/all-$run.json" -o "$OUT/all-$run.txt" 2>"$OUT/all-$run.err" ||
		fail "--all exited $?: $(cat "$OUT/all-$run.err")"
	n=$(seizes "$OUT/strace-$run.txt")
	[ "$n" = 0 ] || fail "run $run: --all stopped processes: $(grep -E 'PTRACE_(SEIZE|ATTACH|INTERRUPT)' "$OUT/strace-$run.txt" | head -3)"
	# without strace: busy-alloc's tracer, sampled while a table is made,
	# is never this mallocwatch (another program may trace it meanwhile:
	# not ours to judge)
	"$MW" snapshot --all -o /dev/null 2>/dev/null &
	mw=$!
	while kill -0 $mw 2>/dev/null; do
		awk '/^TracerPid:/ {print $2}' /proc/$pid/status
	done >"$OUT/tracer-$run.txt" 2>/dev/null
	wait $mw || fail "run $run: --all exited $?"
	[ -s "$OUT/tracer-$run.txt" ] || fail "run $run: TracerPid never sampled"
	! grep -qx "$mw" "$OUT/tracer-$run.txt" || fail "run $run: mallocwatch $mw traced busy-alloc"
	python3 - "$OUT/all-$run.json" $pid <<'PY' || fail "run $run: the busy process's row"
import json, sys
d = json.load(open(sys.argv[1]))
row = [p for p in d["processes"] if p["pid"] == int(sys.argv[2])]
assert len(row) == 1, "no row for busy-alloc"
p = row[0]
if p["error"] is not None:
    e = p["error"]
    assert e["kind"] == "inconsistent", e
    assert e["message"].endswith("(not stopped: --all stops a process only with --stop)"), e
    print("refused:", e["message"])
else:
    assert p["stops"] == 0, p
    print("read while it ran, %d tries" % p["tries"])
PY
	echo "ok: run $run: no ptrace stop ($(wc -l <"$OUT/tracer-$run.txt") TracerPid samples, none $mw)"
done

# -p stops it when its reads while it runs disagree (a busy process's
# seldom agree: up to 5 tries)
stopped=0
for run in 1 2 3 4 5; do
	strace -f -qq --seccomp-bpf -e trace=ptrace -o "$OUT/stop-$run.txt" \
		"$MW" snapshot -p $pid -o /dev/null 2>"$OUT/stop-$run.err"
	if grep -qE "PTRACE_SEIZE, $pid," "$OUT/stop-$run.txt"; then
		stopped=1
		break
	fi
done
[ $stopped = 1 ] || fail "-p never stopped the busy process: the strace check cannot tell"
echo "ok: -p stops it, and strace shows it (try $run)"
for bad in "-p $pid --stop" "--all --stop --no-stop" "--cgroup / --stop"; do
	"$MW" snapshot $bad >/dev/null 2>"$OUT/usage.err"
	[ $? = 2 ] && grep -q "^mallocwatch: --stop goes with --all" "$OUT/usage.err" ||
		fail "snapshot $bad: $(cat "$OUT/usage.err")"
done
echo "ok: --stop goes with --all only"
kill $holder; wait $holder 2>/dev/null; holder=
wait $pid; pid=

# processes that live a few ms: some are listed and gone before they are
# read, and keep their rows
(while :; do /bin/sleep 0.02; done) &
churn=$!
found=0
for run in 1 2 3 4 5 6 7 8 9 10; do
	"$MW" snapshot --all --json "$OUT/churn.json" -o /dev/null 2>/dev/null || fail "--all exited $?"
	if python3 - "$OUT/churn.json" <<'PY'
import json, sys
gone = [p for p in json.load(open(sys.argv[1]))["processes"]
        if p["error"] and p["error"]["kind"] == "exited"
        and p["error"]["message"] == "process %d exited before it was read" % p["pid"]]
sys.exit(0 if gone else 1)
PY
	then
		found=1
		break
	fi
done
kill $churn; wait $churn 2>/dev/null; churn=
[ $found = 1 ] || fail "no row of a process gone before its read in 10 tables"
echo "ok: a process listed and gone before its read has its row (table $run)"
