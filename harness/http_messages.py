"""HTTP messages as the harness holds them: a request, a response, their headers.

The ground every room stands on: the contract builds requests and reads responses
(``contract.bindings``), traffic sends, records and redacts them, the judges judge them.
Headers keep their order and original case; bodies are raw bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from urllib.parse import urlsplit

from harness.frozen import frozen

Headers = tuple[tuple[str, str], ...]


def header_value(headers: Headers, name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), or None."""
    wanted = name.lower()
    for key, value in headers:  # a plain loop: called several times per judged exchange
        if key.lower() == wanted:
            return value
    return None


def _first_values(message: HttpRequest | HttpResponse) -> dict[str, str]:
    """The message's headers as lower-cased name -> first value, made on its first lookup and
    kept on it (a judged exchange looks up ~8 headers: one pass instead of one each)."""
    found = message.__dict__.get(_FIRST_VALUES)
    if found is None:
        found = {}
        for key, value in message.headers:
            found.setdefault(key.lower(), value)
        message.__dict__[_FIRST_VALUES] = found  # not a field: equality, hash, repr ignore it
    return found


_FIRST_VALUES = "_first_values"


def _state(message: HttpRequest | HttpResponse) -> dict[str, object]:
    """What a message pickles: its fields, not the lookup table made from them."""
    state = message.__dict__
    return {k: v for k, v in state.items() if k != _FIRST_VALUES} if _FIRST_VALUES in state \
        else state


def header_values(headers: Headers, name: str) -> list[str]:
    wanted = name.lower()
    return [v for k, v in headers if k.lower() == wanted]


def replace_header(headers: Headers, name: str, value: str | None) -> Headers:
    """``headers`` with every ``name`` header removed and, unless value is None, one set in the
    place of the first."""
    wanted = name.lower()
    out: list[tuple[str, str]] = []
    placed = value is None
    for k, v in headers:
        if k.lower() != wanted:
            out.append((k, v))
        elif not placed:
            out.append((k, value))  # type: ignore[arg-type]
            placed = True
    if not placed:
        out.append((name, value))  # type: ignore[arg-type]
    return tuple(out)


#: What HTTP/1.1 cannot carry: in a header name, any character of no token (RFC 9110 5.1); in
#: a value, a control character (a CR or LF would end the header and start another one).
_NOT_TOKEN = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_CHARACTERS = {" ": "a space", "\r": "a line break (CR)", "\n": "a line break (LF)",
               "\t": "a tab", ":": "a colon", "\x00": "a NUL character"}


def header_problem(name: str, value: str) -> str | None:
    """Why HTTP/1.1 cannot send the header ``name: value`` as it is (a few words), or None."""
    if not name:
        return "an empty header name"
    bad = _NOT_TOKEN.search(name)
    if bad:
        return f"header {name!r}: {_CHARACTERS.get(bad.group(), repr(bad.group()))} in its name"
    bad = _CONTROL.search(value)
    if bad:
        return f"header {name}: {_CHARACTERS.get(bad.group(), repr(bad.group()))} in its value"
    return None


def headers_problem(headers: Iterable[tuple[str, str]]) -> str | None:
    """The first of ``headers``' problems (``header_problem``), or None."""
    for name, value in headers:
        if (problem := header_problem(name, value)) is not None:
            return problem
    return None


def status_problem(status: int) -> str | None:
    """Why ``status`` cannot be sent as an HTTP status (RFC 9110 15: 100 to 599), or None."""
    return None if 100 <= status <= 599 else f"status {status} is no HTTP status (100-599)"


# The two readings of a Content-Type below are pure functions of a text that takes a handful
# of values in any traffic, read several times per judged exchange: each is kept for the last
# 256 texts (bounded: a recording of a million distinct values costs no more memory).


@lru_cache(maxsize=256)
def media_type(content_type: str | None) -> str | None:
    """``text/xml; charset=UTF-8`` -> ``text/xml``."""
    if content_type is None:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


@lru_cache(maxsize=256)
def charset(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type as written (quotes stripped), or None."""
    return content_type_params(content_type).get("charset")


def content_type_params(content_type: str | None) -> dict[str, str]:
    """Parameters of a Content-Type, names lowercased, quotes stripped."""
    params: dict[str, str] = {}
    for part in (content_type or "").split(";")[1:]:
        key, sep, value = part.partition("=")
        if sep:
            params[key.strip().lower()] = value.strip().strip('"')
    return params


def normalise_content_type(content_type: str | None) -> str | None:
    """Media type plus charset, lowercased: the form two Content-Types are compared in."""
    media = media_type(content_type)
    if media is None:
        return None
    charset = content_type_params(content_type).get("charset")
    return f"{media}; charset={charset.lower()}" if charset else media


@frozen
class HttpRequest:
    method: str
    url: str  # absolute URL: scheme://host[:port]/path?query
    headers: Headers = ()
    body: bytes = b""
    http_version: str = "HTTP/1.1"

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        table = self.__dict__.get(_FIRST_VALUES)  # (``_first_values``, inlined: ~8 a message)
        return (table if table is not None else _first_values(self)).get(name.lower())

    __getstate__ = _state

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> str:
        return urlsplit(self.url).query

    @property
    def target(self) -> str:
        """Origin-form request target: path plus query."""
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    @property
    def content_type(self) -> str | None:
        return self.header("Content-Type")

    def with_header(self, name: str, value: str | None) -> HttpRequest:
        return replace(self, headers=replace_header(self.headers, name, value))


@frozen
class HttpResponse:
    status: int
    headers: Headers = ()
    body: bytes = b""
    reason: str = ""
    http_version: str = "HTTP/1.1"

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        table = self.__dict__.get(_FIRST_VALUES)  # (``_first_values``, inlined: ~8 a message)
        return (table if table is not None else _first_values(self)).get(name.lower())

    __getstate__ = _state

    @property
    def content_type(self) -> str | None:
        return self.header("Content-Type")
