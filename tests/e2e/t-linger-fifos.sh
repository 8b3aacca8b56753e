#!/bin/sh
# A run's flush needs stapbpf's procfs FIFOs (the flush file, a --linger
# session's drain file), which stapbpf makes in its procfs thread, after
# its begin probe has printed the ready line.  A program released at the
# ready line could end before they were there: "cannot flush the tracer
# (...: No such file or directory)", and a --linger run then stopped the
# session's tracer (the session ended and removed its FIFO directory).
# Seen beside another make check and under stress-ng (t-linger-killed,
# t-linger-planted); here forced: stapbpf's mkfifo(3) calls each wait
# 1 s (an LD_PRELOADed shim, given to stapbpf by a wrapper first in
# PATH).  The run waits for the file at the ready line: the flush is
# complete, the session stays armed and serves the next run.
# needs: root glibc serial
. tests/lib/lib.sh
need_root
need_libc
command -v cc >/dev/null || skip "no cc"
STAPBPF=$(command -v stapbpf) || skip "no stapbpf"
export MALLOCWATCH_LINGER_DIR="$OUT/rdv"
mkdir -m 700 "$MALLOCWATCH_LINGER_DIR" || exit 99
cat >"$OUT/slow.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>
int mkfifo(const char *path, mode_t mode)
{
	int (*next)(const char *, mode_t) = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkfifo");

	sleep(1);
	return next(path, mode);
}
C
cc -shared -fPIC -o "$OUT/slow.so" "$OUT/slow.c" -ldl || exit 99
# after mallocwatch's own shims (its memlock shim is one)
wrap_tool "$OUT/bin" stapbpf env "\"LD_PRELOAD=\${LD_PRELOAD:+\$LD_PRELOAD }$OUT/slow.so\""
sess=
trap '[ -z "$sess" ] || kill "$sess" 2>/dev/null' EXIT

# a plain run: its flush file
PATH="$OUT/bin:$PATH" "$MW" -v -o "$OUT/r0.txt" -c /bin/true 2>"$OUT/err0" || fail "run 0 exited $?: $(cat "$OUT/err0")"
grep -q "cannot flush" "$OUT/err0" && fail "run 0 flushed before the flush file was there: $(cat "$OUT/err0")"
grep -q "events: [0-9]* probe hits*, 0 lost" "$OUT/r0.txt" || fail "run 0: $(grep events: "$OUT/r0.txt")"
echo "ok: a plain run waited for its tracer's flush file"

# a --linger run: the session's drain file
PATH="$OUT/bin:$PATH" "$MW" -v --linger 60 -o "$OUT/r1.txt" -c /bin/true 2>"$OUT/err1" ||
	fail "run 1 exited $?: $(cat "$OUT/err1")"
tracer=$(sed -n 's/.*armed a tracer session (tracer pid \([0-9]*\).*/\1/p' "$OUT/err1")
[ -n "$tracer" ] || fail "run 1 armed no session: $(cat "$OUT/err1")"
sess=$(ps -o ppid= -p "$tracer" | tr -d ' ')
grep -q "cannot flush" "$OUT/err1" && fail "run 1 drained before the drain file was there: $(cat "$OUT/err1")"
[ "$(cat /proc/"$sess"/comm 2>/dev/null)" = mw-linger ] || fail "the session ended (parent '$sess')"
"$MW" -v --linger 60 -o "$OUT/r2.txt" -c /bin/true 2>"$OUT/err2" || fail "run 2 exited $?: $(cat "$OUT/err2")"
grep -q "joined a tracer session (tracer pid $tracer," "$OUT/err2" ||
	fail "run 2 did not join the session: $(cat "$OUT/err2")"
grep -q "cannot flush" "$OUT/err2" && fail "run 2 could not drain the session's tracer: $(cat "$OUT/err2")"
echo "ok: a --linger run waited for the session's drain file; the session served the next run"
