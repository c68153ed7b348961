"""A loopback HTTP server that notes when each request arrives, to measure the rate a target
actually sees (tests/test_pacing.py, bench/bench_pacing.py):

    with listening(delay=0.02) as server:   # answers an empty 200 after 20 ms
        replay([...], contract, server.url, rate=8)
    achieved(server.times)                  # requests per second, first to last arrival
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Arrivals(ThreadingHTTPServer):
    """Answers every request with an empty 200 after ``delay`` seconds; notes arrival times."""

    daemon_threads = True

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.times: list[float] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Arrivals

    def _answer(self) -> None:
        with self.server.lock:
            self.server.times.append(time.monotonic())
        if length := int(self.headers.get("Content-Length") or 0):
            self.rfile.read(length)
        if self.server.delay:
            time.sleep(self.server.delay)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def listening(delay: float = 0.0) -> Iterator[Arrivals]:
    """An Arrivals server on a free loopback port, serving in a thread until the block ends."""
    server = Arrivals(delay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def achieved(times: list[float]) -> float:
    """Requests per second between the first and the last arrival."""
    times = sorted(times)
    return (len(times) - 1) / (times[-1] - times[0])
