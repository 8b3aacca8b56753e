#!/bin/sh
# scripts/mutate.sh - does the test suite catch wrong figures?  Applies
# each one-line bug of tests/mutations/list, one at a time, in a scratch
# copy of the tree, rebuilds, runs the tests the list names for it, and
# puts the line back; prints a line per mutation and the score.  Not part
# of `make check` (it rebuilds once per mutation: minutes).
#
# Usage: scripts/mutate.sh [--tree DIR] [--list FILE] [--keep] [--verify] [NAME...]
#   --tree DIR   the tree to mutate (default: this one); e.g. an export of
#                main, to score main's own tests on the same list
#   --list FILE  the mutations (default: tests/mutations/list of this tree)
#   --keep       leave the scratch copy (its path is printed)
#   --verify     only check that each mutation's line is still in its file
#                (seconds: nothing built or run); a line per one that is
#                not, "DRIFTED NAME: ...", and exit 1 when one is
#   NAME...      only these mutations
#
# Each mutation is reported as
#   CAUGHT NAME (by TEST...)     a named test failed with the bug in
#   SURVIVED NAME                every named test passed (or skipped)
#   NOT APPLIED NAME: WHY        its line is not in that tree (once), or
#                                it did not build: not counted
# and at the end "mutation score: N of M caught".  A named test that
# fails on the unmutated copy is dropped (said first): it cannot catch.
# Needs what the tests need (root and the probe-enabled glibc for the
# traced ones); tests that skip catch nothing.  Exit 0 when every applied
# mutation was caught, 1 when one survived, 2 on a usage or build error.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$here list= keep=0 verify=0
while [ $# -gt 0 ]; do
	case $1 in
	--tree) tree=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--list) list=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--verify) verify=1; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "mutate.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$list" ] || list=$here/tests/mutations/list
[ -f "$list" ] || { echo "mutate.sh: no list '$list'" >&2; exit 2; }
list=$(cd "$(dirname "$list")" && pwd)/$(basename "$list")
scratch=$(mktemp -d /tmp/mw-mutate.XXXXXX) || exit 2
[ $keep = 1 ] || trap 'rm -rf "$scratch"' EXIT
# the mutations, as NAME US FILE US AT US TESTS US FROM US TO lines (US:
# the unit separator, \037: a line of C may hold tabs)
python3 - "$list" "$@" >"$scratch/mutations.tsv" <<'PY' || exit 2
import sys
want = set(sys.argv[2:])
blocks = open(sys.argv[1]).read().split("\n\n")
for b in blocks:
    m = {"at": "1"}
    for l in b.splitlines():
        if l.startswith("#") or not l.strip():
            continue
        if l.startswith("- "):
            m["from"] = l[2:].strip()
        elif l.startswith("+ "):
            m["to"] = l[2:].strip()
        elif ":" in l:
            k, v = l.split(":", 1)
            m[k.strip()] = v.strip()
    if "name" not in m:
        continue
    for k in ("file", "tests", "from", "to"):
        if k not in m:
            sys.exit("mutate.sh: mutation %s has no %s" % (m["name"], k))
    if want and m["name"] not in want:
        continue
    print("\037".join((m["name"], m["file"], m["at"], m["tests"], m["from"], m["to"])))
PY

# apply FILE AT FROM TO [look]: the AT-th line equal to FROM (blanks
# aside) becomes TO with its indentation (with "look": is only looked
# for); 0, or 1 when there is no such line
apply() {
	python3 - "$@" <<'PY'
import sys
path, at, frm, to = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    lines = open(path).read().split("\n")
except OSError:
    sys.exit(1)
hits = [i for i, l in enumerate(lines) if l.strip() == frm]
if len(hits) < at:
    sys.exit(1)
if sys.argv[5:] == ["look"]:
    sys.exit(0)
i = hits[at - 1]
lines[i] = lines[i][:len(lines[i]) - len(lines[i].lstrip())] + to
open(path, "w").write("\n".join(lines))
PY
}
us=$(printf '\037')
if [ $verify = 1 ]; then
	n=0 drifted=0
	while IFS=$us read -r name file at tests from to; do
		[ -n "$name" ] || continue
		n=$((n + 1))
		apply "$tree/$file" "$at" "$from" "$to" look && continue
		[ "$at" = 1 ] && what="no line" || what="no $at lines"
		echo "DRIFTED $name: $what '$from' in $file"
		drifted=$((drifted + 1))
	done <"$scratch/mutations.tsv"
	echo "mutations verified: $((n - drifted)) of $n in place"
	[ $drifted = 0 ]
	exit
fi

echo "mutate.sh: scratch copy of $tree in $scratch"
tar -C "$tree" --exclude=./build --exclude=./tests/out --exclude=./.git -cf - . |
	tar -C "$scratch" -xf - || exit 2
cd "$scratch" || exit 2

# what the tests run: the program, the unit tests, the fixtures, examples
units=$(ls tests/unit/unit-*.c 2>/dev/null | sed 's|^tests/unit/\(.*\)\.c$|build/tests/\1|')
fixtures=$(sed -n '/^FIXTURES = /,/[^\\]$/p' Makefile | tr -d '\\' | sed 's/^FIXTURES = //')
build() { make -s -j2 all $units $fixtures >"$scratch/build.log" 2>&1; }
build && make -s -C examples >>"$scratch/build.log" 2>&1 ||
	{ echo "mutate.sh: the unmutated copy does not build:"; tail -20 "$scratch/build.log"; exit 2; }

# the tests named anywhere, run once unmutated: a failing one cannot catch
alltests=$(cut -d "$us" -f4 "$scratch/mutations.tsv" | tr ' ' '\n' | sort -u | tr '\n' ' ')
broken=
for t in $alltests; do
	sh tests/run "$t" >"$scratch/base-$t.log" 2>&1 ||
		broken="$broken $t"
	grep -q '^0 passed, 0 failed' "$scratch/base-$t.log" && broken="$broken $t"
done
[ -z "$broken" ] || echo "mutate.sh: not used (failing unmutated, or not in this tree):$broken"

caught=0 applied=0 survived=
while IFS=$us read -r name file at tests from to; do
	[ -n "$name" ] || continue
	cp "$file" "$scratch/orig" || exit 2
	if ! apply "$file" "$at" "$from" "$to"; then
		echo "NOT APPLIED $name: no line '$from' in $file"
		continue
	fi
	if ! build; then
		echo "NOT APPLIED $name: does not build"
		cp "$scratch/orig" "$file"
		continue
	fi
	applied=$((applied + 1))
	by=
	for t in $tests; do
		case " $broken " in *" $t "*) continue ;; esac
		sh tests/run "$t" >"$scratch/$name-$t.log" 2>&1 || by="$by $t"
	done
	if [ -n "$by" ]; then
		caught=$((caught + 1))
		echo "CAUGHT $name (by$by)"
	else
		echo "SURVIVED $name"
		survived="$survived $name"
	fi
	cp "$scratch/orig" "$file"
done <"$scratch/mutations.tsv"
build || { echo "mutate.sh: the restored copy does not build"; exit 2; }
echo "mutation score: $caught of $applied caught${survived:+ (survived:$survived)}"
[ -z "$survived" ]
