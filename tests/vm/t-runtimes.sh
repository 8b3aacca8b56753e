#!/bin/sh
# The two runtimes on the same programs, same machine: SystemTap's
# kernel-module runtime and stapbpf must give the same report, but for
# addresses, pids and timings.  Single-threaded programs that do a known
# thing (sbrk growth and trims, threshold changes, setjmp/longjmp,
# mallopt), each traced under each runtime, each started its own way
# (the kernel runtime through the probe-enabled glibc's loader, bpf in
# its mount namespace); the text reports, normalised (hex addresses, the
# program's pid, the runtime's name, runs of blanks), are diffed.  Needs both runtimes: modules that load and the kernel's build
# tree (make check-vm runs it in the guest; this host's kernel loads no
# modules, so it skips here).
# needs: root glibc kernel
. tests/lib/lib.sh
need_root
need_libc
need_kernel_runtime
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}
# normalise FILE PID: what may differ between two runs of one program:
# also the exit snapshot's resident set beside malloc's (RSS, the
# percentages of it, "not malloc's": files, stacks, other anonymous,
# smaps_rollup's Rss, the RSS ledger's total and the tolerance), which
# the kernel decides (the
# resident pages of the files mapped, and the two runtimes start the
# program differently: through the loader, in a namespace): 564 and 584
# KiB of files in two runs of sbrk-trim; the RSS line's "at exit" and
# "peak" (668 and 672 KiB in the trixie guest, 2026-11-28)
normalise() {
	sed -e "s/\b$2\b/PID/g" -e 's/0x[0-9a-f]\{1,\}/0x?/g' \
	    -e 's/\(kernel\|bpf\) runtime/RUNTIME runtime/g' \
	    -e 's/RSS [0-9.]* [KMG]*i*B/RSS ?/g' -e 's/Rss [0-9.]* [KMG]*i*B/Rss ?/g' \
	    -e 's/RSS at exit [0-9.]* [KMG]*i*B, peak [0-9.]* [KMG]*i*B/RSS at exit ?, peak ?/' \
	    -e 's/(pagemap, smaps): [0-9.]* [KMG]*i*B/(pagemap, smaps): ?/' \
	    -e "s/not malloc's [^)]*)/not malloc's ?)/g" -e 's/tolerance [^)]*)/tolerance ?)/g' \
	    -e 's/([0-9]*%/(?%/g' -e 's/  */ /g' "$1"
}
n=0
for prog in "sbrk-trim 8" "dyn-threshold 1024 3072 200" "setjmp-loop 10" "heap-churn 200 main"; do
	n=$((n + 1))
	for rt in kernel bpf; do
		# shellcheck disable=SC2086
		"$MWBIN" -q --runtime=$rt --json "$OUT/$n-$rt.json" \
			-o "$OUT/$n-$rt.txt" -c ./examples/$prog >"$OUT/$n-$rt.out" 2>"$OUT/$n-$rt.err" ||
			{ _rc=$?; cat "$OUT/$n-$rt.err"; fail "$prog under the $rt runtime exited $_rc"; }
		pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target"]["pid"])' \
			"$OUT/$n-$rt.json") || exit 99
		normalise "$OUT/$n-$rt.txt" "$pid" >"$OUT/$n-$rt.norm"
	done
	grep -q ' [1-9][0-9]* probe hits, 0 lost' "$OUT/$n-kernel.norm" || fail "$prog: no events under the kernel runtime"
	expect_same "$OUT/$n-kernel.norm" "$OUT/$n-bpf.norm"
	echo "$prog: the same report under both runtimes ($(grep -o '[0-9]* probe hits' "$OUT/$n-bpf.norm"))"
done
