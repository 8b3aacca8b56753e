#!/bin/sh
# The kernel runtime cannot load here (no module support), but its script
# must translate: `stap -p3` on the generated script for the probe-enabled
# libc, with a kernel-config stub as stap's build tree, and so must the
# script of -f (a changing set of processes).  Also the bpf script must
# compile (-p4).
# needs: glibc cpu
. tests/lib/lib.sh
need_libc
LIBC=$GLIBC_PREFIX/lib/libc.so.6
ok "$MW" script --runtime=kernel --libc "$LIBC" >"$OUT/kernel.stp"
grep -q '\$arg1' "$OUT/kernel.stp" || fail "kernel script does not use \$argN"
stap_p3 "$OUT/kernel.stp"
grep -q 'memory_' "$OUT/kernel.stp.c" || fail "translated C mentions no probes"
# the script of a changing set of processes (-f, --cgroup): its procfs
# write probe takes pids as text (strtol), its map the size pidset.c
# looks for
ok "$MW" script -f --runtime=kernel --libc "$LIBC" >"$OUT/kernel-f.stp"
grep -q 'procfs("pids").write' "$OUT/kernel-f.stp" || fail "no pids file in the -f kernel script"
grep -q 'global mw_pids\[4093\]' "$OUT/kernel-f.stp" || fail "mw_pids is not the size pidset.c looks for"
# run without -x (gen.h, mw_gen_untargeted): no target(), an empty set,
# and the pids file answers once the module runs (pidset.c waits for it)
grep -q 'target()' "$OUT/kernel-f.stp" && fail "the -f kernel script uses target(): it is run without -x"
grep -q 'procfs("pids").read' "$OUT/kernel-f.stp" || fail "no read probe of the pids file in the -f kernel script"
stap_p3 "$OUT/kernel-f.stp"
# --stacks: each rare probe's handler prints a Q record with ubacktrace()
# (its parser: unit-stacks); the hot ones do not; the bpf script has none
ok "$MW" script --runtime=kernel --stacks --libc "$LIBC" >"$OUT/kernel-stacks.stp"
awk '/^probe process/ { name = $0; sub(/.*mark\("/, "", name); sub(/"\).*/, "", name) }
	/ubacktrace\(\)/ { print name }' "$OUT/kernel-stacks.stp" | sort -u >"$OUT/stacked"
grep -qx memory_arena_new "$OUT/stacked" && grep -qx memory_sbrk_more "$OUT/stacked" &&
	grep -qx memory_tcache_double_free "$OUT/stacked" ||
	fail "no ubacktrace() in the arena_new, sbrk_more or tcache_double_free handler: $(cat "$OUT/stacked")"
grep -qx 'memory_heap_more\|memory_heap_less\|memory_arena_reuse_wait\|setjmp\|longjmp' "$OUT/stacked" &&
	fail "a hot probe's handler takes a stack: $(cat "$OUT/stacked")"
grep -q 'printf("Q [0-9]* %d %d %d %d %d %d %s\\n", pid(), tid(), ktime_get_ns(), ' \
	"$OUT/kernel-stacks.stp" || fail "no Q record printed as docs/protocol.md says"
stap_p3 "$OUT/kernel-stacks.stp"
ok "$MW" script --runtime=bpf --stacks --libc "$LIBC" >"$OUT/bpf-stacks.stp"
grep -q ubacktrace "$OUT/bpf-stacks.stp" && fail "the bpf script calls ubacktrace()"
echo "kernel --stacks: ubacktrace() in $(wc -l <"$OUT/stacked") handlers, translated"
ok "$MW" script --runtime=bpf --libc "$LIBC" >"$OUT/bpf.stp"
(cd "$OUT" && stap --runtime=bpf -g -w -r "$K" -p4 -m mwtest bpf.stp >/dev/null 2>bpf.err) ||
	{ cat "$OUT/bpf.err"; fail "stap -p4 failed on the bpf-runtime script"; }
[ -s "$OUT/mwtest.bo" ] || fail "no bpf object"
echo "kernel -p3: $(wc -l <"$OUT/kernel.stp.c") lines of C; bpf object $(wc -c <"$OUT/mwtest.bo") bytes"
