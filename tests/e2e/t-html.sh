#!/bin/sh
# The timeline and the HTML report (--html), on arena-storm with 8
# threads (each attaches to an arena before any exits).
#  - the page opened in a real headless browser (Debian's chromium): no
#    console message (a script error, a CSP violation - the page's policy
#    forbids loading anything, so a network request would be one), as
#    many arena series and thread lanes as the JSON report has arenas
#    and threads; a screenshot is kept in tests/out/t-html/ to look at;
#  - the check itself is shown to fail on a page with a script error;
#  - no URL anywhere in the page;
#  - timestamps: every timed event (T) comes after the program's start
#    (O) - not in stream order, which the tracer's per-CPU buffers do not
#    keep across CPUs - and samples (Y) strictly rise;
#  - the last sample (taken at the program's exit) has the system bytes
#    per arena that the program's own malloc_info() printed at its end;
#  - replay --html of the saved stream writes the same bytes;
#  - a real multi-threaded program not written here (pbzip2 -p4: each
#    worker's arena heap grows to hold libbz2's ~7.6 MB compression state
#    once the first freed one has raised the mmap threshold, and shrinks
#    again): the page passes the browser check, has one series per arena
#    and one lane per thread of the JSON, the last value of each series is
#    the arena's system bytes in the JSON's exit snapshot, and some heap's
#    peak (from the probes) is above 7 MiB; pbzip2's output decompresses
#    to its input.  Its screenshot is kept too.
#  - -f: one section per process, each with its lanes and, drawn from its
#    probe events (no sample is taken), its arenas and heaps over time:
#    the dots, heaps made and freed and the last step's counts are the
#    JSON's (sh running arena-storm 3, arena-storm 2 and allocator-knobs
#    lifecycle, which frees a heap), and its hover read-out (a mousemove
#    dispatched in the browser) shows the step at the pointer's time; the
#    lock waits of allocator-knobs contend 4, counted at the end, are said
#    under the empty strip (4, not "no waits counted").
# needs: root glibc slow
. tests/lib/lib.sh
need_root
need_libc
BROWSER=$(command -v chromium || command -v chromium-browser) ||
	skip "no chromium (scripts/install-deps.sh installs it)"
"$MW" -q --html "$OUT/storm.html" --json "$OUT/storm.json" --save-stream "$OUT/storm.mw" \
	-o "$OUT/storm.txt" -c ./examples/arena-storm 8 30 >"$OUT/malloc_info.xml" ||
	fail "mallocwatch exited $?"
"$MW" replay -q --html "$OUT/replay.html" -o /dev/null "$OUT/storm.mw" || fail "replay exited $?"
cmp "$OUT/storm.html" "$OUT/replay.html" || fail "replay --html differs from the run's page"
grep -Eq 'https?://|src=|href=' "$OUT/storm.html" && fail "the page refers to something outside it"

python3 - "$OUT/storm.mw" "$OUT/malloc_info.xml" <<'PY' || fail "timeline records"
import sys, re
origin, ys, samples, t_before = None, [], [], 0
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    num = lambda s: (int(s.split(":")[0]) << 32) | (int(s.split(":")[1]) & 0xffffffff) if ":" in s else int(s)
    if f[0] == "O":
        origin = int(f[1])
    elif f[0] == "T":
        if origin is not None:
            assert num(f[3]) >= origin, ("event before the origin", line)
        else:
            t_before += 1
    elif f[0] == "Y":
        ys.append(int(f[1])); samples.append([])
    elif f[0] == "U":
        samples[-1].append(int(f[2]))
assert origin, "no O record"
assert t_before == 0, "%d timed events before the origin" % t_before
assert ys and all(a < b for a, b in zip(ys, ys[1:])), ys
assert ys[0] > origin, (origin, ys[0])
xml = open(sys.argv[2]).read()
heaps = re.findall(r'<heap nr="\d+">.*?<system type="current" size="(\d+)"/>', xml, re.S)
assert heaps, "no malloc_info in the program's output"
print("last sample", samples[-1], "malloc_info", heaps)
assert samples[-1] == [int(h) for h in heaps], (samples[-1], heaps)
PY

# open PAGE in the browser: DOM after scripts ran to $2.dom, console to
# $2.log, screenshot $2.png; 1 when the console has a message
browse() {
	"$BROWSER" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
		--window-size=1100,1400 --virtual-time-budget=2000 --dump-dom "file://$1" \
		>"$2.dom" 2>"$2.log" || return 2
	"$BROWSER" --headless --no-sandbox --disable-gpu --window-size=1100,1400 \
		--screenshot="$2.png" "file://$1" >/dev/null 2>&1 || return 2
	! grep -E 'CONSOLE|Refused|Uncaught' "$2.log"
}
browse "$OUT/storm.html" "$OUT/storm" || fail "the browser saw errors (or failed): $OUT/storm.log"
[ -s "$OUT/storm.png" ] || fail "no screenshot"
python3 - "$OUT/storm.dom" "$OUT/storm.json" <<'PY' || fail "series and lanes"
import json, sys
dom, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
series, lanes = dom.count('<g class="series"'), dom.count('<g class="lane"')
print("series", series, "arenas", len(r["arenas"]), "lanes", lanes, "threads", len(r["threads"]))
assert series == len(r["arenas"]) == 9, (series, len(r["arenas"]))
assert lanes == len(r["threads"]), (lanes, len(r["threads"]))
assert '<div id="tip"' in dom
PY
# a real program (scripts/install-deps.sh installs pbzip2)
if command -v pbzip2 >/dev/null; then
	seq 1 2500000 >"$OUT/pb.in"	# 19 MB: 21 blocks of 900 kB
	"$MW" -q --interval 0.05 --html "$OUT/pbzip2.html" --json "$OUT/pbzip2.json" \
		-o "$OUT/pbzip2.txt" -c pbzip2 -p4 -c "$OUT/pb.in" >"$OUT/pb.bz2" ||
		fail "mallocwatch pbzip2 exited $?"
	pbzip2 -dc "$OUT/pb.bz2" | cmp -s - "$OUT/pb.in" || fail "pbzip2's output is not its input"
	browse "$OUT/pbzip2.html" "$OUT/pbzip2" ||
		fail "the browser saw errors (or failed): $OUT/pbzip2.log"
	python3 - "$OUT/pbzip2.dom" "$OUT/pbzip2.json" <<'PY' || fail "pbzip2's page"
import json, re, sys
dom, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
data = json.loads(re.search(r'<script type="application/json" id="mw-data">(.*?)</script>',
                            dom, re.S).group(1))
series, lanes = dom.count('<g class="series"'), dom.count('<g class="lane"')
snap = {a["address"]: a["system_bytes"] for a in r["snapshots"]["exit"]["arenas"]}
print("series", series, "arenas", len(r["arenas"]), "lanes", lanes, "threads", len(r["threads"]))
assert series == len(r["arenas"]) == len(snap) >= 5, (series, len(r["arenas"]), len(snap))
assert lanes == len(r["threads"]) >= 5, (lanes, len(r["threads"]))
last = {}
for s in data["series"]:
    addr = s["name"].split()[-1]
    last[addr] = s["v"][-1]
print("last sample", last, "exit snapshot", snap)
assert last == snap, (last, snap)
peak = max(h["peak_size"] for h in r["heaps"])
print("largest heap peak", peak)
assert peak > 7 << 20, peak
PY
fi

# -f: one page of the tree, the tree's table first, then a section per
# process with its own chart, lanes and hover script
"$MW" -q -f --html "$OUT/tree.html" --json "$OUT/tree.json" -o /dev/null -c sh -c \
	'./examples/arena-storm 3 >/dev/null; ./examples/arena-storm 2 >/dev/null;
	 ./examples/allocator-knobs lifecycle >/dev/null; ./examples/allocator-knobs contend 4 >/dev/null' ||
	fail "-f --html exited $?"
browse "$OUT/tree.html" "$OUT/tree" || fail "the browser saw errors on the tree's page: $OUT/tree.log"
python3 - "$OUT/tree.dom" "$OUT/tree.json" <<'PY' || fail "the tree's page"
import json, re, sys
dom, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
assert "processes in the tree (-f)" in dom
parts = re.split(r'<h1 id="process-(\d+)">', dom)[1:]
pids = [int(p) for p in parts[0::2]]
assert pids == [p["target"]["pid"] for p in r["processes"]], (pids, r["processes"])
for body, p in zip(parts[1::2], r["processes"]):
    assert body.count('<g class="lane"') == len(p["threads"]), (p["target"], len(p["threads"]))
    if '<svg id="area-' in body:	# else a line: no timed event (below)
        assert body.count('<g class="series"') == len(p["arenas"]), (p["target"], len(p["arenas"]))
print("tree page:", [(p, len(q["arenas"]), len(q["threads"])) for p, q in zip(pids, r["processes"])])
PY
# ... and each process's chart drawn from its probe events (issue 46 item
# 6; the chart was empty, "-f takes none"): a dot per arena it made, at
# those arenas' addresses; the heaps made and freed in the strip (data-n
# per pixel column) add up to its heaps and those freed; at the last
# step, the arenas known and the heaps live in each arena are the JSON's;
# a process with no timed event says so in a line, with no empty chart
python3 - "$OUT/tree.html" "$OUT/tree.json" <<'PY' || fail "the tree's charts from the events"
import json, re, sys
html, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
parts = re.split(r'<h1 id="process-\d+">', html)[1:]
assert len(parts) == len(r["processes"]) == 5, (len(parts), len(r["processes"]))
drawn = freed = 0
for body, p in zip(parts, r["processes"]):
    pid = p["target"]["pid"]
    made = sorted(a["address"] for a in p["arenas"] if a["created_by_tid"] is not None)
    dots = sorted(re.findall(r'<circle class="arena-new" data-arena="(0x[0-9a-f]+)"', body))
    assert dots == made, (pid, dots, made)
    waits = sum(a["waits"] for a in p["arenas"])
    assert not waits or ">%d lock waits in all, counted at the end" % waits in body, (pid, waits)
    if p is r["processes"][0]:	# sh: no arena or heap event
        assert '<svg id="area-' not in body and "Nothing to draw over time" in body, pid
        continue
    drawn += 1
    hn = sum(int(n) for n in re.findall(r'<path class="heap-new" data-n="(\d+)"', body))
    hf = sum(int(n) for n in re.findall(r'<path class="heap-free" data-n="(\d+)"', body))
    assert hn == len(p["heaps"]), (pid, hn, len(p["heaps"]))
    assert hf == sum(h["freed"] for h in p["heaps"]), (pid, hf, p["heaps"])
    freed += hf
    d = json.loads(re.search(r'<script type="application/json" id="mw-data-\d+">(.*?)</script>',
                             body, re.S).group(1))["ev"]
    assert d["arenas"][-1] == len(p["arenas"]), (pid, d["arenas"], len(p["arenas"]))
    assert d["heaps"][-1] == sum(not h["freed"] for h in p["heaps"]), (pid, d["heaps"])
    last = {s["name"].split()[-1]: s["v"][-1] for s in d["series"] if s["v"][-1]}
    live = {a["address"]: a["heaps"] for a in p["arenas"] if a["heaps"]}
    assert last == live, (pid, last, live)
    assert all(len(s["v"]) == len(d["t"]) <= 921 for s in d["series"]), pid
    assert "made (memory_arena_new)" in body and "not streamed" in body, pid
    print("process %d: %d arenas made, %d heaps made, %d freed, %d steps" % (pid, len(made), hn, hf, len(d["t"])))
assert drawn == 4 and freed >= 1, (drawn, freed)
assert sum(a["waits"] for a in r["processes"][4]["arenas"]) == 4, r["processes"][4]["arenas"]
PY
# its hover read-out: a mousemove dispatched at 60% of arena-storm 3's
# chart writes the arenas and heaps live of the step at that time
sed 's|</body>|<script>(function(){var s=document.getElementById("area-1"),r=s.getBoundingClientRect();s.dispatchEvent(new MouseEvent("mousemove",{clientX:r.left+r.width*0.6,clientY:r.top+50}));var p=document.createElement("pre");p.id="hovered";p.textContent=document.getElementById("tip").textContent;document.body.appendChild(p);})();</script></body>|' \
	"$OUT/tree.html" >"$OUT/hover.html"
browse "$OUT/hover.html" "$OUT/hover" || fail "the browser saw errors on the hover page: $OUT/hover.log"
python3 - "$OUT/hover.dom" <<'PY' || fail "the hover read-out of a -f chart"
import html, json, re, sys
dom = open(sys.argv[1]).read()
tip = html.unescape(re.search(r'<pre id="hovered">(.*?)</pre>', dom, re.S).group(1))
d = json.loads(html.unescape(re.search(r'id="mw-data-1">(.*?)</script>', dom, re.S).group(1)))
ev, m = d["ev"], re.match(r"([0-9.]+) s\narenas known: (\d+)\nheaps live: (\d+)", tip)
assert m, tip
# the step at or before the pointer's time, which the tip shows to the ms
bs = {max([-1] + [i for i, t in enumerate(ev["t"]) if t <= float(m.group(1)) + e]) for e in (-5e-4, 5e-4)}
print("hover:", tip.replace("\n", "; "))
assert (int(m.group(2)), int(m.group(3))) in [(ev["arenas"][b], ev["heaps"][b]) for b in bs if b >= 0], (tip, bs, ev)
PY

# the allocator is read every --interval only where the samples go (the
# timeline, --progress, --save-stream): a plain run does not read the
# program's maps while it runs, for 0.3 s as for 2 s (the reads of its
# exit snapshot come after its exit stop, and their number varies with
# the retries a loaded machine costs); with --html, 1.7 s more at 0.1 s
# gives more reads before the exit (at least one: a slow sample puts the
# next up to 10 intervals away, as in an emulated guest)
if command -v strace >/dev/null; then
	reads() {	# ARGS...: opens of the program's /proc/PID/maps before its exit stop
		strace -o "$OUT/maps.strace" -e trace=openat,wait4 "$MW" -q -o /dev/null "$@" >/dev/null 2>&1 ||
			fail "mallocwatch $* exited $?"
		grep -q 'PTRACE_EVENT_EXIT' "$OUT/maps.strace" || fail "mallocwatch $*: no exit stop in $OUT/maps.strace"
		sed '/PTRACE_EVENT_EXIT/q' "$OUT/maps.strace" | grep -c '"/proc/[0-9]*/maps"'
	}
	a=$(reads -c sleep 0.3) b=$(reads -c sleep 2)
	[ "$a" = 0 ] && [ "$b" = 0 ] || fail "a plain run read the program's maps while it ran: $a times in 0.3 s, $b in 2 s"
	c=$(reads --html "$OUT/s1.html" -c sleep 0.3) d=$(reads --html "$OUT/s2.html" -c sleep 2)
	[ "$d" -gt "$c" ] || fail "--html: $c reads before the exit in 0.3 s, $d in 2 s: no samples"
	echo "ok: maps read $a and $b times before the exit without samples, $c and $d with --html"
else
	echo "note: no strace: the samples' reads not counted"
fi

# the check can fail: a page whose script throws
sed 's|<script>(function|<script>nosuchfunction();(function|' "$OUT/storm.html" >"$OUT/broken.html"
browse "$OUT/broken.html" "$OUT/broken" && fail "a script error went unnoticed by the browser check"
exit 0
