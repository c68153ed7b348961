"""The one exchange model: an HTTP request, its response, and where they came from.

Capture writes it, recordings and HAR files hold it, lint and replay judge it, diff compares it.
The HTTP types themselves live at the ground (``harness.http_messages``, below the contract,
which builds requests); they are imported here too, where an exchange's users have always
found them.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.http_messages import (  # noqa: F401 (re-exported: the exchange's own vocabulary)
    Headers,
    HttpRequest,
    HttpResponse,
    content_type_params,
    header_value,
    header_values,
    media_type,
    normalise_content_type,
    replace_header,
)
from harness.traffic.bounds import MAX_HEADERS, check_headers


@dataclass
class Exchange:
    """One request and its response (None when none came back), plus bookkeeping."""

    request: HttpRequest
    response: HttpResponse | None
    #: Position in its recording (1-based), or None for generated traffic.
    index: int | None = None
    #: Where it came from: a recording path, a target URL, "generated".
    source: str = ""
    #: Timings in seconds since the epoch / durations: started, duration, ...
    timings: dict[str, float] = field(default_factory=dict)
    #: Free-form extra data (capture: classification summary, "foreign" marker, error text).
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def client(self) -> str | None:
        """The client as it names itself (User-Agent), to tell app builds apart."""
        return self.request.header("User-Agent")

    # -- serialisation shared by recordings (JSON Lines) ---------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"request": _request_dict(self.request)}
        data["response"] = _response_dict(self.response) if self.response else None
        if self.timings:
            data["timings"] = self.timings
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, index: int | None = None,
                  source: str = "") -> Exchange:
        req = data["request"]
        # (by position: a call by keywords unpacks them into a dict first, ~3 an exchange)
        request = HttpRequest(req["method"], req["url"],
                              _headers(req.get("headers", ()), "request"),
                              decode_body(req.get("body")), req.get("http_version", "HTTP/1.1"))
        resp = data.get("response")
        response = None if resp is None else response_from_dict(resp)
        timings, meta = data.get("timings"), data.get("meta")
        return cls(request, response, index, source, dict(timings) if timings else {},
                   dict(meta) if meta else {})


def response_from_dict(resp: Mapping[str, Any]) -> HttpResponse:
    """A response as recordings hold it (``response_dict``)."""
    return HttpResponse(int(resp["status"]), _headers(resp.get("headers", ()), "response"),
                        decode_body(resp.get("body")), resp.get("reason", ""),
                        resp.get("http_version", "HTTP/1.1"))


def response_dict(response: HttpResponse) -> dict[str, Any]:
    """A response as recordings hold it: also a mirrored answer in ``meta.shadow``."""
    return _response_dict(response)


def encode_body(body: bytes) -> dict[str, str] | None:
    """A body as JSON: UTF-8 text when it is, base64 otherwise; byte-exact either way."""
    if not body:
        return None
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii")}


def decode_body(data: Mapping[str, str] | None) -> bytes:
    if not data:
        return b""
    if "base64" in data:
        return base64.b64decode(data["base64"])
    return data["text"].encode("utf-8")


def _headers(pairs: Iterable[Iterable[str]], role: str) -> Headers:
    headers = tuple([(str(k), str(v)) for k, v in pairs])  # a list first: inlined
    if len(headers) > MAX_HEADERS:  # their bytes: checked by load_line on a long line
        check_headers(headers, role)
    return headers


# Headers stay tuples of pairs: every JSON encoder writes them as the lists they read back as,
# without a list per header first (capture writes a line per exchange).


def _request_dict(r: HttpRequest) -> dict[str, Any]:
    return {"method": r.method, "url": r.url, "http_version": r.http_version,
            "headers": r.headers, "body": encode_body(r.body)}


def _response_dict(r: HttpResponse) -> dict[str, Any]:
    return {"status": r.status, "reason": r.reason, "http_version": r.http_version,
            "headers": r.headers, "body": encode_body(r.body)}
