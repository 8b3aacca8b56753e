#!/bin/sh
# check-version.sh - the version's one source is VERSION; debian/changelog's
# newest entry and docs/NEWS.md's newest entry must name the same one.
#
# Usage: scripts/check-version.sh   (from the source tree; make deb and
# tests/e2e/t-version.sh run it).  Prints the version; exits 1 with one line
# per disagreement otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
bad=0
v=$(cat VERSION 2>/dev/null)
case $v in
[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "check-version: VERSION holds '$v', not MAJOR.MINOR.PATCH" >&2; exit 1 ;;
esac
case $v in *[!0-9.]*) echo "check-version: VERSION holds '$v', not MAJOR.MINOR.PATCH" >&2; exit 1 ;; esac
# "mallocwatch (0.2.0) unstable; urgency=medium": the package is native,
# so its version is VERSION itself (an epoch or a Debian revision would
# say it is not)
deb=$(sed -n '1s/^mallocwatch (\([^)]*\)) .*/\1/p' debian/changelog)
if [ "$deb" != "$v" ]; then
	echo "check-version: debian/changelog's newest entry is '$deb', VERSION is '$v'" >&2
	bad=1
fi
news=$(sed -n 's/^## \([0-9][0-9.]*\)\( .*\)\{0,1\}$/\1/p' docs/NEWS.md | head -n 1)
if [ "$news" != "$v" ]; then
	echo "check-version: docs/NEWS.md's newest entry is '$news', VERSION is '$v'" >&2
	bad=1
fi
[ $bad = 0 ] && echo "$v"
exit $bad
