"""What one recorded exchange may hold, whatever file it comes from (a JSON line of a recording,
an entry of a HAR or .zhar file): a bound on its JSON values, on its headers' count and on
their bytes, so that a small hostile file (10 million one-byte headers in one entry) costs one
line in the report, not gigabytes.

An exchange over a bound is refused with a ``Refused`` naming what is over it; every reader
reports it as it reports a broken line (``on_broken``), and reads on: the other exchanges are
unaffected. The bounds sit far above anything a real client or server sends (servers refuse a
request with more than ~100 headers or 8-64 KiB of them).

``Builder`` builds one JSON value from ijson's events within ``MAX_VALUES``; ``load_line``
decodes a recording's line with it when the line is long enough to be over a bound, and with
the fast decoder otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from operator import itemgetter
from typing import Any

import ijson

#: JSON values (objects, arrays, strings, numbers...) in one exchange: a real one holds ~100.
MAX_VALUES = 100_000
#: Headers in one request or response.
MAX_HEADERS = 2_000
#: Bytes of one request's or response's headers, names and values together.
MAX_HEADER_BYTES = 4 << 20
#: Containers nested deeper than this are broken JSON (no exchange nests past ~6).
MAX_DEPTH = 1000
#: A line shorter than this cannot hold MAX_VALUES values (each takes two bytes at least) nor
#: headers over MAX_HEADER_BYTES: it is decoded as it is, unchecked.
LONG_LINE = min(2 * MAX_VALUES, MAX_HEADER_BYTES)


class Refused(ValueError):
    """An exchange over one of the bounds; its message says which, e.g. "its request has
    2,500 headers (at most 2,000 are read)"."""


def check_headers(pairs: Sequence[Any], role: str) -> None:
    """Refused when ``pairs`` (a request's or response's headers, as (name, value) pairs)
    are more than MAX_HEADERS or hold more than MAX_HEADER_BYTES."""
    if len(pairs) > MAX_HEADERS:
        raise Refused(f"its {role} has {len(pairs):,} headers (at most {MAX_HEADERS:,} are "
                      "read)")
    size = sum(len(name) + len(value) for name, value in pairs)
    if size > MAX_HEADER_BYTES:
        raise Refused(f"its {role}'s headers hold {_mib(size)} (at most "
                      f"{_mib(MAX_HEADER_BYTES)} are read)")


def load_line(line: bytes, loads: Callable[[bytes], Any]) -> Any:
    """A recording line's JSON, decoded by ``loads``; a line that may be over a bound is
    built from ijson's events within them instead (Refused when it is over one)."""
    if not _may_be_over(line):
        return loads(line)
    data = build(ijson.basic_parse(line, use_float=True))
    for role in ("request", "response"):
        message = data.get(role) if isinstance(data, dict) else None
        headers = message.get("headers") if isinstance(message, dict) else None
        if isinstance(headers, list) and all(isinstance(h, list) and len(h) == 2
                                             and all(isinstance(s, str) for s in h)
                                             for h in headers):
            check_headers(headers, role)
    return data


def refused_line(line: bytes) -> str:
    """Why a recording line is over a bound ("" when it is not), without decoding one that
    cannot be (a reader's parent checks a long line before handing it to a worker)."""
    if not _may_be_over(line):
        return ""
    try:
        load_line(line, _never)
    except Refused as exc:
        return str(exc)
    except (ValueError, KeyError, TypeError, RecursionError):
        return ""  # broken, not over a bound: the worker says how
    return ""


def _never(line: bytes) -> Any:
    raise AssertionError("load_line decodes a long line itself")


def _may_be_over(line: bytes) -> bool:
    """Whether ``line`` is long enough, and holds enough values, to be over a bound."""
    return len(line) > LONG_LINE and (len(line) > MAX_HEADER_BYTES
                                      or _values_at_most(line) >= MAX_VALUES)


def _values_at_most(line: bytes) -> int:
    """An upper bound of the JSON values in ``line``: each value but the first follows a
    comma or opens a container (commas and brackets inside strings only add to it)."""
    return line.count(b",") + line.count(b"[") + line.count(b"{") + 1


def build(events: Iterable[tuple[str, Any]]) -> Any:
    """The one JSON value of ``events`` (ijson's ``basic_parse``), Refused past MAX_VALUES."""
    builder = Builder()
    for event, value in events:
        builder.event(event, value)
        if builder.depth > MAX_DEPTH:  # broken, as json's RecursionError makes it
            raise ValueError("JSON nested too deeply")
        if builder.over:
            raise Refused(builder.over)
    return builder.value


class Builder:
    """Builds one JSON value from ijson's basic events, counting the values it holds: past
    ``MAX_VALUES`` it stops building and sets ``over`` (the reason, with where in the value
    the count ran over, e.g. ``request.headers``)."""

    def __init__(self) -> None:
        self.value: Any = None
        self.over = ""
        self.count = 0
        self._stack: list[Any] = []  # the open containers, innermost last
        self._keys: list[Any] = []  # each open container's key in its parent (None: top)
        self._key: Any = None  # the key of the value a map is waiting for

    @property
    def depth(self) -> int:
        return len(self._stack)

    def event(self, event: str, value: Any) -> None:
        if event == "map_key":
            self._key = value
        elif event == "start_map" or event == "start_array":
            container: Any = {} if event == "start_map" else []
            self._put(container)
            self._keys.append(self._key if self._stack and isinstance(self._stack[-1], dict)
                              else "item" if self._stack else None)
            self._stack.append(container)
        elif event == "end_map" or event == "end_array":
            self._stack.pop()
            self._keys.pop()
        else:
            self._put(value)

    def _put(self, value: Any) -> None:
        self.count += 1
        if self.count > MAX_VALUES and not self.over:
            where = ".".join(str(k) for k in self._keys if k not in (None, "item")) or "the top"
            self.over = f"it holds more than {MAX_VALUES:,} JSON values (in {where})"
        if not self._stack:
            self.value = value
        elif isinstance(top := self._stack[-1], dict):
            top[self._key] = value
        else:
            top.append(value)


#: How each basic event moves the nesting depth.
_DEPTH = {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1, "map_key": 0,
          "string": 0, "number": 0, "boolean": 0, "null": 0}


def skip(events: list[tuple[str, Any]], start: int, depth: int, target: int
         ) -> tuple[int, int]:
    """Pass over ``events[start:]`` from nesting ``depth`` until it comes back to ``target``
    (shallower): (the position after the event that closes it, or len(events); the depth
    there). The events are walked in C (no Python per event): skipping 10 million headers
    costs seconds, not minutes."""
    depths = list(accumulate(map(_DEPTH.__getitem__, map(itemgetter(0), events[start:])),
                             initial=depth))
    try:
        return start + depths.index(target, 1), target
    except ValueError:
        return len(events), depths[-1]


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"
