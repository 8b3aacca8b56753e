#!/bin/sh
# build-glibc.sh - build and cache a glibc with SystemTap SDT probes.
#
# Usage: scripts/build-glibc.sh [PREFIX]
#
# Debian 12's libc.so.6 is built without --enable-systemtap, so it carries
# no .note.stapsdt notes and there is nothing for mallocwatch to trace.
# This script builds glibc from Debian's own source package (same version
# as the installed libc6, Debian's patches applied) with
# --enable-systemtap and installs it under PREFIX (default
# /var/cache/mallocwatch/glibc, or $MW_GLIBC_PREFIX).
#
# It is built once and reused: PREFIX/.mallocwatch-stamp records the
# Debian source version it was built from and the version of this
# recipe (RECIPE below), and the build is redone when the stamp is
# missing, libc.so.6 is missing, the installed libc6 version changed or
# the recipe did.  About 11 minutes of "make -j2" on 2 cores.
#
# It is configured as Debian's debian/rules configures its libc6
# (rules.d/build.mk, sysdeps/amd64.mk, linux.mk): --enable-stack-protector=strong,
# --enable-multi-arch, --enable-kernel=3.2, --disable-crypt, and -O2 -g;
# Debian does not use dpkg-buildflags for glibc (its rules unset CFLAGS
# and friends), and glibc 2.36 is not built with _FORTIFY_SOURCE (its
# configure has no --enable-fortify-source before 2.38).  Left out:
# --with-selinux (nscd's alone) and --enable-stackguard-randomization
# (which 2.36's configure no longer knows).  Every program a traced -c
# tree starts loads this libc, setuid ones too: it must be as hardened as
# the libc it stands in for (Debian's: 870 calls of __stack_chk_fail).
#
# It runs as root, so nothing it does goes through a place another user
# can change: the build happens in a fresh mktemp -d directory (0700,
# root's, a random name under ${MW_GLIBC_WORKDIR:-/var/tmp}), the result
# is installed into a fresh directory beside PREFIX and renamed into
# place only when complete, and every directory above PREFIX must be
# root's and writable by no one else (a sticky one like /var/tmp aside).
#
# Systems whose libc already has probes (Fedora, RHEL, Ubuntu) do not need
# this; the script exits 0 at once when the system libc has a
# .note.stapsdt section, unless MW_FORCE_GLIBC_BUILD=1.
set -eu

PREFIX=${1:-${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}}
TMPBASE=${MW_GLIBC_WORKDIR:-/var/tmp}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { echo "build-glibc: $*" >&2; }

syslibc=$(ldconfig -p 2>/dev/null | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')
if [ "${MW_FORCE_GLIBC_BUILD:-0}" != 1 ] && [ -n "$syslibc" ] &&
   readelf -S "$syslibc" 2>/dev/null | grep -q '\.note\.stapsdt'; then
	say "system libc $syslibc has SDT probes; nothing to build"
	exit 0
fi

# The recipe's version: raised whenever what is built changes (its
# configure options), so that an installed build of an older recipe is
# redone.  2: Debian's hardening (--enable-stack-protector=strong).
RECIPE=2
version=$(dpkg-query -W -f='${source:Version}' libc6)
stamp="$version recipe $RECIPE"
if [ -f "$PREFIX/.mallocwatch-stamp" ] && [ -f "$PREFIX/lib/libc.so.6" ] &&
   [ "$(cat "$PREFIX/.mallocwatch-stamp")" = "$stamp" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	say "the probe-enabled glibc is missing or stale under $PREFIX; run as root: mallocwatch setup glibc (make glibc in the source tree)"
	exit 1
fi
# What the build needs (gcc, gawk, bison, ...), installed when missing by
# the install-deps.sh beside this script (scripts/, or the package's
# libexec directory for `mallocwatch setup glibc`).
MW_DEPS=glibc sh "$(dirname "$0")/install-deps.sh" || exit 1


# Source entries for the same suites as the binary ones.
srclist=/etc/apt/sources.list.d/mallocwatch-deb-src.sources
if [ ! -f "$srclist" ]; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$srclist"
	elif [ -f /etc/apt/sources.list ]; then
		grep -E '^deb ' /etc/apt/sources.list | sed -e 's/^deb /deb-src /' \
			>/etc/apt/sources.list.d/mallocwatch-deb-src.list
		srclist=/etc/apt/sources.list.d/mallocwatch-deb-src.list
	fi
	apt-get update -q >/dev/null
fi

# safe_dirs DIR: the directory and every one above it root's, and
# written by no one else (scripts/safe-dirs.sh, beside this script)
. "$(dirname "$0")/safe-dirs.sh"

parent=$(dirname "$PREFIX")
mkdir -p "$parent"
safe_dirs "$parent" || exit 1
safe_dirs "$TMPBASE" || exit 1
WORK=$(mktemp -d "$TMPBASE/mallocwatch-glibc.XXXXXXXX")
STAGE=$(mktemp -d "$parent/.glibc-new.XXXXXXXX")
trap 'cd /; rm -rf "$WORK" "$STAGE"' EXIT
trap 'exit 130' INT TERM HUP
# mktemp made them 0700 and root's; say so rather than assume it
[ "$(stat -c '%u %a' "$WORK")" = "0 700" ] || { say "'$WORK' is not root's 0700"; exit 1; }
say "building glibc $version with --enable-systemtap into $PREFIX (about 15 minutes)"
cd "$WORK"
# The exact version of the installed libc6 when the archive still has it,
# else the newest source of the suite.
apt-get source -q "glibc=$version" >source.log 2>&1 ||
	apt-get source -q glibc >>source.log 2>&1 || { cat source.log >&2; exit 1; }
src=$(find . -maxdepth 1 -type d -name 'glibc-*' | head -n 1)
[ -n "$src" ] || { say "apt-get source produced no glibc-* directory"; exit 1; }

mkdir build
cd build
CFLAGS="-pipe -O2 -g" "../$src/configure" --prefix="$PREFIX" --enable-systemtap \
	--disable-werror --disable-profile --disable-crypt --enable-stack-protector=strong \
	--enable-multi-arch --enable-kernel=3.2 >../configure.log 2>&1 ||
	{ tail -n 30 ../configure.log >&2; exit 1; }
make -j"$JOBS" MAKEINFO=: >../make.log 2>&1 || { tail -n 40 ../make.log >&2; exit 1; }
# Installed under the fresh directory first (DESTDIR), renamed into
# place once complete: a failed or interrupted build leaves the old one.
make install DESTDIR="$STAGE" MAKEINFO=: >../install.log 2>&1 ||
	{ tail -n 40 ../install.log >&2; exit 1; }
new=$STAGE$PREFIX
if ! readelf -n "$new/lib/libc.so.6" | grep -q stapsdt; then
	say "built libc has no stapsdt notes; was <sys/sdt.h> (systemtap-sdt-dev) present?"
	exit 1
fi
# hardened as configured: the stack protector's checks are there
# (Debian's libc.so.6 2.36: 870 calls; unhardened: none)
ssp=$(objdump -d "$new/lib/libc.so.6" | grep -c 'call.*<__stack_chk_fail') || :
if [ "${ssp:-0}" -lt 100 ]; then
	say "built libc has ${ssp:-0} calls of __stack_chk_fail: --enable-stack-protector=strong did not apply"
	exit 1
fi
echo "$stamp" >"$new/.mallocwatch-stamp"
chmod 755 "$new"
old=""
if [ -e "$PREFIX" ] || [ -L "$PREFIX" ]; then
	old=$STAGE/old
	mv -T "$PREFIX" "$old"
fi
mv -T "$new" "$PREFIX"
say "done: $(readelf -n "$PREFIX/lib/libc.so.6" | grep -c NT_STAPSDT) SDT notes and $ssp stack protector checks in $PREFIX/lib/libc.so.6"
