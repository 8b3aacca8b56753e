#!/bin/sh
# A snapshot is not called idle (read once, src/live/quiet.c) while a task
# that is no child of the process's threads writes its memory.  nobody
# runs tests/fixtures/vm-sibling: a process asleep in pause() whose
# clone(CLONE_VM | CLONE_PARENT) task mallocs and frees in its memory
# without pause (its parent is the process's parent: no children file of
# the process's lists it); "thread": that task's CLONE_THREAD thread does
# it, its leader gone (a zombie).  Every thread of the process is asleep
# with the same counts, so a proof from its threads and their children
# alone calls each snapshot "idle" (1 read) while the heap changes: this
# fails.  Each of 5 snapshots per mode is kept by a later read ("reread")
# or refused, never "idle".
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
FIX=$PWD/build/tests/fixtures/vm-sibling
[ -x $FIX ] || skip "no $FIX (make check-build builds it)"
command -v setsid >/dev/null || skip "no setsid"
pid=
trap '[ -z "$pid" ] || /bin/kill -s KILL -- -$pid 2>/dev/null' EXIT

for mode in parent thread; do
	$NOBODY setsid $FIX $mode >"$OUT/$mode.out" 2>&1 &
	pid=$!
	wait_for "$OUT/$mode.out" READY 30 $pid
	sleep 0.2
	tasks=$(ps -L -o lwp= -g $pid | wc -l)
	[ "$tasks" -ge 2 ] || fail "$mode: the sharing task is not running ($tasks tasks)"
	for run in 1 2 3 4 5; do
		"$MW" snapshot -p $pid --no-stop --json "$OUT/$mode-$run.json" -o /dev/null \
			2>"$OUT/$mode-$run.err"
		rc=$?
		if [ $rc = 0 ]; then
			python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["snapshot"]
assert s["check"] == "reread" and s["tries"] >= 2, (s["check"], s["tries"])' \
				"$OUT/$mode-$run.json" || fail "$mode run $run: called idle"
			echo "ok: $mode run $run: kept by a later read"
		else
			[ $rc = 1 ] && grep -q "no consistent snapshot" "$OUT/$mode-$run.err" ||
				fail "$mode run $run: exit $rc: $(cat "$OUT/$mode-$run.err")"
			echo "ok: $mode run $run: refused"
		fi
	done
	/bin/kill -s KILL -- -$pid
	wait $pid 2>/dev/null
	pid=
done
echo "ok: never called idle"
