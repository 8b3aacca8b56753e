#!/bin/sh
# glibc-root.sh - a Debian root whose own libc carries SystemTap SDT probes.
#
# Usage: scripts/glibc-root.sh SUITE [ROOT]
#
# SUITE is bullseye (glibc 2.31), bookworm (2.36) or trixie (2.41).  ROOT
# defaults to /var/cache/mallocwatch/roots/SUITE (or $MW_ROOTS_DIR/SUITE).
#
# The root is made by debootstrap --variant=minbase with gcc, make,
# python3, libc6-dev, libc6-dbg and what a glibc build needs (dpkg-dev,
# gawk, bison, systemtap-sdt-dev).  Inside it (chroot, the root's own
# toolchain: bullseye's glibc 2.31 wants its own gcc 10), the release's
# glibc source package is fetched (apt-get source, Debian's patches
# applied), configured with --enable-systemtap and Debian's directories,
# built, and its shared libraries installed over the root's own: same
# version, same file names, probes added.  They are installed unstripped:
# the rebuilt libraries have new build-ids, so libc6-dbg's debug files no
# longer match them; the libraries' own .symtab and DWARF (malloc_state,
# mp_, main_arena, the __mp* functions of libm) stand in for them, and a
# copy of each one's debug info is also put at the root's
# /usr/lib/debug/.build-id/XX/YYYY.debug for tools that look there.
#
# Built once and cached: ROOT/.mallocwatch-stamp records the suite and the
# libc6 version; the root is redone only when the stamp is missing.
#
# Run as root, so nothing goes through a place another user can change:
# every directory above ROOT must be root's and writable by no one else;
# the root is built in a fresh mktemp -d directory beside ROOT and renamed
# into place only when complete.  The glibc build runs with nice -n 5 and
# JOBS (default 2) jobs; 15-40 minutes on 2 cores.
set -eu

SUITE=${1:-}
case $SUITE in
bullseye|bookworm|trixie) ;;
*) echo "glibc-root: usage: glibc-root.sh bullseye|bookworm|trixie [ROOT]" >&2; exit 2 ;;
esac
ROOT=${2:-${MW_ROOTS_DIR:-/var/cache/mallocwatch/roots}/$SUITE}
JOBS=${JOBS:-2}
MIRROR=${MW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PKGS=gcc,make,python3,libc6-dev,libc6-dbg,dpkg-dev,gawk,bison,systemtap-sdt-dev,xz-utils,binutils

say() { echo "glibc-root: $*" >&2; }

if [ -f "$ROOT/.mallocwatch-stamp" ] && [ -f "$ROOT/usr/bin/gcc" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	say "$ROOT is missing; run as root: make glibc-root SUITE=$SUITE"
	exit 1
fi
command -v debootstrap >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
command -v debootstrap >/dev/null 2>&1 ||
	{ say "debootstrap is not installed (apt-get install debootstrap)"; exit 1; }

# safe_dirs DIR: the directory and every one above it root's, and
# written by no one else (scripts/safe-dirs.sh, beside this script)
. "$(dirname "$0")/safe-dirs.sh"

parent=$(dirname "$ROOT")
mkdir -p "$parent"
safe_dirs "$parent" || exit 1
STAGE=$(mktemp -d "$parent/.$SUITE-new.XXXXXXXX")
[ "$(stat -c '%u %a' "$STAGE")" = "0 700" ] || { say "'$STAGE' is not root's 0700"; exit 1; }
cleanup() {
	cd /
	if mountpoint -q "$STAGE/proc" 2>/dev/null; then umount "$STAGE/proc" || return 0; fi
	# never cross into a mount left inside the stage
	rm -rf --one-file-system "$STAGE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say "debootstrap $SUITE into $STAGE"
debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$STAGE" "$MIRROR" \
	>"$STAGE.debootstrap.log" 2>&1 || { tail -n 30 "$STAGE.debootstrap.log" >&2; rm -f "$STAGE.debootstrap.log"; exit 1; }
rm -f "$STAGE.debootstrap.log"
chmod 755 "$STAGE"
printf 'deb %s %s main\ndeb-src %s %s main\n' "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" \
	>"$STAGE/etc/apt/sources.list"
mount -t proc proc "$STAGE/proc"
chroot "$STAGE" apt-get update -q >/dev/null

version=$(chroot "$STAGE" dpkg-query -W -f='${source:Version}' libc6)
upstream=${version%%-*}
# The source of that very version.  When the registry no longer serves it
# (seen for trixie: 2.41-12+deb13u5's .dsc and Debian tarball gone, its
# upstream tarball there), the newest Debian revision of the same
# upstream release whose source it serves (2.41-12+deb13u4): the root's
# libraries are then that revision's, rebuilt, while its other files
# (headers, ldconfig, libc6-dbg) stay the installed one's; the stamp and
# the last line say so.  Another upstream release is refused.
cat >"$STAGE/var/tmp/mw-pick-source.sh" <<'EOF'
set -eu
d=$(mktemp -d /var/tmp/mw-src.XXXXXXXX)
cd "$d"
for v in "$1" $(apt-cache showsrc glibc | sed -n 's/^Version: //p' | sort -ruV); do
	case $v in "$2"-*) ;; *) continue ;; esac
	if apt-get source -q -d "glibc=$v" >/dev/null 2>&1; then
		echo "$v"
		rm -rf "$d"
		exit 0
	fi
done
rm -rf "$d"
exit 1
EOF
srcver=$(chroot "$STAGE" sh /var/tmp/mw-pick-source.sh "$version" "$upstream") ||
	{ say "the registry serves no source of glibc $upstream (the root's libc6 is $version)"; exit 1; }
rm -f "$STAGE/var/tmp/mw-pick-source.sh"
stamp="$SUITE $version"
if [ "$srcver" != "$version" ]; then
	say "the registry serves no source of glibc $version: building $srcver's"
	stamp="$stamp, libraries rebuilt from the source of $srcver (the registry serves none of $version)"
fi
# The build, inside the root, in a fresh 0700 directory of its own.
sh "$(dirname "$0")/glibc-root-build.sh" "$STAGE" "$srcver" "$JOBS" || exit 1

umount "$STAGE/proc"
echo "$stamp" >"$STAGE/.mallocwatch-stamp"
old=""
if [ -e "$ROOT" ] || [ -L "$ROOT" ]; then
	old=$(mktemp -d "$parent/.$SUITE-old.XXXXXXXX")
	mv -T "$ROOT" "$old/root"
fi
mv -T "$STAGE" "$ROOT"
[ -z "$old" ] || rm -rf --one-file-system "$old"
libc=$(readlink -f "$ROOT/lib/x86_64-linux-gnu/libc.so.6")
libm=$(readlink -f "$ROOT/lib/x86_64-linux-gnu/libm.so.6")
say "done: $ROOT, $stamp: $(readelf -n "$libc" | grep -c NT_STAPSDT) SDT notes in libc, $(readelf -n "$libm" | grep -c NT_STAPSDT) in libm"
