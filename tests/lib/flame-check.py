#!/usr/bin/env python3
# tests/lib/flame-check.py PAGE FOLDED PROBE PATH MIN - check the --html page's
# (or `mallocwatch flame --probe PROBE`'s standalone SVG's) flame graph of
# PROBE's stacks (src/report/report_flame.c) against the
# --folded file of the same run: every frame drawn is a prefix of the
# folded lines of PROBE (its path from the root, the frames' pre-order
# giving it), weighs the sum of the lines through it, is as wide as its
# share of the graph's width and starts where its parent does plus its
# elder siblings' widths; and a frame whose path ends with PATH (';'
# between frames, in order, root side first) weighs MIN or more.
# Exit 0 when it holds, else 1 with the reason.
import html, re, sys

page, folded, probe, want, least = sys.argv[1:6]
text = open(page).read()
heads = [m.start() for m in re.finditer(r'<h2 class="flame">', text)]
svg = None
for h in heads:
    end = text.index("</svg>", h)
    part = text[h:end]
    if "(%s" % probe in part[:part.index("</h2>")]:
        svg = part
        break
if svg is None and text.startswith('<svg class="flame"'):
    # a standalone SVG (mallocwatch flame --probe PROBE): well-formed XML
    # in the SVG namespace
    import xml.etree.ElementTree as ET
    root = ET.fromstring(text)
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        sys.exit("%s: the root element is %s, not an SVG" % (page, root.tag))
    svg = text
if svg is None:
    sys.exit("no flame graph of %s in %s" % (probe, page))
width = float(re.search(r'<svg class="flame" width="(\d+)"', svg).group(1))
lines = []
for l in open(folded):
    stack, w = l.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    if frames[-1] == probe:
        lines.append((frames, int(w)))
total = sum(w for _, w in lines)
nodes = re.findall(r'<g class="fl" data-depth="(\d+)" data-frame="([^"]*)" data-weight="(\d+)">'
                   r'<title>[^<]*</title><rect x="([0-9.]+)" y="\d+" width="([0-9.]+)"', svg)
if not nodes or not total:
    sys.exit("no frame drawn (%d) or no folded line of %s (%d)" % (len(nodes), probe, total))
path, nextx, found = [], {1: 0.0}, 0
want = want.split(";")
for d, f, w, x, wd in nodes:
    d, w, x, wd, f = int(d), int(w), float(x), float(wd), html.unescape(f)
    path = path[:d - 1] + [f]
    through = sum(lw for fr, lw in lines if fr[:d] == path)
    if through != w:
        sys.exit("%s: weighs %d, the folded lines through it %d" % (";".join(path), w, through))
    if abs(wd - width * w / total) > 0.011:
        sys.exit("%s: %.2f px wide, not %.2f" % (";".join(path), wd, width * w / total))
    # pre-order: a first child starts where its parent does, a sibling
    # where the one before it ends (each printed to 0.01 px)
    if abs(x - nextx[d]) > 0.05:
        sys.exit("%s: at x %.2f, not %.2f" % (";".join(path), x, nextx[d]))
    nextx[d] = x + wd
    nextx[d + 1] = x
    if path[-len(want):] == want and w >= int(least):
        found = w
drawn = {";".join(fr[:i]) for fr, _ in lines for i in range(1, len(fr) + 1)}
if len(nodes) != len(drawn):
    sys.exit("%d frames drawn, the folded lines have %d" % (len(nodes), len(drawn)))
if not found:
    sys.exit("no frame ...;%s weighing %s or more" % (";".join(want), least))
print("flame graph of %s: %d frames, %s weighs %d of %d, %.1f px of %d" %
      (probe, len(nodes), ";".join(want), found, total, width * found / total, width))
