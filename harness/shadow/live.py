"""The live view: a small page on 127.0.0.1 that a QA lead leaves open during a migration.

Differences by cause (counts, where, rules) with an example pair each (the request, the
primary's and the candidate's answers side by side), what was not compared and why, refreshed
every two seconds from ``data.json``. Served by the worker process from a thread of its own
(stdlib ``http.server``): off the proxy's event loop, so the page costs the clients nothing.

Why not mitmweb (what ``capture --web`` shows): it lists flows one by one, each with the one
answer the client got; it knows no candidate answer, no cause, no count, and every flow it
shows costs CPU on the proxy's event loop, which is what the clients wait on.

Access: loopback only, and every data request carries the token printed at start (``?token=``;
compared in constant time; 403 without it). The Host header must name the loopback address
(no DNS rebinding). The page loads nothing from the network (its own script and style, a
Content-Security-Policy that allows nothing else) and never puts an answer's text into the
page as markup. The examples show the answers as the services gave them (credential headers
redacted), as ``harness diff``'s reports do: the page shows live traffic, personal data
included (in memory only).
"""

from __future__ import annotations

import hmac
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.shadow.page import APP_CSS, APP_JS, INDEX_HTML

HOST = "127.0.0.1"
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; "
                               "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",  # the token is in the URL
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
_STATIC = {"/app.js": ("text/javascript; charset=utf-8", APP_JS),
           "/app.css": ("text/css; charset=utf-8", APP_CSS)}


class LiveView:
    """Serves ``snapshot()`` (JSON data) and the page on 127.0.0.1:``port`` (0: a free one)."""

    def __init__(self, port: int, token: str, snapshot: Callable[[], dict[str, Any]]) -> None:
        view = self

        class Handler(_Handler):
            live = view

        self.token = token
        self.snapshot = snapshot
        self.server = ThreadingHTTPServer((HOST, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://{HOST}:{self.port}/?token={token}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="live-view",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    live: LiveView
    server_version = "harness-shadow"
    sys_version = ""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if not self._local_host():
            self._send(421, "text/plain; charset=utf-8", b"wrong Host\n")
        elif parts.path in _STATIC:  # the code of the page, no data
            kind, body = _STATIC[parts.path]
            self._send(200, kind, body.encode())
        elif not self._authorised(parts.query):
            self._send(403, "text/plain; charset=utf-8",
                       b"harness shadow: open the URL with the token shadow printed\n")
        elif parts.path == "/":
            self._send(200, "text/html; charset=utf-8", INDEX_HTML.encode())
        elif parts.path == "/data.json":
            data = json.dumps(self.live.snapshot(), ensure_ascii=False).encode()
            self._send(200, "application/json", data)
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found\n")

    def _authorised(self, query: str) -> bool:
        given = parse_qs(query).get("token", [""])[0]
        return hmac.compare_digest(given.encode(), self.live.token.encode())

    def _local_host(self) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower()
        return host in ("127.0.0.1", "localhost", "::1", "")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in _HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the console is the report's
