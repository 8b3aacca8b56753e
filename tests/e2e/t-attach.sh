#!/bin/sh
# -p PID: attach to a running program (started under the probe-enabled
# glibc's loader, waiting on a FIFO before its first allocation, released
# only once mallocwatch says it is tracing); mallocwatch must find its
# libc in /proc/PID/maps, stop by itself when it exits, and its report
# must agree with the program's malloc_info() exactly.
# Then ^C (SIGINT to mallocwatch) while the program still runs: the
# normal end of an attach, exit 0 and a complete report; the program is
# not signalled and runs on.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
mkfifo "$OUT/go"
start_storm() {	# start arena-storm 4 40, held on the FIFO; sets pid
	(on_glibc ./examples/arena-storm 4 40 -) <"$OUT/go" >"$OUT/malloc_info.xml" &
	pid=$!
	exec 3>"$OUT/go"
	wait_held $pid 60
}
# within 120 s; 1800 under the kernel runtime, whose first run of a
# script compiles its module (about 10 minutes in make check-vm's
# emulated guest)
WAIT=1200
[ "${MW_TEST_RUNTIME:-}" != kernel ] || WAIT=18000
wait_tracing() {	# FILE: until mallocwatch's note that tracing started
	i=0
	until grep -q "tracing process $pid" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt $WAIT ] || fail "mallocwatch did not start tracing in $((WAIT / 10)) s: $(cat "$1")"
		kill -0 $mwpid 2>/dev/null || fail "mallocwatch exited early: $(cat "$1")"
		sleep 0.1
	done
}

start_storm
"$MW" -p $pid --json "$OUT/report.json" -o "$OUT/summary.txt" 2>"$OUT/err" &
mwpid=$!
wait_tracing "$OUT/err"
echo go >&3
exec 3>&-
wait $mwpid || { _rc=$?; cat "$OUT/err"; fail "mallocwatch -p exited $_rc"; }
wait $pid || fail "the program failed"
expect_malloc_info "$OUT/malloc_info.xml" "$OUT/report.json" "$OUT"
grep -q "\"pid\": $pid," "$OUT/report.json" || fail "report is not about pid $pid"
grep -q '"exit_status": null' "$OUT/report.json" || fail "-p cannot know the exit status"
# ... and says why (issue 46), in the JSON and the summary
grep -q '"exit_status_unknown": "-p without -f does not ptrace the process: its exit status went to its parent alone"' \
	"$OUT/report.json" || fail "-p: the unknown exit status is not explained: $(grep -A3 '"exit_status"' "$OUT/report.json")"
grep -q "^  exit status unknown: -p without -f does not ptrace" "$OUT/summary.txt" ||
	fail "-p: the summary does not say why the exit status is unknown: $(head -5 "$OUT/summary.txt")"
cat "$OUT/actual.txt"

# ^C ends an attach normally
start_storm
"$MW" -p $pid --json "$OUT/int.json" -o "$OUT/int.txt" 2>"$OUT/int.err" &
mwpid=$!
wait_tracing "$OUT/int.err"
kill -INT $mwpid
wait $mwpid
rc=$?
[ $rc = 0 ] || { cat "$OUT/int.err"; fail "-p then ^C exited $rc, expected 0"; }
grep -q "incomplete\|ended early" "$OUT/int.err" && fail "^C called the report incomplete: $(cat "$OUT/int.err")"
grep -q '"complete": true' "$OUT/int.json" || fail "^C: the JSON report is not complete"
grep -q '"exit_status_unknown": "tracing was stopped (^C, SIGTERM or --duration) while it ran"' \
	"$OUT/int.json" || fail "^C: the unknown exit status is not explained: $(head -20 "$OUT/int.json")"
kill -0 $pid 2>/dev/null || fail "the traced program did not survive ^C of mallocwatch"
echo go >&3
exec 3>&-
wait $pid || fail "the program failed after mallocwatch stopped"
echo "^C: exit 0, complete report, program untouched"

# Attach late: a process whose threads made their arenas before -p
# attached (examples/hold-arenas, holding its state): the report starts
# from a snapshot taken when the probes were armed, so it lists every
# arena, each marked as there at attach; --duration ends it with exit 0
# and a complete report; the snapshots at attach and at the end equal
# the process's own malloc_info() exactly (nothing changes meanwhile).
hold_arenas hold 6
"$MW" -p $pid --duration 2 --json "$OUT/late.json" -o "$OUT/late.txt" --html "$OUT/late.html" \
	--save-stream "$OUT/late.mw" 2>"$OUT/late.err"
rc=$?
kill -0 $pid 2>/dev/null || fail "the traced program did not survive --duration"
release_hold
[ $rc = 0 ] || { cat "$OUT/late.err"; fail "-p --duration exited $rc, expected 0"; }
python3 - "$OUT/late.json" "$OUT" <<'PY' || fail "attach late"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["events"]["complete"], r["events"]
snaps = r["snapshots"]
assert snaps["attach"] and snaps["end"], snaps.keys()
for k in ("attach", "end"):
    json.dump({"snapshot": snaps[k]}, open("%s/late-%s.json" % (sys.argv[2], k), "w"))
arenas = r["arenas"]
assert len(arenas) == len(snaps["attach"]["arenas"]) == 7, (len(arenas), len(snaps["attach"]["arenas"]))
assert all(a["at_attach"] for a in arenas), arenas
assert sum(1 for h in r["heaps"] if h["at_attach"]) == 6, r["heaps"]
assert r["thresholds"]["mmap"] == snaps["attach"]["thresholds"]["mmap"], r["thresholds"]
# no probe hit while traced: no thread (the heaps found at attach were
# once made by a "thread 0")
assert r["threads"] == [], r["threads"]
print("attach late: %d arenas, all from the snapshot at attach" % len(arenas))
PY
for k in attach end; do
	expect_snapshot "$OUT/hold.xml" "$OUT/late-$k.json" "$OUT/late-$k"
done
grep -q "AT ATTACH" "$OUT/late.txt" || fail "the summary does not show the snapshots"
grep -q "^Threads: 0 (no thread hit a probe while traced)" "$OUT/late.txt" ||
	fail "the summary's threads: $(grep -A2 '^Threads' "$OUT/late.txt")"
# its saved stream replays to the same page, the same snapshots and
# model (the attach snapshot seeds the replay's model where it came);
# only what was read from the live process's pages and the machine
# (the RSS ledger, where it lives, the environment) is not in it
"$MW" replay --html "$OUT/late-replay.html" --json "$OUT/late-replay.json" \
	-o "$OUT/late-replay.txt" "$OUT/late.mw" || fail "replay of the -p stream exited $?"
cmp -s "$OUT/late.html" "$OUT/late-replay.html" || fail "the replay's page differs from the run's"
grep -q "AT ATTACH" "$OUT/late-replay.txt" || fail "the replay does not show the snapshots"
python3 - "$OUT/late.json" "$OUT/late-replay.json" <<'PY' || fail "the replay's JSON differs"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("arenas", "heaps", "threads", "thresholds", "sbrk", "events"):
    assert a[k] == b[k], (k, a[k], b[k])
live_only = ("ledger", "fragmentation", "findings", "where")
for w in ("attach", "end"):
    x = {k: v for k, v in a["snapshots"][w].items() if k not in live_only}
    y = {k: v for k, v in b["snapshots"][w].items() if k not in live_only}
    assert x == y, (w, [k for k in set(x) | set(y) if x.get(k) != y.get(k)])
print("replay of the -p stream: the same model and snapshots")
PY
echo "attach late: the report starts from the arenas that were there"
