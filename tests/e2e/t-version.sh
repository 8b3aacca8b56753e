#!/bin/sh
# One version: VERSION, what --version prints, the JSON report's
# environment.mallocwatch, debian/changelog's and docs/NEWS.md's newest
# entries (scripts/check-version.sh, which make deb runs too).
# needs: cpu
. tests/lib/lib.sh
v=$(cat VERSION) || exit 99
sh scripts/check-version.sh || fail "VERSION, debian/changelog and docs/NEWS.md disagree"
[ "$("$MW" --version)" = "mallocwatch $v" ] || fail "--version says '$("$MW" --version)', VERSION '$v'"
# check-version must see a disagreement (a copy of the three files)
mkdir -p "$OUT/t/scripts" "$OUT/t/debian" "$OUT/t/docs" || exit 99
cp scripts/check-version.sh "$OUT/t/scripts/" && cp debian/changelog "$OUT/t/debian/" &&
	cp docs/NEWS.md "$OUT/t/docs/" || exit 99
echo 9.9.9 >"$OUT/t/VERSION"
sh "$OUT/t/scripts/check-version.sh" 2>"$OUT/err" && fail "check-version took VERSION 9.9.9"
cat "$OUT/err"
[ "$(grep -c "VERSION is '9.9.9'" "$OUT/err")" = 2 ] || fail "check-version did not name both files"
# the JSON report's, from a run
if [ "$(id -u)" = 0 ] && [ -f "$GLIBC_PREFIX/lib/libc.so.6" ]; then
	"$MW" -q -o /dev/null --json "$OUT/r.json" -c /bin/true || fail "mallocwatch -c /bin/true failed"
	j=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["environment"]["mallocwatch"])' \
		"$OUT/r.json") || fail "no environment.mallocwatch in the JSON report"
	[ "$j" = "$v" ] || fail "the JSON report's environment.mallocwatch is '$j', VERSION '$v'"
else
	echo "the JSON report's version not checked: needs root and the probe-enabled glibc"
fi
echo ok
