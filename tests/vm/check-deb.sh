#!/bin/sh
# check-deb.sh - the Debian package as a user gets it: installed into a
# fresh Debian 12 root, its dependencies resolved from Debian's archive,
# and run there.  `make check-deb` runs it after `make deb`; slow (the
# glibc build in the root), so not part of `make check`.
#
# Usage: tests/vm/check-deb.sh DEB      (root; debootstrap, unshare, chroot)
#
#   1. debootstrap --variant=minbase bookworm ROOT, then in ROOT
#      apt-get install ./mallocwatch_*.deb python3 libc6-dbg (the
#      package's Depends and Recommends from the archive): its files are
#      there, --version is VERSION, the bash completion works (mawk);
#   2. mallocwatch snapshot -p of a python3 whose 3 threads allocate:
#      exit 0 and "Arenas: 4 (glibc counts 4)";
#   3. mallocwatch setup glibc (the probe-enabled glibc built in ROOT, about
#      15 minutes of 2 cores, nice 19), then mallocwatch --json -c of the
#      package's own examples/arena-storm.c (built in ROOT): its report set
#      beside the program's own malloc_info(), arena by arena
#      (tests/lib/malloc_info_compare.py), as `make demo` does.
#      MW_CHECK_DEB_GLIBC=0 leaves step 3 out and says so.
#
# Everything runs in a mount namespace of its own (unshare -m, private):
# the mounts it makes in ROOT (proc, sys, dev, run; debootstrap's own)
# are never seen outside it and go away with it, on every exit path.
# On exit every process whose root is ROOT is killed (by pid) and the
# work directory (mktemp -d under /var/tmp) removed, unless
# MW_CHECK_DEB_KEEP=1.  MW_CHECK_DEB_MIRROR: the archive (default
# http://deb.debian.org/debian).
#
# Exit 0 when every step passed, 1 when one failed (its log's last lines
# shown), 77 when this cannot run here (not root, no debootstrap).
set -u

say() { echo "check-deb: $*" >&2; }
die() { say "FAIL: $*"; exit 1; }

# --- inside the private mount namespace ---------------------------------
# --inside WORK DEB SRC
if [ "${1:-}" = --inside ]; then
	WORK=$2 DEB=$3 SRC=$4
	ROOT=$WORK/root
	MIRROR=${MW_CHECK_DEB_MIRROR:-http://deb.debian.org/debian}
	T0=$(date +%s)
	step() { say "[$(( $(date +%s) - T0 )) s] $*"; }
	# run LOG CMD...: CMD's output into WORK/LOG; on failure its last lines
	run() {
		_log=$WORK/$1; shift
		"$@" >"$_log" 2>&1 && return 0
		_rc=$?
		tail -n 30 "$_log" | sed 's/^/    /' >&2
		say "'$*' exited $_rc (log $_log)"
		return $_rc
	}
	in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
	pids=""
	finish() {
		for p in $pids; do kill "$p" 2>/dev/null; done
		[ -x "$ROOT/usr/bin/mallocwatch" ] && [ -d "$ROOT/proc/self" ] &&
			timeout 120 chroot "$ROOT" mallocwatch --cleanup >/dev/null 2>&1
	}
	trap finish EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	mount --make-rprivate / || die "cannot make the mounts private"

	step "debootstrap --variant=minbase bookworm ($MIRROR)"
	run debootstrap.log nice debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" ||
		die "debootstrap failed"
	# / of the root a mount point of its own (mallocwatch -c makes a
	# namespace whose / is a slave), then what programs expect
	mount --bind "$ROOT" "$ROOT" &&
		mount -t proc proc "$ROOT/proc" &&
		mount --rbind /sys "$ROOT/sys" &&
		mount --rbind /dev "$ROOT/dev" &&
		mount -t tmpfs tmpfs "$ROOT/run" || die "cannot mount proc, sys, dev, run in the root"
	# no service is started by a package's maintainer scripts
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"

	step "apt-get install ./$(basename "$DEB") python3 libc6-dbg"
	cp "$DEB" "$ROOT/tmp/" || die "cannot copy '$DEB' into the root"
	run apt-update.log in_root apt-get update || die "apt-get update failed"
	run apt-install.log in_root apt-get install -y "/tmp/$(basename "$DEB")" python3 libc6-dbg ||
		die "the package did not install"
	in_root dpkg-query -W -f='${Package} ${Version} ${db:Status-Status}\n' mallocwatch systemtap \
		libc6-dbg libmicrohttpd12 python3 >&2
	v=$(in_root mallocwatch --version) || die "mallocwatch --version failed"
	[ "$v" = "mallocwatch $(cat "$SRC/VERSION")" ] || die "--version says '$v'"
	for f in /usr/libexec/mallocwatch/memlock-shim.so /usr/libexec/mallocwatch/umulti-shim.so \
		/usr/libexec/mallocwatch/build-glibc.sh /usr/libexec/mallocwatch/safe-dirs.sh /usr/share/man/man1/mallocwatch.1.gz \
		/usr/share/bash-completion/completions/mallocwatch \
		/usr/share/doc/mallocwatch/examples/arena-storm.c; do
		[ -f "$ROOT$f" ] || die "the package did not install $f"
	done

	# the completion as bash-completion loads it, with the root's awk (mawk)
	c=$(in_root bash -c '. /usr/share/bash-completion/completions/mallocwatch &&
		COMP_WORDS=(mallocwatch snapshot --leave) COMP_CWORD=2 && _mallocwatch &&
		echo "${COMPREPLY[*]}"') && [ "$c" = --leave-stopped ] ||
		die "the installed completion offered '$c' for 'mallocwatch snapshot --leave<TAB>'"

	step "mallocwatch snapshot -p of python3 (3 threads that allocate)"
	rm -f "$ROOT/tmp/py-ready"
	chroot "$ROOT" python3 -c '
import threading, time
keep = []
def work():
    keep.append([bytes(1000) for _ in range(2000)])
    time.sleep(600)
ts = [threading.Thread(target=work, daemon=True) for _ in range(3)]
for t in ts: t.start()
while len(keep) < 3: time.sleep(0.01)
open("/tmp/py-ready", "w").close()
time.sleep(600)' &
	py=$!
	pids="$pids $py"
	i=0
	until [ -e "$ROOT/tmp/py-ready" ]; do
		i=$((i + 1))
		[ $i -lt 600 ] && kill -0 $py 2>/dev/null || die "python3 never got its threads going"
		sleep 0.1
	done
	run snapshot.log in_root mallocwatch snapshot -p "$py" || die "snapshot -p of python3 failed"
	sed -n '1,8p' "$WORK/snapshot.log" >&2
	grep -qx 'Arenas: 4 (glibc counts 4)' "$WORK/snapshot.log" ||
		die "snapshot -p did not find python3's 4 arenas (log $WORK/snapshot.log)"
	kill $py
	pids=""

	if [ "${MW_CHECK_DEB_GLIBC:-1}" = 0 ]; then
		step "SKIP: setup glibc and -c (MW_CHECK_DEB_GLIBC=0)"
		exit 0
	fi
	step "mallocwatch setup glibc (nice 19; about 15 minutes of 2 cores, log $WORK/setup.log)"
	run setup.log in_root nice -n 19 mallocwatch setup glibc || die "setup glibc failed"
	grep 'build-glibc:' "$WORK/setup.log" >&2
	run setup-again.log in_root mallocwatch setup glibc || die "setup glibc, once built, failed"
	[ ! -s "$WORK/setup-again.log" ] || die "setup glibc built again: $(cat "$WORK/setup-again.log")"

	step "mallocwatch --json -c examples/arena-storm 8 100, against its malloc_info()"
	run cc.log in_root cc -O2 -Wall -pthread -o /tmp/arena-storm \
		/usr/share/doc/mallocwatch/examples/arena-storm.c || die "examples/arena-storm.c did not build"
	cp "$SRC/tests/lib/malloc_info_compare.py" "$ROOT/tmp/" || die "cannot copy the comparison"
	in_root sh -c 'mallocwatch --json /tmp/report.json -c /tmp/arena-storm 8 100 \
		>/tmp/malloc_info.xml 2>/tmp/trace.err' || {
		tail -n 20 "$ROOT/tmp/trace.err" >&2
		die "mallocwatch -c /tmp/arena-storm failed"
	}
	sed -n '1,4p' "$ROOT/tmp/trace.err" >&2
	mkdir -p "$ROOT/tmp/cmp"
	run compare.log in_root python3 /tmp/malloc_info_compare.py /tmp/malloc_info.xml \
		/tmp/report.json /tmp/cmp || die "the comparison failed"
	diff -u "$ROOT/tmp/cmp/expected.txt" "$ROOT/tmp/cmp/actual.txt" >&2 ||
		die "mallocwatch's arenas differ from malloc_info()'s"
	paste -d '|' "$ROOT/tmp/cmp/expected.txt" "$ROOT/tmp/cmp/actual.txt" |
		awk -F'|' '{ printf "    %-42s %s\n", $1, $2 }' >&2
	step "passed"
	exit 0
fi

# --- outside -------------------------------------------------------------
[ $# = 1 ] || { echo "usage: tests/vm/check-deb.sh DEB" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "check-deb: needs root (debootstrap, chroot)"; exit 77; }
for c in debootstrap unshare chroot; do
	command -v $c >/dev/null || { echo "check-deb: no $c (apt-get install $c)"; exit 77; }
done
DEB=$(realpath "$1") && [ -f "$DEB" ] || die "no package '$1' (make deb)"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /var/tmp/mallocwatch-check-deb.XXXXXXXX) || die "cannot make a work directory"
ROOT=$WORK/root

# Processes whose root is ROOT: ours (chroot'ed by this script), killed by
# pid; then the work directory, which has no mount in this namespace.
cleanup() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	if grep -q " $WORK[/ ]" /proc/self/mountinfo; then
		say "mounts under $WORK are left in this namespace; not removing it"
	elif [ "${MW_CHECK_DEB_KEEP:-0}" = 1 ]; then
		say "kept $WORK"
	else
		rm -rf --one-file-system "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
say "package $DEB; work directory $WORK"
unshare -m sh "$0" --inside "$WORK" "$DEB" "$SRC"
