"""Sending a request (recorded or built) to a live target: the one sender of replay and diff.

``retarget`` moves a request to another base URL (scheme, host, port and the path prefix before
the ``.asmx`` segment; ``Host`` follows) and keeps its body bytes and other headers as they are;
``send`` sends it with httpx exactly as given (no default headers added) and returns the
harness's HttpResponse; ``check_reachable`` fails early with one line when a target is down.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

import httpx

from harness.errors import TargetUnreachable, UsageError
from harness.traffic.exchange import HttpRequest, HttpResponse, replace_header

#: Headers that describe one connection, not the message: never forwarded (RFC 9110 7.6.1).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"})
DEFAULT_TIMEOUT = 30.0


def base_url(url: str) -> str:
    """``url`` checked as an absolute http(s) base URL, without a trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{url!r} is not an absolute http:// or https:// URL")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def retarget(request: HttpRequest, base: str) -> HttpRequest:
    """``request`` addressed to ``base`` (e.g. ``https://new.example/School``).

    The recorded path keeps its part from the ``.asmx`` segment on; what came before it (the
    old deployment's prefix) is replaced by the base URL's path. Body bytes and the other headers
    are unchanged, except that hop-by-hop headers are dropped and a Content-Length is kept true.
    """
    target = urlsplit(base_url(base))
    parts = urlsplit(request.url)
    segments = parts.path.split("/")
    at = next((i for i, s in enumerate(segments) if s.lower().endswith(".asmx")), None)
    tail = "/".join(segments[at:]) if at is not None else parts.path.lstrip("/")
    path = f"{target.path}/{tail}"
    url = urlunsplit((target.scheme, target.netloc, path, parts.query, ""))
    headers = tuple((k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP)
    headers = replace_header(headers, "Host", target.netloc)
    if request.header("Content-Length") is not None:
        headers = replace_header(headers, "Content-Length", str(len(request.body)))
    return HttpRequest(request.method, url, headers, request.body, request.http_version)


def client(timeout: float = DEFAULT_TIMEOUT, connections: int = 16) -> httpx.Client:
    """An httpx client that sends only the request's own headers (no User-Agent of its own)."""
    made = httpx.Client(timeout=timeout, follow_redirects=False, verify=True,
                        limits=httpx.Limits(max_connections=connections,
                                            max_keepalive_connections=connections))
    for name in list(made.headers):
        del made.headers[name]
    return made


def send(http: httpx.Client, request: HttpRequest) -> HttpResponse:
    """Send ``request`` as it is; TargetUnreachable (one line) when no answer comes back.

    The body comes back decoded (gzip/deflate undone), so Content-Encoding is dropped from the
    headers to keep the response self-consistent.
    """
    try:
        reply = http.request(request.method, request.url, headers=list(request.headers),
                             content=request.body or None)
    except httpx.TimeoutException:
        raise TargetUnreachable(f"{_origin(request.url)} did not answer {request.method} "
                                f"{urlsplit(request.url).path} in time") from None
    except httpx.HTTPError as exc:
        raise TargetUnreachable(f"{_origin(request.url)}: {_reason(exc)}") from None
    headers = tuple((k, v) for k, v in reply.headers.multi_items())
    if reply.headers.get("content-encoding"):
        headers = tuple((k, v) for k, v in headers
                        if k.lower() not in ("content-encoding", "content-length"))
    return HttpResponse(reply.status_code, headers, reply.content, reply.reason_phrase,
                        reply.http_version)


def check_reachable(url: str, timeout: float = 5.0) -> None:
    """Raise TargetUnreachable (one line) unless a TCP connection to ``url``'s host opens."""
    parts = urlsplit(base_url(url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            pass
    except OSError as exc:
        raise TargetUnreachable(f"{url} is unreachable: {_reason(exc)}") from None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())
