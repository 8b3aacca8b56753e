#!/bin/sh
# tests/vm/vm-check.sh - what `make check-vm` runs inside the guest
# (scripts/vm.sh): build, then the end-to-end tests under the kernel
# runtime and under the bpf runtime (MW_TEST_RUNTIME, tests/lib/lib.sh), then
# t-runtimes, which compares the two runtimes' reports,
# t-kernel-kill (SIGKILL to mallocwatch or to its stapio), and the kernel
# runtime's sets of processes, whose session gets no -x: t-kernel-pidset
# (-f), t-kernel-repeat (--repeat) and t-attach-multi under it (-p
# PID,PID,PID, --check per process, --cgroup), t-kernel-serve (serve
# --probes); t-kernel-stacks (--stacks through the script's
# ubacktrace()).  Each runtime's
# test logs are kept in tests/out/vm-RUNTIME/.  Exits 1 when a test
# failed.
#
# Usage (in the guest): sh tests/vm/vm-check.sh [TEST...]
cd "$(dirname "$0")/../.." || exit 99
TESTS=${*:-e2e-arena-storm e2e-heap-churn e2e-sbrk-thresholds e2e-knobs e2e-setjmp e2e-xz e2e-exec attach snapshot}
echo "vm-check: $(uname -sr), $(stap -V 2>&1 | head -n 1)"
make -s all || exit 1
make -s -C examples || exit 1
make -s build/tests/fixtures/fork-arenas build/tests/fixtures/stack-chains \
	build/tests/fixtures/serve-counts build/tests/fixtures/exec-after \
	build/tests/fixtures/fork-exec || exit 1
# The tree is a 9p share in the guest, where FIFOs cannot be made: the
# tests' files go to a tmpfs over tests/out, and what is kept is copied
# to the share's tests/out at the end.
if [ "${MW_IN_VM:-0}" = 1 ]; then
	mkdir -p tests/out && mount -t tmpfs tmpfs tests/out || exit 1
fi
rc=0
for rt in kernel bpf; do
	echo "vm-check: the $rt runtime"
	start=$(date +%s)
	# shellcheck disable=SC2086
	MW_TEST_RUNTIME=$rt sh tests/run -j 1 $TESTS || rc=1
	echo "vm-check: the $rt runtime took $(( $(date +%s) - start )) s"
	mkdir -p "tests/out/vm-$rt"
	for t in $TESTS; do
		cp "tests/out/t-$t.log" "tests/out/vm-$rt/" 2>/dev/null
	done
done
sh tests/run -j 1 runtimes kernel-kill kernel-pidset kernel-repeat kernel-stacks kernel-serve || rc=1
MW_TEST_RUNTIME=kernel sh tests/run -j 1 attach-multi || rc=1
cp tests/out/t-attach-multi.log tests/out/vm-kernel/ 2>/dev/null
if [ "${MW_IN_VM:-0}" = 1 ]; then
	keep=$(mktemp -d)
	cp -r tests/out/vm-kernel tests/out/vm-bpf tests/out/t-runtimes.log tests/out/t-runtimes \
		tests/out/t-kernel-kill.log tests/out/t-kernel-pidset.log \
		tests/out/t-kernel-repeat.log tests/out/t-kernel-stacks.log tests/out/t-kernel-serve.log "$keep/"
	# lazily: a test's process still using it must not keep the logs in
	umount tests/out 2>/dev/null || umount -l tests/out
	mkdir -p tests/out
	rm -rf tests/out/vm-kernel tests/out/vm-bpf tests/out/t-runtimes
	cp -r "$keep"/* tests/out/
fi
exit $rc
