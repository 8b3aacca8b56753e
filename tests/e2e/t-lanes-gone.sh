#!/bin/sh
# Thread lanes end when the thread exits (issue 26, item 7).  Under -c,
# python3 starts 4 threads at a barrier; each makes an arena of its own
# and exits; the main thread then sleeps 0.8 s.  The samples (every
# 0.1 s) find the 4 threads gone from /proc/PID/task: the saved stream
# has a V record for each of them and none for the main thread; in the
# --html page each of their lanes ends there with its mark, before the
# axis's end, while the main thread's runs on; a replay of the stream
# draws the same page.  Also: the libc is looked up again at each sample,
# so a program started through a wrapper that execs it (a shell script
# here) is sampled after its exec, not through the wrapper's libc (its
# samples were skipped or wrong before).
# needs: root glibc
. tests/lib/lib.sh
need_root
need_libc
cat >"$OUT/lanes.py" <<'PY'
import threading, time
b = threading.Barrier(4)
def w():
    b.wait()
    x = [bytearray(200000) for _ in range(3)]
ts = [threading.Thread(target=w) for _ in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
time.sleep(0.8)
PY
printf '#!/bin/sh\nexec /usr/bin/python3 "$@"\n' >"$OUT/wrap.sh"
chmod +x "$OUT/wrap.sh"
"$MW" --save-stream "$OUT/lanes.mw" --html "$OUT/lanes.html" -o "$OUT/lanes.txt" \
	-c "$OUT/wrap.sh" "$OUT/lanes.py" 2>"$OUT/lanes.err" || fail "exit $?: $(cat "$OUT/lanes.err")"
grep -q "samples skipped" "$OUT/lanes.err" && fail "samples skipped: $(cat "$OUT/lanes.err")"
python3 - "$OUT/lanes.mw" "$OUT/lanes.html" "$OUT/lanes.txt" <<'PY' || fail "the lanes"
import re, sys
stream, html, txt = (open(f).read() for f in sys.argv[1:])
pid = int(re.search(r"\(pid (\d+)\)", txt).group(1))
gone = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^V (\d+) (\d+)$", stream, re.M)}
# the arena creators, from the table: "0x... arena TID ..."
creators = {int(t) for t in re.findall(r"^  0x[0-9a-f]+ +arena +(\d+) ", txt, re.M)}
assert len(creators) == 4, txt
assert set(gone) == creators, (gone, creators)
assert pid not in gone, pid
width = int(re.search(r'<svg id="lanes" viewBox="0 0 (\d+) ', html).group(1))
for tid in creators:
    lane = re.search(r'<g class="lane" data-tid="%d">(.*?)</g>' % tid, html, re.S).group(1)
    assert 'class="tick gone"' in lane, lane
    ends = [float(x) + float(w) for x, w in re.findall(r'<rect[^>]* x="([0-9.]+)" y="[0-9]+" width="([0-9.]+)"', lane)]
    assert ends and max(ends) < width - 30, (tid, ends, width)
main = re.search(r'<g class="lane" data-tid="%d">(.*?)</g>' % pid, html, re.S).group(1)
assert 'class="tick gone"' not in main, main
print("ok: %d threads found gone, lanes end at" % len(gone), sorted(gone.values())[0])
PY
"$MW" replay --html "$OUT/replay.html" -o /dev/null "$OUT/lanes.mw" 2>"$OUT/replay.err" ||
	fail "replay exit $?: $(cat "$OUT/replay.err")"
cmp -s "$OUT/lanes.html" "$OUT/replay.html" || fail "the replay draws another page"
echo "ok: the replay draws the same page"
