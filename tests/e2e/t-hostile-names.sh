#!/bin/sh
# Function names come from the target's files: a program can name a
# function with an ESC sequence that sets root's window title and clears
# its screen, with a BEL, with bytes that are not UTF-8, with a C1 CSI,
# with XML's special characters, or with a newline and the rest of a
# folded line.  Wherever --stacks prints a name -- the text report, the
# folded lines, the JSON, the HTML page and its flame graph SVG, and
# `mallocwatch flame` -- it is escaped: no control byte reaches a
# terminal, the folded file keeps one line per stack, the SVG and the page
# are well-formed XML and UTF-8, the JSON keeps the names' characters.
#
# The fixture is a program whose functions carry such names (an assembler
# file, names quoted; the newline is patched into the string table after
# linking), and a saved stream whose stacks run through them: its replay
# symbolizes them from the program as a live run does.
# needs: cpu
. tests/lib/lib.sh
export LC_ALL=C
command -v gcc >/dev/null && command -v objcopy >/dev/null || skip "no gcc/objcopy"
ESC=$(printf '\033')

# no_control FILE...: none of them holds ESC, BEL or a UTF-8 C1 control
no_control() {
	grep -q "$ESC" "$@" && fail "an escape byte reached the output: $(grep -l "$ESC" "$@")"
	grep -q "$(printf '\007')" "$@" && fail "a BEL byte reached the output: $(grep -l "$(printf '\007')" "$@")"
	grep -q "$(printf '\302\233')" "$@" && fail "a C1 control reached the output"
	return 0
}

python3 - "$OUT" <<'PY' || exit 99
import sys
out = sys.argv[1]
names = [b"\x1b]0;pwned\x07\x1b[2Jtitle", b"bad\xff\xfeutf8", b"c1\xc2\x9bcsi",
         b"lt<amp&quot\"'gt>", b"nlQfake;x 999"]
s = [b"\t.text\n"]
for n in names:
    q = b'"' + n.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
    s.append(b"\t.globl " + q + b"\n\t.type " + q + b", @function\n" + q +
             b":\n\tnop\n\tnop\n\tret\n\t.size " + q + b", .-" + q + b"\n")
s.append(b"\t.globl main\n\t.type main, @function\nmain:\n\txor %eax,%eax\n\tret\n"
         b"\t.size main, .-main\n\t.section .note.GNU-stack,\"\",@progbits\n")
open(out + "/weird.s", "wb").write(b"".join(s))
PY
gcc -no-pie -o "$OUT/weird" "$OUT/weird.s" || exit 99
# the newline: "nlQfake;x 999" becomes "nl\nfake;x 999" in .strtab
python3 - "$OUT/weird" <<'PY' || exit 99
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"nlQfake;x 999") == 1
open(sys.argv[1], "wb").write(d.replace(b"nlQfake;x 999", b"nl\nfake;x 999"))
PY
chmod 755 "$OUT" "$OUT/weird"

# the stream: one sbrk stack per name, 0x10 (no module) <- NAME <- main
python3 - "$OUT" <<'PY' || exit 99
import re, subprocess, sys
out = sys.argv[1]
exe = out + "/weird"
syms = {}
for l in subprocess.run(["readelf", "-sW", exe], capture_output=True).stdout.split(b"\n"):
    f = l.split(None, 7)
    if len(f) == 8 and f[3] == b"FUNC" and f[4] == b"GLOBAL" and f[6] != b"UND":
        syms[f[7]] = int(f[1], 16)
# readelf cuts a name at its newline: the rest of the line is lost
syms = {(b"nl\nfake;x 999" if k == b"nl" else k): v for k, v in syms.items()}
bid = re.search(r"Build ID: (\w+)", subprocess.run(["readelf", "-n", exe], capture_output=True,
                                                   text=True).stdout).group(1).encode()
names = sorted(k for k in syms if k not in (b"main", b"_start") and not k.startswith(b"_"))
assert len(names) == 5, names
w = [b"# mallocwatch-stream 1\n# libc /lib/x86_64-linux-gnu/libc.so.6\n# runtime bpf\n",
     b"# main_arena 0\nP 1 memory_sbrk_more 2\nMW 1 ready\n"]
w += [b"E 1 %d 100 %d\n" % (100 + i, 4096 * (i + 1)) for i in range(5)]
w.append(b"MW 1 end\n")
w.append(b"L 100 0 4194304 4198400 0 %s %s\n" % (bid, exe.encode()))
w.append(b"L 100 0 4198400 4202496 4096 %s %s\n" % (bid, exe.encode()))
for i, n in enumerate(names):
    w.append(b"X memory_sbrk_more 100 100 0 %d 3 5242880 %d 0 16 %d %d\n" %
             (1000 + i, 4096 * (i + 1), syms[n] + 1, syms[b"main"] + 1))
w.append(b"Z 1 1 5 5 0 0 0 1000 0\n")
open(out + "/weird.mw", "wb").write(b"".join(w))
PY

"$MW" replay -o "$OUT/text" --folded "$OUT/folded" --json "$OUT/report.json" \
	--html "$OUT/page.html" "$OUT/weird.mw" 2>"$OUT/replay.err" ||
	fail "replay exited $?: $(cat "$OUT/replay.err")"
"$MW" replay "$OUT/weird.mw" >"$OUT/stdout" 2>&1
grep -q '<- main' "$OUT/text" || fail "the stacks were not symbolized: $(sed -n '/^Stacks/,$p' "$OUT/text")"

# 1. text: no control byte; each name shown escaped
no_control "$OUT/text" "$OUT/stdout" "$OUT/replay.err" "$OUT/folded"
for want in '0x10 <- \x1b]0;pwned\x07\x1b[2Jtitle <- main' '0x10 <- bad\xff\xfeutf8 <- main' \
	'0x10 <- c1\xc2\x9bcsi <- main' '0x10 <- nl\x0afake;x 999 <- main' \
	"0x10 <- lt<amp&quot\"'gt> <- main"; do
	grep -qF "$want" "$OUT/text" || fail "the text does not show '$want': $(sed -n '/^Stacks/,$p' "$OUT/text")"
done
echo "ok: text shows the names escaped"

# 2. folded: one line per stack, none made by a name
[ "$(wc -l <"$OUT/folded")" = 5 ] || fail "folded has $(wc -l <"$OUT/folded") lines, not 5: $(cat -v "$OUT/folded")"
grep -qvE '^main;[^ ]+;\[unknown\];memory_sbrk_more [0-9]+$' "$OUT/folded" &&
	fail "a folded line is not one stack: $(cat -v "$OUT/folded")"
echo "ok: folded: 5 lines"

# 3. JSON: the names' characters, bytes that are not UTF-8 as \xNN
python3 - "$OUT/report.json" <<'PY' || fail "report.json"
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
fn = {f["function"] for e in r["stacks"]["events"] for f in e["frames"] if f["function"]}
want = {"\x1b]0;pwned\x07\x1b[2Jtitle", "bad\\xff\\xfeutf8", "c1\u009bcsi", "lt<amp&quot\"'gt>",
        "nl\nfake;x 999", "main"}
assert fn == want, fn
PY
echo "ok: JSON keeps the names"

# 4. the page and its flame graph, and flame of the folded lines and of a
# raw hostile folded file: UTF-8, no control byte but newline and tab,
# each SVG well-formed XML with the names as text
printf 'main;\033]0;t\007;bad\377\376;\302\233x;a<b&c"d'"'"'e 4096\nmain;ok 1\n' >"$OUT/raw.folded"
"$MW" flame -o "$OUT/flame.svg" "$OUT/folded" || fail "flame exited $?"
"$MW" flame -o "$OUT/raw.svg" "$OUT/raw.folded" || fail "flame of raw.folded exited $?"
python3 - "$OUT/page.html" "$OUT/flame.svg" "$OUT/raw.svg" <<'PY' || fail "the page or an SVG is not well-formed"
import re, sys, xml.dom.minidom
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    b.decode("utf-8")		# strict: every byte UTF-8
    bad = sorted({c for c in b if c < 32 and c not in (9, 10, 13)})
    assert not bad, (path, bad)
    svgs = [b] if path.endswith(".svg") else re.findall(rb"<svg class=\"flame\".*?</svg>", b, re.S)
    assert svgs, path
    frames = []
    for s in svgs:
        d = xml.dom.minidom.parseString(s)
        frames += [g.getAttribute("data-frame") for g in d.getElementsByTagName("g")]
    if "raw" in path:
        want = {"main", "\\x1b]0", "t\\x07", "bad\\xff\\xfe", "\\xc2\\x9bx", "a<b&c\"d'e", "ok"}
    else:
        want = {"main", "\\x1b]0_pwned\\x07\\x1b[2Jtitle", "bad\\xff\\xfeutf8", "c1\\xc2\\x9bcsi",
                "lt<amp&quot\"'gt>", "nl\\x0afake_x_999", "[unknown]", "memory_sbrk_more"}
    assert set(frames) == want, (path, set(frames))
PY
if command -v xmllint >/dev/null; then
	xmllint --noout "$OUT/flame.svg" "$OUT/raw.svg" || fail "xmllint: an SVG is not well-formed"
fi
grep -qF 'lt&lt;amp&amp;quot&quot;&apos;gt&gt;' "$OUT/page.html" || fail "the page's summary does not escape '<&\"'"
echo "ok: page and SVGs well-formed, names escaped"
