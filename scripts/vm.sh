#!/bin/sh
# vm.sh - run a command as root in the project tree inside a Debian
# guest with Debian's kernel, whose modules load: the way to run
# SystemTap's kernel-module runtime on a host that cannot.
#
# Usage: [MW_VM_SUITE=SUITE] scripts/vm.sh CMD [ARG...]
#        [MW_VM_SUITE=SUITE] scripts/vm.sh --build  (only build the image, if needed)
#
# MW_VM_SUITE picks the guest: bookworm (the default: Debian 12, kernel
# 6.1, systemtap 4.8) or trixie (Debian 13, kernel 6.12, systemtap 5.1).
# Each suite's image is built once, as root, with debootstrap from
# Debian's own packages (MW_VM_MIRROR) and cached under
# /var/cache/mallocwatch/vm/SUITE (MW_VM_CACHE is the vm directory):
# Debian's kernel (linux-image-amd64) with its modules and the matching
# linux-headers, systemtap, gcc, elfutils and the rest of what the project
# builds and tests with.  It is rebuilt when its recipe (the package list, this
# script's image steps, the guest's init) changes: image/key holds the
# recipe's hash.  About 4 minutes, with a progress line.
#
# Each run boots that kernel with qemu-system-x86_64 (-kernel/-initrd
# from the image's /boot, the image as a virtio disk in snapshot mode, so
# the run never changes it), with four 9p shares: the project tree at the
# same path as here, read-write (CMD's build and test output land in it as
# they would on the host), a probe-enabled glibc of the guest's release
# read-only at /var/cache/mallocwatch/glibc (MW_GLIBC_PREFIX), where the
# tests look for it: bookworm's guest shares the host's (make glibc, 2.36);
# trixie's gets the libraries of the trixie root (make glibc-root
# SUITE=trixie, 2.41 with probes, under MW_ROOTS_DIR), copied into
# vm/trixie/glibc/lib, because what the guest compiles against its own
# 2.41 headers does not run on 2.36 (examples/allocator-knobs needs
# GLIBC_2.38's __isoc23_sscanf),
# the guest's cache of kernel modules mallocwatch built (vm/SUITE/modules,
# at /var/cache/mallocwatch/modules: a module compiles in minutes under
# TCG, and is built once per script and kernel; one cache per suite, so
# that a module built for one suite's kernel and systemtap is never
# offered to the other's), and a control directory
# of the run.  The guest's init (/sbin/mw-init, no systemd) loads the 9p
# modules, mounts the shares, runs CMD as root in the project tree with
# its stdout and stderr into files of the control directory, which this
# script copies to its own stdout and stderr as they grow, writes CMD's
# exit code there and powers off.  This script exits with that code;
# with 1 and a line saying why when the guest did not run CMD to its end
# (the guest's console is in the run directory, MW_VM_KEEP=1 keeps it).
#
# KVM is tried first when /dev/kvm is there; a guest that does not start
# under KVM within MW_VM_KVM_WAIT seconds (30) is stopped and TCG used
# instead, and that verdict is cached per suite, host kernel and qemu
# (vm/SUITE/kvm-VERDICT).  MW_VM_ACCEL=tcg|kvm forces one.  MW_VM_TIMEOUT
# (seconds, default 7200) bounds a run; MW_VM_MEM (MiB, 4096) and
# MW_VM_CPUS (the host's count under KVM, 1 under TCG: see boot) size
# the guest; MW_VM_TCG_THREAD=multi runs TCG's vCPUs on threads of their
# own (single by default).
#
# Nothing outside the guest is touched but the cache and what CMD writes
# into the project tree.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUITE=${MW_VM_SUITE:-bookworm}
case $SUITE in
bookworm | trixie) ;;
*) echo "mallocwatch: vm: MW_VM_SUITE: bookworm or trixie, not '$SUITE'" >&2; exit 2 ;;
esac
CACHE=${MW_VM_CACHE:-/var/cache/mallocwatch/vm}/$SUITE
# GLIBC: where the guest's probe-enabled glibc is (the tests' path);
# GLIBC_SRC: the host's directory shared there
GLIBC=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}
GLIBC_SRC=$GLIBC
[ "$SUITE" = bookworm ] || GLIBC_SRC=$CACHE/glibc
GLIBC_ROOT=${MW_ROOTS_DIR:-/var/cache/mallocwatch/roots}/$SUITE
MIRROR=${MW_VM_MIRROR:-http://deb.debian.org/debian}
TIMEOUT=${MW_VM_TIMEOUT:-7200}
MEM=${MW_VM_MEM:-4096}
HOSTCPUS=$(nproc 2>/dev/null || echo 2)
# The guest kernel's console shows what the kernel says about a stuck
# CPU: the soft-lockup report with every CPU's backtrace, the hung-task
# report (loglevel=7: the backtraces are KERN_DEFAULT, which `quiet`
# hides).  MW_VM_APPEND adds to the command line.
KAPPEND="loglevel=7 softlockup_all_cpu_backtrace=1 ${MW_VM_APPEND:-}"
# A CPU the guest's watchdog has seen stuck for LOCKUP seconds (the
# watchdog says so every ~26 s) ends the run: a hang, not a slow test.
LOCKUP=${MW_VM_LOCKUP:-100}

# What the guest has: what scripts/install-deps.sh installs to build and
# run the end-to-end tests, plus the kernel, its headers and what the
# guest's init uses.
PKGS="linux-image-amd64 linux-headers-amd64 initramfs-tools kmod udev \
gcc make pkg-config libelf-dev libdw-dev zlib1g-dev liblzma-dev libjansson-dev \
libmicrohttpd-dev libyaml-dev libcrypt-dev systemtap systemtap-sdt-dev python3 file bc time \
xz-utils util-linux procps libc6-dbg libbpf-dev"

say() { echo "vm: $*" >&2; }
die() { echo "mallocwatch: vm: $*" >&2; exit 1; }

# The guest's PID 1.  It runs the control share's run.sh, which the host
# writes for each run (so that CMD is not part of the image).
GUEST_INIT='#!/bin/sh
# mw-init - PID 1 of the mallocwatch test guest (scripts/vm.sh)
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mountpoint -q /run || mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
hostname mwvm
modprobe -a 9pnet_virtio 9p
mkdir -p /mnt/mwctl
if mount -t 9p -o trans=virtio,version=9p2000.L ctl /mnt/mwctl; then
	echo started >/mnt/mwctl/started
	HOME=/root TERM=dumb sh /mnt/mwctl/run.sh
	sync
fi
echo o >/proc/sysrq-trigger
sleep 60
'

# The image's recipe; its hash names the image.  build_image's comment
# lines are not part of it: a comment changed builds no new image.
recipe_key() {
	printf '%s\n%s\n%s\n%s\n' "$SUITE" "$PKGS" "$GUEST_INIT" \
		"$(sed -n '/^build_image()/,/^}/p' "$0" | grep -v '^[[:space:]]*#')" |
		sha256sum | cut -c1-16
}

build_image() {
	command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
	command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is not installed (apt-get install e2fsprogs)"
	[ "$(id -u)" = 0 ] || die "building the guest image needs root"
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/build.XXXXXX")
	log=$tmp/build.log
	say "building the guest image in $tmp (debootstrap $SUITE, about 4 minutes; log $log)"
	pkgs=$(echo $PKGS | tr ' ' ,)
	debootstrap --variant=minbase --include="$pkgs" "$SUITE" "$tmp/root" "$MIRROR" >"$log" 2>&1 &
	bpid=$!
	while kill -0 $bpid 2>/dev/null; do
		line=$(grep -E '^I: (Retrieving|Validating|Extracting|Unpacking|Configuring|Installing)' "$log" | tail -n 1 || true)
		printf '\rvm: %-70.70s' "${line#I: }" >&2
		sleep 2
	done
	printf '\r%-75s\r' '' >&2
	wait $bpid || { tail -n 20 "$log" >&2; die "debootstrap failed (log $log)"; }
	r=$tmp/root
	printf '%s' "$GUEST_INIT" >"$r/sbin/mw-init"
	chmod 755 "$r/sbin/mw-init"
	echo mwvm >"$r/etc/hostname"
	rm -f "$r/var/cache/apt/archives/"*.deb
	kver=$(ls "$r/lib/modules" | head -n 1)
	[ -f "$r/boot/vmlinuz-$kver" ] && [ -f "$r/boot/initrd.img-$kver" ] ||
		die "the guest has no kernel or initrd for '$kver' (log $log)"
	[ -d "$r/usr/src/linux-headers-$kver" ] || die "the guest has no headers for '$kver' (log $log)"
	# The guest's systemtap is left as Debian ships it.  Debian 12's 4.8
	# does not build a module for Debian 12's 6.1 kernels since 6.1.1xx
	# (task_work_cancel_func: docs/tracing.md, "The kernel runtime");
	# mallocwatch builds its modules from a mended copy of the runtime
	# (src/runtime/kmod_sources.h), so every module the bookworm guest builds
	# tests the mend.  Debian 13's 5.1-5 has upstream's fixes of both
	# (the relay's in 5.1, task_work_cancel_func's patched in by Debian)
	# but not 6.12's uprobes API, which mallocwatch mends too: every
	# module the trixie guest builds tests that mend.
	cp "$r/boot/vmlinuz-$kver" "$tmp/vmlinuz"
	cp "$r/boot/initrd.img-$kver" "$tmp/initrd.img"
	echo "$kver" >"$tmp/kernel"
	say "making the disk image"
	mb=$(( $(du -sm "$r" | cut -f1) + 3072 ))
	mkfs.ext4 -q -L mwroot -d "$r" "$tmp/disk.img" "${mb}M" >>"$log" 2>&1 ||
		die "mkfs.ext4 failed (log $log)"
	rm -rf "$r"
	recipe_key >"$tmp/key"
	rm -rf "$CACHE/image.old"
	[ ! -d "$CACHE/image" ] || mv "$CACHE/image" "$CACHE/image.old"
	mv "$tmp" "$CACHE/image"
	rm -rf "$CACHE/image.old"
	say "guest image ready: Debian $SUITE, kernel $kver"
}

ensure_image() {
	if [ ! -f "$CACHE/image/key" ] || [ "$(cat "$CACHE/image/key")" != "$(recipe_key)" ]; then
		build_image
	fi
}

# ensure_glibc: GLIBC_SRC/lib holds the shared libraries of the probe-
# enabled root GLIBC_ROOT's libc6 (their targets, as the package lists
# them), copied again when the root's stamp changes
ensure_glibc() {
	stamp=$GLIBC_ROOT/.mallocwatch-stamp
	list=$GLIBC_ROOT/var/lib/dpkg/info/libc6:amd64.list
	if [ ! -f "$stamp" ] || [ ! -f "$list" ]; then
		die "no probe-enabled $SUITE root at $GLIBC_ROOT (make glibc-root SUITE=$SUITE)"
	fi
	! cmp -s "$stamp" "$GLIBC_SRC/stamp" || return 0
	rm -rf "$GLIBC_SRC"
	mkdir -p "$GLIBC_SRC/lib"
	grep -E '^(/usr)?/lib(64)?/(x86_64-linux-gnu/)?[A-Za-z0-9_.+-]+\.so(\.[0-9]+)*$' "$list" |
		while read -r f; do
			if [ ! -f "$GLIBC_ROOT$f" ] || [ -L "$GLIBC_ROOT$f" ]; then
				continue
			fi
			cp "$GLIBC_ROOT$f" "$GLIBC_SRC/lib/" || exit 1
		done || die "cannot copy $GLIBC_ROOT's libraries"
	if [ ! -f "$GLIBC_SRC/lib/libc.so.6" ] || [ ! -f "$GLIBC_SRC/lib/ld-linux-x86-64.so.2" ]; then
		die "$GLIBC_ROOT's libc6 has no libc.so.6 or ld-linux-x86-64.so.2"
	fi
	cp "$stamp" "$GLIBC_SRC/stamp"
	say "the guest's glibc: $(cat "$stamp")"
}

# Quote each argument for sh.
quote() {
	for a in "$@"; do
		printf "'%s' " "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"
	done
}

# own_build: the lines of run.sh that give a guest of another release
# than the host's its own build: vm/SUITE/build (kept across runs) over
# the tree's build/, and the examples built afresh in a tmpfs over
# examples/ (what trixie's gcc links against 2.41 must not be run by the
# host, nor the host's build by the guest)
own_build() {
	[ "$SUITE" != bookworm ] || return 0
	cat <<EOF
mkdir -p '$ROOT/build' /tmp/mw-examples
mount -t 9p -o \$o build '$ROOT/build' || exit 1
cp -a '$ROOT/examples/.' /tmp/mw-examples/ || exit 1
mount -t tmpfs tmpfs '$ROOT/examples' || exit 1
cp -a /tmp/mw-examples/. '$ROOT/examples/' && make -s -C '$ROOT/examples' clean >/dev/null || exit 1
EOF
}

write_run() {
	cat >"$run/ctl/run.sh" <<EOF
# written by scripts/vm.sh for one run
o=trans=virtio,version=9p2000.L,msize=512000
mkdir -p '$ROOT' '$GLIBC'
mount -t 9p -o \$o proj '$ROOT' || exit 1
mount -t 9p -o ro,\$o glibc '$GLIBC' || exit 1
mkdir -p /var/cache/mallocwatch/modules
mount -t 9p -o \$o modules /var/cache/mallocwatch/modules || exit 1
$(own_build)
cd '$ROOT' || exit 1
export LANG=C MW_IN_VM=1
# the loopback interface up (the guest's init starts no network; serve's
# tests talk to 127.0.0.1): SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP
python3 -c 'import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
f = struct.unpack("16sh", fcntl.ioctl(s, 0x8913, struct.pack("16sh", b"lo", 0)))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sh", b"lo", f | 1))' || echo "vm: loopback not up" >&2
( $(quote "$@") ) <>/dev/null >>/mnt/mwctl/out 2>>/mnt/mwctl/err
echo \$? >/mnt/mwctl/rc
EOF
}

# boot ACCEL: start the guest under ACCEL in the background; sets qpid,
# and cats: the copies of CMD's stdout and stderr, files of the control
# share (9p writes are synchronous: what the guest wrote is there),
# copied here as they grow until qemu is gone.
boot() {
	case $1 in
	kvm) acc="-accel kvm -cpu host"; CPUS=${MW_VM_CPUS:-$HOSTCPUS} ;;
	# one host thread for all vCPUs: under multi-threaded TCG (QEMU
	# 7.2, Debian 12's) a vCPU kept executing an int3 that the guest
	# kernel had already patched in memory (a jump label in do_exit(),
	# patched while stap's modules were loaded and unloaded), forever: both CPUs "soft lockup" in asm_exc_int3 at an
	# address whose bytes read as a jmp (docs/testing.md, "One emulated CPU").
	# And one CPU: with two vCPUs on one thread, a vCPU is switched out
	# for up to TCG's 100 ms slice wherever it is, also inside a stap
	# probe handler holding a global's lock, which the other vCPU's
	# handler may give up on after 1 ms (stap's MAXTRYLOCK): a skipped
	# probe, which no real CPU would cause
	*) acc="-accel tcg,thread=${MW_VM_TCG_THREAD:-single} -cpu max"; CPUS=${MW_VM_CPUS:-1} ;;
	esac
	vbuild=
	[ "$SUITE" = bookworm ] ||
		vbuild="-virtfs local,path=$CACHE/build,mount_tag=build,security_model=passthrough,id=build"
	rm -f "$run/ctl/started" "$run/ctl/rc"
	: >"$run/ctl/out"
	: >"$run/ctl/err"
	# shellcheck disable=SC2086
	qemu-system-x86_64 $acc -m "$MEM" -smp "$CPUS" -nodefaults -no-user-config \
		-display none -no-reboot \
		-kernel "$CACHE/image/vmlinuz" -initrd "$CACHE/image/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 $KAPPEND init=/sbin/mw-init" \
		-drive "file=$CACHE/image/disk.img,format=raw,if=virtio,snapshot=on" \
		-serial "file:$run/console-$1.log" \
		-virtfs "local,path=$ROOT,mount_tag=proj,security_model=passthrough,id=proj" \
		-virtfs "local,path=$GLIBC_SRC,mount_tag=glibc,security_model=passthrough,readonly=on,id=glibc" \
		-virtfs "local,path=$run/ctl,mount_tag=ctl,security_model=passthrough,id=ctl" \
		-virtfs "local,path=$CACHE/modules,mount_tag=modules,security_model=passthrough,id=modules" \
		$vbuild \
		</dev/null >"$run/qemu-$1.out" 2>&1 &
	qpid=$!
	tail -q -c +1 -f --pid=$qpid "$run/ctl/out" &
	cats=$!
	tail -q -c +1 -f --pid=$qpid "$run/ctl/err" >&2 &
	cats="$cats $!"
}

# wait_started SECONDS: 0 once the guest's init said it started, 1 when
# qemu exited or SECONDS passed first.
wait_started() {
	i=0
	while [ $i -lt $(($1 * 10)) ]; do
		[ ! -f "$run/ctl/started" ] || return 0
		kill -0 $qpid 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

stop_qemu() {
	kill $qpid 2>/dev/null || true
	wait $qpid 2>/dev/null || true
	stop_cats
}

# stuck CONSOLE: prints the first soft-lockup line of the guest's console
# whose CPU has been stuck for LOCKUP seconds or more; 1 if none.
stuck() {
	grep -o 'soft lockup - CPU#[0-9]* stuck for [0-9]*s! \[[^]]*\]' "$1" 2>/dev/null |
		awk -v max="$LOCKUP" '{ s = $7; sub(/s!$/, "", s) } s + 0 >= max { print; found = 1; exit }
			END { exit !found }'
}

# The copies of a qemu that is gone: they end by themselves, after
# copying what is left.
stop_cats() {
	for c in ${cats:-}; do
		wait $c 2>/dev/null || true
	done
	cats=
}

[ $# -gt 0 ] || { echo "usage: scripts/vm.sh CMD [ARG...] | --build" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
ensure_image
[ "$1" != --build ] || exit 0
if [ "$SUITE" = bookworm ]; then
	[ -f "$GLIBC/lib/libc.so.6" ] || die "no probe-enabled glibc at $GLIBC (make glibc)"
else
	ensure_glibc
fi

# the guest's kernel-module cache (mallocwatch's MW_CACHE_DIR/modules):
# kept here across runs, root's alone as mallocwatch wants it
mkdir -p "$CACHE/modules"
chmod 700 "$CACHE/modules"
[ "$SUITE" = bookworm ] || mkdir -p "$CACHE/build"
run=$(mktemp -d "$CACHE/run.XXXXXX")
mkdir "$run/ctl"
trap 'stop_qemu 2>/dev/null; [ "${MW_VM_KEEP:-0}" = 1 ] || rm -rf "$run"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
write_run "$@"

verdict=$CACHE/kvm-$(printf '%s %s' "$(uname -r)" "$(qemu-system-x86_64 --version | head -n 1)" |
	sha256sum | cut -c1-12)
accel=${MW_VM_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -w /dev/kvm ] && [ "$(cat "$verdict" 2>/dev/null)" != no ]; then
		accel=kvm
	fi
fi
boot $accel
if ! wait_started "$( [ $accel = kvm ] && echo "${MW_VM_KVM_WAIT:-30}" || echo 600)"; then
	stop_qemu
	if [ $accel = kvm ] && [ -z "${MW_VM_ACCEL:-}" ]; then
		say "the guest did not start under KVM; using TCG (cached in $verdict)"
		echo no >"$verdict"
		accel=tcg
		boot tcg
		wait_started 600 || { stop_qemu; MW_VM_KEEP=1; die "the guest did not start (console: $run/console-tcg.log)"; }
	else
		MW_VM_KEEP=1; die "the guest did not start under $accel (console: $run/console-$accel.log)"
	fi
fi
[ $accel != kvm ] || echo yes >"$verdict"
i=0
while kill -0 $qpid 2>/dev/null; do
	if [ $i -ge $((TIMEOUT * 2)) ]; then
		stop_qemu
		MW_VM_KEEP=1; die "CMD did not end within $TIMEOUT s; guest stopped (console: $run/console-$accel.log)"
	fi
	if [ $((i % 20)) = 0 ] && lockup=$(stuck "$run/console-$accel.log"); then
		stop_qemu
		MW_VM_KEEP=1; die "the guest's kernel saw a CPU stuck: $lockup; guest stopped (console with the backtraces: $run/console-$accel.log)"
	fi
	sleep 0.5
	i=$((i + 1))
done
wait $qpid 2>/dev/null || true
stop_cats
[ -f "$run/ctl/rc" ] || { MW_VM_KEEP=1; die "the guest stopped before CMD ended (console: $run/console-$accel.log)"; }
exit "$(cat "$run/ctl/rc")"
