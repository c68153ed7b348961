"""A normal client's latency on ``harness serve`` while 2,000 connections trickle their bodies,
the server's file descriptor limit at 1,024 (a common default).

The server is the real ``harness serve`` in a child process (RLIMIT_NOFILE 1024); the attack
opens 2,000 connections that each send a POST's headers and 1 byte of a 1,000-byte body, then
wait; a normal client then sends 101 GET calls, each on a new connection, one after the other.
Printed: the same 101 calls without the attack first (the baseline of this run), then during
it: answered, p50, p95 and worst latency. Target: every call answered, worst under 1 s (before
the connection cap, 77 of 101 failed). Quote the load average with the figures.

    .venv/bin/python bench/bench_slow_clients.py [--slow 2000] [--calls 101]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

CALL = "/GetTeacherGroups.asmx/GetTeacherGrpupsByID?Tid=1"


@contextlib.contextmanager
def server(fd_limit: int):
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--port", "0"], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit)))
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        host, port = line.split(" on http://", 1)[1].split()[0].rsplit(":", 1)
        deadline = time.monotonic() + 30
        while calls((host, int(port)), 1)[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)  # bound before it listens: wait for its first answer
        yield host, int(port)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def slow_bodies(where: tuple[str, int], count: int) -> list[socket.socket]:
    opened = []
    for _ in range(count):
        s = socket.socket()
        s.settimeout(10)
        with contextlib.suppress(OSError):
            s.connect(where)
            s.sendall(b"POST /GetTeacherGroups.asmx/GetTeacherGrpupsByID HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\n"
                      b"Content-Length: 1000\r\n\r\nT")
        opened.append(s)
    return opened


def calls(where: tuple[str, int], count: int) -> tuple[int, list[float]]:
    """(answered, seconds of each call) of ``count`` GETs, each on a new connection."""
    answered, seconds = 0, []
    request = f"GET {CALL} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    for _ in range(count):
        started = time.perf_counter()
        try:
            with socket.create_connection(where, timeout=20) as s:
                s.sendall(request)
                reply = b""
                while chunk := s.recv(65536):
                    reply += chunk
            answered += reply.startswith(b"HTTP/1.1 200")
        except OSError:
            pass
        seconds.append(time.perf_counter() - started)
    return answered, seconds


def line(label: str, answered: int, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return (f"{label:>16}: {answered}/{len(seconds)} answered, p50 "
            f"{statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, worst "
            f"{ordered[-1] * 1000:.1f} ms (the first call {seconds[0] * 1000:.1f} ms); load "
            f"average {os.getloadavg()[0]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=101)
    parser.add_argument("--fd-limit", type=int, default=1024)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.slow + 200)), hard))
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; server fd limit "
          f"{args.fd_limit}, {args.slow} slow bodies")
    with server(args.fd_limit) as where:
        print(line("no attack", *calls(where, args.calls)), flush=True)
        attackers = slow_bodies(where, args.slow)
        try:
            answered, seconds = calls(where, args.calls)
            print(line("during attack", answered, seconds), flush=True)
        finally:
            for s in attackers:
                s.close()
    met = answered == args.calls and max(seconds) < 1.0
    print(f"target: every call answered, worst under 1 s: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
