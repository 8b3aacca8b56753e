#!/bin/sh
# `snapshot -p PID` of a process that is gone (issue 26, item 7): exit 1,
# one line, and no file made - not a 0-byte --json or -o file that a
# later step would take for a report.  A file that was there before is
# left as it was.
# needs: cpu
. tests/lib/lib.sh
true & gone=$!
wait $gone
"$MW" snapshot -p $gone --json "$OUT/gone.json" -o "$OUT/gone.txt" 2>"$OUT/gone.err"
rc=$?
[ $rc = 1 ] || fail "snapshot of a gone process: exit $rc, expected 1"
grep -q "^mallocwatch: no process $gone\$" "$OUT/gone.err" || fail "$(cat "$OUT/gone.err")"
[ -e "$OUT/gone.json" ] && fail "--json left a file of $(wc -c <"$OUT/gone.json") bytes"
[ -e "$OUT/gone.txt" ] && fail "-o left a file of $(wc -c <"$OUT/gone.txt") bytes"
echo '{"old": 1}' >"$OUT/kept.json"
"$MW" snapshot -p $gone --json "$OUT/kept.json" 2>/dev/null
[ "$(cat "$OUT/kept.json")" = '{"old": 1}' ] || fail "an earlier file was changed: $(cat "$OUT/kept.json")"
echo "snapshot of a gone process: exit 1, $(cat "$OUT/gone.err"), no file"
