"""harness.traffic.send decodes bodies itself (bounded pieces, not httpx's decoders): each
content coding comes back as the bytes sent, a bomb in any of them stops at the cap, and the
deadline holds for a trickle. Real server: http.server on loopback."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import brotli
import pytest

from harness.errors import ResponseTooLarge
from harness.traffic.exchange import HttpRequest
from harness.traffic.send import Sender, SendOptions

BODY = b"<string xmlns='http://tempuri.org/'>" + b"ok " * 5000 + b"</string>"
ZEROS = b"\0" * (64 << 20)
CODED = {
    "gzip": lambda b: gzip.compress(b),
    "x-gzip": lambda b: gzip.compress(b),
    "deflate": zlib.compress,
    "br": brotli.compress,
    "gzip, br": lambda b: brotli.compress(gzip.compress(b)),
}


def raw_deflate(body: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(body) + packer.flush()


class Handler(BaseHTTPRequestHandler):
    routes: dict[str, tuple[str, bytes]] = {}

    def do_GET(self) -> None:
        coding, body = self.routes[self.path]
        self.send_response(200)
        self.send_header("Content-Type", "text/xml; charset=utf-8")
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    routes = {f"/{i}": (coding, pack(BODY)) for i, (coding, pack) in enumerate(CODED.items())}
    routes["/raw-deflate"] = ("deflate", raw_deflate(BODY))
    routes["/unknown"] = ("zstd-ish", b"opaque")
    routes["/br-bomb"] = ("br", brotli.compress(ZEROS))
    routes["/deflate-bomb"] = ("deflate", zlib.compress(ZEROS, 9))
    Handler.routes = routes
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def get(url: str, options: SendOptions | None = None):
    with Sender(options or SendOptions(timeout=10)) as sender:
        return sender.send(HttpRequest("GET", url, (("Host", url.split("/")[2]),)))


@pytest.mark.parametrize("path", [f"/{i}" for i in range(len(CODED))] + ["/raw-deflate"])
def test_every_coding_comes_back_as_sent(server, path):
    response = get(server + path)
    assert response.body == BODY
    assert response.header("Content-Encoding") is None  # the body is decoded now


def test_an_unknown_coding_is_kept_as_sent(server):
    response = get(server + "/unknown")
    assert response.body == b"opaque" and response.header("Content-Encoding") == "zstd-ish"


@pytest.mark.parametrize("path", ["/br-bomb", "/deflate-bomb"])
def test_a_bomb_stops_at_the_cap(server, path):
    with pytest.raises(ResponseTooLarge, match="larger than 1 MB"):
        get(server + path, SendOptions(timeout=10, max_response_mb=1))
