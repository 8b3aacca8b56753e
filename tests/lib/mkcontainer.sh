#!/bin/sh
# tests/lib/mkcontainer.sh ROOT PROGRAM... - make ROOT a minimal container root:
# the probe-enabled glibc's libc, libm and loader under Debian's own paths
# (/lib/x86_64-linux-gnu/libc.so.6, /lib64/ld-linux-x86-64.so.2), so that
# inside it /lib/x86_64-linux-gnu/libc.so.6 is another file than the
# host's (Debian's, which has no SDT probes), and each PROGRAM copied to
# ROOT/bin.  Run a program in it with build/tests/fixtures/ctr-run ROOT
# /bin/NAME ARGS.  GLIBC_PREFIX: the probe-enabled glibc
# (default /var/cache/mallocwatch/glibc).
set -eu
root=$1
shift
L=${GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}/lib
mkdir -p "$root/lib/x86_64-linux-gnu" "$root/lib64" "$root/bin" "$root/proc" "$root/tmp"
chmod 1777 "$root/tmp"
for f in libc.so.6 libm.so.6; do
	cp "$L/$f" "$root/lib/x86_64-linux-gnu/$f"
done
cp "$L/ld-linux-x86-64.so.2" "$root/lib64/ld-linux-x86-64.so.2"
# The probe-enabled loader searches its own prefix's lib/ by default: there,
# inside the container, stands a link to Debian's directory, so the process
# maps /lib/x86_64-linux-gnu/libc.so.6 and no other name.
mkdir -p "$root$(dirname "$L")"
ln -sfn /lib/x86_64-linux-gnu "$root$L"
for p in "$@"; do
	cp "$p" "$root/bin/"
done
