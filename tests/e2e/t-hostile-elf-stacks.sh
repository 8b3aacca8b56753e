#!/bin/sh
# --stacks symbolizes a process's stacks from the files it maps: a
# library of nobody's with a 0.5 MiB SHF_COMPRESSED .debug_info that
# inflates to 512 MiB (tests/lib/mkbomb.py), preloaded into nobody's program,
# whose code grows the break under `mallocwatch --stacks -p`.  The library
# is refused with one warning (its frames are shown by module and offset,
# nothing read from it), and mallocwatch stays small and quick; main
# inflated it (its peak RSS past 512 MiB).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
command -v setpriv >/dev/null && command -v objcopy >/dev/null || skip "no setpriv/objcopy"
L=$GLIBC_PREFIX/lib
D=$OUT/nobody
chmod 755 "$OUT"
mkdir -m 0755 "$D" && chown 65534:65534 "$D" || exit 99
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null' EXIT

cat >"$D/grow.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
/* the break grows under grow_in_library, in the main thread, for a while */
__attribute__((noinline)) static void grow_in_library(void)
{
	for (int i = 0; i < 1500; i++) {
		void *volatile p = malloc(65536);
		(void)p;
		usleep(10000);
	}
}
__attribute__((constructor)) static void start(void)
{
	(void)!write(1, "ready\n", 6);
	grow_in_library();
	pause();
}
C
$NOBODY sh -c 'cd "$1" && cc -O1 -fno-omit-frame-pointer -shared -fPIC -o grow.so grow.c &&
	/usr/bin/python3 "$2/tests/lib/mkbomb.py" grow.so bomb.so 512' sh "$D" "$PWD" || exit 99

mkfifo "$OUT/ready"
$NOBODY $L/ld-linux-x86-64.so.2 --library-path $L --preload "$D/bomb.so" /bin/sleep 600 \
	>"$OUT/ready" &
pid=$!
read -r line <"$OUT/ready"
[ "$line" = ready ] || fail "nobody's program did not start"

python3 - "$OUT/run" "$MW" --stacks -p $pid --duration 3 -o "$OUT/summary" \
	--json "$OUT/report.json" <<'PY'
import resource, subprocess, sys, time
out = sys.argv[1]
t = time.monotonic()
with open(out + ".err", "wb") as e:
    try:
        rc = subprocess.run(sys.argv[2:], stderr=e, timeout=120).returncode
    except subprocess.TimeoutExpired:
        rc = 124
open(out + ".m", "w").write("%d %.2f %d\n" % (rc, time.monotonic() - t,
                            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
PY
read -r rc secs kib <"$OUT/run.m"
cat "$OUT/run.err"
echo "exit $rc, $secs s, peak RSS $kib KiB"
[ "$rc" = 0 ] || fail "--stacks -p exited $rc"
python3 - "$OUT/report.json" <<'PY' || fail "no stack through bomb.so"
import json, sys
r = json.load(open(sys.argv[1]))
ev = [e for e in r["stacks"]["events"] if e["probe"] == "memory_sbrk_more"]
mods = {f["module"] for e in ev for f in e["frames"]}
assert "bomb.so" in mods, mods
fn = {f["function"] for e in ev for f in e["frames"] if f["module"] == "bomb.so"}
assert fn == {None}, fn		# nothing read from it
PY
[ "$(grep -c "bomb.so' has compressed sections that would decompress to more than mallocwatch reads" \
	"$OUT/run.err")" = 1 ] || fail "not one warning for bomb.so"
[ "$kib" -lt 262144 ] || fail "mallocwatch grew to $kib KiB"
echo "ok: nobody's bomb.so refused once; its frames by module and offset; peak RSS $kib KiB"
