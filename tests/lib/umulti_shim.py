"""umulti-shim.so on its own, driven as stapbpf drives it (t-umulti).

Run with build/umulti-shim.so in LD_PRELOAD, as root:

    python3 tests/lib/umulti_shim.py lines
    python3 tests/lib/umulti_shim.py arm FILE OFFSET EXPECT
    MW_UMULTI_SITES=SITES python3 tests/lib/umulti_shim.py prearm FILE OFFSET EARLY
    MW_UMULTI_SITES=SITES python3 tests/lib/umulti_shim.py prearm2 FILE OFF_A OFF_B

lines: the uprobe_events stand-in refuses what stapbpf never writes
(EINVAL: a bad offset, a return probe, another pid, a site out of order),
takes a good line and "-:" removals, hands out the site's id file and no
other, gives a stand-in for that id's perf event, and leaves other files
alone.

arm: one site FILE:OFFSET, a kprobe-type program loaded through the
shim's bpf() (it adds expected_attach_type BPF_TRACE_UPROBE_MULTI), given
to the stand-in with PERF_EVENT_IOC_SET_BPF, which arms.  EXPECT "ok": the
ioctl succeeds and this process holds a uprobe_multi link on FILE at
OFFSET, gone once the stand-in is closed; an errno name (ENOENT): the
ioctl fails with it and no link is made.

prearm: with MW_UMULTI_SITES naming a file of "0xOFFSET PATH" lines (read
by the shim's constructor), EARLY an offset or "none": a link on FILE at
EARLY appears before anything is armed (the shim's early arming), then
FILE:OFFSET is armed as by arm; after it exactly one link is held, on
FILE at OFFSET (the early one when EARLY is OFFSET, else it was closed
and another made), and none once the stand-in is closed.  Whether the
early link was used is the shim's log's (MW_UMULTI_LOG) to say.

prearm2: sites OFF_A then OFF_B as stapbpf defines them, the file listing
OFF_B first: once armed, each link entry's cookie selects in the program
array the program (of its own id) given to the site at its offset.

Prints "ok: ..." lines; exits 1 with "FAIL: ..." at the first mismatch.
"""
import ctypes
import errno
import os
import struct
import sys

UE = "/sys/kernel/debug/tracing/uprobe_events"
ID = "/sys/kernel/debug/tracing/events/uprobes/stapprobe_%d_%d/id"
FAKE_ID = 0x40000000                     # umulti-shim.c, MW_FAKE_ID
NR_PERF_EVENT_OPEN, NR_BPF = 298, 321    # x86_64
PERF_TYPE_TRACEPOINT = 2
PERF_EVENT_IOC_SET_BPF = 0x40042408
BPF_PROG_LOAD, BPF_PROG_TYPE_KPROBE = 5, 2

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]
pid = os.getpid()


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def write(fd, text):
    try:
        return os.write(fd, text.encode())
    except OSError as e:
        return -e.errno


def perf_open(config):
    attr = ctypes.create_string_buffer(struct.pack("<IIQ", PERF_TYPE_TRACEPOINT, 128, config), 128)
    fd = libc.syscall(NR_PERF_EVENT_OPEN, attr, -1, 0, -1, 0)
    return fd if fd >= 0 else -ctypes.get_errno()


def link_sites():
    """(path, offset) of every uprobe_multi link this process holds."""
    found = []
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = open("/proc/self/fdinfo/" + fd).read()
        except OSError:
            continue
        if "link_type:\tuprobe_multi" not in text:
            continue
        path = [l.split("\t", 1)[1] for l in text.splitlines() if l.startswith("path:")][0]
        for l in text.splitlines():
            f = l.split()
            if len(f) == 3 and f[0].isdigit():
                found.append((path, int(f[1], 16)))
    return found


def lines():
    fd = os.open(UE, os.O_WRONLY)
    if os.readlink("/proc/self/fd/%d" % fd) != "/dev/null":
        fail("uprobe_events opened for writing is not the stand-in")
    print("ok: uprobe_events opened for writing gets a stand-in (/dev/null)")
    for line, why in (("p:stapprobe_%d_0 /bin/true:zz" % pid, "an offset that is no number"),
                      ("p:stapprobe_%d_0 /bin/true:0x" % pid, "an empty offset"),
                      ("p:stapprobe_%d_0 /bin/true" % pid, "no offset"),
                      ("r:stapprobe_%d_0 /bin/true:0x10" % pid, "a return probe"),
                      ("p:stapprobe_%d_0 /bin/true:0x10" % (pid + 1), "another pid"),
                      ("p:stapprobe_%d_1 /bin/true:0x10" % pid, "a site out of order"),
                      ("p:stapprobe_%d_0 :0x10" % pid, "no path")):
        r = write(fd, line)
        if r != -errno.EINVAL:
            fail("%s (%r): write returned %d, not -EINVAL" % (why, line, r))
        print("ok: refused with EINVAL:", why)
    good = "p:stapprobe_%d_0 /bin/true:0x10" % pid
    if write(fd, good) != len(good):
        fail("a good line was not taken")
    rm = "-:stapprobe_%d_0" % pid
    if write(fd, rm) != len(rm):
        fail("a removal line was not taken")
    print("ok: a site line and a removal line taken")
    ident = int(open(ID % (pid, 0)).read())
    if ident != FAKE_ID:
        fail("site 0's id is %d, not %d" % (ident, FAKE_ID))
    for p, i in ((pid, 1), (pid + 1, 0)):
        try:
            open(ID % (p, i)).read()
            fail("an id file for a site that is not ours was given: %s" % (ID % (p, i)))
        except FileNotFoundError:
            pass
    print("ok: site 0's id file holds %#x; no other site's is given" % ident)
    ev = perf_open(ident)
    if ev < 0 or os.readlink("/proc/self/fd/%d" % ev) != "/dev/null":
        fail("the site's perf event: %d" % ev)
    if perf_open(ident + 1) != -errno.ENOENT:
        fail("a perf event for an id past the sites was opened")
    print("ok: the site's perf event is a stand-in; an id past the sites is refused")
    tmp = "/proc/self/fd/%d" % os.open("/dev/shm", os.O_TMPFILE | os.O_RDWR)
    other = os.open(tmp, os.O_RDWR)
    if os.write(other, b"p:stapprobe_1_0 x:0x1") != 21 or os.pread(other, 64, 0) != b"p:stapprobe_1_0 x:0x1":
        fail("a write to another file was changed")
    print("ok: other files are written as they are")


def load_prog(r0=0):
    """a kprobe-type program r0 = R0; exit (programs of another R0 differ,
    so the shim's sharing keeps them apart)"""
    insns = struct.pack("<BBhi", 0xb7, 0, 0, r0) + struct.pack("<BBhi", 0x95, 0, 0, 0)
    ibuf = ctypes.create_string_buffer(insns, len(insns))
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(128)
    struct.pack_into("<IIQQ", attr, 0, BPF_PROG_TYPE_KPROBE, 2,
                     ctypes.addressof(ibuf), ctypes.addressof(lic))
    fd = libc.syscall(NR_BPF, BPF_PROG_LOAD, attr, 128)
    if fd < 0:
        fail("BPF_PROG_LOAD: %s" % os.strerror(ctypes.get_errno()))
    return fd


def arm(path, offset, expect):
    fd = os.open(UE, os.O_WRONLY)
    line = "p:stapprobe_%d_0 %s:0x%x" % (pid, path, offset)
    if write(fd, line) != len(line):
        fail("the site line was refused")
    ident = int(open(ID % (pid, 0)).read())
    ev = perf_open(ident)
    prog = load_prog()
    r = libc.ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog)
    err = ctypes.get_errno()
    sites = link_sites()
    if expect == "ok":
        if r != 0:
            fail("PERF_EVENT_IOC_SET_BPF failed: %s" % os.strerror(err))
        if sites != [(path, offset)]:
            fail("links held: %r, expected one on %s at %#x" % (sites, path, offset))
        print("ok: armed: one uprobe_multi link on %s at %#x" % (path, offset))
        os.close(ev)
        if link_sites():
            fail("the link outlived the stand-in: %r" % link_sites())
        print("ok: closing the site's stand-in removed the link")
    else:
        if r == 0 or errno.errorcode.get(err) != expect:
            fail("PERF_EVENT_IOC_SET_BPF: %d (%s), expected %s"
                 % (r, errno.errorcode.get(err), expect))
        if sites:
            fail("a failed arm left links: %r" % sites)
        print("ok: a site on %s: the ioctl fails with %s, no link left" % (path, expect))


def prearm(path, offset, early):
    if early != "none":
        early = int(early, 0)
        for _ in range(500):
            if link_sites() == [(path, early)]:
                break
            os.sched_yield()
            __import__("time").sleep(0.01)
        else:
            fail("no early link on %s at %#x: %r" % (path, early, link_sites()))
        print("ok: an early link on %s at %#x before any arming" % (path, early))
    arm(path, offset, "ok")


def fdinfo(fd):
    return dict(l.split(":\t", 1) for l in open("/proc/self/fdinfo/%d" % fd).read().splitlines()
                if ":\t" in l)


def prearm_two(path, off_a, off_b):
    """sites a then b, the sites file (MW_UMULTI_SITES) listing b then a:
    each link entry's cookie must select, in the program array, the
    program given to the site at that entry's offset"""
    fd = os.open(UE, os.O_WRONLY)
    evs, progs = [], []
    for i, off in enumerate((off_a, off_b)):
        line = "p:stapprobe_%d_%d %s:0x%x" % (pid, i, path, off)
        if write(fd, line) != len(line):
            fail("site line %d refused" % i)
    for i in range(2):
        evs.append(perf_open(int(open(ID % (pid, i)).read())))
        progs.append(load_prog(i + 1))
    for ev, prog in zip(evs, progs):
        if libc.ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog) != 0:
            fail("PERF_EVENT_IOC_SET_BPF: %s" % os.strerror(ctypes.get_errno()))
    want = {off_a: int(fdinfo(progs[0])["prog_id"]), off_b: int(fdinfo(progs[1])["prog_id"])}
    entries, arrays = [], []
    for f in os.listdir("/proc/self/fdinfo"):
        try:
            text = open("/proc/self/fdinfo/" + f).read()
        except OSError:
            continue
        if "link_type:\tuprobe_multi" in text:
            entries += [(int(l.split()[0]), int(l.split()[1], 16)) for l in text.splitlines()
                        if len(l.split()) == 3 and l.split()[0].isdigit()]
        elif "map_type:\t3\n" in text:
            arrays.append(int(f))
    if len(arrays) != 1 or sorted(o for _, o in entries) != sorted(want):
        fail("expected one program array and links on %s: arrays %r, entries %r"
             % (sorted(want), arrays, entries))
    for cookie, off in entries:
        key, val = ctypes.c_uint32(cookie), ctypes.c_uint32(0)
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<IIQQ", attr, 0, arrays[0], 0, ctypes.addressof(key),
                         ctypes.addressof(val))
        if libc.syscall(NR_BPF, 1, attr, 128) != 0:     # BPF_MAP_LOOKUP_ELEM: the program's id
            fail("lookup of slot %d: %s" % (cookie, os.strerror(ctypes.get_errno())))
        if val.value != want[off]:
            fail("the entry at %#x (cookie %d) runs program %d, not the site's %d"
                 % (off, cookie, val.value, want[off]))
    if dict(entries)[0] != off_b:
        fail("cookie 0 is not the file's first site (%#x): %r" % (off_b, entries))
    print("ok: sites listed in another order: each cookie runs its site's program (%s)"
          % ", ".join("%d->%#x" % e for e in sorted(entries)))
    for ev in evs:
        os.close(ev)


if __name__ == "__main__":
    if sys.argv[1] == "lines":
        lines()
    elif sys.argv[1] == "arm":
        arm(sys.argv[2], int(sys.argv[3], 0), sys.argv[4])
    elif sys.argv[1] == "prearm":
        prearm(sys.argv[2], int(sys.argv[3], 0), sys.argv[4])
    elif sys.argv[1] == "prearm2":
        prearm_two(sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4], 0))
    else:
        fail("usage: umulti_shim.py lines | arm FILE OFFSET EXPECT | prearm FILE OFFSET EARLY"
             " | prearm2 FILE OFFSET_A OFFSET_B")
