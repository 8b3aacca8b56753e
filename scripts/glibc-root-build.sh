#!/bin/sh
# glibc-root-build.sh - build a root's glibc with SDT probes, inside it.
#
# Usage: scripts/glibc-root-build.sh ROOT VERSION JOBS
# Called by glibc-root.sh on a fresh debootstrapped ROOT (root's, 0755,
# /proc mounted).  Fetches the glibc source package VERSION inside ROOT,
# configures it with --enable-systemtap and the directories of the root's
# libc6, builds it with the root's gcc (chroot, nice -n 5, JOBS jobs) and
# puts each shared library the root's libc6 package owns in place of the
# one there, unstripped, with a copy of its debug info under
# /usr/lib/debug/.build-id.  Logs stay in ROOT/var/log/mallocwatch-glibc.
set -eu
ROOT=$1 VERSION=$2 JOBS=$3
say() { echo "glibc-root: $*" >&2; }

work=$(chroot "$ROOT" mktemp -d /var/tmp/mw-glibc.XXXXXXXX)
logs=/var/log/mallocwatch-glibc
mkdir -p "$ROOT$logs"
cat >"$ROOT$work/build.sh" <<'EOF'
set -eu
work=$1 version=$2 jobs=$3 logs=$4
cd "$work"
apt-get source -q "glibc=$version" >"$logs/source.log" 2>&1
src=$(find . -maxdepth 1 -type d -name 'glibc-*' | head -n 1)
[ -n "$src" ] || { echo "apt-get source made no glibc-* directory" >&2; exit 1; }
# Debian's own directories for this release, from where libc6 put them.
libc=$(dpkg -L libc6 | grep -E '/libc\.so\.6$' | head -n 1)
rtld=$(dpkg -L libc6 | grep -E '/ld-linux-x86-64\.so\.2$' | head -n 1)
slibdir=$(dirname "$libc")
rtlddir=$(dirname "$rtld")
mkdir build
cd build
printf 'slibdir = %s\nrtlddir = %s\n' "$slibdir" "$rtlddir" >configparms
"../$src/configure" --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu \
	--libexecdir=/usr/lib/x86_64-linux-gnu --enable-systemtap --disable-werror \
	--disable-profile --disable-crypt >"$logs/configure.log" 2>&1
nice -n 5 make -j"$jobs" MAKEINFO=: >"$logs/make.log" 2>&1
make install DESTDIR="$work/inst" MAKEINFO=: >"$logs/install.log" 2>&1
EOF
say "building glibc $VERSION with --enable-systemtap inside $ROOT (15-40 minutes)"
if ! chroot "$ROOT" sh "$work/build.sh" "$work" "$VERSION" "$JOBS" "$logs"; then
	for f in source configure make install; do
		[ -s "$ROOT$logs/$f.log" ] && last=$f
	done
	say "the build failed; the end of $last.log:"
	tail -n 40 "$ROOT$logs/$last.log" >&2
	exit 1
fi

# Each regular shared-library file of libc6 replaced by the rebuilt file of
# the same name (libc.so.6 or libc-2.31.so, ...), renamed into place.
cat >"$ROOT$work/place.sh" <<'EOF'
set -eu
work=$1
n=0
for f in $(dpkg -L libc6 | grep -E '\.so([.0-9]*)?$'); do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	b=$(basename "$f")
	new=$(find "$work/inst" -name "$b" -type f)
	[ -n "$new" ] || continue
	[ "$(echo "$new" | wc -l)" = 1 ] || { echo "two rebuilt files named $b" >&2; exit 1; }
	cp "$new" "$f.mw-new"
	chmod --reference="$f" "$f.mw-new"
	mv -f "$f.mw-new" "$f"
	id=$(readelf -n "$f" | awk '/Build ID:/ {print $3}')
	if [ -n "$id" ]; then
		d=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)
		mkdir -p "$d"
		objcopy --only-keep-debug "$f" "$d/$(echo "$id" | cut -c3-).debug"
	fi
	n=$((n + 1))
done
echo "$n"
EOF
n=$(chroot "$ROOT" sh "$work/place.sh" "$work")
rm -rf --one-file-system "${ROOT:?}$work"
libc=$(chroot "$ROOT" readlink -f /lib/x86_64-linux-gnu/libc.so.6)
notes=$(readelf -n "$ROOT$libc" | grep -c NT_STAPSDT || true)
[ "$notes" -gt 0 ] || { say "the rebuilt libc has no SDT notes"; exit 1; }
chroot "$ROOT" /bin/true || { say "the root's programs do not run on the rebuilt libc"; exit 1; }
say "$n libraries of libc6 replaced; $notes SDT notes in $libc"
