#!/bin/sh
# -p PID: attach to a running program (started under the probe-enabled
# glibc's loader, waiting 2 s before its first allocation); mallocwatch
# must find its libc in /proc/PID/maps, stop by itself when it exits, and
# its report must agree with the program's malloc_info() exactly.
. tests/lib.sh
need_root
need_libc
L=$GLIBC_PREFIX/lib
"$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
	./examples/arena-storm 4 40 2000 >"$OUT/malloc_info.xml" &
pid=$!
sleep 0.3
"$MW" -q -p $pid --json "$OUT/report.json" -o "$OUT/summary.txt" || fail "mallocwatch -p exited $?"
wait $pid || fail "the program failed"
python3 tests/malloc_info_compare.py "$OUT/malloc_info.xml" "$OUT/report.json" "$OUT" || exit 99
expect_same "$OUT/expected.txt" "$OUT/actual.txt"
grep -q "\"pid\": $pid," "$OUT/report.json" || fail "report is not about pid $pid"
grep -q '"exit_status": null' "$OUT/report.json" || fail "-p cannot know the exit status"
cat "$OUT/actual.txt"
