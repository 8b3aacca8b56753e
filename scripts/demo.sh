#!/bin/sh
# demo.sh - trace examples/arena-storm (8 threads) and set mallocwatch's
# account of its arenas beside glibc's own, malloc_info().
# Run by `sudo make demo` after the build; output files under build/demo/.
set -eu
cd "$(dirname "$0")/.."
d=build/demo
mkdir -p $d
echo "== sudo ./build/mallocwatch --json $d/report.json -c ./examples/arena-storm 8 100"
./build/mallocwatch --json $d/report.json -c ./examples/arena-storm 8 100 >$d/malloc_info.xml
python3 tests/lib/malloc_info_compare.py $d/malloc_info.xml $d/report.json $d
echo
echo "== per arena: glibc's malloc_info() (left) and mallocwatch (right)"
paste -d '|' $d/expected.txt $d/actual.txt | awk -F'|' '{ printf "  %-42s %s\n", $1, $2 }'
if cmp -s $d/expected.txt $d/actual.txt; then
	echo "== they agree"
else
	echo "== they DIFFER"
	exit 1
fi
