"""harness serve bounded as a production server: header fields over 16 KiB or heads over
64 KiB get 431 at once (a 100 MB header value used to stall every client for seconds), a body
that does not arrive within the body deadline closes its connection, and 2,000 connections
trickling their bodies at an fd limit of 1,024 do not lock normal clients out (77 of 101
failed): the ones waiting longest are closed to let new ones in. bench/bench_slow_clients.py
prints a normal client's latency during that attack."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import time

import httpx
import pytest

from harness.reference.server import running

CALL = "/GetTeacherGroups.asmx/GetTeacherGrpupsByID?Tid=1"


def head(url: str, extra: bytes) -> tuple[int, float]:
    """Status of a GET sent with ``extra`` header lines, raw over a socket; and seconds."""
    host, port = url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        with contextlib.suppress(OSError):
            s.sendall(b"GET " + CALL.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n")
        reply = s.recv(65536)
    return int(reply.split(b" ", 2)[1]), time.monotonic() - started


@pytest.mark.parametrize("extra", [
    b"X-Big: " + b"a" * (17 * 1024) + b"\r\n",  # one field over 16 KiB
    b"".join(b"X-%d: " % i + b"a" * (12 * 1024) + b"\r\n" for i in range(6)),  # 72 KiB
    b"X-Huge: " + b"a" * (100 << 20) + b"\r\n"])  # 100 MB: refused at 64 KiB
def test_oversized_headers_get_431(reference_url: str, extra: bytes) -> None:
    status, _seconds = head(reference_url, extra)
    assert status == 431
    assert httpx.get(reference_url + CALL, trust_env=False).status_code == 200


def test_headers_within_the_limits_are_served(reference_url: str) -> None:
    extra = b"".join(b"X-%d: " % i + b"a" * (15 * 1024) + b"\r\n" for i in range(4))  # 60 KiB
    assert head(reference_url, extra)[0] == 200


def test_a_body_that_does_not_arrive_in_time_closes_the_connection(contract) -> None:
    with running(contract, body_timeout=1.0) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as s:
            s.sendall(b"POST /GetTeacherGroups.asmx/GetTeacherGrpupsByID HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\n"
                      b"Content-Length: 1000\r\n\r\nT")
            assert s.recv(65536) == b""  # closed by the server (no 60 s socket timeout)


def slow_bodies(url: str, count: int) -> list[socket.socket]:
    """``count`` connections that sent their headers and 1 byte of a 1,000-byte body."""
    host, port = url.removeprefix("http://").split(":")
    opened = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(True)
        s.settimeout(10)
        with contextlib.suppress(OSError):
            s.connect((host, int(port)))
            s.sendall(b"POST /GetTeacherGroups.asmx/GetTeacherGrpupsByID HTTP/1.1\r\n"
                      b"Host: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                      b"Content-Length: 1000\r\n\r\nT")
        opened.append(s)
    return opened


@contextlib.contextmanager
def serve_at_fd_limit_1024() -> object:
    """``harness serve`` in a child whose file descriptor limit is 1,024; its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                                  (1024, 1024)))
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = line.split(" on ", 1)[1].split()[0]
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_2000_slow_bodies_do_not_lock_normal_clients_out() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 2200:
        pytest.skip("this test process needs 2,200 file descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2200), hard))
    try:
        with serve_at_fd_limit_1024() as url:
            attackers = slow_bodies(url, 2000)
            try:
                statuses = []
                with httpx.Client(trust_env=False, timeout=20) as client:
                    for _ in range(101):
                        try:
                            statuses.append(client.get(url + CALL,
                                                       headers={"Connection": "close"}
                                                       ).status_code)
                        except httpx.HTTPError as exc:
                            statuses.append(type(exc).__name__)
            finally:
                for s in attackers:
                    s.close()
        assert statuses == [200] * 101
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
