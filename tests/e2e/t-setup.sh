#!/bin/sh
# mallocwatch setup glibc runs the build-glibc.sh of its source tree
# (build/../scripts) or of MW_LIBEXECDIR, as root: only a script as safe as
# the binary itself (owned by root or the binary's owner, in directories
# of theirs, writable by no one else) is run, with the cache's PREFIX, and
# its exit status is passed on.  The real build is not run here (make
# check-deb does it in a scratch root); a stand-in script records how it
# was run.
# needs: root
. tests/lib/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (files of other users)"
command -v setpriv >/dev/null || skip "no setpriv"

# 1. The real script, as nobody, when the cache is missing: it refuses
# and says how to run it (nothing is built or installed).
MW_GLIBC_PREFIX="$OUT/none/glibc" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$MW" setup glibc >"$OUT/nobody.out" 2>&1
rc=$?
cat "$OUT/nobody.out"
syslibc_probes=0
grep -q 'has SDT probes; nothing to build' "$OUT/nobody.out" && syslibc_probes=1
if [ $syslibc_probes = 0 ]; then
	[ $rc = 1 ] || fail "setup glibc as nobody exited $rc, not 1"
	grep -q 'run as root: mallocwatch setup glibc' "$OUT/nobody.out" ||
		fail "setup glibc as nobody did not say to run it as root"
	[ ! -e "$OUT/none" ] || fail "setup glibc as nobody made '$OUT/none'"
fi

# A tree of our own: tree/build/mallocwatch (a copy of the binary) and
# tree/scripts/build-glibc.sh, a stand-in that records its arguments.
T=$OUT/tree
mkdir -p "$T/build" "$T/scripts" || exit 99
cp "$MW" "$T/build/mallocwatch" || exit 99
cat >"$T/scripts/build-glibc.sh" <<'STUB'
echo "ran: $*" >"$(dirname "$0")/../ran"
exit ${STUB_RC:-0}
STUB
chmod 755 "$T/scripts/build-glibc.sh"

# 2. A good script runs with the prefix, and its status comes back.
rm -f "$T/ran"
MW_GLIBC_PREFIX=/var/cache/mw-test/glibc "$T/build/mallocwatch" setup glibc ||
	fail "setup glibc with a script that exits 0 exited $?"
[ "$(cat "$T/ran")" = "ran: /var/cache/mw-test/glibc" ] ||
	fail "the script was not run with the prefix: $(cat "$T/ran" 2>&1)"
STUB_RC=5 "$T/build/mallocwatch" setup glibc
[ $? = 1 ] || fail "a failing script's setup did not exit 1"
MW_GLIBC_PREFIX=relative/glibc "$T/build/mallocwatch" setup glibc 2>"$OUT/rel.err"
[ $? = 2 ] || fail "a relative MW_GLIBC_PREFIX was not a usage error: $(cat "$OUT/rel.err")"

# 3. Scripts another user could change are refused, and not run.
refused() {
	rm -f "$T/ran"
	"$T/build/mallocwatch" setup glibc >"$OUT/refused.out" 2>&1
	rc=$?
	[ $rc = 1 ] || fail "$1: exit $rc, not 1: $(cat "$OUT/refused.out")"
	grep -q "^mallocwatch: .*refused" "$OUT/refused.out" || fail "$1: $(cat "$OUT/refused.out")"
	[ ! -e "$T/ran" ] || fail "$1: the script was run"
	cat "$OUT/refused.out"
}
chown 65534 "$T/scripts/build-glibc.sh"
refused "a script of uid 65534"
chown 0 "$T/scripts/build-glibc.sh"
chmod 757 "$T/scripts/build-glibc.sh"
refused "a script anyone may write"
chmod 755 "$T/scripts/build-glibc.sh"
chmod 777 "$T/scripts"
refused "a script in a directory anyone may write"
chmod 755 "$T/scripts"
chown 65534 "$T/scripts"
refused "a script in a directory of uid 65534"
chown 0 "$T/scripts"
# a link to a script elsewhere is judged where it leads
mkdir -p "$OUT/theirs" && chown 65534 "$OUT/theirs" &&
	mv "$T/scripts/build-glibc.sh" "$OUT/theirs/" &&
	ln -s "$OUT/theirs/build-glibc.sh" "$T/scripts/build-glibc.sh" || exit 99
refused "a link to a script in a directory of uid 65534"
# the binary's owner may own the tree (a user's clone, run with sudo)
rm "$T/scripts/build-glibc.sh" && mv "$OUT/theirs/build-glibc.sh" "$T/scripts/" || exit 99
chown -R 65534 "$T"
"$T/build/mallocwatch" setup glibc || fail "a tree owned by the binary's owner was refused"
echo "ok"
