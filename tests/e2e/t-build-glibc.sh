#!/bin/sh
# scripts/build-glibc.sh runs as root: it must never build in, or install
# through, a directory another user controls.  The glibc build itself is
# not run here (11 minutes): apt-get is replaced by a stub on PATH that
# records where it was asked to unpack the source and fails, which ends
# the script right after it chose and entered its work directory.
# needs: root
. tests/lib/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (the script refuses to build otherwise)"
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "no unshare/setpriv"

mkdir -p "$OUT/bin"
cat >"$OUT/bin/apt-get" <<'STUB'
#!/bin/sh
case "$1" in
source) { stat -c '%u %a' .; pwd; } >"$MW_TEST_OUT/cwd"; exit 1 ;;
*) exit 0 ;;
esac
STUB
chmod 755 "$OUT/bin/apt-get"
export MW_TEST_OUT="$OUT"

# 1. A racer running as nobody plants the directory an older script
# used (/var/tmp/mallocwatch-glibc-build) as its own 0777 directory, over
# and over, in a private /var/tmp (its own mount namespace: nothing of
# the machine's is touched).  The script must work in a directory of
# root's, 0700, that the racer never had.
rm -f "$OUT/cwd"
unshare -m sh -c '
	mount --make-rprivate / && mount -t tmpfs -o mode=1777 tmpfs /var/tmp || exit 99
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "
		while :; do mkdir -m 0777 /var/tmp/mallocwatch-glibc-build 2>/dev/null
			chmod 0777 /var/tmp/mallocwatch-glibc-build 2>/dev/null; done" &
	racer=$!
	sleep 0.2
	PATH="$1/bin:$PATH" sh scripts/build-glibc.sh "$1/prefix/glibc" >"$1/build.out" 2>&1
	echo $? >"$1/build.rc"
	kill $racer
	ls -a /var/tmp >"$1/vartmp.ls"
' sh "$OUT" || fail "the namespace could not be set up"
cat "$OUT/build.out"
[ -f "$OUT/cwd" ] || fail "the stub apt-get was never reached: $(cat "$OUT/build.out")"
read -r owner mode <"$OUT/cwd"
where=$(sed -n 2p "$OUT/cwd")
echo "worked in $where (uid $owner, mode $mode)"
[ "$owner" = 0 ] && [ "$mode" = 700 ] || fail "built in '$where', uid $owner mode $mode: not root's 0700"
case "$where" in
/var/tmp/mallocwatch-glibc-build*) fail "built in the fixed path the racer owns" ;;
esac
[ "$(cat "$OUT/build.rc")" != 0 ] || fail "the script succeeded with a failing apt-get"
grep -q '^mallocwatch-glibc\.' "$OUT/vartmp.ls" && fail "the work directory was left behind"
[ ! -e "$OUT/prefix/glibc" ] || fail "a failed build installed something"
ls -a "$OUT/prefix" | grep -q '^\.glibc-new' && fail "the staging directory was left behind"

# 2. PREFIX under a directory nobody can write: refused before anything
# is fetched.
mkdir -p "$OUT/theirs"
chown 65534:65534 "$OUT/theirs"
rm -f "$OUT/cwd"
PATH="$OUT/bin:$PATH" sh scripts/build-glibc.sh "$OUT/theirs/glibc" >"$OUT/theirs.out" 2>&1 &&
	fail "a PREFIX in a directory of uid 65534 was accepted"
cat "$OUT/theirs.out"
grep -q "belongs to uid 65534" "$OUT/theirs.out" || fail "no reason given for the refusal"
[ ! -f "$OUT/cwd" ] || fail "the source was fetched although PREFIX was refused"
echo "ok: refused a PREFIX in nobody's directory"

# 3. The configure line is Debian's hardening (its debian/rules:
# --enable-stack-protector=strong, --enable-multi-arch): a stub source
# whose configure records its arguments and fails.  And the stamp names
# the recipe: a build of the older recipe (a stamp of the version alone)
# is redone, one of this recipe is kept without a fetch.
cat >"$OUT/bin/apt-get" <<'STUB'
#!/bin/sh
case "$1" in
source) mkdir glibc-2.36 && printf '#!/bin/sh\necho "$CFLAGS" "$@" >"$MW_TEST_OUT/configure.args"\nexit 1\n' \
		>glibc-2.36/configure && chmod 755 glibc-2.36/configure; : >"$MW_TEST_OUT/fetched"; exit 0 ;;
*) exit 0 ;;
esac
STUB
version=$(dpkg-query -W -f='${source:Version}' libc6)
mkdir -p "$OUT/p3/glibc/lib" && : >"$OUT/p3/glibc/lib/libc.so.6"
echo "$version" >"$OUT/p3/glibc/.mallocwatch-stamp"
rm -f "$OUT/fetched"
PATH="$OUT/bin:$PATH" sh scripts/build-glibc.sh "$OUT/p3/glibc" >"$OUT/p3.out" 2>&1 &&
	fail "the configure stub failed, yet the script succeeded: $(cat "$OUT/p3.out")"
[ -f "$OUT/fetched" ] || fail "a build of the older recipe (stamp '$version') was kept: $(cat "$OUT/p3.out")"
args=$(cat "$OUT/configure.args")
echo "configure: $args"
for want in -O2 --enable-systemtap --enable-stack-protector=strong --enable-multi-arch \
	--enable-kernel=3.2 --disable-crypt; do
	case " $args " in *" $want "*) ;; *) fail "configure was not given $want: $args" ;; esac
done
[ "$(cat "$OUT/p3/glibc/.mallocwatch-stamp")" = "$version" ] || fail "a failed build changed the stamp"
grep -q '^RECIPE=[0-9]' scripts/build-glibc.sh || exit 99
echo "$version recipe $(sed -n 's/^RECIPE=//p' scripts/build-glibc.sh)" >"$OUT/p3/glibc/.mallocwatch-stamp"
rm -f "$OUT/fetched"
PATH="$OUT/bin:$PATH" sh scripts/build-glibc.sh "$OUT/p3/glibc" >"$OUT/p3b.out" 2>&1 ||
	fail "a build of this recipe was not kept: $(cat "$OUT/p3b.out")"
[ ! -f "$OUT/fetched" ] || fail "a build of this recipe was redone"
echo "PASS"
