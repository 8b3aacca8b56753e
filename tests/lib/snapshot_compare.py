#!/usr/bin/env python3
"""snapshot_compare.py XML JSON OUTDIR - glibc's malloc_info() and
`mallocwatch snapshot --json` as the same canonical lines, for diff -u.

XML is malloc_info(0, fp) (malloc/malloc.c, __malloc_info); JSON is the
snapshot (docs/json.md, "Snapshot").  Per arena, in the ring's order
(both walk main_arena's `next` ring): system bytes (current and max),
fast and rest chunks (count and bytes), heaps and their bytes; then the
mmapped chunks and the totals.  Writes OUTDIR/expected.txt (malloc_info)
and OUTDIR/actual.txt (snapshot).
"""
import json
import re
import sys


def attr(body, tag, type_, key):
    m = re.search(r'<%s type="%s"[^>]*\b%s="(\d+)"' % (tag, type_, key), body)
    return int(m.group(1)) if m else None


def from_malloc_info(text):
    out = []
    heaps = re.findall(r'<heap nr="(\d+)">(.*?)</heap>', text, re.S)
    for nr, body in heaps:
        line = "arena %s system=%d max=%d fast=%d/%d rest=%d/%d" % (
            "main" if nr == "0" else "other",
            attr(body, "system", "current", "size"), attr(body, "system", "max", "size"),
            attr(body, "total", "fast", "count"), attr(body, "total", "fast", "size"),
            attr(body, "total", "rest", "count"), attr(body, "total", "rest", "size"))
        if nr != "0":
            line += " heaps=%d heap_bytes=%d mprotect=%d" % (
                attr(body, "aspace", "subheaps", "size"), attr(body, "aspace", "total", "size"),
                attr(body, "aspace", "mprotect", "size"))
        out.append(line)
    tail = text[text.rindex("</heap>"):]
    out.append("mmap count=%d bytes=%d" % (attr(tail, "total", "mmap", "count"),
                                           attr(tail, "total", "mmap", "size")))
    out.append("arenas=%d" % len(heaps))
    return out


def from_snapshot(doc):
    s, out = doc["snapshot"], []
    for a in s["arenas"]:
        mi = a["malloc_info"]
        line = "arena %s system=%d max=%d fast=%d/%d rest=%d/%d" % (
            "main" if a["main"] else "other", a["system_bytes"], a["max_system_bytes"],
            mi["fast_count"], mi["fast_bytes"], mi["rest_count"], mi["rest_bytes"])
        if not a["main"]:
            line += " heaps=%d heap_bytes=%d mprotect=%d" % (
                len(a["heaps"]), a["heap_bytes"], a["heap_mprotect_bytes"])
        out.append(line)
    out.append("mmap count=%d bytes=%d" % (s["mmap"]["count"], s["mmap"]["bytes"]))
    out.append("arenas=%d" % len(s["arenas"]))
    if not s["consistent"]:
        out.append("INCONSISTENT: %s" % s["inconsistent_reason"])
    return out


def main():
    xml, rep, outdir = sys.argv[1:4]
    with open(xml) as f:
        exp = from_malloc_info(f.read())
    with open(rep) as f:
        act = from_snapshot(json.load(f))
    for name, lines in (("expected.txt", exp), ("actual.txt", act)):
        with open("%s/%s" % (outdir, name), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
