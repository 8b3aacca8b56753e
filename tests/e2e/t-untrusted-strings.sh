#!/bin/sh
# Strings mallocwatch did not make -- a file name, a process's name, a
# saved stream's command, libc path and probe names -- are bytes: in the
# JSON they are escaped when they are not UTF-8 (never dropped, never a
# truncated document, never freed memory read), on a terminal every
# control byte is shown escaped.  And figures from a file are added and
# subtracted without overflowing.
# needs: root
. tests/lib/lib.sh
ESC=$(printf '\033')
C1=$(printf '\302\233')	# U+009B, CSI in UTF-8
export LC_ALL=C

# no_control FILE...: none of them holds ESC, BEL or a UTF-8 C1 control
no_control() {
	grep -q "$ESC" "$@" && fail "an escape byte reached the terminal: $(grep -l "$ESC" "$@")"
	grep -q "$(printf '\007')" "$@" && fail "a BEL byte reached the terminal"
	grep -q "$C1" "$@" && fail "a C1 control reached the terminal"
	return 0
}
# (NO_VALGRIND=1 for a SANITIZE= build, which valgrind cannot run)
if [ -z "${NO_VALGRIND:-}" ] && command -v valgrind >/dev/null; then
	VG="valgrind -q --error-exitcode=99"
else
	VG=
fi

# (a) diff of reports whose file names are not UTF-8: valgrind finds no
# invalid read, and the JSON names them escaped.
B=$OUT/$(printf 'base\377\376').json
N=$OUT/$(printf 'new\033[2J').json
cp tests/streams/trim.json "$B"
cp tests/streams/storm24.json "$N"
$VG "$MW" diff "$B" "$N" >"$OUT/diff.txt" 2>"$OUT/diff.err"
rc=$?
[ $rc = 0 ] || { cat "$OUT/diff.err"; fail "diff with a non-UTF-8 file name exited $rc"; }
grep -q '^arenas  *1  *16  *+15 ' "$OUT/diff.txt" || fail "diff lost its table: $(head -n 3 "$OUT/diff.txt")"
$VG "$MW" diff --format json "$B" "$N" >"$OUT/diff.json" 2>"$OUT/diff.err" ||
	{ _rc=$?; cat "$OUT/diff.err"; fail "diff --format json exited $_rc"; }
python3 - "$OUT/diff.json" <<'PY' || fail "diff.json"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["base"].endswith("base\\xff\\xfe.json"), d["base"]
assert d["new"].endswith("new\x1b[2J.json"), d["new"]
assert len(d["metrics"]) > 5, d
PY
"$MW" check --check 'arenas<=1' "$OUT/$(printf 'no\033]0;pwned\007such').json" 2>"$OUT/check.err"
[ $? = 1 ] || fail "check of a missing file did not exit 1"
no_control "$OUT/diff.txt" "$OUT/diff.err" "$OUT/check.err"
echo "ok: diff with non-UTF-8 names: valid JSON, names escaped; messages: $(cat "$OUT/check.err")"

# (c) A replayed stream whose command, libc path, runtime, libm and probe
# names carry terminal sequences (set the title, clear the screen, CSI as
# C1): none reaches the summary or stderr; the JSON is valid.
{
	printf '# mallocwatch-stream 1\n'
	printf '# libc /lib/\033]0;pwned\007/libc.so.6\n# runtime \033[2J\n# main_arena 0\n'
	printf '# libm 3 /lib/\302\233?1049h/libm.so.6\n'
	printf '# arg ./app\\x1b[2J\n# arg \\xff\\xfe\302\233\n# arg \342\200\256gnp.exe\n'
	printf 'P 1 memory_\033[31mred 2\nP 2 memory_\377\376 1\nP 3 memory_\302\233x 1\n'
	printf 'MW 1 ready\nE 1 100 1 2\nE 2 100 3\nE 3 100 4\nMW 1 end\n'
} >"$OUT/evil.mw"
$VG "$MW" replay -o "$OUT/evil.txt" --json "$OUT/evil.json" "$OUT/evil.mw" 2>"$OUT/evil.err"
rc=$?
[ $rc = 0 ] || { cat "$OUT/evil.err"; fail "replay of evil.mw exited $rc"; }
"$MW" replay "$OUT/evil.mw" >"$OUT/evil.stdout" 2>&1
no_control "$OUT/evil.txt" "$OUT/evil.err" "$OUT/evil.stdout" "$OUT/evil.json"
grep -q "$(printf '\342\200\256')" "$OUT/evil.txt" && fail "a bidi override reached the terminal"
grep -q 'mallocwatch: ./app\\x1b\[2J \\xff\\xfe\\xc2\\x9b \\xe2\\x80\\xaegnp.exe (pid' "$OUT/evil.txt" ||
	fail "the command is not shown quoted: $(head -n 1 "$OUT/evil.txt")"
grep -q 'memory_\\x1b\[31mred' "$OUT/evil.txt" || fail "a probe name is not shown quoted"
python3 - "$OUT/evil.json" <<'PY' || fail "evil.json"
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
assert r["target"]["argv"][1] == "\\xff\\xfe\u009b", r["target"]["argv"]
assert "memory_\\xff\\xfe" in r["events"]["by_probe"], r["events"]["by_probe"]
assert r["target"]["libc"] == "/lib/\x1b]0;pwned\x07/libc.so.6", r["target"]
PY
echo "ok: replayed terminal sequences shown escaped: $(head -n 1 "$OUT/evil.txt")"

# (d) A baseline of 2^62 bytes and +10 %: the limit is 1.1 x 2^62, not a
# wrapped negative one; +100 % saturates at INT64_MAX; a K/M/G value past
# int64_t is refused; diff's change saturates.
python3 - "$OUT" <<'PY' || exit 99
import json, sys
r = json.load(open("tests/streams/trim.json"))
r["heaps"] = [{"address": "0x1", "arena": "0x2", "size": 1, "peak_size": 2**62, "grew": 0,
               "shrank": 0, "created_by_tid": 1, "freed": False, "at_attach": False}]
json.dump(r, open(sys.argv[1] + "/big.json", "w"))
r["heaps"] = r["heaps"] * 2
r["sbrk"]["net"] = -2**63
json.dump(r, open(sys.argv[1] + "/huge.json", "w"))
r["sbrk"]["net"] = 2**63 - 1
json.dump(r, open(sys.argv[1] + "/huge2.json", "w"))
PY
"$MW" check --baseline "$OUT/big.json" --check 'heap_bytes_peak<=+10%' \
	--check 'heap_bytes_peak<=+100%' "$OUT/big.json" >"$OUT/big.txt" 2>&1 ||
	{ cat "$OUT/big.txt"; fail "2^62 against itself +10% failed"; }
grep -q 'PASS heap_bytes_peak 4611686018427387904 ([^)]*), limit <= 5072854620270126694 ' "$OUT/big.txt" ||
	fail "+10% of 2^62: $(cat "$OUT/big.txt")"
grep -q 'limit <= 9223372036854775807 ' "$OUT/big.txt" || fail "+100% of 2^62 did not saturate"
"$MW" check --baseline "$OUT/big.json" --check 'heap_bytes_peak<=+10%' "$OUT/huge.json" \
	>"$OUT/huge.txt" 2>&1
[ $? = 3 ] || fail "2 x 2^62 passed +10% of 2^62: $(cat "$OUT/huge.txt")"
grep -q 'heap_bytes_peak 9223372036854775807 ([^)]*),' "$OUT/huge.txt" || fail "2 x 2^62 did not saturate"
"$MW" check --check 'arenas<=9999999999G' "$OUT/big.json" >"$OUT/g.txt" 2>&1
[ $? = 2 ] || fail "a value past int64_t was taken: $(cat "$OUT/g.txt")"
"$MW" diff "$OUT/huge.json" "$OUT/huge2.json" >"$OUT/sat.txt" || fail "diff exited $?"
grep -q '^sbrk_net  *-9223372036854775808  *9223372036854775807  *+9223372036854775807 ' \
	"$OUT/sat.txt" || fail "diff's change did not saturate: $(grep sbrk_net "$OUT/sat.txt")"
echo "ok: limits and changes saturate: $(head -n 1 "$OUT/big.txt")"

need_root
# (b) snapshot --json of a process, run by an unprivileged user, that
# names itself with bytes that are not UTF-8: valid JSON, the name
# escaped; the summary quotes it.
cat >"$OUT/badname.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(void)
{
	void *volatile p = malloc(100);
	(void)p;
	prctl(PR_SET_NAME, "\xff\xfe\033[2Jbad");
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
C
cc -o "$OUT/badname" "$OUT/badname.c" || exit 99
chmod 755 "$OUT"
mkfifo "$OUT/ready"
setpriv --reuid=65534 --regid=65534 --clear-groups "$OUT/badname" >"$OUT/ready" &
bad=$!
read -r line <"$OUT/ready"
[ "$line" = ready ] || fail "the program did not start"
"$MW" snapshot -p $bad --json "$OUT/snap.json" >"$OUT/snap.txt" 2>"$OUT/snap.err"
rc=$?
kill $bad
[ $rc = 0 ] || fail "snapshot exited $rc: $(cat "$OUT/snap.err")"
no_control "$OUT/snap.txt" "$OUT/snap.err"
python3 - "$OUT/snap.json" <<'PY' || fail "snap.json: $(head -c 300 "$OUT/snap.json")"
import json, sys
s = json.load(open(sys.argv[1], encoding="utf-8"))["snapshot"]
assert s["comm"] == "\\xff\\xfe\x1b[2Jbad", s["comm"]
assert s["arenas"], s
PY
grep -q '(\\xff\\xfe\\x1b\[2Jbad)' "$OUT/snap.txt" || fail "the name is not quoted: $(head -n 1 "$OUT/snap.txt")"
echo "ok: snapshot of a process named in bytes: $(head -n 1 "$OUT/snap.txt")"
