"""SIGTERM and SIGINT stop ``harness serve`` and ``harness mock`` whatever the clients do
(issue 35 item 5): a client half-way through its body, one that sends request after request
and never reads an answer, a call whose recorded latency is 1e12 s. The stop cut the body
short only when uvicorn's graceful wait ran out, and then cancelled the app with an ASGI
traceback on stderr; a CI runner cancelling with SIGTERM gives a few seconds.

Real processes started with the default signal dispositions (a background job of a
non-interactive shell would ignore SIGINT); no timing assertion but a generous bound on
'stopped at all'. bench/bench_stop.py prints how long each stop takes.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from traffic import with_recorded_duration

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"
#: Generous bounds: a server that never says its URL, or never stops.
START_TIMEOUT = 60
STOP_TIMEOUT = 30
SOAP_CALL = (b"POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\n"
             b"Content-Type: text/xml; charset=utf-8\r\n"
             b'SOAPAction: "http://tempuri.org/GetTokenDevice"\r\n')


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def started(args: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``harness ARGS`` (serve or mock on port 0) and its URL once it says it."""
    child = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_signals)
    try:
        assert child.stderr is not None
        url = None
        timer = threading.Timer(START_TIMEOUT, child.kill)
        timer.start()
        for line in child.stderr:
            if found := re.search(r"http://127\.0\.0\.1:\d+", line):
                url = found.group(0)
                break
        timer.cancel()
        assert url, f"harness {args[0]} did not start"
        yield child, url
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


def stopped_by(child: subprocess.Popen[str], sig: int) -> tuple[int, str, str]:
    """Send ``sig``; (exit status, stdout, the rest of stderr) once the child has ended."""
    child.send_signal(sig)
    out, err = child.communicate(timeout=STOP_TIMEOUT)
    return child.returncode, out, err


def half_sent_body(url: str) -> socket.socket:
    """A SOAP call whose headers promise 1,000 bytes of body, of which 5 are sent."""
    s = socket.create_connection(_address(url))
    s.sendall(SOAP_CALL + b"Content-Length: 1000\r\n\r\n<soap")
    return s


def never_reading(url: str) -> socket.socket:
    """Requests for the WSDL sent back to back until the server stops reading them, their
    answers never read."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(_address(url))
    s.setblocking(False)
    request = b"GET /PushNotificationMobile.asmx?WSDL HTTP/1.1\r\nHost: x\r\n\r\n"
    with contextlib.suppress(BlockingIOError):
        for _ in range(20_000):
            s.send(request)
    return s


def answered_once(url: str) -> None:
    """Once the mock has found the answer to one call (its admin API says so)."""
    deadline = time.monotonic() + START_TIMEOUT
    while not httpx.get(f"{url}/__harness/summary", trust_env=False).json()["answered"]:
        assert time.monotonic() < deadline, "the call never came in"
        time.sleep(0.05)


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def assert_quiet(err: str) -> None:
    assert "Traceback" not in err and "ERROR" not in err, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("command", [["serve", "--port", "0"],
                                     ["mock", str(SAMPLE), "--port", "0", "--quiet"]],
                         ids=lambda argv: argv[0])
def test_a_stop_waits_for_no_client(command: list[str], sig: int) -> None:
    with started(command) as (child, url):
        body, reader = half_sent_body(url), never_reading(url)
        with body, reader:
            # the server holds both connections: the body is awaited, the answers pile up
            assert httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice?id=A10",
                             trust_env=False).status_code == 200  # as recorded: A10
            code, _out, err = stopped_by(child, sig)
    assert code in (0, 128 + sig), err
    assert_quiet(err)


def test_a_recorded_latency_of_1e12_seconds_does_not_hold_the_stop(tmp_path: Path) -> None:
    recording = with_recorded_duration(SAMPLE, tmp_path / "slow.jsonl", 1e12)
    with started(["mock", str(recording), "--port", "0", "--latency", "recorded",
                  "--quiet"]) as (child, url):
        waiting = socket.create_connection(_address(url))
        with waiting:
            waiting.sendall(b"GET /GetTeacherGroups.asmx/GetTeacherGrpupsByID?Tid=A10 "
                            b"HTTP/1.1\r\nHost: x\r\n\r\n")
            answered_once(url)  # the answer waits its recorded latency
            code, out, err = stopped_by(child, signal.SIGINT)
            assert waiting.recv(65536) == b""  # closed, nothing sent
    assert code in (0, 130), err
    assert "took 1e+12 s by its timings: answered after 3600 s" in err, err
    assert "latency (recorded) GetTeacherGrpupsByID: p50 3.6e+06 ms" in out, out
    assert_quiet(err)
