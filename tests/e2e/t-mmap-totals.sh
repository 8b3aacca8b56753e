#!/bin/sh
# Mmapped chunks are counted wherever malloc's totals are said (issue 25):
#  - examples/mmap-hold (12 chunks of 8 MiB, every page written) under -c
#    with --json and --html: the exit snapshot's mmapped bytes and count
#    equal its own malloc_info()'s <total type="mmap">; the text's Total
#    says system = arenas + mmapped chunks with those bytes; the JSON's
#    totals add them (new keys; system_bytes stays the arenas'); the page
#    has the mmapped band, the RSS line (the RSS at least the mmapped
#    bytes: every page was written), a byte axis with at least 3 labelled
#    steps, its last reading in words; replay --html writes the same
#    bytes; the browser sees no error (screenshot kept);
#  - xz -T4 -6 on a 20 MB input (the issue's case): the exit totals, the
#    text and the page's last mmapped value hold the same mmapped bytes,
#    over 100 MiB where the arenas hold well under 10 MiB;
#  - snapshot -p of examples/hold-arenas 4 (two kept 300000-byte chunks a
#    thread): its Total line has malloc_info's mmapped bytes;
#  - Y records without the new fields (streams saved before them) still
#    parse, and their page has no mmapped band, RSS or js for them.
# needs: root glibc slow
. tests/lib/lib.sh
need_root
need_libc

# human BYTES: as mw_human_bytes (units.c) prints them
plural() { [ "$1" = 1 ] || echo s; }
human() {
	python3 -c '
import sys
b = int(sys.argv[1]); v, u = float(b), -1
if b < 1024: print("%d B" % b); sys.exit()
while v >= 1024 and u < 3: v /= 1024; u += 1
print("%.1f %s" % (v, ["KiB", "MiB", "GiB", "TiB"][u]))' "$1"
}
# check_run NAME [MALLOC_INFO_XML]: the text, JSON and page of run NAME
# agree on the mmapped bytes (and with the program's malloc_info)
check_run() {
	python3 - "$OUT/$1.json" "$OUT/$1.html" "${2:-}" <<'PY' >"$OUT/$1.check" ||
import json, re, sys
r = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
ex = r["snapshots"]["exit"]
t, m = ex["totals"], ex["mmap"]
if sys.argv[3]:
    xml = open(sys.argv[3]).read()
    tail = xml[xml.rindex("</heap>"):]
    mi = re.search(r'<total type="mmap" count="(\d+)" size="(\d+)"/>', tail)
    assert (m["count"], m["bytes"]) == (int(mi.group(1)), int(mi.group(2))), (m, mi.groups())
assert t["mmapped_bytes"] == m["bytes"] > 0, (t, m)
assert t["system_and_mmapped_bytes"] == t["system_bytes"] + m["bytes"], t
assert t["in_use_and_mmapped_bytes"] == t["in_use_bytes"] + m["bytes"], t
assert t["system_bytes"] == sum(a["system_bytes"] for a in ex["arenas"]), t
d = json.loads(re.search(r'id="mw-data">(.*?)</script>', page, re.S).group(1))
assert d["mmap"][-1] == m["bytes"], (d["mmap"][-1], m)
assert d["rss"][-1] > 0, d["rss"][-1]
assert '<g class="mmapped">' in page and '<path class="rss"' in page
area = page[page.index('<svg id="area"'):page.index("</svg>")]
steps = re.findall(r'<text class="tick" x="2" y="[\d.]+">([^<]*)</text>', area)
assert len(steps) >= 3 and steps[0] == "0", steps
assert '<p class="reading">' in page
print(m["count"], m["bytes"], t["system_bytes"], d["rss"][-1], " ".join(steps))
PY
		fail "$1: $(tail -n 3 "$OUT/$1.check")"
	read -r count bytes system rss steps <"$OUT/$1.check"
	want="Total: system $(human $((system + bytes))) = arenas $(human $system) + mmapped chunks $(human $bytes) ($count chunk$(plural $count))"
	grep -qxF "$want" "$OUT/$1.txt" || fail "$1: no '$want' in $OUT/$1.txt"
	grep -qF "in use " "$OUT/$1.txt" || fail "$1: no in use line"
	"$MW" replay -q --html "$OUT/$1.replay.html" -o /dev/null "$OUT/$1.mw" || fail "$1: replay exited $?"
	cmp "$OUT/$1.html" "$OUT/$1.replay.html" || fail "$1: replay --html differs"
	echo "ok: $1: $count mmapped chunks, $bytes bytes${2:+ as malloc_info says}; arenas $system; RSS $rss; axis $steps"
}

run() {	# NAME ARGS...: mallocwatch -c ARGS with every output kept
	_n=$1
	shift
	"$MW" -q --json "$OUT/$_n.json" --html "$OUT/$_n.html" --save-stream "$OUT/$_n.mw" \
		-o "$OUT/$_n.txt" -c "$@" || fail "$_n: mallocwatch exited $?"
}

run hold ./examples/mmap-hold 12 8192 50 >"$OUT/hold.xml"
check_run hold "$OUT/hold.xml"
python3 - "$OUT/hold.check" <<'PY' || fail "the RSS is under the mmapped bytes written"
import sys
count, mm, system, rss = map(int, open(sys.argv[1]).read().split()[:4])
assert count == 12 and mm >= 12 * 8192 * 1024 and rss >= mm, (count, mm, rss)
PY

BROWSER=$(command -v chromium || command -v chromium-browser) || BROWSER=
if [ -n "$BROWSER" ]; then
	"$BROWSER" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
		--window-size=1100,900 --virtual-time-budget=2000 --dump-dom "file://$OUT/hold.html" \
		>"$OUT/hold.dom" 2>"$OUT/hold.log" || fail "chromium failed"
	grep -E 'CONSOLE|Refused|Uncaught' "$OUT/hold.log" && fail "the browser saw errors"
	"$BROWSER" --headless --no-sandbox --disable-gpu --window-size=1100,900 \
		--screenshot="$OUT/hold.png" "file://$OUT/hold.html" >/dev/null 2>&1
	echo "ok: the page in a browser, no error; $OUT/hold.png"
fi

if command -v xz >/dev/null; then
	head -c 10000000 /dev/urandom | od -An -tx1 | head -c 20000000 >"$OUT/in.txt" || exit 99
	run xz xz -T4 -6 -k -f "$OUT/in.txt"
	xz -dc "$OUT/in.txt.xz" | cmp -s - "$OUT/in.txt" || fail "xz output is wrong"
	check_run xz
	python3 - "$OUT/xz.check" <<'PY' || fail "xz: mmapped bytes"
import sys
count, mm, system, rss = map(int, open(sys.argv[1]).read().split()[:4])
assert mm > 100 << 20 and system < 10 << 20, (mm, system)
PY
	rm -f "$OUT/in.txt" "$OUT/in.txt.xz"
else
	echo "note: xz not installed; its case not run"
fi

# snapshot -p: the Total line has malloc_info's mmapped bytes
hold_arenas snap 4
"$MW" snapshot -p $pid --json "$OUT/snap.json" -o "$OUT/snap.txt" || fail "snapshot exited $?"
release_hold
bytes=$(sed -n 's|.*<total type="mmap" count="[0-9]*" size="\([0-9]*\)"/>.*|\1|p' "$OUT/snap.xml" | tail -n 1)
count=$(sed -n 's|.*<total type="mmap" count="\([0-9]*\)".*|\1|p' "$OUT/snap.xml" | tail -n 1)
[ "$count" = 10 ] || fail "hold-arenas 4 has $count mmapped chunks, not 10"
grep -q "^Total: system .* = arenas .* + mmapped chunks $(human $bytes) ($count chunk$(plural $count))\$" "$OUT/snap.txt" ||
	fail "snapshot's Total leaves out malloc_info's $bytes mmapped bytes: $(grep -A1 '^Total' "$OUT/snap.txt")"
grep -q "\"mmapped_bytes\": $bytes," "$OUT/snap.json" || fail "snapshot JSON totals.mmapped_bytes"
echo "ok: snapshot -p: $(grep '^Total' "$OUT/snap.txt")"

# a stream saved before Y had the mmapped chunks and the RSS
{
	echo "# mallocwatch-stream 1"
	echo "MW 1 ready"
	echo "O 1000000000"
	echo "Y 1500000000 131072 131072 4096 139264 1"
	echo "U 140000000000 135168 0 0"
	echo "Y 2000000000 131072 131072 4096 139264 1"
	echo "U 140000000000 135168 0 0"
	echo "MW 1 end"
} >"$OUT/old.mw"
sed 's/^\(Y .* 1\)$/\1 8388608 1 9437184/' "$OUT/old.mw" >"$OUT/new.mw"
for s in old new; do
	"$MW" replay -q --html "$OUT/$s.html" -o /dev/null "$OUT/$s.mw" 2>"$OUT/$s.err" ||
		fail "replay of $s.mw exited $?"
	[ -s "$OUT/$s.err" ] && fail "replay of $s.mw: $(cat "$OUT/$s.err")"
done
grep -q 'class="mmapped"\|class="rss"\|"mmap":\|d.mmap' "$OUT/old.html" &&
	fail "a stream without the mmapped chunks drew them"
grep -q '<g class="mmapped">' "$OUT/new.html" && grep -q '"mmap":\[8388608,8388608\]' "$OUT/new.html" &&
	grep -q '"rss":\[9437184,9437184\]' "$OUT/new.html" || fail "the new fields are not drawn"
echo "ok: Y with and without the mmapped chunks and the RSS"
