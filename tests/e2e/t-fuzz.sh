#!/bin/sh
# Each libFuzzer harness under build/fuzz (make check builds them; see
# tests/fuzz/) runs for FUZZ_SECONDS (default 20) from its committed seeds,
# which include a regression input for every parser defect found so far.
# A crash, a sanitizer report (ASan, UBSan: fatal) or a leak fails the
# test; the input is kept under tests/out/t-fuzz/.
# needs: slow cpu
. tests/lib/lib.sh
secs=${FUZZ_SECONDS:-20}
n=0
for f in build/fuzz/fuzz-*; do
	[ -x "$f" ] || continue
	name=${f#build/fuzz/fuzz-}
	found=build/fuzz/found-$name
	mkdir -p "$found" "$OUT/$name"
	"$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$OUT/$name/" "$found" "tests/fuzz/corpus-$name" \
		>"$OUT/$name.log" 2>&1 || { tail -n 40 "$OUT/$name.log"; fail "fuzz-$name found a problem"; }
	echo "fuzz-$name: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$OUT/$name.log" | cut -d' ' -f2) runs in ${secs}s, clean"
	n=$((n + 1))
done
[ $n = 4 ] || skip "the fuzzers are not built (make check builds them with clang)"
