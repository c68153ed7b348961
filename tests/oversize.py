"""Hostile input files, built fast in a folder, for tests/test_reader_bounds.py and
bench/bench_oversize.py: a .zhar whose one entry inflates to millions of tiny headers (beside a
well-formed entry), a recording line with as many, a ``--values`` TOML of many tables, a large
feature file and a scenario with many tags."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from harness.traffic.exchange import Exchange
from harness.traffic.har import har_entry

#: A HAR header, as small as one can be: 10 million of them inflate to ~230 MiB.
_TINY = b'{"name":"a","value":""}'


def many_headers_zhar(path: Path, good: list[Exchange], headers: int) -> Path:
    """A .zhar (zlib, as mitmproxy's savehar writes) whose entry 2 has ``headers`` tiny
    request headers; entries 1 and 3 are ``good[0]`` and ``good[1]`` as they are."""
    first, last = (json.dumps(har_entry(e)).encode() for e in good[:2])
    compress = zlib.compressobj(9)
    out = [compress.compress(b'{"log": {"version": "1.2", "creator": {"name": "hostile"}, '
                             b'"entries": [' + first + b', {"request": {"method": "GET", '
                             b'"url": "http://h/a.asmx", "headers": [')]
    block = b",".join([_TINY] * 100_000)
    whole, rest = divmod(headers, 100_000)
    for n in range(whole):
        out.append(compress.compress((b"," if n else b"") + block))
    if rest:
        out.append(compress.compress((b"," if whole else b"") + b",".join([_TINY] * rest)))
    out.append(compress.compress(b']}, "response": {"status": 200, "headers": [], '
                                 b'"content": {"text": ""}}}, ' + last + b"]}}"))
    out.append(compress.flush())
    path.write_bytes(b"".join(out))
    return path


def many_headers_line(exchange: Exchange, headers: int) -> bytes:
    """A recording line: ``exchange`` with ``headers`` tiny headers more in its request."""
    data = exchange.to_dict()
    data["request"]["headers"] = [*data["request"]["headers"], *([("a", "")] * headers)]
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"


def many_tables_toml(path: Path, tables: int) -> Path:
    """A ``--values`` file of ``tables`` empty tables, the shortest names first (``[a]``,
    ``[b]``... ``[aa]``...): 637,830 of them fit in 4 MiB."""
    from itertools import islice, product

    names = ("".join(letters) for size in range(1, 8)
              for letters in product(_BARE, repeat=size))
    path.write_text("".join(f"[{name}]\n" for name in islice(names, tables)),
                    encoding="utf-8")
    return path


#: The characters of a TOML bare key.
_BARE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
