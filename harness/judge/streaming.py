"""The engine under lint and replay: a recording streamed in chunks through a Job, in worker
processes, in flat memory.

The parent reads raw lines (native recordings) or exchanges (HAR) in chunks and hands them to
worker processes; a worker decodes, judges and tallies a whole chunk and sends back only the
counts of passed/not-applicable findings and the failures and warnings themselves, so the
parent stays cheap and memory stays flat however long the recording. Results are taken in
the order the chunks were read, so findings come out by index whatever the worker count.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import multiprocessing
import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import batched
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from harness import lifeline, progress, stopping
from harness.contract.bindings import Binding
from harness.errors import RecordingError, RunStopped
from harness.judge.findings import Finding, Report, Verdict
from harness.traffic import recording
from harness.traffic.bounds import LONG_LINE, load_line, refused_line
from harness.traffic.exchange import Exchange
from harness.traffic.recording import (
    FORMAT_VERSION,
    HEADER_LIMIT,
    line_refused,
    read_exchanges,
    read_header,
    too_long,
)
from harness.traffic.redaction import redacting_reports, report_redaction, use_report_redaction
from harness.traffic.report_text import example_text

#: Inputs smaller than this are judged in the calling process: starting workers costs more.
SMALL_INPUT_BYTES = 2 * 1024 * 1024
#: A chunk ends at its ``size`` lines or once its lines hold this many bytes, whichever comes
#: first: memory follows bytes, not line counts (a recording of 1 MB lines stays as flat as
#: one of 2 KB lines; at most 2 chunks per worker are in flight).
CHUNK_BYTES = 2 * 1024 * 1024
_KEPT = (Verdict.FAILED, Verdict.WARNING)


class Job(Protocol):
    """What is done to each exchange. Pickled once into every worker process (forked: given
    as it is, see ``start_method``).

    ``start_method`` (optional, default ``"forkserver"``): how worker processes start. A job
    that holds no thread, socket or client of its own (lint's) may say ``"fork"``: its workers
    are copies of the command, every module already imported (a forkserver's worker imports
    them again: ~0.3 s of CPU each, before its first chunk)."""

    def setup(self) -> None:
        """Once per process, before the first chunk (e.g. open an HTTP client)."""

    def judge_all(self, exchanges: Sequence[Exchange], tally: Tally) -> Iterable[list[Finding]]:
        """The findings of each exchange, in the order given. A job may count passed and
        not-applicable ones into ``tally`` instead of returning them."""
        ...

    def close(self) -> None:
        """Once per process, after the last chunk."""


Tally = Counter[tuple[str, str | None, str | None, Verdict]]


@dataclass(frozen=True)
class Chunk:
    source: str
    #: Line number of the first item in its file (native recordings); 0 for HAR exchanges.
    first_line: int
    #: Raw JSON lines of a native recording (None: a line over MAX_LINE_BYTES, skipped; a
    #: text: why a line over the bounds of harness.traffic.bounds is refused), or exchanges
    #: read from a HAR file; none when the lines are given by ``span``.
    items: list[bytes | str | None] | list[Exchange]
    #: Broken HAR entries met while reading this chunk's exchanges (said, counted).
    broken: tuple[str, ...] = ()
    #: (offset, length) of whole lines in the file ``source``, read by the worker: the chunk
    #: then carries no ``items`` itself.
    span: tuple[int, int] | None = None


@dataclass
class ChunkResult:
    source: str
    exchanges: int = 0
    #: Exchanges with at least one failed finding.
    failing: int = 0
    broken: list[str] = field(default_factory=list)
    counts: Tally = field(default_factory=Counter)
    #: Exchanges read but left out by the job's ``chosen`` (not sent, not judged).
    unselected: int = 0
    #: Failures and warnings; their index counts from 1 at the chunk's first exchange.
    kept: list[Finding] = field(default_factory=list)
    #: (rule, operation, binding) -> its first failing exchange in the chunk, as text.
    examples: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: Seconds per (operation, binding label): how long the exchanges took (``duration``).
    seconds: Counter[tuple[str | None, str | None]] = field(default_factory=Counter)
    #: Exchanges left undone because the run was asked to stop (``harness.stopping``).
    stopped: int = 0
    #: Exchanges the job judged without sending them (``NOT_SENT``: a service description).
    unsent: int = 0
    #: Secrets the chunk's exchanges held (value -> pseudonym): the parent's report shows
    #: them by their pseudonyms too (``ReportRedaction.merge``).
    secrets: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------------ input


def chunks(paths: Iterable[str | Path], size: int, max_bytes: int = CHUNK_BYTES
           ) -> Iterator[Chunk]:
    """The recordings' exchanges in chunks of ``size`` lines or ``max_bytes`` bytes, file after
    file, never all at once."""
    for path in map(Path, paths):
        if not path.is_file():
            raise RecordingError(f"recording {path} does not exist or is not a file")
        header = read_header(path)
        if header is None:  # HAR: harness.traffic.har reads and checks it
            yield from _har_chunks(path, size)
            continue
        if header.get("version") != FORMAT_VERSION:
            raise RecordingError(f"{path}: recording format version {header.get('version')}"
                                 f" is not supported (this harness reads {FORMAT_VERSION})")
        with path.open("rb") as f:
            f.readline(HEADER_LIMIT)  # header
            yield from _native_chunks(f, str(path), size, max_bytes)


def _native_chunks(f: IO[bytes], source: str, size: int, max_bytes: int) -> Iterator[Chunk]:
    """The lines of a native recording after its header, in chunks of whole lines given by
    where they are in the file (``Chunk.span``): the worker reads them there itself, so
    nothing of them is copied through the pipe (2,000 lines cut, pickled, sent and unpickled
    cost ~2-3 us a line of the CPU the workers need). A line longer than ``max_bytes`` is a
    chunk of its own, read as ``lines_of`` reads it: None past MAX_LINE_BYTES, the reason it
    is refused when it is over a bound (it is never shipped whole then)."""
    max_bytes = min(max_bytes, recording.MAX_LINE_BYTES)  # a longer line is in no span
    number, offset, total, last = 2, f.tell(), os.fstat(f.fileno()).st_size, 0
    while data := f.read(max_bytes):
        if last and total - offset < TAIL_CHUNKS * last:  # the end: smaller, see TAIL_CHUNKS
            lines, end = _whole_lines(data, max(1, size // TAIL_CHUNKS), last // TAIL_CHUNKS)
        else:
            lines, end = _whole_lines(data, size)
            last = end
        if not lines and len(data) == max_bytes:  # no line ends within max_bytes
            f.seek(offset)
            line = _long_line(f)
            if line is not None and len(line) > LONG_LINE and (refused := refused_line(line)):
                line = f"{source}:{number}: exchange refused: {refused}"
            yield Chunk(source, number, [line])
            number, offset = number + 1, f.tell()
            continue
        if not lines:  # the last line, without its newline
            lines, end = 1, len(data)
        yield Chunk(source, number, [], span=(offset, end))
        number, offset = number + lines, offset + end
        f.seek(offset)


def _whole_lines(data: bytes, size: int, limit: int | None = None) -> tuple[int, int]:
    """How many whole lines ``data`` starts with, up to ``size`` and (but the first) ending
    within ``limit`` bytes, and where they end."""
    count, at, limit = 0, -1, len(data) if limit is None else limit
    while count < size and (found := data.find(b"\n", at + 1)) >= 0 and (
            found < limit or not count):
        count, at = count + 1, found
    return count, at + 1


#: The last TAIL_CHUNKS chunks' worth of a recording is cut into chunks TAIL_CHUNKS times
#: smaller: the workers then run out of work within a small chunk of each other, not a whole
#: one (2,000 exchanges: ~0.13 s of one core idle at the end of a run).
TAIL_CHUNKS = 4


def _long_line(f: IO[bytes]) -> bytes | None:
    """The next line of ``f``, or None when it is over MAX_LINE_BYTES (then read past, in
    pieces: memory stays within the bound), as ``lines_of`` reads it."""
    return next(recording.lines_of(f), None)


def _har_chunks(path: Path, size: int) -> Iterator[Chunk]:
    broken: list[str] = []
    exchanges = read_exchanges([path], on_broken=lambda _p, _n, reason: broken.append(reason))
    for batch in batched(exchanges, size):
        yield Chunk(str(path), 0, list(batch), tuple(broken))
        broken.clear()
    if broken:
        yield Chunk(str(path), 0, [], tuple(broken))


def input_bytes(paths: Iterable[str | Path]) -> int:
    return sum(Path(p).stat().st_size for p in paths if Path(p).is_file())


#: Recordings larger than this together are not counted beforehand (progress without a total).
COUNTED_BYTES = 256 * 1024 * 1024


def count_exchanges(paths: Sequence[str | Path]) -> int | None:
    """How many exchanges the JSON-lines recordings hold (lines but the header), for a
    progress total; None when unknown (a HAR, a missing file, too large to count quickly)."""
    files = [Path(p) for p in paths]
    try:
        if any(p.suffix.lower() == ".har" or not p.is_file() for p in files) \
                or input_bytes(files) > COUNTED_BYTES:
            return None
        total = 0
        for path in files:
            data = path.read_bytes()
            lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
            total += lines - (1 if data.lstrip().startswith(b'{"format"') else 0)
        return max(total, 0)
    except OSError:
        return None


# ----------------------------------------------------------------------------- in a worker

_job: Job | None = None


#: Set on an exchange the job left undone because the run is stopping (not sent, not judged).
STOPPED = "stopped"
#: Set in an exchange's ``meta`` by a job that sends, for one it judged without sending (a
#: service description): the report counts it apart from the calls sent.
NOT_SENT = "not_sent"


def _start(job: Job, stop: Any = None, counter: Any = None, owner: int | None = None) -> None:
    global _job
    if owner is not None:  # a worker process: it ends with the command, even a kill -9 of it
        lifeline.die_with(owner)
    if counter is not None:  # a worker process: its calls count in the parent's progress
        progress.in_worker(counter)
    if stop is not None:  # a worker process: the parent decides when to stop, and its
        stopping.in_worker(stop)  # reports show secrets through the job's redaction
        use_report_redaction(getattr(job, "redaction", None))
    _job = job
    job.setup()
    if stop is not None:  # a worker process: what it holds now (modules, the job) lives as
        gc.freeze()  # long as it does; the collector stops walking it in every full collection
        gc.set_threshold(_YOUNG_OBJECTS, *gc.get_threshold()[1:])


#: A worker's young-generation threshold: judging allocates ~100 short-lived objects an
#: exchange and makes no cycles of its own, so the collector runs every ~200 exchanges instead
#: of every ~20 (the default 2,000 objects); ~4% less CPU per exchange (callgrind, same run).
_YOUNG_OBJECTS = 20_000


def process(chunk: Chunk) -> ChunkResult:
    """Decode, judge and tally one chunk (in whichever process holds the job)."""
    assert _job is not None, "the job is not set up in this process"
    result = ChunkResult(chunk.source, broken=list(chunk.broken))
    items = _items(chunk)
    decoded = _decode(chunk.source, chunk.first_line, items, result)
    chosen = getattr(_job, "chosen", None)  # a job may leave exchanges out (--operation...)
    exchanges = decoded if chosen is None else [e for e in decoded if chosen(e)]
    result.unselected = len(decoded) - len(exchanges)
    try:
        judged = list(_job.judge_all(exchanges, result.counts))
    except RunStopped:  # the run must end (no answers, TLS): not one odd exchange
        raise
    except Exception:  # one odd exchange must not end the run: judge them one by one
        result.counts.clear()
        judged = [_judge_one(exchange, result) for exchange in exchanges]
    counts, kept, examples = result.counts, result.kept, result.examples
    redaction = report_redaction()
    for exchange, findings in zip(exchanges, judged, strict=False):
        if not findings:  # the usual case (lint counts passed ones in the tally)
            continue
        failing = False
        answer = exchange.meta.get(ANSWER, exchange.response)  # the answer judged
        operation = next((f.operation for f in findings if f.operation),
                         exchange.meta.get("operation"))
        if redaction is not None and any(f.verdict in _KEPT for f in findings):
            # its secrets, noted before its findings quote them (the report shows them so)
            redaction.observe(exchange.request, answer, operation)
        for f in findings:
            if f.verdict in _KEPT:
                kept.append(f)
                if f.verdict is Verdict.FAILED:
                    failing = True
                    if (case := f.case) not in examples:
                        examples[case] = example_text(exchange.request, answer, operation)
            else:
                counts[f.rule, f.operation, f.binding, f.verdict] += 1
        result.failing += failing
    result.exchanges = len(decoded)
    metas = [e.meta for e in exchanges if e.meta]  # (most recorded exchanges have none)
    result.stopped = sum(1 for meta in metas if meta.get(STOPPED))
    result.unsent = sum(1 for meta in metas if meta.get(NOT_SENT))
    if redaction is not None:
        result.secrets = redaction.learned()
    _time(exchanges, result.seconds)
    size = chunk.span[1] if chunk.span else sum(len(i) for i in items if type(i) is bytes)
    if _LARGE_EXCHANGE * len(items) < size:
        gc.collect()  # see _LARGE_EXCHANGE
    return result


#: Bytes of an exchange (its recording line, on average over a chunk) past which the chunk's
#: garbage is collected when it is done: a replayed exchange leaves its request (a 1 MB header
#: twice over) in a cycle of httpcore's connection objects, and a worker's lazy collector
#: (``_YOUNG_OBJECTS``) let ~200 of them pile up, 250-400 MB a worker. One collection per
#: chunk of such exchanges (a few of them) costs little beside sending them.
_LARGE_EXCHANGE = 64 << 10


def _time(exchanges: Sequence[Exchange], seconds: Counter[tuple[str | None, str | None]]
          ) -> None:
    """Add each exchange's duration (replayed: the target's answer time; recorded: the
    recorded one) under the operation and binding its recording classified it as."""
    for exchange in exchanges:
        timings = exchange.timings
        duration = timings.get(ANSWERED_IN, timings.get("duration")) if timings else None
        if duration:
            meta = exchange.meta
            seconds[meta.get("operation"), _LABELS.get(meta.get("binding"))] += duration


#: Replay writes how long the target took to answer under this timing key, and the answer
#: under this meta key (a failure's example shows the answer judged, not the recorded one).
ANSWERED_IN = "answered_in"
ANSWER = "answer"
_LABELS = {b.value: b.label for b in Binding}


def _judge_one(exchange: Exchange, result: ChunkResult) -> list[Finding]:
    assert _job is not None
    try:
        return next(iter(_job.judge_all([exchange], result.counts)))
    except RunStopped:
        raise
    except Exception as exc:
        result.broken.append(f"{exchange.source}: exchange #{exchange.index} cannot be judged "
                             f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
        return []


def _items(chunk: Chunk) -> list[bytes | str | None] | list[Exchange]:
    """A chunk's lines (those of its span read from its file) or exchanges."""
    if chunk.span is None:
        return chunk.items
    offset, length = chunk.span
    with open(chunk.source, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    # Each line with its newline, as lines_of reads them (a JSON decoder skips it): found by
    # memchr, a sixth of bytes.split's byte-by-byte loop (~1 us a line of ~900 bytes).
    return io.BytesIO(data).readlines()


def _decode(source: str, first_line: int, items: list[bytes | str | None] | list[Exchange],
            result: ChunkResult) -> list[Exchange]:
    exchanges: list[Exchange] = []
    for offset, item in enumerate(items):
        position = len(exchanges) + 1
        if isinstance(item, Exchange):
            item.index, item.source = position, source
            exchanges.append(item)
            continue
        if item is None:
            result.broken.append(too_long(f"{source}:{first_line + offset}"))
            continue
        if isinstance(item, str):  # refused by the reader (refused_line)
            result.broken.append(item)
            continue
        if not item or item.isspace():  # (``not item.strip()`` without its copy)
            continue
        try:
            data = load_line(item, _loads)
            exchanges.append(Exchange.from_dict(data, index=position, source=source))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            result.broken.append(line_refused(f"{source}:{first_line + offset}", exc))
    return exchanges


def _loads(line: bytes) -> Any:
    """A JSON line decoded by orjson (~3x faster than json), meaning exactly what json reads.

    orjson refuses some lines json reads (UTF-16, a BOM, lone surrogates, NaN): json decides
    them, except a line nested deeper than orjson's limit (1024), which is broken. It reads an
    integer beyond 64 bits as a float where json keeps it exact: a line with 19 digits in a
    row (anywhere, text included: cheap to test) goes to json too."""
    if _LONG_NUMBER in line.translate(_DIGITS_TO_ZERO):
        return json.loads(line)
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit"):  # json would only recurse deeper and fail
            raise ValueError("JSON nested too deeply") from None
        return json.loads(line)


_DIGITS_TO_ZERO = bytes(0x30 if 0x30 <= c <= 0x39 else 0x78 for c in range(256))  # 0-9: "0"
_LONG_NUMBER = b"0" * 19


# ----------------------------------------------------------------------------- the parent


def results(job: Job, source: Iterable[Chunk], workers: int) -> Iterator[ChunkResult]:
    """``process`` over every chunk, in order: in this process, or over ``workers`` processes
    with a bounded number of chunks in flight (memory stays flat)."""
    if workers <= 1:
        _start(job)
        redaction = getattr(job, "redaction", None)
        try:
            with redacting_reports(redaction) if redaction else contextlib.nullcontext():
                for chunk in source:
                    if stopping.requested():
                        return
                    yield process(chunk)
        finally:
            job.close()
        return
    context = multiprocessing.get_context(getattr(job, "start_method", "forkserver"))
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start,
                               initargs=(job, stopping.shared_event(context),
                                         progress.shared_counter(context), os.getpid()))
    forked = context.get_start_method() == "fork"
    pending: deque[Future[ChunkResult]] = deque()
    try:
        for chunk in source:
            if stopping.requested():
                break
            with stopping.held() if forked and not pending else contextlib.nullcontext():
                pending.append(pool.submit(process, chunk))  # the first one forks them
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run(job: Job, paths: Sequence[str | Path], report: Report, *, workers: int, chunk_size: int,
        on_broken: Callable[[str], None] = lambda reason: None,
        on_progress: Callable[[ChunkResult], None] = lambda result: None) -> int:
    """Judge every exchange of ``paths`` with ``job`` into ``report``; the broken-line count.

    Findings reach the report by index within each recording (1-based, broken lines not
    counted, as ``read_exchanges`` numbers them).

    On SIGINT or SIGTERM (``harness.stopping``) the chunks in flight finish (a job that
    sends checks the flag before each call), nothing more is read, and the report keeps what
    was judged, marked interrupted.
    """
    with stopping.cooperative():
        broken = _run(job, paths, report, workers, chunk_size, on_broken, on_progress)
    if stopping.requested():
        report.interrupt()
    return broken


def _run(job: Job, paths: Sequence[str | Path], report: Report, workers: int, chunk_size: int,
         on_broken: Callable[[str], None], on_progress: Callable[[ChunkResult], None]) -> int:
    done: dict[str, int] = {}
    broken = 0
    counts: Tally = Counter()  # the chunks' counts not yet in the report (see below)
    try:
        for result in results(job, chunks(paths, chunk_size), workers):
            _take(result, report, done, counts, on_broken)
            broken += len(result.broken)
            on_progress(result)
    finally:
        report.add_counts(counts)
    return broken


def _take(result: ChunkResult, report: Report, done: dict[str, int], counts: Tally,
          on_broken: Callable[[str], None]) -> None:
    """One chunk's result into ``report``. Its counts are summed into ``counts``, which
    reach the report at once before a chunk's failures and warnings do (and at the end):
    the report then holds its keys in the same order as chunk by chunk, and a run of lint
    that fails nothing (~2,000 keys a chunk, ~8 dict operations each in ``add_counts``)
    costs the parent a sum per key instead."""
    offset = done.get(result.source, 0)
    for reason in result.broken:
        on_broken(reason)
    report.exchanges += (result.exchanges - result.unselected - result.stopped
                         - result.unsent)
    if result.unselected:
        report.not_sent["not_selected"] += result.unselected
    if result.unsent:
        report.not_sent["service_descriptions"] += result.unsent
    if result.secrets and report.redaction is not None:
        report.redaction.merge(result.secrets)
    counts.update(result.counts)
    if result.kept:
        report.add_counts(counts)
        counts.clear()
    report.add_seconds(result.seconds)
    for case, text in result.examples.items():
        if case not in report.examples:
            report.examples[case] = (report.redaction.text(text) if report.redaction
                                     else text)
    for finding in result.kept:
        if finding.index is not None:
            finding = replace(finding, index=finding.index + offset)
        report.add(finding)
    done[result.source] = offset + result.exchanges


def default_workers(paths: Sequence[str | Path]) -> int:
    """One process for a small input, else one per core."""
    if input_bytes(paths) < SMALL_INPUT_BYTES:
        return 1
    return max(1, os.cpu_count() or 1)

