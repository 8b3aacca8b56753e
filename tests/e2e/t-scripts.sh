#!/bin/sh
# -c SCRIPT (issue 26, item 5): a program that is a script - a shell
# wrapper that execs the real binary, a "#!/usr/bin/env python3" or
# "#!/usr/bin/python3 -u" script - in both ways a -c run starts it.
#  - In the probe-enabled glibc's mount namespace (the default here) the
#    script runs as it is: the wrapper's exec keeps the pid, so the binary
#    it runs is traced.
#  - Under the loader (--libc): the "#!" line is followed to the
#    interpreter, which is started through the loader with the script's
#    arguments unchanged; a script for a shell, or one whose interpreter
#    is itself a script (a pyenv shim), is refused in one line naming it.
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
elf_dyn() { readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'; }
elf_dyn /usr/bin/python3 || skip "/usr/bin/python3 is not a dynamic ELF executable"
G=$GLIBC_PREFIX/lib/libc.so.6
P=/usr/bin:/bin

printf '#!/bin/sh\nexec %s "$@"\n' "$PWD/examples/arena-storm" >"$OUT/wrap.sh"
cat >"$OUT/threads.py" <<'PY'
#!/usr/bin/env python3
import sys, threading
def work(): b = [bytearray(1000) for _ in range(200)]
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print("argv", sys.argv[1:])
PY
printf '#!/usr/bin/python3 -u\nimport sys\nprint("argv", sys.argv)\n' >"$OUT/direct.py"
mkdir -p "$OUT/shims"
printf '#!/bin/sh\nexec /usr/bin/python3 "$@"\n' >"$OUT/shims/python3"
chmod +x "$OUT/wrap.sh" "$OUT/threads.py" "$OUT/direct.py" "$OUT/shims/python3"

# the namespace: the wrapper execs arena-storm, which is what is traced
PATH=$P "$MW" -o "$OUT/ns-wrap.txt" -c "$OUT/wrap.sh" 4 >"$OUT/ns-wrap.out" 2>"$OUT/ns-wrap.err" ||
	fail "-c wrap.sh exited $?: $(cat "$OUT/ns-wrap.err")"
if grep -q 'mount namespace of their own' "$OUT/ns-wrap.err"; then
	n=$(sed -n 's/^Arenas: //p' "$OUT/ns-wrap.txt")
	[ "${n:-0}" -ge 2 ] || fail "the wrapper's arena-storm 4: ${n:-no} arenas: $(cat "$OUT/ns-wrap.txt")"
	PATH=$P "$MW" -o "$OUT/ns-py.txt" -c "$OUT/threads.py" x >"$OUT/ns-py.out" 2>"$OUT/ns-py.err" ||
		fail "-c threads.py exited $?: $(cat "$OUT/ns-py.err")"
	grep -q "argv \['x'\]" "$OUT/ns-py.out" || fail "threads.py: $(cat "$OUT/ns-py.out")"
	grep -q '^Arenas: [2-9]' "$OUT/ns-py.txt" || fail "threads.py, namespace: $(cat "$OUT/ns-py.txt")"
	echo "namespace: a shell wrapper and an env python3 script traced"
else
	echo "no namespace here ($(head -n 1 "$OUT/ns-wrap.err")); the loader only"
fi

# the loader: #!/usr/bin/env python3, its arguments unchanged
PATH=$P "$MW" --libc "$G" -o "$OUT/ld-py.txt" -c "$OUT/threads.py" 'a b' c \
	>"$OUT/ld-py.out" 2>"$OUT/ld-py.err" || fail "--libc -c threads.py exited $?: $(cat "$OUT/ld-py.err")"
grep -q "argv \['a b', 'c'\]" "$OUT/ld-py.out" || fail "threads.py's argv: $(cat "$OUT/ld-py.out")"
grep -q "its interpreter /usr/bin/python3" "$OUT/ld-py.err" || fail "$(cat "$OUT/ld-py.err")"
grep -q '^Arenas: [2-9]' "$OUT/ld-py.txt" || fail "threads.py, loader: $(cat "$OUT/ld-py.txt")"
# #!/usr/bin/python3 -u: the interpreter's argument, then the script
PATH=$P "$MW" --libc "$G" -o /dev/null -c "$OUT/direct.py" 1 >"$OUT/ld-direct.out" 2>"$OUT/ld-direct.err" ||
	fail "--libc -c direct.py exited $?: $(cat "$OUT/ld-direct.err")"
grep -qF "argv ['$OUT/direct.py', '1']" "$OUT/ld-direct.out" || fail "direct.py: $(cat "$OUT/ld-direct.out")"

# the loader: a shell wrapper, a shim as the interpreter: one line each
PATH=$P "$MW" --libc "$G" -o /dev/null -c "$OUT/wrap.sh" 4 >/dev/null 2>"$OUT/ld-wrap.err"
rc=$?
[ $rc = 1 ] || fail "--libc -c wrap.sh: exit $rc, expected 1: $(cat "$OUT/ld-wrap.err")"
[ $(wc -l <"$OUT/ld-wrap.err") = 1 ] || fail "not one line: $(cat "$OUT/ld-wrap.err")"
grep -q "script for the shell '/bin/sh'.*name that program" "$OUT/ld-wrap.err" || fail "$(cat "$OUT/ld-wrap.err")"
PATH=$OUT/shims:$P "$MW" --libc "$G" -o /dev/null -c "$OUT/threads.py" >/dev/null 2>"$OUT/ld-shim.err"
rc=$?
[ $rc = 1 ] || fail "a shim as interpreter: exit $rc, expected 1: $(cat "$OUT/ld-shim.err")"
grep -q "run by '$OUT/shims/python3', itself a script (#!/bin/sh).*name the ELF program" \
	"$OUT/ld-shim.err" || fail "$(cat "$OUT/ld-shim.err")"
cat "$OUT/ld-wrap.err" "$OUT/ld-shim.err"
echo "loader: env and direct python3 scripts traced with their argv; shell scripts named"
