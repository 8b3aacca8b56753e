#!/bin/sh
# The kernel runtime cannot load here (no module support), but its script
# must translate: `stap -p3` on the generated script for the probe-enabled
# libc, with a kernel-config stub as stap's build tree, and so must the
# script of -f (a changing set of processes).  Also the bpf script must
# compile (-p4).
. tests/lib.sh
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
stap_p3 "$OUT/kernel-f.stp"
ok "$MW" script --runtime=bpf --libc "$LIBC" >"$OUT/bpf.stp"
(cd "$OUT" && stap --runtime=bpf -g -w -r "$K" -p4 -m mwtest bpf.stp >/dev/null 2>bpf.err) ||
	{ cat "$OUT/bpf.err"; fail "stap -p4 failed on the bpf-runtime script"; }
[ -s "$OUT/mwtest.bo" ] || fail "no bpf object"
echo "kernel -p3: $(wc -l <"$OUT/kernel.stp.c") lines of C; bpf object $(wc -c <"$OUT/mwtest.bo") bytes"
