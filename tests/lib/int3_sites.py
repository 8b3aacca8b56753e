"""Which uprobe sites hold an int3 in a process's memory (t-umulti).

    python3 tests/lib/int3_sites.py armed PID SITES
    python3 tests/lib/int3_sites.py unheld PID SITES UPROBE_EVENTS

SITES is a file of "PATH OFFSET" lines (OFFSET in hex, a file offset).
Each site is found in PID's executable mapping of PATH (/proc/PID/maps)
and its byte read from /proc/PID/mem.  `armed` prints how many hold an
int3 (0xcc), and fails on a site in no mapping; `unheld` how many hold one although no tracer on the machine
holds the site: no process's uprobe_multi link (its fdinfo) and no tracefs
definition (UPROBE_EVENTS) names it; the holders of perf events, which may
hold sites that cannot be told (--stacks), go to stderr.
"""
import os
import re
import sys


def site_bytes(pid, sites, strict):
    """Yield (path, offset, byte) of each site in pid's memory (strict:
    a site in no mapping is an error, else skipped)."""
    maps = [l.split() for l in open("/proc/%s/maps" % pid)]
    with open("/proc/%s/mem" % pid, "rb") as mem:
        for path, off in sites:
            off = int(off, 16)
            for m in maps:
                if len(m) >= 6 and m[5] == path and "x" in m[1]:
                    lo, hi = (int(x, 16) for x in m[0].split("-"))
                    start = int(m[2], 16)
                    if start <= off < start + hi - lo:
                        mem.seek(lo + off - start)
                        yield path, off, mem.read(1)
                        break
            else:
                if strict:
                    sys.exit("no executable mapping of %s in %s holds %#x" % (path, pid, off))


def fd_links(pid, held, perf):
    """Add the sites of pid's uprobe_multi links to held; note perf fds."""
    try:
        fds = os.listdir("/proc/%s/fdinfo" % pid)
    except OSError:
        return
    for fd in fds:
        try:
            info = open("/proc/%s/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        if "link_type:\tuprobe_multi" in info:
            path = re.search(r"^path:\s*(\S+)", info, re.M)
            for off in re.findall(r"^\d+\t(0x[0-9a-f]+)", info, re.M):
                held.add((path.group(1) if path else "", int(off, 16)))
            continue
        try:
            if "perf_event" in os.readlink("/proc/%s/fd/%s" % (pid, fd)):
                perf.append(pid)
        except OSError:
            pass


def held_sites(pid, ue):
    held, perf = set(), []
    for p in os.listdir("/proc"):
        if p.isdigit() and p != pid:
            fd_links(p, held, perf)
    for l in open(ue):
        m = re.match(r"^p:\S+ (\S+):(0x[0-9a-f]+)", l)
        if m:
            held.add((m.group(1), int(m.group(2), 16)))
    if perf:
        sys.stderr.write("uprobe perf events (or other perf events) held by %s\n"
                         % " ".join(sorted(set(perf))))
    return held


def main():
    mode, pid = sys.argv[1], sys.argv[2]
    sites = [l.split() for l in open(sys.argv[3]) if l.strip()]
    held = held_sites(pid, sys.argv[4]) if mode == "unheld" else set()
    print(sum(b == b"\xcc" and (p, o) not in held for p, o, b in site_bytes(pid, sites, mode == "armed")))


main()
