# tests/lib.sh - helpers for tests/t-*.sh; source it first.
set -u
cd "$(dirname "$0")/.." || exit 99
MW=${MW:-$PWD/build/mallocwatch}
OUT=$PWD/tests/out/$(basename "$0" .sh)
GLIBC_PREFIX=${MW_GLIBC_PREFIX:-/var/cache/mallocwatch/glibc}
rm -rf "$OUT" && mkdir -p "$OUT" || exit 99

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root to trace (uprobes)"; }
need_libc() {
	[ -f "$GLIBC_PREFIX/lib/libc.so.6" ] || skip "no probe-enabled glibc at $GLIBC_PREFIX (make glibc)"
}
# run CMD..., which must exit 0
ok() { "$@" || fail "'$*' exited $?"; }
# expect_diff EXPECTED ACTUAL: show diff -u and fail when they differ
expect_same() { diff -u "$1" "$2" || fail "$2 differs from $1"; }
