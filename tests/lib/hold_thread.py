#!/usr/bin/python3
"""hold_thread.py TID SECONDS: stop one thread (ptrace PTRACE_SEIZE and
PTRACE_INTERRUPT, which stop that thread alone) and keep it stopped, as
if it were blocked in a system call for good, while the process's other
threads run on.  Prints "held" once it is stopped; then waits until the
thread exits (a process ending kills it even while stopped), or SECONDS
pass (then lets it go).  Exit 0 when the thread exited, 1 when it was
let go, 2 on an error (said on stderr)."""
import ctypes
import os
import signal
import sys

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req, tid):
    if libc.ptrace(req, tid, None, None) != 0:
        e = ctypes.get_errno()
        sys.exit("hold_thread.py: ptrace %#x %d: %s" % (req, tid, os.strerror(e)))


def main():
    tid, seconds = int(sys.argv[1]), float(sys.argv[2])
    ptrace(PTRACE_SEIZE, tid)
    ptrace(PTRACE_INTERRUPT, tid)
    os.waitpid(tid, WALL)
    print("held", flush=True)

    def let_go(sig, frame):
        ptrace(PTRACE_DETACH, tid)
        sys.exit(1)
    signal.signal(signal.SIGALRM, let_go)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    while True:
        _, status = os.waitpid(tid, WALL)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            return 0


try:
    sys.exit(main())
except OSError as e:
    sys.exit("hold_thread.py: %s" % e)
