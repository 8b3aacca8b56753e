#!/bin/sh
# mallocwatch runs as root and compiles in guru mode: nothing from a file
# or another process may enter the script unchecked, no descriptor of
# root's may reach the program, no shared directory may be written
# through a planted link.
# needs: root glibc
. tests/lib/lib.sh
F=build/tests/fixtures

# 1. Probe names from a file's notes: a name that closes mark("...") and
# adds a probe, a name with printf directives.  Warned about, not traced,
# never in the script.
"$MW" script --libc $F/injectnote.o >"$OUT/inject.stp" 2>"$OUT/inject.err" ||
	fail "script exited $?: $(cat "$OUT/inject.err")"
grep -q 'INJECTED\|memory_%s' "$OUT/inject.stp" && fail "a note's name went into the script"
grep -q 'mark("memory_arena_new")' "$OUT/inject.stp" || fail "the good note was not traced"
[ "$(grep -c 'is not a probe name; not traced' "$OUT/inject.err")" = 2 ] ||
	fail "no warning per bad name: $(cat "$OUT/inject.err")"
grep -q "$(printf '\033')" "$OUT/inject.err" && fail "control bytes reached the terminal"
echo "ok: bad probe names refused"

# 2. A path that would close process("...") and add code: refused with a
# reason, nothing printed for stap.
EVIL='x").mark("y")? {} probe begin { printf("INJECTED\n") } probe process("'
mkdir -p "$OUT/$EVIL"
cp $F/libfix.so "$OUT/$EVIL/libc.so.6"
"$MW" script --libc "$OUT/$EVIL/libc.so.6" >"$OUT/path.stp" 2>"$OUT/path.err"
rc=$?
[ $rc = 1 ] || fail "script with an injecting path exited $rc, expected 1"
grep -q "^mallocwatch: refusing to trace '.*': byte 0x22" "$OUT/path.err" ||
	fail "no refusal: $(cat "$OUT/path.err")"
[ -s "$OUT/path.stp" ] && fail "a script was printed for an injecting path"
echo "ok: injecting path refused"

need_root
need_libc
# 3. The same as the attack really goes: an unprivileged user runs a
# program whose libc sits in such a directory; root's 'mallocwatch -p'
# must refuse it, and no stap may start.
L=$GLIBC_PREFIX/lib
D="$OUT/evil/$EVIL"
mkdir -p "$D"
cp "$GLIBC_PREFIX/lib/libc.so.6" "$GLIBC_PREFIX/lib/ld-linux-x86-64.so.2" "$D/"
"$D/ld-linux-x86-64.so.2" --library-path "$D:/lib/x86_64-linux-gnu" /bin/sleep 60 &
pid=$!
wait_for /proc/$pid/maps 'INJECTED.*libc.so.6' 60
"$MW" -p $pid -o "$OUT/p.txt" 2>"$OUT/p.err"
rc=$?
kill $pid; wait $pid 2>/dev/null
[ $rc = 1 ] || fail "-p on an injecting libc path exited $rc: $(cat "$OUT/p.err")"
grep -q "refusing to trace" "$OUT/p.err" || fail "no refusal: $(cat "$OUT/p.err")"
grep -q "INJECTED" "$OUT/p.txt" 2>/dev/null && fail "injected code ran"
echo "ok: -p refuses a target whose libc path would inject code"

# 4. The program gets stdin, stdout and stderr, nothing else: not the
# saved stream, the reports or any descriptor libelf/libdw opened.
"$MW" -q --save-stream "$OUT/fd.mw" -o "$OUT/fd.txt" --json "$OUT/fd.json" \
	-c sh -c 'ls /proc/$$/fd' >"$OUT/fds" || fail "mallocwatch exited $?"
[ "$(tr '\n' ' ' <"$OUT/fds")" = "0 1 2 " ] || fail "the program inherited fds: $(tr '\n' ' ' <"$OUT/fds")"
echo "ok: the program inherits fds 0 1 2 only"

# 5. Without root, the kernel-config stub goes into the run's private
# work directory: a .config link planted where an older mallocwatch put
# it (TMPDIR/kernel-RELEASE) must not be written through.
T=$OUT/tmp-nobody
mkdir -p "$T/kernel-$(uname -r)" && echo precious >"$OUT/victim"
ln -s "$OUT/victim" "$T/kernel-$(uname -r)/.config"
chown -R 65534:65534 "$T" "$OUT/victim"
chmod 755 "$OUT"
setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$T" \
	"$MW" --runtime=bpf -c true >"$OUT/nobody.out" 2>&1
[ "$(cat "$OUT/victim")" = precious ] || fail "a planted link was written through: $(head -c 60 "$OUT/victim")"
ls "$T" | grep -q '^mallocwatch\.' && fail "the failed run left its work directory: $(ls "$T")"
echo "ok: no write through a planted link ($(head -n 1 "$OUT/nobody.out"))"

# 6. A process names itself (PR_SET_NAME) with a terminal escape sequence:
# the snapshot's summary shows it quoted, never raw.
printf '#include <sys/prctl.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) { void *volatile p = malloc(100); (void)p; prctl(PR_SET_NAME, "\\033[31mRED"); pause(); return 0; }\n' >"$OUT/evilname.c"
cc -o "$OUT/evilname" "$OUT/evilname.c" || exit 99
"$L/ld-linux-x86-64.so.2" --library-path "$L:/lib/x86_64-linux-gnu" "$OUT/evilname" &
ev=$!
wait_for /proc/$ev/comm RED 30
"$MW" snapshot -p $ev >"$OUT/evilname.txt" 2>&1
rc=$?
kill $ev
[ $rc = 0 ] || fail "snapshot exited $rc: $(cat "$OUT/evilname.txt")"
grep -q "$(printf '\033')" "$OUT/evilname.txt" && fail "a process's name reached the terminal raw"
grep -q '(\\x1b\[31mRED)' "$OUT/evilname.txt" || fail "the name is not shown quoted: $(head -n 1 "$OUT/evilname.txt")"
echo "ok: a process's name is quoted: $(head -n 1 "$OUT/evilname.txt")"
