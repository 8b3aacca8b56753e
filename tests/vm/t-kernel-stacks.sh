#!/bin/sh
# --stacks under the kernel runtime: the stacks come from the script's
# ubacktrace() (a Q record per rare probe's hit, gen.h opts->stacks), not
# from perf events; the module is built with --ldd and -d PROGRAM (an
# absolute path: a relative one gave no unwind data, silently).
#
# tests/fixtures/stack-chains 3 double (CFI only, no frame pointer; see
# t-stacks for what glibc guarantees): 3 arenas created under chain_c <-
# chain_b <- chain_a, the break grown by 4 MiB under grow_c <- grow_b <-
# grow_a <- main, a tcache double free under twice_c <- twice_b <-
# twice_a, and the program's abort (exit 134).  Needs loadable modules
# and the kernel's build tree (make check-vm runs it in the guest; it
# skips on this host).
# needs: root glibc kernel
. tests/lib/lib.sh
need_root
need_libc
need_kernel_runtime
F=build/tests/fixtures/stack-chains
[ -x $F ] || skip "no $F (make check builds it)"
MWBIN=${MW_BIN:-$PWD/build/mallocwatch}
"$MWBIN" --runtime=kernel --stacks --folded "$OUT/folded" -o "$OUT/summary" \
	-c $F 3 double >"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
[ $rc = 134 ] || { cat "$OUT/stderr"; fail "exit $rc, not 134 (the program's abort)"; }
sed -n '/^Stacks/,$p' "$OUT/summary"
grep -q 'lost' "$OUT/summary" && grep 'lost' "$OUT/summary"
chain_stacks "the kernel runtime" "$OUT/summary" "$OUT/folded"
echo "ok: the kernel runtime's stacks: 3 arenas under chain_c, $bytes bytes of sbrk under grow_c, the double free under twice_c"
