#!/usr/bin/env python3
"""metrics_compare.py XML PID SOURCE OUTDIR - glibc's malloc_info() and
`mallocwatch serve`'s metrics of process PID as the same canonical
lines, for diff -u.

XML is malloc_info(0, fp) (malloc/malloc.c, __malloc_info).  SOURCE is
a file of exposition text (OpenMetrics or Prometheus 0.0.4), or
http://HOST:PORT of a Prometheus that scraped the endpoint, asked through
its HTTP API (/api/v1/query).  Per arena, in the ring's order (the
arena label): system bytes (current and max), and for a non-main arena
its heaps and their bytes; then the mmapped chunks and the arena count.
Writes OUTDIR/expected.txt (malloc_info) and OUTDIR/actual.txt
(metrics).  Also checks every label value of the text as OpenMetrics
writes it (only \\\\, \\" and \\n escapes).
"""
import json
import re
import sys
import urllib.parse
import urllib.request

import snapshot_compare

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def from_malloc_info(text):
    """snapshot_compare's lines without what the metrics do not give
    (fast and rest chunks, mprotect bytes)."""
    return [re.sub(r" fast=\S+ rest=\S+| mprotect=\d+", "", line)
            for line in snapshot_compare.from_malloc_info(text)]


def parse_labels(s):
    labels, pos = {}, 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            raise ValueError("bad labels at %r" % s[pos:])
        labels[m.group(1)] = m.group(2)
        pos = m.end()
    return labels


def samples_from_text(text, pid):
    """(name, labels, value) of process pid's samples."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError("not a sample line: %r" % line)
        labels = parse_labels(m.group(2) or "")
        if labels.get("pid") == str(pid):
            out.append((m.group(1), labels, float(m.group(3))))
    return out


def samples_from_prometheus(base, pid):
    q = '{__name__=~"mallocwatch_(arena|process)_.*",pid="%s"}' % pid
    url = "%s/api/v1/query?%s" % (base, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise ValueError("query failed: %r" % doc)
    out = []
    for res in doc["data"]["result"]:
        labels = dict(res["metric"])
        name = labels.pop("__name__")
        out.append((name, labels, float(res["value"][1])))
    return out


def from_metrics(samples):
    arenas, proc = {}, {}
    for name, labels, value in samples:
        if name.startswith("mallocwatch_arena_"):
            a = arenas.setdefault(int(labels["arena"]), {"main": labels["main"]})
            a[name[len("mallocwatch_arena_"):]] = int(value)
        elif name.startswith("mallocwatch_process_"):
            proc[name[len("mallocwatch_process_"):]] = value
    out = []
    for i in sorted(arenas):
        a = arenas[i]
        line = "arena %s system=%d max=%d" % ("main" if a["main"] == "true" else "other",
                                              a["system_bytes"], a["max_system_bytes"])
        if a["main"] != "true":
            line += " heaps=%d heap_bytes=%d" % (a["heaps"], a["heap_bytes"])
        out.append(line)
    out.append("mmap count=%d bytes=%d" % (proc.get("mmapped_chunks", -1),
                                           proc.get("mmapped_bytes", -1)))
    out.append("arenas=%d" % proc.get("arenas", -1))
    if proc.get("snapshot_consistent", 1) != 1:
        out.append("INCONSISTENT")
    return out


def main():
    xml, pid, source, outdir = sys.argv[1:5]
    with open(xml) as f:
        exp = from_malloc_info(f.read())
    if source.startswith("http://"):
        act = from_metrics(samples_from_prometheus(source, pid))
    else:
        with open(source, encoding="utf-8") as f:
            act = from_metrics(samples_from_text(f.read(), pid))
    for name, lines in (("expected.txt", exp), ("actual.txt", act)):
        with open("%s/%s" % (outdir, name), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
