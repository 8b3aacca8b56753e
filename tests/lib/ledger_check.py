#!/usr/bin/env python3
"""ledger_check.py JSON ROLLUP_RSS_KB NMAPS [MODE N]: check the RSS ledger of
a `mallocwatch snapshot/explain --json` report.

Always: the parts add up to the ledger's RSS (process and each arena);
the arenas' parts add up to the process's; the RSS is smaps_rollup's (read
by the test itself, the process idle) within one page per mapping; the
mmapped chunks found are glibc's count.  MODE (examples/frag-hold) checks
what that program left, from what it did:
  pinned N: N free chunks of 2016 bytes between chunks in use: every free
            byte pinned, no whole free page, nothing to trim;
  pages N:  N free chunks of 65552 bytes, written: 15 or 16 whole resident
            pages each, all of them (past each header) trimmable now;
  arenas N: N arenas on the free list, 1 MiB (256 x 4 KiB) free and
            resident in each, trimmable but its first page;
  any:      no more than that: for a program not written here.
Prints what it checked; exit 1 on the first failure."""
import json, sys

doc = json.load(open(sys.argv[1]))
s = doc["snapshot"]
rollup = int(sys.argv[2]) * 1024
nmaps = int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "any"
n = int(sys.argv[5]) if len(sys.argv) > 5 else 0
PAGE = 4096
L, F = s["ledger"], s["fragmentation"]
PARTS = ["in_use", "free_resident", "top", "mmapped", "heap_slack", "not_malloc"]

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

def adds_up(p, what):
    total = sum(p[k] for k in PARTS)
    if total != p["rss"]:
        fail(f"{what}: parts {total} != rss {p['rss']}: {p}")

adds_up(L, "process")
for a in L["arenas"]:
    adds_up(a, "arena " + a["address"])
for k in ["rss", "in_use", "free_resident", "top", "heap_slack", "free_returned"]:
    if sum(a[k] for a in L["arenas"]) + (L[k] - sum(a[k] for a in L["arenas"])) != L[k] or \
       k != "rss" and sum(a[k] for a in L["arenas"]) != L[k]:
        fail(f"arenas' {k} do not add up to the process's")
if sum(a["rss"] for a in L["arenas"]) + L["mmapped"] + L["not_malloc"] != L["rss"]:
    fail("arenas + mmapped + not_malloc != rss")
if abs(L["rss"] - rollup) > PAGE * nmaps:
    fail(f"ledger rss {L['rss']} vs smaps_rollup {rollup}: more than {nmaps} pages apart")
if not L["check"]["ok"]:
    fail(f"the ledger's own check failed: {L['check']}")
if L["mmapped_found"]["count"] != s["mmap"]["count"] or L["mmapped_found"]["bytes"] != s["mmap"]["bytes"]:
    fail(f"mmapped chunks found {L['mmapped_found']} vs glibc's {s['mmap']}")
print(f"ok: ledger {L['rss']} = rollup {rollup} (diff {L['rss'] - rollup}, {nmaps} maps); "
      f"in use {L['in_use']}, free resident {L['free_resident']}, top {L['top']}, "
      f"mmapped {L['mmapped']}, slack {L['heap_slack']}, not malloc {L['not_malloc']}")

ids = [f["id"] for f in s["findings"]]
if not ids or ids[0] != "where":
    fail(f"findings do not start with where the RSS is: {ids}")
main = [a for a in s["arenas"] if a["main"]][0]
fm = [a for a in F["arenas"] if a["address"] == main["address"]][0]
if mode == "pinned":
    if fm["free_chunks"] < n or fm["pinned"] < n * 2016 or fm["free_pages_resident"] != 0 or F["trim_now"] != 0:
        fail(f"pinned {n}: {fm}, trim_now {F['trim_now']}")
    if "pinned" not in ids or "trim_now" in ids:
        fail(f"pinned: findings {ids}")
elif mode == "pages":
    # each free chunk [p, p+65552): whole pages 15 or 16; trim: past p+48
    if not (n * 15 * PAGE <= fm["free_pages_resident"] <= n * 16 * PAGE):
        fail(f"pages {n}: whole free resident pages {fm['free_pages_resident']}")
    if not (n * 15 * PAGE <= fm["trim_now"] <= fm["free_pages_resident"]):
        fail(f"pages {n}: trim_now {fm['trim_now']}")
    # frag-hold's three mmapped chunks (3 MiB, their own finding) may rank
    # above a smaller N's free pages
    if [i for i in ids if i != "mmapped"][1] != "trim_now":
        fail(f"pages: trim_now is not the first finding after where: {ids}")
elif mode == "arenas":
    idle = [a for a in s["arenas"] if a["on_free_list"]]
    if len(idle) != n:
        fail(f"arenas {n}: {len(idle)} on the free list")
    for a in idle:
        fa = [x for x in F["arenas"] if x["address"] == a["address"]][0]
        la = [x for x in L["arenas"] if x["address"] == a["address"]][0]
        if not (la["free_resident"] >= 256 * 4096 - 64 and fa["trim_now"] >= 255 * 4096):
            fail(f"idle arena {a['address']}: {la}, {fa}")
    if "idle_arenas" not in ids or "arena_max" not in ids:
        fail(f"arenas: findings {ids}")
    f = [x for x in s["findings"] if x["id"] == "idle_arenas"][0]
    if f["bytes"] < n * 256 * 4096:
        fail(f"idle arenas finding: {f}")
print(f"ok: {mode} {n}: findings {ids}")
for f in s["findings"]:
    print("   ", f["finding"])
