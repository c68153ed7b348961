"""The recordings a mock answers from, indexed by call without holding their bodies.

Every recorded exchange whose request is a call the binding rules accept is indexed under its
key (``values.call_key``: operation and parameter values by meaning) with where it is: its file,
its byte offset and length (a native recording) or its entry number (HAR), and the binding it
was answered over. That is 21 bytes per exchange, in four flat arrays sorted by key (equal keys
in recorded order); an answer is read from the file when it is asked for. A native recording
is indexed in byte ranges by worker processes, each reading its own range of the file line by
line (nothing but the index crosses a process boundary). A HAR file is one JSON document: it
is read whole (``harness.traffic.har``) and held as its exchanges.

Service descriptions (``?WSDL``, the help page, ``?disco``) answered 200 are indexed by path and
query. Exchanges without a response, requests that are no call of the contract and calls the
binding rules refuse are counted, not indexed: the mock refuses those as the reference does.
"""

from __future__ import annotations

import bisect
import heapq
import multiprocessing
import operator
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from harness import lifeline
from harness.contract.bindings import Binding, Classification
from harness.contract.model import Contract
from harness.errors import ClassificationError, RecordingError, ServiceDescription
from harness.judge.streaming import _loads
from harness.mock.values import call_key, normal_arguments
from harness.reference.app import Refusal, accepted_call
from harness.traffic.bounds import load_line
from harness.traffic.exchange import Exchange
from harness.traffic.recording import (
    FORMAT_VERSION,
    HEADER_LIMIT,
    line_refused,
    lines_of,
    read_header,
    too_long,
)
from harness.traffic.redaction import is_pseudonym

#: Distinct argument sets kept per operation to name the nearest recorded call of an unmatched
#: one (the first ones recorded).
CANDIDATES = 256
#: Broken lines reported one by one (the rest are counted).
BROKEN_SHOWN = 20
#: Bytes of a native recording per unit of work of the indexing processes.
RANGE_BYTES = 16 * 1024 * 1024
#: Below this many bytes in all, indexing stays in the calling process.
SMALL_INPUT_BYTES = 4 * 1024 * 1024
_OFFSET_BITS = 48
_BINDINGS = tuple(Binding)
_BINDING_CODE = {b: i for i, b in enumerate(_BINDINGS)}


def description_key(url: str) -> tuple[str, str]:
    """A service description by the path (any case, no trailing slash) and query asked."""
    parts = urlsplit(url)
    return parts.path.rstrip("/").lower(), parts.query.lower()


def call_values(contract: Contract, exchange: Exchange
                ) -> tuple[Classification, Binding, tuple[str, ...]]:
    """The recorded call, the binding it was answered over and its values by meaning;
    ClassificationError (ServiceDescription) or Refusal when it is no call the mock answers."""
    call, binding, arguments = accepted_call(contract, exchange.request, wildcard=is_pseudonym)
    return call, binding, normal_arguments(call.operation, arguments,
                                           http=not call.binding.is_soap)


@dataclass
class Part:
    """What indexing found in one byte range, one HAR file, or all of them (``merge``), in
    recorded order."""

    keys: array = field(default_factory=lambda: array("Q"))
    wheres: array = field(default_factory=lambda: array("Q"))
    lengths: array = field(default_factory=lambda: array("I"))
    bindings: array = field(default_factory=lambda: array("B"))
    #: description key -> (where, length) of the last one recorded
    descriptions: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: per operation: distinct argument values (``CANDIDATES`` at most), and where each is
    candidates: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    candidates_at: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    operations: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    broken: list[str] = field(default_factory=list)
    broken_count: int = 0
    exchanges: int = 0

    def add(self, contract: Contract, exchange: Exchange, where: int, length: int) -> None:
        self.exchanges += 1
        response, request = exchange.response, exchange.request
        if response is None:
            self.skipped["no response recorded"] += 1
            return
        try:
            call, binding, values = call_values(contract, exchange)
        except ServiceDescription:
            if request.method.upper() == "GET" and response.status == 200:
                self.descriptions[description_key(request.url)] = (where, length)
            else:
                self.skipped["service description not answered 200"] += 1
            return
        except ClassificationError:
            self.skipped["not a call of the contract"] += 1
            return
        except Refusal:
            self.skipped["refused by the binding rules (answered as the reference does)"] += 1
            return
        op = call.operation
        self.keys.append(call_key(op, values))
        self.wheres.append(where)
        self.lengths.append(length)
        self.bindings.append(_BINDING_CODE[binding])
        self.operations[op.name] += 1
        self._candidate(op.name, values, (where, length))

    def _candidate(self, name: str, values: tuple[str, ...], at: tuple[int, int]) -> None:
        seen = self.candidates.setdefault(name, [])
        if len(seen) < CANDIDATES and values not in seen:
            seen.append(values)
            self.candidates_at.setdefault(name, []).append(at)

    def broken_line(self, path: Path, offset: int, reason: Callable[[str], str]) -> None:
        """A line that is no exchange: counted, and named for the first ones (``reason`` of
        its ``file:line``, counted only then)."""
        self.broken_count += 1
        if len(self.broken) < BROKEN_SHOWN:
            self.broken.append(reason(f"{path}:{_line_at(path, offset)}"))

    def sort(self) -> Part:
        """The calls ordered by key (stable: equal keys stay in recorded order); each part is
        sorted where it was made, so the Python integers of a sort never pile up in one
        process."""
        order = sorted(range(len(self.keys)), key=self.keys.__getitem__)
        for name in COLUMNS:
            column = getattr(self, name)
            setattr(self, name, array(column.typecode, [column[i] for i in order]))
        return self


COLUMNS = ("keys", "wheres", "lengths", "bindings")


def merged(parts: list[Part]) -> Part:
    """One part of ``parts`` (each sorted, given in recorded order): the calls merged in key
    order, equal keys in recorded order (heapq.merge takes the earlier part's first), the
    rest in recorded order (a later description or candidate after an earlier one)."""
    found = Part()
    rows = heapq.merge(*(zip(*(getattr(p, c) for c in COLUMNS), strict=True) for p in parts),
                       key=operator.itemgetter(0))
    columns = [getattr(found, c) for c in COLUMNS]
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    for part in parts:
        found.descriptions.update(part.descriptions)
        for name, values in part.candidates.items():
            for one, at in zip(values, part.candidates_at[name], strict=True):
                found._candidate(name, one, at)
        found.operations.update(part.operations)
        found.skipped.update(part.skipped)
        found.broken += part.broken[:BROKEN_SHOWN - len(found.broken)]
        found.broken_count += part.broken_count
        found.exchanges += part.exchanges
    return found


@dataclass(frozen=True)
class Source:
    """One recording file: native (read by offset) or HAR (held as exchanges)."""

    path: Path
    native: bool
    header: dict | None = None
    har: tuple[Exchange, ...] = ()
    #: HAR entries that are no exchange, skipped as the HAR reader said
    har_broken: tuple[str, ...] = ()


class Index:
    """Recorded calls by key, and the service descriptions; ``fetch`` reads one exchange."""

    def __init__(self, sources: list[Source], found: Part) -> None:
        """``found``: the calls in key order (``merged``)."""
        self.sources = sources
        self.found = found
        self.keys, self.wheres = found.keys, found.wheres
        self.lengths, self.bindings = found.lengths, found.bindings
        self.descriptions = found.descriptions
        self.candidates = found.candidates
        self.operations, self.skipped = found.operations, found.skipped
        self.broken, self.broken_count = found.broken, found.broken_count
        self.exchanges = found.exchanges
        #: How the index was made, when a cache file was asked for.
        self.note: str | None = None
        self._files: dict[int, int] = {}  # file number -> descriptor, opened once, up front
        for number, source in enumerate(sources):
            if source.native:
                try:
                    self._files[number] = os.open(source.path, os.O_RDONLY)
                except OSError as exc:
                    self.close()
                    raise RecordingError(f"cannot read {source.path}: {exc.strerror}") from None

    @property
    def calls(self) -> int:
        return len(self.keys)

    def find(self, key: int) -> range:
        """Positions of the calls recorded under ``key``, in recorded order."""
        lo = bisect.bisect_left(self.keys, key)
        return range(lo, bisect.bisect_right(self.keys, key, lo))

    def binding(self, position: int) -> Binding:
        """The binding the call at ``position`` was answered over."""
        return _BINDINGS[self.bindings[position]]

    def where(self, position: int) -> str:
        """Where the call at ``position`` is recorded: ``file:line``, or a HAR's entry."""
        return self.place(self.wheres[position])

    def place(self, where: int) -> str:
        number, offset = where >> _OFFSET_BITS, where & ((1 << _OFFSET_BITS) - 1)
        source = self.sources[number]
        if not source.native:
            entry = source.har[offset].index
            return f"{source.path} entry {entry if entry is not None else offset + 1}"
        return f"{source.path}:{_line_at(source.path, offset)}"

    def fetch(self, position: int) -> Exchange:
        """The exchange recorded at ``position``."""
        return self.read(self.wheres[position], self.lengths[position])

    def read(self, where: int, length: int) -> Exchange:
        number, offset = where >> _OFFSET_BITS, where & ((1 << _OFFSET_BITS) - 1)
        source = self.sources[number]
        if not source.native:
            return source.har[offset]
        fd = self._files.get(number)
        if fd is None:
            raise RecordingError(f"{source.path} is closed (the mock has stopped)")
        try:
            line = os.pread(fd, length, offset)  # one call: safe from several threads at once
        except OSError as exc:
            raise RecordingError(f"cannot read {source.path}: {exc.strerror}") from None
        try:
            return Exchange.from_dict(_decoded(line), source=str(source.path))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise RecordingError(f"{source.path} changed since it was indexed (the exchange "
                                 f"at byte {offset} is no longer one)") from None

    def close(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()


# ------------------------------------------------------------------------------ building


def load(contract: Contract, paths: Iterable[str | Path], *, workers: int | None = None,
         cache: str | Path | None = None,
         on_progress: Callable[[int], None] = lambda exchanges: None) -> Index:
    """The index of every recording in ``paths`` (native or HAR), in the order given; with
    ``cache``, read from that file when it fits (harness.mock.cache), else built and kept
    there (``Index.note`` says which).

    A file that is missing, not a recording or of another format version is a one-line
    RecordingError; a broken line is counted and skipped."""
    from harness.mock import cache as kept

    sources = [_source(Path(p)) for p in paths]
    if len(sources) >= 1 << (64 - _OFFSET_BITS):
        raise RecordingError(f"at most {(1 << (64 - _OFFSET_BITS)) - 1} recordings")
    if cache is not None and (index := kept.read(cache, contract, sources)) is not None:
        index.note = f"index read from {cache}"
        return index
    jobs = list(_jobs(sources))
    total = sum(end - start for _, _, start, end in jobs)
    if workers is None:
        workers = 1 if total < SMALL_INPUT_BYTES else max(1, os.cpu_count() or 1)
    parts = []
    for part in _parts(contract, sources, jobs, workers):
        on_progress(part.exchanges)
        parts.append(part)
    index = Index(sources, merged(parts))
    del parts
    if cache is not None:
        try:
            kept.write(cache, contract, index)
            index.note = f"index kept in {cache} for the next start"
        except OSError as exc:
            index.note = f"index not kept: cannot write {cache}: {exc.strerror or exc}"
    return index


def _source(path: Path) -> Source:
    if not path.is_file():
        raise RecordingError(f"recording {path} does not exist or is not a file")
    header = read_header(path)
    if header is None:
        from harness.traffic.har import read_har

        broken: list[str] = []
        exchanges = tuple(read_har(path, on_broken=lambda _p, _n, why: broken.append(why)))
        return Source(path, False, None, exchanges, tuple(broken))
    if header.get("version") != FORMAT_VERSION:
        raise RecordingError(f"{path}: recording format version {header.get('version')} is "
                             f"not supported (this harness reads {FORMAT_VERSION})")
    if path.stat().st_size >= 1 << _OFFSET_BITS:
        raise RecordingError(f"{path} is larger than {1 << (_OFFSET_BITS - 40)} TiB")
    return Source(path, True, header)


def _jobs(sources: list[Source]) -> Iterator[tuple[int, Path, int, int]]:
    """(file number, path, start, end) byte ranges of the native recordings, each starting at
    a line; a HAR file is one job (-1, -1)."""
    for number, source in enumerate(sources):
        if not source.native:
            yield number, source.path, -1, -1
            continue
        with source.path.open("rb") as f:
            f.readline(HEADER_LIMIT)  # the header (read_header checked it is within the limit)
            start, size = f.tell(), os.fstat(f.fileno()).st_size
            while start < size:
                f.seek(min(size, start + RANGE_BYTES))
                f.readline()  # to the end of the line the range ends in
                end = max(f.tell(), start + 1) if f.tell() < size else size
                yield number, source.path, start, end
                start = end


def _parts(contract: Contract, sources: list[Source], jobs: list[tuple[int, Path, int, int]],
           workers: int) -> Iterator[Part]:
    native = [job for job in jobs if job[2] >= 0]
    if workers <= 1 or len(native) <= 1:
        for number, path, start, end in jobs:
            yield (_index_range(contract, number, path, start, end) if start >= 0
                   else _index_har(contract, number, sources[number]))
        return
    # spawn: the workers are gone once the index is made (a forkserver would stay, ~30 MB)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(min(workers, len(native)), mp_context=context,
                               initializer=lifeline.die_with, initargs=(os.getpid(),))
    try:
        pending = {job: pool.submit(_index_range, contract, *job) for job in native}
        for job in jobs:  # in order: recorded order is kept
            yield (pending[job].result() if job[2] >= 0
                   else _index_har(contract, job[0], sources[job[0]]))
    except BaseException:  # Ctrl-C, SIGTERM: the workers stop now, not after every range
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.terminate()
        raise
    pool.shutdown()


def _index_har(contract: Contract, number: int, source: Source) -> Part:
    part = Part()
    part.broken_count = len(source.har_broken)
    part.broken = list(source.har_broken[:BROKEN_SHOWN])
    for at, exchange in enumerate(source.har):
        part.add(contract, exchange, number << _OFFSET_BITS | at, 0)
    return part.sort()  # merged() merges sorted parts: an unsorted one is searched wrong


def _index_range(contract: Contract, number: int, path: Path, start: int, end: int) -> Part:
    """Index the lines of ``path`` from byte ``start`` to ``end`` (whole lines), read as every
    reader of recordings reads them (``recording.lines_of``: a line over the limit is skipped
    without being held whole)."""
    part = Part()
    with path.open("rb") as f:
        f.seek(start)
        where = start
        for line in lines_of(f):
            after = f.tell()
            if line is None:
                part.broken_line(path, where, too_long)
            elif line.strip():
                try:
                    exchange = Exchange.from_dict(_decoded(line), source=str(path))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                    part.broken_line(path, where, partial(line_refused, exc=exc))
                else:
                    part.add(contract, exchange, number << _OFFSET_BITS | where, after - where)
            where = after
            if where >= end:
                break
    return part.sort()


def _decoded(line: bytes):
    """A recording line's JSON: by orjson alone (the mock reads no number that a float would
    change: statuses and timings), else as every reader decodes it (``_loads``); within the
    bounds of every exchange (``load_line``)."""
    return load_line(line, _orjson_or_loads)


def _orjson_or_loads(line: bytes):
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return _loads(line)


def _line_at(path: Path, offset: int) -> int:
    """The number of the line starting at byte ``offset`` (counted only for the broken lines
    named: a range does not count its lines as it goes)."""
    count = 1
    with path.open("rb") as f:
        done = 0
        while done < offset:
            chunk = f.read(min(1 << 20, offset - done))
            if not chunk:
                break
            count += chunk.count(b"\n")
            done += len(chunk)
    return count
