#!/usr/bin/env python3
"""malloc_info_compare.py XML JSON - canonical arena lists from both sides.

XML is glibc's malloc_info(0, fp) output (malloc/malloc.c __malloc_info),
JSON is mallocwatch's --json report (docs/json.md).  Prints two files'
worth of lines to OUTDIR/expected.txt (from malloc_info) and
OUTDIR/actual.txt (from mallocwatch), so the test can diff -u them:

    main system_bytes=135168
    arena heaps=2 heap_bytes=81494016     (one line per non-main arena, sorted)
    arenas=5
"""
import json
import re
import sys


def from_malloc_info(text):
    lines, main = [], None
    for nr, body in re.findall(r'<heap nr="(\d+)">(.*?)</heap>', text, re.S):
        system = int(re.search(r'<system type="current" size="(\d+)"/>', body).group(1))
        if nr == "0":
            main = system
            continue
        total = int(re.search(r'<aspace type="total" size="(\d+)"/>', body).group(1))
        sub = int(re.search(r'<aspace type="subheaps" size="(\d+)"/>', body).group(1))
        lines.append("arena heaps=%d heap_bytes=%d" % (sub, total))
    return canon(main, lines)


def totals(text):
    """(arenas, heaps, heap_bytes) of one malloc_info document: every
    arena, main_arena included, and the heaps and heap bytes (aspace
    "subheaps" and "total") of the arenas other than main_arena."""
    heaps = nbytes = 0
    arenas = len(re.findall(r'<heap nr="', text))
    for nr, body in re.findall(r'<heap nr="(\d+)">(.*?)</heap>', text, re.S):
        if nr == "0":
            continue
        heaps += int(re.search(r'<aspace type="subheaps" size="(\d+)"/>', body).group(1))
        nbytes += int(re.search(r'<aspace type="total" size="(\d+)"/>', body).group(1))
    return arenas, heaps, nbytes


def documents(text):
    """The malloc_info documents in text, in order (several runs' output
    one after the other)."""
    return re.findall(r'<malloc version="1">.*?</malloc>', text, re.S)


def per_run(xml, err, runs):
    """--repeat's figures against malloc_info, run by run: (want, have),
    the (arenas, heaps, heap_bytes) of each of the RUNS malloc_info
    documents in xml (totals()), and those mallocwatch's stderr err
    lists ("mallocwatch: arenas per run: 3 4 5 (...)", likewise heaps
    and heap_bytes); prints both.  Asserts that there are RUNS
    documents and the three lines."""
    docs = documents(xml)
    assert len(docs) == runs, ("malloc_info documents", len(docs))
    want = [totals(d) for d in docs]
    got = {}
    for m in ("arenas", "heaps", "heap_bytes"):
        line = re.search(r'^mallocwatch: %s per run: ([0-9 ]+) \(' % m, err, re.M)
        assert line, ("no per-run figures of", m, err)
        got[m] = [int(x) for x in line.group(1).split()]
    have = list(zip(got["arenas"], got["heaps"], got["heap_bytes"]))
    print("malloc_info per run (arenas, heaps, heap bytes):", want)
    print("reports per run:                              ", have)
    return want, have


def from_report(doc):
    lines, main = [], None
    for a in doc["arenas"]:
        if a["main"]:
            main = a["heap_bytes"]
        else:
            lines.append("arena heaps=%d heap_bytes=%d" % (a["heaps"], a["heap_bytes"]))
    # every move of the break was traced, unless the main heap was there
    # before (-p's attach, -f's forked child: seeded from a snapshot)
    seeded = any(a["main"] and a.get("at_attach") for a in doc["arenas"])
    if not seeded and doc["sbrk"]["net"] != main:
        lines.append("main heap_bytes %d != sbrk net %d" % (main, doc["sbrk"]["net"]))
    return canon(main, lines)


def canon(main, lines):
    return ["main system_bytes=%s" % main] + sorted(lines) + ["arenas=%d" % (len(lines) + 1)]


def main():
    xml, rep, outdir = sys.argv[1:4]
    with open(xml) as f:
        exp = from_malloc_info(f.read())
    with open(rep) as f:
        act = from_report(json.load(f))
    for name, lines in (("expected.txt", exp), ("actual.txt", act)):
        with open("%s/%s" % (outdir, name), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
