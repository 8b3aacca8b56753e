#!/bin/sh
# --format-output FILE (issue 26, item 6): the --check results in
# --format, and nothing else, in FILE, while the traced program writes to
# its stderr and stdout and mallocwatch's notes go to stderr: a CI step
# parses the JUnit XML and the JSON as they are.  '-' is stdout (-p: no
# program shares it).  Usage errors: without --check; with --json - too.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v python3 >/dev/null || skip "no python3 to parse the results"
noisy() {
	"$MW" --check 'arenas>=1' --check 'arenas<=0' --format "$1" --format-output "$2" \
		-c /bin/sh -c 'echo "program noise <on stderr>" >&2; echo "program output"
			exec ./examples/arena-storm 2' >"$OUT/$1.out" 2>"$OUT/$1.err"
}
noisy junit "$OUT/checks.xml"
rc=$?
[ $rc = 3 ] || fail "a failed rule: exit $rc, expected 3: $(cat "$OUT/junit.err")"
grep -q "program noise" "$OUT/junit.err" || fail "the program's stderr is not on stderr"
grep -q "program output" "$OUT/junit.out" || fail "the program's stdout is not on stdout"
grep -q "testcase\|testsuite" "$OUT/junit.err" && fail "JUnit XML on stderr: $(cat "$OUT/junit.err")"
python3 - "$OUT/checks.xml" <<'PY' || fail "checks.xml is not the results' JUnit XML: $(cat "$OUT/checks.xml")"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
failed = [c for c in cases if c.find("failure") is not None]
assert len(cases) == 2 and len(failed) == 1, (len(cases), len(failed))
print("junit:", len(cases), "testcases,", len(failed), "failed")
PY
noisy json "$OUT/checks.json"
[ $? = 3 ] || fail "json: expected exit 3: $(cat "$OUT/json.err")"
python3 - "$OUT/checks.json" <<'PY' || fail "checks.json: $(cat "$OUT/checks.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] == 1 and r["failed"] == 1, r
print("json: passed 1, failed 1")
PY

# -p: '-' is stdout, nothing else there
hold_arenas held 3
"$MW" -p $pid --duration 1 -o /dev/null --check 'arenas>=2' --format json --format-output - \
	>"$OUT/p.json" 2>"$OUT/p.err" || fail "-p --format-output - exited $?: $(cat "$OUT/p.err")"
release_hold
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["passed"] == 1, r' \
	"$OUT/p.json" || fail "-p: stdout is not the results' JSON: $(cat "$OUT/p.json")"

"$MW" --format-output "$OUT/x" -c true 2>"$OUT/u1.err"
[ $? = 2 ] || fail "--format-output without --check: expected exit 2"
"$MW" --check 'arenas>=1' --json - --format-output - -c true 2>"$OUT/u2.err"
[ $? = 2 ] || fail "--json - with --format-output -: expected exit 2"
cat "$OUT/u1.err" "$OUT/u2.err"
echo "--format-output: JUnit and JSON parse, the program's stderr and stdout apart"
