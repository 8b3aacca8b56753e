#!/usr/bin/python3
"""Hostile clients of `mallocwatch serve`, as any local user can run them
(t-serve-slow, t-serve-webconfig run this as nobody).

  slow_clients.py slow HOST PORT N GAP SECONDS
      N connections, each sending a request's first line and then one
      header line every GAP seconds, never the end of the headers; a
      connection the server drops is opened again.  Prints "open K" once
      the first round is open, then "reopened M" at the end.
  slow_clients.py silent HOST PORT N SECONDS
      N connections that send nothing (on a TLS port: no handshake).
  slow_clients.py badauth HOST PORT THREADS SECONDS
      THREADS loops of whole requests over TLS (no certificate check) with
      a wrong password each time; prints "CODE COUNT" lines at the end.
"""
import socket
import ssl
import sys
import threading
import time
import base64
import collections


def connect(host, port, first):
    try:
        s = socket.create_connection((host, port), timeout=2)
        if first:
            s.sendall(first)
        return s
    except OSError:
        return None


def hold(host, port, n, gap, seconds, first):
    socks = [connect(host, port, first) for _ in range(n)]
    print("open", sum(1 for s in socks if s), flush=True)
    end = time.time() + seconds
    reopened = 0
    while time.time() < end:
        time.sleep(gap)
        for i, s in enumerate(socks):
            try:
                if s is None:
                    raise OSError
                if first:
                    s.sendall(b"X-Slow: 1\r\n")
                elif s.recv(1, socket.MSG_DONTWAIT) == b"":
                    raise OSError
            except BlockingIOError:
                pass
            except OSError:
                if s is not None:
                    s.close()
                socks[i] = connect(host, port, first)
                reopened += 1
    print("reopened", reopened, flush=True)


def badauth(host, port, threads, seconds):
    codes = collections.Counter()
    lock = threading.Lock()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    end = time.time() + seconds

    def loop(k):
        i = 0
        while time.time() < end:
            i += 1
            cred = base64.b64encode(b"alice:wrong-%d-%d" % (k, i)).decode()
            req = ("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n"
                   "Connection: close\r\n\r\n" % cred).encode()
            try:
                with socket.create_connection((host, port), timeout=10) as raw:
                    with ctx.wrap_socket(raw) as s:
                        s.sendall(req)
                        code = s.recv(64).split(b" ")[1].decode()
            except (OSError, IndexError):
                code = "error"
            with lock:
                codes[code] += 1

    ts = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for code, count in sorted(codes.items()):
        print(code, count, flush=True)


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "slow":
        hold(host, port, int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]),
             b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    elif mode == "silent":
        hold(host, port, int(sys.argv[4]), 1.0, float(sys.argv[5]), None)
    elif mode == "badauth":
        badauth(host, port, int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit("unknown mode " + mode)


main()
