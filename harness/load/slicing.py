"""Which worker sends which recorded exchange, the name Locust's stats give it, and where its
line is: a load process keeps the places of its exchanges, not the exchanges.

Each worker reads the same recordings and keeps its own slice: an exchange goes to worker
``crc32(session key) % workers``, so every exchange of one session (the same phone or device,
as the recording's redacted arguments name it; pseudonyms are stable, so they still group)
goes to one worker, in its recorded order. An exchange without a session key is dealt by its
position. The master reads the recordings too, only for their start times.

Reading streams, as lint does: one pass notes every start time and, for the exchanges of this
slice, the file, byte offset and length of their line (a few dozen bytes each, whatever the
line holds). ``Recordings.exchange(slot)`` reads a line again when its request is due; the
exchanges whose lines add up to ``CACHE_BYTES`` are kept decoded, so a recording of ordinary
size is read from disk once. A HAR file (one JSON document) is copied as JSON lines into a
temporary file first (``spool``), then read the same way.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.contract.bindings import Binding, classify
from harness.contract.model import Contract
from harness.errors import ClassificationError, RecordingError
from harness.traffic.exchange import Exchange
from harness.traffic.recording import (
    FORMAT_VERSION,
    RecordingWriter,
    exchange_at,
    located_exchanges,
    read_exchanges,
    read_header,
)

#: Argument names (lower case) that identify a session, the first found wins: the phone comes
#: before the device id so that AuthCode (phone) and LogoutFromSchool (PhoneNumber, UuId) of
#: one person stay together.
SESSION_NAMES = ("phone", "phonenumber", "uuid", "id")
#: Bytes of recording lines a process keeps decoded (the rest is read again when due).
CACHE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """One recorded exchange a worker sends."""

    position: int  # 0-based, over all the recordings in the order given
    exchange: Exchange
    operation: str | None  # None: not a call of the contract
    binding: str | None  # the binding's label, e.g. "SOAP 1.1"

    @property
    def name(self) -> str:
        """Locust's stats line: "AuthCode [SOAP 1.1]"."""
        return entry_name(self.exchange, self.operation, self.binding)


def entry_name(exchange: Exchange, operation: str | None, binding: str | None) -> str:
    if operation is None:
        return f"{exchange.request.method} {exchange.request.path}"
    return f"{operation} [{binding}]"


@dataclass
class Recordings:
    """Every recorded start time (for the schedule) and where this worker's exchanges are.

    A slot is an exchange of the slice: ``positions[slot]`` its place over all recordings,
    ``names[name_of[slot]]`` its Locust name, ``labels[...]`` its operation and binding."""

    started: array = field(default_factory=lambda: array("d"))  # NaN: not recorded
    broken: int = 0
    positions: array = field(default_factory=lambda: array("q"))
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    files: array = field(default_factory=lambda: array("l"))
    name_of: array = field(default_factory=lambda: array("l"))
    names: list[str] = field(default_factory=list)
    labels: list[tuple[str | None, str | None]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # what each file index reads
    sources: list[str] = field(default_factory=list)  # what each file index is called
    _fds: dict[int, int] = field(default_factory=dict)
    _cache: dict[int, Exchange] = field(default_factory=dict)
    _cached: int = 0
    _spooled: list[str] = field(default_factory=list)
    _names: dict[tuple[str, str | None, str | None], int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.positions)

    def start_times(self) -> list[float | None]:
        return [None if math.isnan(t) else t for t in self.started]

    def label(self, slot: int) -> tuple[str | None, str | None]:
        """(operation, binding label) of a slot's exchange."""
        return self.labels[self.name_of[slot]]

    def name(self, slot: int) -> str:
        return self.names[self.name_of[slot]]

    def exchange(self, slot: int) -> Exchange:
        """The recorded exchange of ``slot``, read again from its line unless kept."""
        kept = self._cache.get(slot)
        if kept is not None:
            return kept
        file = self.files[slot]
        fd = self._fds.get(file)
        if fd is None:
            fd = self._fds[file] = os.open(self.paths[file], os.O_RDONLY)
        return exchange_at(fd, self.offsets[slot], self.lengths[slot],
                           source=self.sources[file])

    @property
    def entries(self) -> list[Entry]:
        """Every exchange of the slice, decoded (small inputs and tests only)."""
        return [Entry(self.positions[slot], self.exchange(slot), *self.label(slot))
                for slot in range(len(self))]

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        for path in self._spooled:
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._spooled.clear()

    def _add(self, file: int, offset: int, length: int, position: int, exchange: Exchange,
             operation: str | None, binding: str | None) -> None:
        slot = len(self.positions)
        name = entry_name(exchange, operation, binding)
        key = (name, operation, binding)
        number = self._names.get(key)
        if number is None:
            number = self._names[key] = len(self.names)
            self.names.append(name)
            self.labels.append((operation, binding))
        for column, value in ((self.positions, position), (self.offsets, offset),
                              (self.lengths, length), (self.files, file),
                              (self.name_of, number)):
            column.append(value)
        if self._cached + length <= CACHE_BYTES:
            self._cache[slot] = exchange
            self._cached += length


def describe(exchange: Exchange, contract: Contract
             ) -> tuple[str | None, str | None, str | None]:
    """(operation, binding label, session key) from the capture's classification (meta) or a
    fresh one."""
    meta = exchange.meta
    if meta.get("operation") and meta.get("binding"):
        try:
            label = Binding(meta["binding"]).label
        except ValueError:
            label = str(meta["binding"])
        operation, arguments = str(meta["operation"]), meta.get("arguments") or ()
    else:
        try:
            call = classify(contract, exchange.request)
        except ClassificationError:
            return None, None, None
        operation, label, arguments = call.operation.name, call.binding.label, call.arguments
    values = {str(k).lower(): str(v) for k, v in arguments}
    return operation, label, next((values[n] for n in SESSION_NAMES if values.get(n)), None)


def worker_of(key: str | None, position: int, workers: int) -> int:
    if key is None:
        return position % workers
    return zlib.crc32(key.encode("utf-8")) % workers


def read_slice(paths: Sequence[str | Path], contract: Contract, index: int = 0,
               workers: int = 1, *, keep: bool = True,
               pause: Callable[[], None] = lambda: None,
               on_broken: Callable[[str], None] | None = None) -> Recordings:
    """The start time of every exchange and, with ``keep``, where the exchanges of worker
    ``index`` of ``workers`` are. ``pause`` is called now and then (a worker yields to
    Locust's heartbeats); ``on_broken`` is told why each broken line or entry is skipped.
    The caller closes the result."""
    out = Recordings()

    def broken(path, number, reason) -> None:
        out.broken += 1
        if on_broken is not None:
            on_broken(reason)

    position = 0
    try:
        for file, path in enumerate(paths):
            readable = _native(path, out, broken) if keep else str(path)
            out.paths.append(readable)
            out.sources.append(str(path))
            located = (located_exchanges(readable, on_broken=broken) if keep else
                       ((0, 0, e) for e in read_exchanges([path], on_broken=broken)))
            for offset, length, exchange in located:
                started = exchange.timings.get("started")
                out.started.append(float(started) if started is not None else math.nan)
                if keep:
                    operation, binding, key = describe(exchange, contract)
                    if worker_of(key, position, workers) == index:
                        exchange.source = str(path)
                        out._add(file, offset, length, position, exchange, operation,
                                 binding)
                position += 1
                if position % 256 == 0:
                    pause()
    except BaseException:
        out.close()
        raise
    return out


def _native(path: str | Path, out: Recordings, broken: Callable[[Path, int, str], None]
            ) -> str:
    """``path`` when it is a native recording, else a temporary JSON-lines copy of its HAR
    exchanges (removed by ``Recordings.close``)."""
    if not Path(path).is_file():
        raise RecordingError(f"recording {path} does not exist or is not a file")
    header = read_header(path)
    if header is not None:
        if header.get("version") != FORMAT_VERSION:
            raise RecordingError(f"{path}: recording format version {header.get('version')}"
                                 f" is not supported (this harness reads {FORMAT_VERSION})")
        return str(path)
    fd, spool = tempfile.mkstemp(prefix="harness-load-", suffix=".jsonl")
    os.close(fd)
    out._spooled.append(spool)
    with RecordingWriter(spool) as writer:
        for exchange in read_exchanges([path], on_broken=broken):
            writer.write(exchange, flush=False)
    return spool
