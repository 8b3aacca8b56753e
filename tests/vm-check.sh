#!/bin/sh
# tests/vm-check.sh - what `make check-vm` runs inside the guest
# (scripts/vm.sh): build, then the end-to-end tests under the kernel
# runtime and under the bpf runtime (MW_TEST_RUNTIME, tests/lib.sh), then
# t-runtimes, which compares the two runtimes' reports.  Each runtime's
# test logs are kept in tests/out/vm-RUNTIME/.  Exits 1 when a test
# failed.
#
# Usage (in the guest): sh tests/vm-check.sh [TEST...]
cd "$(dirname "$0")/.." || exit 99
TESTS=${*:-e2e-arena-storm e2e-heap-churn e2e-sbrk-thresholds e2e-knobs e2e-setjmp e2e-xz attach snapshot}
echo "vm-check: $(uname -sr), $(stap -V 2>&1 | head -n 1)"
make -s all || exit 1
make -s -C examples || exit 1
rc=0
for rt in kernel bpf; do
	echo "vm-check: the $rt runtime"
	start=$(date +%s)
	# shellcheck disable=SC2086
	MW_TEST_RUNTIME=$rt sh tests/run $TESTS || rc=1
	echo "vm-check: the $rt runtime took $(( $(date +%s) - start )) s"
	mkdir -p "tests/out/vm-$rt"
	for t in $TESTS; do
		cp "tests/out/t-$t.log" "tests/out/vm-$rt/" 2>/dev/null
	done
done
sh tests/run runtimes || rc=1
exit $rc
