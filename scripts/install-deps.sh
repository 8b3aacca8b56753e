#!/bin/sh
# install-deps.sh - install the Debian packages mallocwatch needs to build,
# test and trace, when any of them is missing.
#
# Usage: scripts/install-deps.sh
#
# Build and trace: gcc, make, libelf/libdw, zlib, systemtap (stap, stapbpf),
# systemtap-sdt-dev (<sys/sdt.h>), and for the glibc build gawk, bison,
# dpkg-dev.  Tests: python3, file, bc, valgrind (t-replay), util-linux
# (setpriv, t-security), libc6-dbg (snapshots of Debian's own libc,
# t-snapshot, t-snapshot-hostile), time (GNU time: wall time and peak
# memory, t-snapshot-hostile), clang and libclang-rt-14-dev (libFuzzer for
# tests/fuzz), chromium and fonts-dejavu-core (t-html opens the --html
# page in a headless browser; tests only, mallocwatch never runs it),
# pbzip2 (t-html's real multi-threaded program), memcached and gdb
# (t-snapshot-all: a real server under load, and malloc_info() called
# in it and in python3 through gdb).  Serve: libmicrohttpd-dev (the HTTP
# server of `mallocwatch serve`); prometheus (its promtool, and the real
# Prometheus t-serve starts on loopback; Debian's package also installs a
# prometheus.service, as memcached's does) and curl (t-serve); libyaml-dev
# and libcrypt-dev (serve --web.config.file: the YAML file, bcrypt
# through crypt(3)), openssl (t-serve-webconfig makes a certificate with
# it).  libbpf-dev:
# the running bpf-runtime tracer's set of processes is changed through
# its map (src/tracer/pidset.c: -f's new processes, --cgroup's joiners).
# strace: t-cache holds a run at its rename (fault injection) to kill it
# while it makes an entry of root's cache.
# With MW_DEPS_VM=1 (make check-vm): debootstrap and qemu-system-x86 too;
# with MW_DEPS_ROOTS=1 (make glibc-root): debootstrap.
# With MW_DEPS=glibc (scripts/build-glibc.sh runs it so, from `make glibc`
# and from `mallocwatch setup glibc` of the installed package): only what
# the probe-enabled glibc's build needs.
#
# Needs root (apt-get).  Does nothing when every package is already there,
# so it is cheap to call from "make demo" and "make check".  On a system
# that is not Debian-like (no apt-get/dpkg-query) it only says which
# packages it would want and exits 0: install their equivalents yourself
# (see docs/install.md, "Other distributions").
set -eu

PKGS="gcc make pkg-config libelf-dev libdw-dev zlib1g-dev liblzma-dev libjansson-dev systemtap systemtap-sdt-dev \
clang libclang-rt-14-dev valgrind util-linux libc6-dbg \
gawk bison dpkg-dev python3 file bc time chromium fonts-dejavu-core pbzip2 memcached gdb \
libmicrohttpd-dev libyaml-dev libcrypt-dev openssl prometheus curl libbpf-dev strace"
# scripts/build-glibc.sh: apt-get source (dpkg-dev), the compiler and
# headers, glibc's build tools, <sys/sdt.h>
[ "${MW_DEPS:-}" != glibc ] ||
	PKGS="gcc make libc6-dev gawk bison python3 dpkg-dev systemtap-sdt-dev"
# make check-vm (scripts/vm.sh) also needs debootstrap and qemu
[ "${MW_DEPS_VM:-0}" != 1 ] || PKGS="$PKGS debootstrap qemu-system-x86"
# make glibc-root (scripts/glibc-root.sh) needs debootstrap
[ "${MW_DEPS_ROOTS:-0}" != 1 ] || PKGS="$PKGS debootstrap"

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: not a Debian-like system; needs: $PKGS" >&2
	exit 0
fi

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root, e.g. with sudo)" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
