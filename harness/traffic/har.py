"""HAR 1.2 (HTTP Archive), both ways.

``write_har`` exports exchanges as HAR 1.2 that Chrome DevTools, Charles and Fiddler open;
``read_har`` reads HAR 1.2 from any of them, from mitmproxy's ``savehar`` (also its
zlib-compressed ``.zhar``) and from our own exports, as Exchanges.

Bodies stay byte-exact through an export and re-import: a body is written as text when it
decodes in the charset its Content-Type names (UTF-8 when none) and encodes back to the same
bytes, and as base64 otherwise (``content.encoding: "base64"`` for responses, and a custom
``postData._encoding: "base64"`` for requests, which HAR 1.2 has no field for). Headers keep
their order and case. Our own fields (recording index, classification) go in ``_harness``, a
custom field that HAR viewers ignore.

Reading: a HAR file is one JSON object, parsed as a stream (ijson) at most ``MAX_HAR_BYTES``
(a ``.zhar`` at most ``MAX_INFLATED`` inflated, checked as it inflates): one entry is built at
a time, within the bounds of ``harness.traffic.bounds`` (an entry of 10 million headers is
passed over without being built, and refused by name), and yielded as an exchange; a broken or
refused entry is skipped and named as a broken line of a recording is.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import ijson

from harness import __version__
from harness.errors import RecordingError
from harness.traffic.bounds import MAX_DEPTH, Builder, Refused, check_headers, skip
from harness.traffic.exchange import (
    Exchange,
    Headers,
    HttpRequest,
    HttpResponse,
    content_type_params,
    header_value,
    header_values,
    replace_header,
)

HAR_VERSION = "1.2"
CREATOR = "asmx-harness"


# ------------------------------------------------------------------------------------ write


def write_har(exchanges: Iterable[Exchange], path: str | Path, *,
              comment: str = "") -> int:
    """Write ``exchanges`` to ``path`` as HAR 1.2, entry by entry; returns the entry count.

    Written to a temporary file first and renamed at the end: a failure half-way (a broken
    input) never leaves a truncated HAR behind.
    """
    path = Path(path)
    partial = path.with_name(path.name + ".part")
    try:
        with partial.open("w", encoding="utf-8") as f:
            count = _write(exchanges, f, comment)
        os.replace(partial, path)
        return count
    except OSError as exc:
        raise RecordingError(f"cannot write HAR {path}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)


def _write(exchanges: Iterable[Exchange], f: IO[str], comment: str) -> int:
    head = {"version": HAR_VERSION,
            "creator": {"name": CREATOR, "version": __version__, "comment": comment},
            "pages": []}
    f.write(json.dumps({"log": head}, ensure_ascii=False)[:-2] + ', "entries": [\n')
    count = 0
    for exchange in exchanges:
        if count:
            f.write(",\n")
        f.write(json.dumps(har_entry(exchange), ensure_ascii=False))
        count += 1
    f.write("\n]}}\n")
    return count


def har_entry(exchange: Exchange) -> dict[str, Any]:
    """One HAR 1.2 entry for ``exchange``."""
    t = exchange.timings
    send, wait, receive = (_ms(t.get(k)) for k in ("send", "wait", "receive"))
    total = _ms(t.get("duration")) if "duration" in t else send + wait + receive
    entry: dict[str, Any] = {
        "startedDateTime": _iso(t.get("started")),
        "time": total,
        "request": _request(exchange.request),
        "response": _response(exchange.response, exchange.meta),
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1,
                    "send": send, "wait": wait, "receive": receive},
    }
    # Always present: it marks the entry as ours (bodies as on the wire, exact timings).
    entry["_harness"] = {"index": exchange.index, "meta": exchange.meta,
                         "timings": exchange.timings}
    return entry


def _request(r: HttpRequest) -> dict[str, Any]:
    data: dict[str, Any] = {
        "method": r.method, "url": r.url, "httpVersion": r.http_version,
        "cookies": _cookies(header_values(r.headers, "Cookie")),
        "headers": _headers(r.headers),
        "queryString": [{"name": k, "value": v}
                        for k, v in parse_qsl(urlsplit(r.url).query, keep_blank_values=True)],
        "headersSize": -1,
        "bodySize": len(r.body),
    }
    if r.body or r.method not in ("GET", "HEAD"):
        text, encoding = _text(r.body, r.content_type)
        post: dict[str, Any] = {"mimeType": r.content_type or "", "text": text}
        if encoding:
            post["_encoding"] = encoding
        data["postData"] = post
    return data


def _response(r: HttpResponse | None, meta: Mapping[str, Any]) -> dict[str, Any]:
    if r is None:  # no response came back: the shape mitmproxy's savehar uses
        return {"status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": {"size": 0, "mimeType": ""}, "redirectURL": "",
                "headersSize": -1, "bodySize": -1, "_error": meta.get("error")}
    text, encoding = _text(r.body, r.content_type)
    content: dict[str, Any] = {"size": len(r.body), "mimeType": r.content_type or "",
                               "text": text}
    if encoding:
        content["encoding"] = encoding
    return {"status": r.status, "statusText": r.reason, "httpVersion": r.http_version,
            "cookies": _cookies(header_values(r.headers, "Set-Cookie"), response=True),
            "headers": _headers(r.headers), "content": content,
            "redirectURL": r.header("Location") or "", "headersSize": -1,
            "bodySize": len(r.body)}


def _text(body: bytes, content_type: str | None) -> tuple[str, str | None]:
    """(text, None) when the body round-trips through its charset, else (base64, "base64")."""
    charset = _charset(content_type)
    try:
        text = body.decode(charset)
        if text.encode(charset) == body:
            return text, None
    except (UnicodeError, LookupError):
        pass
    return base64.b64encode(body).decode("ascii"), "base64"


def _charset(content_type: str | None) -> str:
    charset = content_type_params(content_type).get("charset") or "utf-8"
    try:
        "".encode(charset)
    except LookupError:
        return "utf-8"
    return charset


def _headers(headers: Headers) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in headers]


def _cookies(values: list[str], *, response: bool = False) -> list[dict[str, Any]]:
    cookies: list[dict[str, Any]] = []
    for value in values:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value)
        except CookieError:
            continue
        for name, morsel in jar.items():
            cookie: dict[str, Any] = {"name": name, "value": morsel.value}
            if response:
                cookie.update(path=morsel["path"] or "/", domain=morsel["domain"],
                              httpOnly=bool(morsel["httponly"]), secure=bool(morsel["secure"]))
            cookies.append(cookie)
    return cookies


def _ms(seconds: float | None) -> float:
    return round(seconds * 1000, 3) if seconds is not None and seconds >= 0 else 0.0


def _iso(epoch: float | None) -> str:
    moment = datetime.fromtimestamp(epoch, UTC) if epoch else datetime.now(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ------------------------------------------------------------------------------------- read


def read_har(path: str | Path, *, skip_broken: bool = True,
             on_broken: Callable[[Path, int, str], None] | None = None) -> Iterator[Exchange]:
    """Every entry of the HAR file at ``path`` as an Exchange (index 1-based over the entries
    read, source = path), parsed as a stream: one entry is built at a time.

    A file that is not HAR 1.x is a one-line RecordingError. A broken entry (no request,
    headers that are not a list, bad base64, a status that is no number...) or one over the
    bounds of ``harness.traffic.bounds`` (too many headers...) is skipped and reported through
    ``on_broken(path, entry_number, reason)``, as a broken line of a recording is; with
    ``skip_broken=False`` it is a RecordingError.
    """
    path = Path(path)
    index = 0
    for number, entry in _entries(path):
        try:
            if isinstance(entry, Refused):
                raise entry
            exchange = exchange_from_entry(entry, index=index + 1, source=str(path))
        except Refused as exc:
            reason = f"{path}: HAR entry {number} is refused: {exc}"
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            reason = (f"{path}: HAR entry {number} is broken "
                      f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
        else:
            index += 1
            yield exchange
            continue
        if not skip_broken:
            raise RecordingError(reason) from None
        if on_broken:
            on_broken(path, number, reason)


#: A HAR file of more than this is refused with one line (recordings that big belong in JSON
#: Lines, which every reader reads line by line and can index).
MAX_HAR_BYTES = 256 << 20
#: One entry of more than this is refused (as a recording line over MAX_LINE_BYTES is).
MAX_ENTRY_BYTES = 64 << 20


def _entries(path: Path) -> Iterator[tuple[int, Any]]:
    """(number, entry) of every entry of ``log.entries``, built one at a time from the stream
    of the file's bytes (inflated as they come for a .zhar); an entry over a bound comes as a
    ``Refused`` in its place, without having been built whole."""
    try:
        f = path.open("rb")
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    with f:
        head = f.read(1)
        zipped = head == b"\x78" or path.suffix.lower() == ".zhar"  # mitmproxy's zlib HAR
        try:
            yield from _walk(path, _inflated(path, head, f) if zipped
                             else _plain(path, head, f))
        except OSError as exc:
            raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None


def _plain(path: Path, head: bytes, f: IO[bytes]) -> Iterator[bytes]:
    size, piece = 0, head + f.read(_STEP)
    while piece:
        size += len(piece)
        if size > MAX_HAR_BYTES:
            raise RecordingError(f"{path} is larger than {MAX_HAR_BYTES >> 20} MiB: a HAR file "
                                 "is one JSON document; record JSON Lines instead")
        yield piece
        piece = f.read(_STEP)


#: A .zhar inflates to at most this much: a small file must not become unbounded work.
MAX_INFLATED = 256 << 20
#: Compressed bytes read, and inflated bytes made, per step: the caps are checked as it streams.
_STEP = 1 << 20


def _inflated(path: Path, head: bytes, f: IO[bytes]) -> Iterator[bytes]:
    """A .zhar's HAR text, inflated step by step and refused as soon as it passes
    MAX_INFLATED; a file that is not zlib data is read as it is (within MAX_HAR_BYTES)."""
    inflater = zlib.decompressobj()
    made = 0
    pending = head + f.read(_STEP)
    while pending:
        try:
            piece = inflater.decompress(pending, _STEP)
        except zlib.error:
            if made:
                raise RecordingError(f"{path}: broken zlib data after {made} bytes") from None
            f.seek(0)
            yield from _plain(path, f.read(1), f)
            return
        made += len(piece)
        if made > MAX_INFLATED:
            raise RecordingError(f"{path} inflates to more than {MAX_INFLATED >> 20} MiB")
        if piece:
            yield piece
        pending = inflater.unconsumed_tail or (b"" if inflater.eof else f.read(_STEP))


def _walk(path: Path, pieces: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
    events = ijson.sendable_list()
    parser = ijson.basic_parse_coro(events, use_float=True)
    walker = _Walker(path)
    quiet = 0  # bytes given since the last event: one value (a string) as long as that
    try:
        for piece in _slices(pieces):
            parser.send(piece)
            if events:
                quiet = 0
                yield from walker.take(events)
                del events[:]
            else:
                quiet += len(piece)
                if quiet > MAX_ENTRY_BYTES:
                    raise RecordingError(
                        f"{path}: HAR entry {walker.number} holds a value longer than "
                        f"{MAX_ENTRY_BYTES >> 20} MiB; it and the entries after it are not "
                        "read")
            walker.fed(len(piece))
        parser.close()
    except ijson.JSONError as exc:
        raise RecordingError(f"{path} is neither a harness recording nor a HAR file "
                             f"(not JSON: {_first_line(str(exc))[:120]})") from None
    yield from walker.take(events)
    walker.finish()


#: Bytes given to the parser at once: the events they make are held until walked (~6 per
#: tiny header: 64 KiB make ~16,000).
_FEED = 64 << 10


def _slices(pieces: Iterable[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        for at in range(0, len(piece), _FEED):
            yield piece[at:at + _FEED]


class _Walker:
    """Walks the document's events: keeps ``log.version``, builds each entry of
    ``log.entries`` within the bounds and passes over everything else without building it."""

    _KEPT = ((), ("log",), ("log", "entries"))  # the containers walked into (not skipped)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.number = 0  # entries begun
        self.found = False  # log.entries met
        self._path: list[str] = []  # keys of the open containers outside any entry (the
        # top object first: its length is the depth)
        self._key = "item"
        self._entry: Builder | None = None
        self._entry_bytes = 0
        self._skip_to: int | None = None  # passing over a container until this depth
        self._depth = 0  # while passing over

    def fed(self, size: int) -> None:
        """``size`` more bytes went to the parser: count them against the current entry."""
        if self._entry is not None:
            self._entry_bytes += size
            if self._entry_bytes > MAX_ENTRY_BYTES and not self._entry.over:
                self._entry.over = f"it is larger than {MAX_ENTRY_BYTES >> 20} MiB"

    def take(self, events: list[tuple[str, Any]]) -> Iterator[tuple[int, Any]]:
        at, end = 0, len(events)
        while at < end:
            if self._skip_to is not None:
                at, self._depth = skip(events, at, self._depth, self._skip_to)
                if self._depth == self._skip_to:
                    self._skip_to = None
                    if self._entry is not None:  # an entry over a bound, passed over
                        over, self._entry = self._entry.over, None
                        yield self.number, Refused(over)
                continue
            if self._entry is not None:
                entry = self._entry
                while at < end:
                    event, value = events[at]
                    at += 1
                    entry.event(event, value)
                    if entry.depth > MAX_DEPTH:
                        raise RecordingError(f"{self.path}: JSON nested too deeply to read")
                    if entry.over:
                        if entry.depth == 0:  # the event that went over closed the entry
                            self._entry = None
                            yield self.number, Refused(entry.over)
                        else:
                            self._entry = Builder()  # drop what was built; keep the reason
                            self._entry.over = entry.over
                            self._skip_to, self._depth = len(self._path), (len(self._path)
                                                                          + entry.depth)
                        break
                    if entry.depth == 0:
                        self._entry = None
                        yield self.number, entry.value
                        break
                continue
            event, value = events[at]
            at += 1
            yield from self._outside(event, value)

    def _outside(self, event: str, value: Any) -> Iterator[tuple[int, Any]]:
        where = tuple(self._path[1:])
        if where == ("log", "entries") and event not in ("end_array", "end_map"):
            self.number += 1
            self._entry, self._entry_bytes = Builder(), 0
            self._entry.event(event, value)
            if self._entry.depth == 0:  # an entry that is a bare value (a broken one)
                self._entry = None
                yield self.number, value
            return
        if event == "map_key":
            self._key = value
        elif event in ("start_map", "start_array"):
            inner = (*where, self._key) if self._path else ()
            if inner in self._KEPT and (event == "start_array") == (inner == ("log", "entries")):
                self._path.append(self._key)
                self.found = self.found or inner == ("log", "entries")
            else:  # anything else (pages, creator...) is passed over without building it
                self._skip_to, self._depth = len(self._path), len(self._path) + 1
        elif event in ("end_map", "end_array"):
            if self._path:
                self._path.pop()
        elif where == ("log",) and self._key == "version":
            version = str(value)
            if not version.startswith("1."):
                raise RecordingError(f"{self.path}: HAR version {version} is not supported "
                                     "(1.x is)")

    def finish(self) -> None:
        if not self.found:
            raise RecordingError(f"{self.path} is neither a harness recording nor a HAR file "
                                 "(no log.entries)")


def exchange_from_entry(entry: Mapping[str, Any], *, index: int | None = None,
                        source: str = "") -> Exchange:
    req = entry["request"]
    headers = _pairs(req.get("headers") or (), "request")
    request = HttpRequest(method=str(req["method"]).upper(), url=str(req["url"]),
                          headers=headers, body=_request_body(req, headers),
                          http_version=_version(req.get("httpVersion")))
    ours = entry.get("_harness")
    own = isinstance(ours, dict)
    ours = ours if own else {}
    meta = dict(ours.get("meta") or {})
    resp = entry.get("response") or {}
    response = None
    if int(resp.get("status") or 0) > 0:
        response = _response_from(resp, meta, own=own)
    elif resp.get("_error"):
        meta.setdefault("error", resp["_error"])
    timings = dict(ours.get("timings") or {}) if own else _timings(entry)
    return Exchange(request, response, index=index, source=source, timings=timings, meta=meta)


def _request_body(req: Mapping[str, Any], headers: Headers) -> bytes:
    post = req.get("postData")
    if not post:
        return b""
    content_type = header_value(headers, "Content-Type") or post.get("mimeType")
    if "text" in post and post["text"] is not None:
        return _body(post["text"], post.get("_encoding") or post.get("encoding"), content_type)
    params = post.get("params") or ()  # HAR allows params instead of text for forms
    return urlencode([(p["name"], p.get("value", "")) for p in params]).encode("ascii")


def _response_from(resp: Mapping[str, Any], meta: dict[str, Any], *, own: bool) -> HttpResponse:
    headers = _pairs(resp.get("headers") or (), "response")
    content = resp.get("content") or {}
    body = _body(content.get("text") or "", content.get("encoding"),
                 header_value(headers, "Content-Type") or content.get("mimeType"))
    coding = (header_value(headers, "Content-Encoding") or "").strip().lower()
    if not own and coding not in ("", "identity") and not _is_encoded(body, coding):
        # Browsers and most tools store the decoded body: say so rather than keep a
        # Content-Encoding the body no longer has.
        headers = replace_header(headers, "Content-Encoding", None)
        meta["har_decoded_body"] = coding
    return HttpResponse(int(resp["status"]), headers, body, str(resp.get("statusText") or ""),
                        _version(resp.get("httpVersion")))


def _is_encoded(body: bytes, coding: str) -> bool:
    if coding in ("gzip", "x-gzip"):
        return body[:2] == b"\x1f\x8b"
    if coding == "deflate":
        return body[:1] == b"\x78"
    return False


def _body(text: str, encoding: str | None, content_type: str | None) -> bytes:
    if encoding == "base64":
        return base64.b64decode(text)
    charset = _charset(content_type)
    try:
        return text.encode(charset)
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _pairs(items: Iterable[Mapping[str, Any]], role: str) -> Headers:
    pairs = tuple((str(h["name"]), str(h.get("value", ""))) for h in items)
    check_headers(pairs, role)
    return pairs


def _version(text: Any) -> str:
    text = str(text or "HTTP/1.1")
    return "HTTP/2.0" if text.lower() in ("h2", "http/2") else text.upper()


def _timings(entry: Mapping[str, Any]) -> dict[str, float]:
    t = entry.get("timings") or {}
    out: dict[str, float] = {}
    started = entry.get("startedDateTime")
    if started:
        with contextlib.suppress(ValueError):
            out["started"] = datetime.fromisoformat(str(started).replace("Z", "+00:00")
                                                    ).timestamp()
    for key in ("send", "wait", "receive"):
        value = t.get(key)
        if isinstance(value, int | float) and value >= 0:
            out[key] = value / 1000
    if isinstance(entry.get("time"), int | float):
        out["duration"] = entry["time"] / 1000
    return out


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
