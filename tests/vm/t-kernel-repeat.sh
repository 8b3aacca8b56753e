#!/bin/sh
# --repeat N under the kernel runtime: one session for the N runs, which
# gets no -x (gen.h, mw_gen_untargeted).  With -x RUN0, stap's task
# finder placed the uprobes in run 0 and its descendants only, and runs
# 1.. (mallocwatch's children, not run 0's) would have no hits at all.
# Each run is examples/arena-storm 3 (glibc gives it 4 arenas, each
# worker one of its own: its barrier keeps every thread until all
# attached); each run's arenas, heaps and heap bytes (--check lists every
# run's figure) must equal that run's own malloc_info(), exactly.  Needs
# loadable modules and the kernel's build tree (make check-vm runs it in
# the guest; it skips on this host).
# needs: root glibc kernel
. tests/lib/lib.sh
need_root
need_libc
need_kernel_runtime
[ -x examples/arena-storm ] || skip "no examples/arena-storm (make check builds it)"
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}
"$MWBIN" --runtime=kernel -v --repeat 3 -o "$OUT/last.txt" \
	--check 'arenas>=0' --check 'heaps>=0' --check 'heap_bytes>=0' \
	-c ./examples/arena-storm 3 20 >"$OUT/mi.xml" 2>"$OUT/err" ||
	{ _rc=$?; cat "$OUT/err"; fail "mallocwatch exited $_rc"; }
python3 - "$OUT/mi.xml" "$OUT/err" <<'PY' || fail "per-run reports (see above)"
import sys
sys.path.insert(0, "tests/lib")
from malloc_info_compare import per_run
want, have = per_run(open(sys.argv[1]).read(), open(sys.argv[2]).read(), 3)
assert [a for a, _, _ in want] == [4, 4, 4], "arena-storm 3 has 4 arenas"
assert have == want, "the runs' reports differ from their malloc_info"
PY
grep -q '^mallocwatch: 3 runs under one tracer session$' "$OUT/err" ||
	fail "no note of one session: $(cat "$OUT/err")"
echo "ok: 3 runs under the kernel runtime, one session, each run's report equal to its malloc_info()"
