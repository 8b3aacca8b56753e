#!/usr/bin/python3
"""count_opens.py FILE OUT: count the opens of FILE (inotify IN_OPEN: by
any process, through any path to it, /proc/PID/map_files included) from
now until SIGTERM or SIGINT.  Writes "ready" to OUT once it watches,
then, when stopped, "opens N" on a line of its own; exit 0, or 2 on an
error (said on stderr)."""
import ctypes
import os
import select
import signal
import sys

IN_OPEN = 0x20
IN_NONBLOCK = 0o4000
EVENT = 16  # struct inotify_event without its name: wd, mask, cookie, len

libc = ctypes.CDLL(None, use_errno=True)
stop = False


def on_signal(_sig, _frame):
    global stop
    stop = True


def main():
    if len(sys.argv) != 3:
        print("usage: count_opens.py FILE OUT", file=sys.stderr)
        return 2
    fd = libc.inotify_init1(IN_NONBLOCK)
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(sys.argv[1]), IN_OPEN) < 0:
        print("count_opens.py: inotify: %s" % os.strerror(ctypes.get_errno()), file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with open(sys.argv[2], "w") as out:
        out.write("ready\n")
        out.flush()
        opens = 0
        while not stop:
            try:
                if not select.select([fd], [], [], 0.2)[0]:
                    continue
                buf = os.read(fd, 65536)
            except (InterruptedError, BlockingIOError):
                continue
            at = 0
            while at + EVENT <= len(buf):
                mask = int.from_bytes(buf[at + 4:at + 8], "little")
                opens += (mask & IN_OPEN) != 0
                at += EVENT + int.from_bytes(buf[at + 12:at + 16], "little")
        out.write("opens %d\n" % opens)
    return 0


sys.exit(main())
