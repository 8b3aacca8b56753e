#!/bin/sh
# ci-demo.sh - examples/ci's Makefile fragment on a real program not
# written here: a baseline from `zstd -T1`, then a check of `zstd -T4`
# (more worker threads, more arenas: mallocwatch-check fails with exit 3),
# the baseline updated from -T4, the check again.
#
# Not a test: how many arenas zstd makes depends on scheduling (how many
# pool workers ever run a job, zstd's async-I/O threads), so the last
# check can fail when a checked run makes more arenas than the baseline
# run did; that is what --repeat and the worst figure are for, and why a
# project's rules may want a margin ('arenas<=+1').  Needs root and zstd.
set -u
cd "$(dirname "$0")/.."
d=build/ci-demo
mkdir -p $d
head -c 24000000 /dev/urandom | base64 >$d/input
mk() { make -s -C $d -f "$PWD/examples/ci/mallocwatch.mk" MW="$PWD/build/mallocwatch" "$@"; }
echo "== make mallocwatch-baseline MW_RUN='zstd -q -f -T1 -o out.zst input'"
mk mallocwatch-baseline MW_RUN="zstd -q -f -T1 -o out.zst input"
echo "== make mallocwatch-check MW_RUN='zstd -q -f -T4 -o out.zst input'"
mk mallocwatch-check MW_RUN="zstd -q -f -T4 -o out.zst input"
echo "== exit $?"
echo "== make mallocwatch-baseline MW_RUN='zstd -q -f -T4 -o out.zst input'"
mk mallocwatch-baseline MW_RUN="zstd -q -f -T4 -o out.zst input"
echo "== make mallocwatch-check MW_RUN='zstd -q -f -T4 -o out.zst input' MW_RULES=\"--check 'arenas<=+1'\""
mk mallocwatch-check MW_RUN="zstd -q -f -T4 -o out.zst input" MW_RULES="--check 'arenas<=+1'"
echo "== exit $?"
