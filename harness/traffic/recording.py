"""Recordings: the harness's native format, JSON Lines, append-only.

Line 1 is a header::

    {"format": "asmx-harness-recording", "version": 1, "harness": "0.1.0",
     "upstream": "http://...", "created": "2026-11-23T10:00:00Z", "redacted": true, ...}

and every further line is one exchange (``Exchange.to_dict``), written and flushed as the
exchange completes, so a crash loses at most the exchange in flight. Readers stream: memory
stays flat however long the recording. Every reader also accepts HAR 1.2 (``harness.traffic.har``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from harness import __version__
from harness.errors import RecordingError
from harness.traffic.bounds import Refused, load_line
from harness.traffic.exchange import Exchange

FORMAT = "asmx-harness-recording"
FORMAT_VERSION = 1


class RecordingWriter:
    """Appends exchanges to a recording, one flushed line each (``write(..., flush=False)``
    leaves a batch of lines for one ``flush``).

    An existing recording is appended to, never truncated: recorded data is never lost.
    """

    def __init__(self, path: str | Path, *, upstream: str | None = None, redacted: bool = True,
                 fsync: bool = False, **header: Any) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.count = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            self._file: IO[bytes] = self.path.open("ab")
        except OSError as exc:
            raise RecordingError(f"cannot write recording {path}: {exc.strerror or exc}") from None
        if fresh:
            self._write_line({"format": FORMAT, "version": FORMAT_VERSION, "harness": __version__,
                              "upstream": upstream, "created": _now(), "redacted": redacted,
                              **header})
        else:
            self._end_partial_line()

    def _end_partial_line(self) -> None:
        # A crash can leave a half-written last line; start ours on a fresh line.
        with self.path.open("rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                self._file.write(b"\n")

    def write(self, exchange: Exchange, *, flush: bool = True) -> None:
        self._write_line(exchange.to_dict(), flush)
        self.count += 1

    def _write_line(self, data: dict[str, Any], flush: bool = True) -> None:
        # orjson: compact UTF-8 like json.dumps(ensure_ascii=False, separators=(",", ":")),
        # several times faster (capture writes a line per exchange).
        self._file.write(orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE))
        if flush:
            self.flush()

    def flush(self) -> None:
        """Hand every line written so far to the OS (and to the disk, with ``fsync``)."""
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: A header line is a few hundred bytes; a longer first line is not one (a one-line HAR).
HEADER_LIMIT = 64 * 1024


def read_header(path: str | Path) -> dict[str, Any] | None:
    """The header of a native recording, or None when ``path`` is not one (e.g. HAR, .zhar).

    Only the first line is read and decoded: a bad byte further on is that line's problem."""
    try:
        with Path(path).open("rb") as f:
            first = f.readline(HEADER_LIMIT)
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return data
    return None


def read_exchanges(paths: Iterable[str | Path], *, skip_broken: bool = True,
                   on_broken=None) -> Iterator[Exchange]:
    """Every exchange of every file, streamed, each with its 1-based index and source.

    Native recordings and HAR 1.2 files are both accepted. A broken line (a crash mid-write)
    or HAR entry is skipped and reported through ``on_broken(path, line_number, reason)``
    (for HAR, the entry's number).
    """
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise RecordingError(f"recording {path} does not exist or is not a file")
        header = read_header(path)
        if header is None:
            from harness.traffic.har import read_har

            yield from read_har(path, skip_broken=skip_broken, on_broken=on_broken)
        else:
            if header.get("version") != FORMAT_VERSION:
                raise RecordingError(f"{path}: recording format version {header.get('version')}"
                                     f" is not supported (this harness reads {FORMAT_VERSION})")
            yield from _read_lines(path, skip_broken, on_broken)


#: A recording line longer than this is broken: skipped (and named) without ever being held
#: whole. Capture keeps each body within ``--max-body-mb`` (16 MiB by default), well below.
MAX_LINE_BYTES = 64 << 20
_SKIP = 1 << 20


def lines_of(f: IO[bytes], limit: int | None = None) -> Iterator[bytes | None]:
    """Each line of ``f`` (newline kept), or None for a line longer than ``limit`` bytes
    (``MAX_LINE_BYTES``), which is read past in pieces: memory stays within the limit."""
    limit = MAX_LINE_BYTES if limit is None else limit
    while line := f.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            del line
            while (rest := f.readline(_SKIP)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield line


def line_refused(where: str, exc: Exception) -> str:
    """The reason said for a line that is no exchange (``where``: its file:line): one over
    a bound of ``harness.traffic.bounds`` says which, a broken one what broke."""
    if isinstance(exc, Refused):
        return f"{where}: exchange refused: {exc}"
    return f"{where}: broken exchange line ({type(exc).__name__})"


def too_long(where: str) -> str:
    """The reason said for a line over MAX_LINE_BYTES."""
    return f"{where}: broken exchange line (longer than {MAX_LINE_BYTES >> 20} MiB)"


def _read_lines(path: Path, skip_broken: bool, on_broken) -> Iterator[Exchange]:
    for _offset, _length, exchange in located_exchanges(path, skip_broken=skip_broken,
                                                        on_broken=on_broken):
        yield exchange


def located_exchanges(path: str | Path, *, skip_broken: bool = True, on_broken=None
                      ) -> Iterator[tuple[int, int, Exchange]]:
    """Every exchange of the native recording ``path`` with where its line is (byte offset
    and length), so that a reader can keep the places instead of the exchanges and read each
    one again when it needs it (``exchange_at``). Broken lines as ``read_exchanges``."""
    path = Path(path)
    index = 0
    with path.open("rb") as f:  # decoded line by line: one bad byte costs its line only
        offset = len(f.readline(HEADER_LIMIT))  # the header (read_header checked its size)
        for number, line in enumerate(lines_of(f), start=2):
            if line is None:
                reason = too_long(f"{path}:{number}")
                if not skip_broken:
                    raise RecordingError(reason)
                if on_broken:
                    on_broken(path, number, reason)
                offset = f.tell()
                continue
            at, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                data = load_line(line, json.loads)
                exchange = Exchange.from_dict(data, index=index + 1, source=str(path))
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                reason = line_refused(f"{path}:{number}", exc)
                if not skip_broken:
                    raise RecordingError(reason) from None
                if on_broken:
                    on_broken(path, number, reason)
                continue
            index += 1
            yield at, len(line), exchange


def exchange_at(fd: int, offset: int, length: int, *, index: int | None = None,
                source: str = "") -> Exchange:
    """The exchange whose line ``located_exchanges`` found at ``offset`` (``fd``: the
    recording, open for reading; ``os.pread`` leaves its position alone)."""
    return Exchange.from_dict(json.loads(os.pread(fd, length, offset)), index=index,
                              source=source)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
