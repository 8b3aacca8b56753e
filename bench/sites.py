#!/usr/bin/env python3
"""bench/sites.py LIBC [PROBE...] < `mallocwatch probes --libc LIBC --json`:
the file offsets of LIBC's traced SDT sites (of the probes named, or all),
one a line, as uprobes take them.  The SDT pc is a virtual address: the
LOAD segment (readelf -lW) that holds it maps it to the file
(offset = pc - p_vaddr + p_offset)."""
import json
import subprocess
import sys

libc, probes = sys.argv[1], set(sys.argv[2:])
segs = []
for line in subprocess.run(["readelf", "-lW", libc], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if f[:1] == ["LOAD"]:
        segs.append((int(f[1], 16), int(f[2], 16), int(f[5], 16)))
for s in json.load(sys.stdin)["sites"]:
    if s["traced"] and s["file"] == libc and (not probes or s["name"] in probes):
        pc = int(s["pc"], 16)
        off, vaddr, _ = next(x for x in segs if x[1] <= pc < x[1] + x[2])
        print(hex(pc - vaddr + off))
