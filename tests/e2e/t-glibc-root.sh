#!/bin/sh
# scripts/glibc-root.sh runs as root: it must never build a root in, or
# rename one into, a directory another user controls, and it builds once.
# debootstrap is replaced by a stub on PATH that records its call and
# fails (the real build takes 10-40 minutes: make glibc-root).
#  - a bad suite: usage, exit 2, nothing run;
#  - not root: one line naming make glibc-root, exit 1;
#  - the roots' directory writable by others, or another user's: refused
#    in one line naming it, debootstrap never called;
#  - a safe directory: debootstrap is called on a fresh 0700 directory of
#    root's beside the root-to-be, which is gone again after the failure;
#  - a root with its stamp: nothing is done, exit 0.
# needs: root
. tests/lib/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (the script refuses to build otherwise)"
command -v setpriv >/dev/null || skip "no setpriv"
mkdir -p "$OUT/bin"
cat >"$OUT/bin/debootstrap" <<'STUB'
#!/bin/sh
for a; do d=${t:-}; t=$a; done	# debootstrap ... SUITE TARGET MIRROR
printf '%s %s\n' "$(stat -c '%u %a' "$d")" "$d" >>"$MW_TEST_OUT/calls"
exit 1
STUB
chmod 755 "$OUT/bin/debootstrap"
export MW_TEST_OUT="$OUT"
P=$OUT/bin:$PATH
G=scripts/glibc-root.sh

PATH=$P sh $G sid "$OUT/x" 2>"$OUT/err"
rc=$?
[ $rc = 2 ] && grep -q "usage" "$OUT/err" || fail "bad suite: exit $rc: $(cat "$OUT/err")"
setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$P" sh $G bullseye "$OUT/x/bullseye" \
	2>"$OUT/err"
rc=$?
[ $rc = 1 ] && grep -q "run as root: make glibc-root SUITE=bullseye" "$OUT/err" ||
	fail "as nobody: exit $rc: $(cat "$OUT/err")"

mkdir -p "$OUT/open" "$OUT/theirs"
chmod 777 "$OUT/open"
chown 65534:65534 "$OUT/theirs"
for d in open theirs; do
	PATH=$P sh $G bullseye "$OUT/$d/bullseye" 2>"$OUT/err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$OUT/err")" = 1 ] && grep -q "'$OUT/$d' .*: refused" "$OUT/err" ||
		fail "$d: exit $rc: $(cat "$OUT/err")"
	echo "ok: $d: $(cat "$OUT/err")"
done
[ ! -e "$OUT/calls" ] || fail "debootstrap was called: $(cat "$OUT/calls")"

mkdir -p "$OUT/safe"
chmod 755 "$OUT/safe"
PATH=$P sh $G bullseye "$OUT/safe/bullseye" 2>"$OUT/err" && fail "the stub debootstrap succeeded?"
read -r uid mode dir <"$OUT/calls" || fail "debootstrap was not called: $(cat "$OUT/err")"
[ "$uid $mode" = "0 700" ] || fail "debootstrap's directory was $uid $mode"
case $dir in "$OUT/safe/.bullseye-new."*) ;; *) fail "debootstrap's directory: $dir" ;; esac
[ -z "$(ls -A "$OUT/safe")" ] || fail "left behind: $(ls -A "$OUT/safe")"
echo "ok: debootstrap into $dir (root's, 0700), removed after its failure"

mkdir -p "$OUT/safe/bullseye/usr/bin"
: >"$OUT/safe/bullseye/usr/bin/gcc"
echo "bullseye 2.31-13+deb11u11" >"$OUT/safe/bullseye/.mallocwatch-stamp"
rm -f "$OUT/calls"
PATH=$P sh $G bullseye "$OUT/safe/bullseye" 2>"$OUT/err" || fail "a stamped root: exit $?: $(cat "$OUT/err")"
[ ! -e "$OUT/calls" ] || fail "a stamped root was built again"
echo "ok: a root with its stamp is kept"
