"""The recording writer: a child process that turns captured flows into recording lines.

Why a process: classifying, redacting, encoding and writing an exchange costs CPU, and
mitmproxy runs every hook on its one event-loop thread; a thread would not help (it holds the
same GIL). So the proxy only takes a snapshot of each finished flow (its bytes and headers as on
the wire, its timestamps) and hands it over a pipe; this process classifies it
(``harness.contract.bindings.classify``), redacts it, writes it as one JSON line and prints the
console line. It reads every exchange waiting in the pipe at once, writes their lines and
flushes the file once, acknowledges them on a second pipe (every ``CHUNK`` exchanges at least),
then prints their console lines before it reads again; while it works, the next batch gathers
in the pipe. Exchanges are written in the order they finished.

No answer without its record: the proxy holds each response until the writer has acknowledged
its exchange (written and flushed to the OS); if the writer dies first, the proxy answers 502
instead and stops. So every exchange a client got an answer to is in the file, whichever
process is killed. Not fsync'd: a power cut can still lose what the OS had not yet written.

The writer ignores SIGINT/SIGTERM and stops when its input ends, after writing everything it
was handed; the proxy closes that input in its ``done`` hook and waits. A proxy killed with
SIGKILL closes it too, so the writer still writes every exchange handed over.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import marshal
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any
from urllib.parse import SplitResult, urlsplit

from harness.capture.release import Release
from harness.contract.bindings import classify
from harness.contract.model import Contract
from harness.errors import ClassificationError, ServiceDescription
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse

logger = logging.getLogger(__name__)
_LENGTH = struct.Struct("!I")
#: What the writer tells the proxy after each batch: how many exchanges it has handled so far.
_ACK = struct.Struct("!Q")
#: How long the proxy waits, when it stops, for the writer to finish the exchanges handed over.
DRAIN_TIMEOUT = 120.0

#: What the proxy hands over per flow (see ``harness.capture.addon.snapshot_of``): plain tuples of
#: str/bytes/float, so ``marshal`` carries them cheaply.
Snapshot = tuple[Any, ...]


@dataclass
class WriterSetup:
    """Everything the writer needs; sent as the first message (the key never goes on argv)."""

    path: str
    contract: Contract
    header: dict[str, Any]
    key: bytes | None  # None: redaction off
    redact_names: list[str] = field(default_factory=list)
    upstream: str | None = None
    keep_foreign: bool = False
    #: Where the key is kept (None: in memory only, or no redaction), for the user to be told.
    key_file: Path | None = None


# -- proxy side ----------------------------------------------------------------------------------


class WriterProcess:
    """The proxy's handle on the writer: ``put`` snapshots, ``close`` to drain and stop.

    ``on_failure(message)`` is called (on the event loop) when the writer stops on its own,
    e.g. the disk is full. ``entry`` is the module whose ``main()`` the child runs: this
    module's, or another that reads the same pipes (``harness.shadow.worker``).

    ``backlog``: bytes held in this process while the pipe is full, written as it drains,
    before the proxy waits for the writer (0: it waits at once; capture holds each answer
    for its writer anyway). The shadow, which answers at once, sets one: a worker that falls
    behind for a while then costs its clients nothing, and memory stays bounded.
    """

    def __init__(self, setup: Any, out: IO[str] | None,
                 on_failure: Callable[[str], None], entry: str = __name__,
                 backlog: int = 0) -> None:
        self._status, status_w = os.pipe()
        self._acks, acks_w = os.pipe()
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
        stdout = out if out is not None and _has_fileno(out) else None
        if stdout is not None:
            stdout.flush()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"from {entry} import main; main()",
             str(status_w), str(acks_w)],
            stdin=subprocess.PIPE, stdout=stdout, pass_fds=(status_w, acks_w), env=env,
            start_new_session=True)  # a Ctrl-C for the proxy must not kill the writer
        os.close(status_w)
        os.close(acks_w)
        self._input = self.proc.stdin.fileno()  # type: ignore[union-attr]
        _widen(self._input)
        self._pending: list[bytes] = []
        self._loop = _running_loop()
        self.backlog = backlog if self._loop is not None else 0
        self._held: collections.deque[memoryview] = collections.deque()
        self._held_bytes = 0
        if self.backlog:
            os.set_blocking(self._input, False)
        self._scheduled = False
        self._on_failure = on_failure
        #: How long ``close`` waits for the writer before it kills it (seconds).
        self.drain_timeout = DRAIN_TIMEOUT
        self.failed: str | None = None
        self.sent = 0  # snapshots handed over so far
        self.acked = 0  # of which the writer has written and flushed (or skipped) so far
        self._waiting: collections.deque[tuple[int, Release]] = collections.deque()
        self._acks_read = bytearray()
        if self._loop is not None:
            self._loop.add_reader(self._acks, self._read_acks)
        self._send(_frame(pickle.dumps(setup)))

    def put(self, snapshot: Snapshot) -> int:
        """Hand one exchange over; returns its number, for ``written``. Sent at once when its
        answer waits for the writer (no ``backlog``: capture); else once per event-loop
        iteration, one write for a burst (the shadow, whose answers do not wait)."""
        self._pending.append(_frame(marshal.dumps(snapshot)))
        self.sent += 1
        if not self.backlog:  # always so without a loop
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush)
        return self.sent

    def written(self, number: int) -> Release:
        """Settled once exchange ``number`` is in the recording (written and flushed to the OS,
        or skipped by the writer), in the callback that reads the writer's acknowledgement;
        with ``WriterGone`` if the writer stops before."""
        release = Release()
        if self.failed:
            release.settle(WriterGone(self.failed))
        elif number <= self.acked:
            release.settle()
        else:
            self._waiting.append((number, release))
        return release

    def _read_acks(self) -> None:
        try:
            chunk = os.read(self._acks, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:  # the writer is gone (killed, or failed and said why)
            self._writer_stopped()
            return
        self._acks_read += chunk
        whole = len(self._acks_read) - len(self._acks_read) % _ACK.size
        if whole:
            (self.acked,) = _ACK.unpack_from(self._acks_read, whole - _ACK.size)
            del self._acks_read[:whole]
        while self._waiting and self._waiting[0][0] <= self.acked:
            self._waiting.popleft()[1].settle()

    def _flush(self) -> None:
        self._scheduled = False
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            self._send(data)

    def _send(self, data: bytes) -> None:
        if self.failed:
            return
        if not self.backlog:
            view = memoryview(data)
            try:
                while view:  # blocking: when the writer lags behind, the proxy waits for it
                    view = view[os.write(self._input, view):]
            except OSError:  # the writer is gone; it said why on the status pipe
                self._writer_stopped()
            return
        self._held.append(memoryview(data))
        self._held_bytes += len(data)
        self._write_held(block=self._held_bytes > self.backlog)

    def _write_held(self, block: bool = False) -> None:
        """Write what is held: what the pipe takes now, the rest when it has room (the event
        loop says so); with ``block`` (over the backlog, or closing), all of it, waiting."""
        try:
            while self._held:
                try:
                    written = os.write(self._input, self._held[0])
                except BlockingIOError:
                    if not block:
                        break
                    select.select([], [self._input], [])
                    continue
                self._held_bytes -= written
                if written == len(self._held[0]):
                    self._held.popleft()
                else:
                    self._held[0] = self._held[0][written:]
        except OSError:  # the writer is gone; it said why on the status pipe
            self._held.clear()
            self._writer_stopped()
            return
        assert self._loop is not None
        if self._held:
            self._loop.add_writer(self._input, self._write_held)
        else:
            self._loop.remove_writer(self._input)

    def _writer_stopped(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self._acks)
            if self.backlog:
                self._loop.remove_writer(self._input)
                self._held.clear()
        self.proc.wait()
        message = _read_all(self._status).strip() or (
            f"the recording writer stopped unexpectedly (exit status {self.proc.returncode})")
        if not self.failed:
            self.failed = message
            self._on_failure(message)
        self._fail_waiting()

    def _fail_waiting(self) -> None:
        # From the loop, not at once: this may run inside a hook (a write to a writer that
        # died), where releasing another answer would re-enter the layers.
        gone = WriterGone(self.failed or "the recording writer stopped")
        while self._waiting:
            release = self._waiting.popleft()[1]
            if self._loop is None:
                release.settle(gone)
            else:
                self._loop.call_soon(release.settle, gone)

    def close(self) -> str | None:
        """Flush, end the writer's input and wait until it has written everything; returns why
        it failed, if it did."""
        self._flush()
        if self._held and not self.failed:
            self._write_held(block=True)  # everything handed over reaches the writer
        if self._loop is not None and not self.failed:
            self._loop.remove_reader(self._acks)
        with contextlib.suppress(OSError):  # a writer that died already closed its end
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=self.drain_timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        message = _read_all(self._status).strip()
        os.close(self._status)
        os.close(self._acks)
        if message and not self.failed:
            self.failed = message
        self._fail_waiting()  # only flows cut short by the stop can still be waiting
        return self.failed


class WriterGone(Exception):
    """The writer stopped before it recorded an exchange: that exchange must not be answered."""


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _has_fileno(stream: IO[str]) -> bool:
    try:
        stream.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    return True


#: The hand-over pipe's size (Linux; elsewhere the system's): room for a burst of exchanges
#: while the writer is busy or waits for a CPU, so that the proxy does not wait for it (a
#: 64 KiB pipe holds about 20 of the service's exchanges; under load the proxy blocked on it).
PIPE_BYTES = 1 << 20


def _widen(fd: int) -> None:
    with contextlib.suppress(ImportError, AttributeError, OSError):  # a smaller pipe: less room
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _frame(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


def _read_all(fd: int) -> str:
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except BlockingIOError:
        pass
    return b"".join(chunks).decode("utf-8", "replace")


# -- writer side ---------------------------------------------------------------------------------


def main() -> None:
    """Entry point of the writer process: ``argv[1]`` is the status pipe's file descriptor."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # stop only when the input ends: nothing is lost
    status = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")
    acks = int(sys.argv[2])
    batches = frames(sys.stdin.buffer.fileno())
    first = next(batches, [b""])  # the setup, maybe with the first snapshots behind it
    setup: WriterSetup = pickle.loads(first[0])
    transcriber = Transcriber(setup, Console(sys.stdout))
    code, done = 0, 0
    try:
        for batch in itertools.chain([first[1:]], batches):
            for frame in batch:
                transcriber.record_safely(marshal.loads(frame))
            transcriber.writer.flush()  # the pipe is drained: every line reaches the OS
            if batch:
                done += len(batch)  # only now may the proxy answer these exchanges' clients
                acks = acknowledge(acks, done)
            transcriber.console.flush()  # after: no answer waits for its console line
    except OSError as exc:  # disk full, file gone: say so; the proxy stops visibly
        print(f"cannot write recording {setup.path}: {exc.strerror or exc}", file=status,
              flush=True)
        code = 1
    finally:
        transcriber.close()

    sys.exit(code)


def acknowledge(fd: int, done: int) -> int:
    """Tell the proxy ``done`` exchanges are recorded; -1 once it is gone (killed: the writer
    still writes every exchange it was handed)."""
    if fd < 0:
        return fd
    view = memoryview(_ACK.pack(done))
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        return -1
    return fd


#: The writer acknowledges at least every CHUNK exchanges, not once per batch: the proxy holds
#: each response until its exchange is acknowledged, and under load a batch holds most of the
#: exchanges in flight, so one acknowledgement per batch made the proxy idle while the writer
#: worked, and the writer idle while the proxy worked (a convoy). With 32 clients, chunks of 16
#: gave about a fifth more exchanges per second in bench/bench_capture.py, for about a sixth
#: more writer CPU per exchange (same run); waiting for batches to fill (2 ms) cost throughput
#: and saved no CPU.
CHUNK = 16


def frames(fd: int) -> Iterator[list[bytes]]:
    """Chunks of frames: every complete frame the pipe holds, read at once (a burst of
    exchanges costs one read), in chunks of at most CHUNK (each costs one flush and one
    acknowledgement in the writer). Ends when the input ends. While the writer records a
    chunk, the next exchanges gather in the pipe.
    """
    pending = bytearray()
    while chunk := os.read(fd, 1 << 20):
        pending += chunk
        batch, start = [], 0
        while len(pending) - start >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(pending, start)
            end = start + _LENGTH.size + size
            if end > len(pending):
                break
            batch.append(bytes(pending[start + _LENGTH.size:end]))
            start = end
        del pending[:start]
        for at in range(0, len(batch), CHUNK):
            yield batch[at:at + CHUNK]  # the caller records, flushes and acknowledges it


@dataclass
class Taken:
    """An exchange classified by ``Transcriber.take``, waiting for ``Transcriber.write``."""

    exchange: Exchange
    envelope: Any  # the parsed SOAP envelope, for redaction (None: not SOAP)
    line: tuple[str, list[str]]  # the console line and the counters it adds to


class Transcriber:
    """Classifies, redacts and writes each snapshot; tells the console."""

    def __init__(self, setup: WriterSetup, console: Console) -> None:
        from harness.traffic.recording import RecordingWriter
        from harness.traffic.redaction import Redactor

        self.contract = setup.contract
        self.upstream, self.keep_foreign = setup.upstream, setup.keep_foreign
        self.redactor = (Redactor.for_contract(setup.contract, setup.key, setup.redact_names)
                         if setup.key is not None else None)
        self.writer = RecordingWriter(setup.path, **setup.header)  # appends: the header exists
        self.console = console
        self.skipped = 0  # exchanges that could not be recorded (said on stderr)
        self._service_urls: dict[str, bool] = {}

    def record(self, snapshot: Snapshot) -> None:
        self.record_exchange(exchange_from(snapshot))

    def record_exchange(self, exchange: Exchange) -> None:
        """Classify, redact and write ``exchange`` (``harness mock --record`` hands over the
        exchanges it forwarded), and tell the console."""
        taken = self.take(exchange)
        if taken is not None:
            self.write(taken)

    def take(self, exchange: Exchange) -> Taken | None:
        """``exchange`` classified (its ``meta``), not yet redacted nor written (``write``:
        ``harness shadow`` writes it once its mirror is done); None for foreign traffic left
        out."""
        meta, envelope = self._classify(exchange.request)
        if meta.get("foreign") and not self.keep_foreign:
            self.console.left_out()
            return None
        line = self.console.describe(exchange, meta)  # before redaction: the user's console
        exchange.meta.update(meta)
        return Taken(exchange, envelope, line)

    def write(self, taken: Taken, *, flush: bool = False) -> int:
        """Redact ``taken`` and write its line; its index in this session's lines."""
        self.writer.write(self._redact(taken.exchange, taken.envelope), flush=flush)
        self.console.recorded(self.writer.count, *taken.line)
        return self.writer.count

    def record_safely(self, snapshot: Snapshot) -> None:
        """``record``, but one exchange the harness cannot represent is said on stderr and
        skipped: hostile traffic must not stop the capture of the exchanges after it."""
        try:
            self.record(snapshot)
        except OSError:
            raise  # the recording itself cannot be written: stop visibly
        except Exception as exc:
            self.skipped += 1
            print(f"harness capture: exchange {snapshot[0]} {snapshot[1]!r} not recorded: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)

    def flush(self) -> None:
        """Hand the lines recorded since the last flush to the OS (file and console)."""
        self.writer.flush()
        self.console.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a failed write was said already; its rest is lost
            self.writer.close()
        self.console.done()

    def _for_service(self, request: HttpRequest) -> bool:
        """``is_for_service``, remembered per URL without its query: a proxy sees few distinct
        ones (an endpoint per SOAP call, an operation per GET/POST one)."""
        where = request.url.partition("?")[0]
        known = self._service_urls.get(where)
        if known is None:
            if len(self._service_urls) >= 4096:  # hostile traffic: bounded, whatever it sends
                self._service_urls.clear()
            known = self._service_urls[where] = is_for_service(self.contract, request,
                                                               self.upstream)
        return known

    def _classify(self, request: HttpRequest) -> tuple[dict[str, Any], Any]:
        if not self._for_service(request):
            return {"foreign": True}, None
        try:
            call = classify(self.contract, request)
        except ServiceDescription as exc:  # traffic, not a violation: counted by kind
            return {"description": exc.kind}, None
        except ClassificationError as exc:
            return {"unclassified": str(exc)}, None
        arguments = call.arguments  # pairs: JSON writes them as the lists readers get back
        if self.redactor is not None:
            arguments = self.redactor.arguments(arguments)
        return ({"binding": call.binding.value, "operation": call.operation.name,
                 "arguments": arguments}, call.envelope)

    def _redact(self, exchange: Exchange, envelope: Any) -> Exchange:
        if self.redactor is None:
            return exchange
        try:
            notes: list[str] = []
            request = self.redactor.request(exchange.request, envelope=envelope, notes=notes)
            response = (self.redactor.response(exchange.response, notes=notes,
                                               operation=exchange.meta.get("operation"))
                        if exchange.response else None)
        except Exception as exc:  # never write what could not be redacted
            logger.warning(f"redaction failed ({type(exc).__name__}); bodies left out")
            return _stripped(exchange, f"redaction failed: {type(exc).__name__}")
        if notes:
            exchange.meta["redaction_dropped"] = notes
        exchange.request, exchange.response = request, response
        return exchange


def recording_setup(path: str, contract: Contract, *, redact: bool = True,
                    redact_names: Sequence[str] = (), key_file: str | None = None,
                    upstream: str | None = None, mode: str = "reverse",
                    keep_foreign: bool = False, flag: str = "--out",
                    header: dict[str, Any] | None = None) -> WriterSetup:
    """What a writer of ``path`` needs: its header and redaction key (``key_file``, else the
    recording's own, else a new one in the key store: ``harness.traffic.keys.capture_key``;
    ``-``: a key used once and kept nowhere). Checked before
    anything is recorded: appending keeps the recording's redaction (same setting, same key),
    and any error is a one-line HarnessError (``flag``: the option naming ``path``);
    ``header``: more for the header line (shadow's targets)."""
    from harness.traffic.keys import capture_key, key_id
    from harness.traffic.recording import RecordingWriter
    from harness.traffic.redaction import Redactor

    redactor, key_path = None, None
    if redact:
        key, key_path = capture_key(path, key_file)
        redactor = Redactor.for_contract(contract, key, redact_names)
    _check_append(path, None if redactor is None else key_id(redactor.key), flag)
    header = {"upstream": upstream, "redacted": redactor is not None, "mode": mode,
              "redaction": redactor.settings() if redactor else None, **(header or {})}
    RecordingWriter(path, **header).close()  # any error is said now, before listening
    return WriterSetup(path, contract, header, redactor.key if redactor else None,
                       list(redact_names), upstream, keep_foreign, key_path)


def _check_append(path: str, key: str | None, flag: str) -> None:
    """Appending to a recording must keep its redaction: same setting (``key`` None: off),
    same key (its id)."""
    from harness.errors import HarnessError
    from harness.traffic.recording import read_header

    if not Path(path).is_file() or Path(path).stat().st_size == 0:
        return
    header = read_header(path)
    if header is None:
        raise HarnessError(f"{path} exists and is not a harness recording; "
                           f"choose another {flag}")
    if bool(header.get("redacted")) != (key is not None):
        raise HarnessError(f"{path} was recorded with redaction "
                           f"{'on' if header.get('redacted') else 'off'}; append to it the "
                           f"same way or choose another {flag}")
    theirs = (header.get("redaction") or {}).get("key_id")
    if key is not None and theirs and theirs != key:
        raise HarnessError(f"{path} was redacted with another key; pass its key file "
                           f"(--key-file) or choose another {flag}")


def _stripped(exchange: Exchange, reason: str) -> Exchange:
    request = replace(exchange.request, url=exchange.request.url.split("?", 1)[0], body=b"",
                      headers=())
    response = replace(exchange.response, body=b"", headers=()) if exchange.response else None
    return replace(exchange, request=request, response=response,
                   meta={**exchange.meta, "redaction_dropped": [reason]})


class Console:
    """One line per recorded exchange, and a summary when capture stops."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.counts: Counter[str] = Counter()
        self._lines: list[str] = []  # written at the next flush, once per batch

    def left_out(self) -> None:
        self.counts["foreign left out"] += 1

    def describe(self, exchange: Exchange, meta: dict[str, Any]) -> tuple[str, list[str]]:
        """The line for ``exchange`` and the counters it adds to once it is recorded."""
        request, response = exchange.request, exchange.response
        counted = ["recorded"]
        if response is None:
            status = f"error: {exchange.meta.get('error') or 'no response'}"
            counted.append("errors")
        else:
            status = str(response.status)
        if "operation" in meta:
            what = f"{meta['binding']:<6} {meta['operation']}"
            counted.append(what)
        elif meta.get("foreign"):
            what = f"foreign {request.method} {request.url}"
            counted.append("foreign")
        elif "description" in meta:
            what = f"description {request.method} {request.url.split('://', 1)[-1]} " \
                   f"({meta['description']})"
            counted.append("service descriptions")
        else:
            path = request.url.split("://", 1)[-1]
            path = path[path.find("/"):] if "/" in path else "/"
            what = f"unclassified {request.method} {path} ({meta['unclassified']})"
            counted.append("unclassified")
        elapsed = exchange.timings.get("duration", 0.0) * 1000
        return f"{what} {status} {elapsed:.1f} ms", counted

    def recorded(self, index: int, line: str, counted: list[str]) -> None:
        counts = self.counts
        for key in counted:  # not Counter.update: its checks cost more than these 3 additions
            counts[key] += 1
        self._lines.append(f"#{index:<5} {line}\n")

    def flush(self) -> None:
        if self._lines:
            self.out.write("".join(self._lines))
            self._lines.clear()
        self.out.flush()

    def done(self) -> None:
        self.flush()
        print(summary(self.counts), file=self.out, flush=True)


def summary(counts: Counter[str]) -> str:
    lines = [f"captured {counts['recorded']} exchange(s)"]
    pairs = sorted(k for k in counts if k[:1].islower() and " " in k
                   and k not in ("foreign left out", "not recorded", "service descriptions"))
    lines += [f"  {k}: {counts[k]}" for k in pairs]
    lines.append("  " + ", ".join(f"{k}: {counts[k]}" for k in
                                  ("unclassified", "foreign", "errors", "foreign left out",
                                   "service descriptions")))
    return "\n".join(lines)


# -- which requests are the service's ---------------------------------------------------------


def is_for_service(contract: Contract, request: HttpRequest, upstream: str | None) -> bool:
    """True when ``request`` goes to one of the contract's .asmx endpoints (on the upstream's
    host, when one is named, and on its port, when the upstream URL spells one out)."""
    parts = urlsplit(request.url)
    if upstream and not _on_upstream(parts, urlsplit(upstream)):
        return False
    return any(contract.endpoint(s) for s in parts.path.split("/")
               if s.lower().endswith(".asmx"))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _on_upstream(parts: SplitResult, wanted: SplitResult) -> bool:
    # Another port of the same host is another service (a second server on loopback or on
    # staging); a URL without a port names the host only, whatever the scheme.
    if wanted.hostname and parts.hostname and parts.hostname != wanted.hostname:
        return False
    try:
        port, wanted_port = parts.port or _DEFAULT_PORTS.get(parts.scheme), wanted.port
    except ValueError:
        return True  # an unreadable port cannot exclude what the host already matched
    return wanted_port is None or port == wanted_port


# -- snapshots -> exchanges ----------------------------------------------------------------------


def exchange_from(snapshot: Snapshot) -> Exchange:
    """The harness's Exchange of a snapshot: headers in order and case, bodies as on the wire."""
    (method, url, fields, body, version, started, sent, answer, error, notes) = snapshot
    request = HttpRequest(method, _representable(url), _headers(fields), body, version)
    response = None
    received = None
    if answer is not None:
        status, resp_fields, resp_body, reason, resp_version, first, last = answer
        response = HttpResponse(status, _headers(resp_fields), resp_body, reason, resp_version)
        received = (first, last)
    meta: dict[str, Any] = dict(notes or {})
    if error is not None and response is None:
        meta["error"] = error[0]
    timings = _timings(started, sent, received, error[1] if error else None)
    return Exchange(request, response, timings=timings, meta=meta)


def _headers(fields: Sequence[tuple[bytes, bytes]]) -> tuple[tuple[str, str], ...]:
    try:  # the common case, at C speed
        return tuple([(k.decode("utf-8"), v.decode("utf-8")) for k, v in fields])
    except UnicodeDecodeError:
        return tuple([(_text(k), _text(v)) for k, v in fields])


def _representable(url: str) -> str:
    """mitmproxy keeps request-target bytes that are not UTF-8 as lone surrogates, which no JSON
    holds: percent-encode the URL's non-ASCII bytes instead (the same URL to any server)."""
    if url.isascii():  # the common case, without encoding a copy
        return url
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raw = url.encode("utf-8", "surrogateescape")
        return "".join(chr(b) if b < 0x80 else f"%{b:02X}" for b in raw)
    return url


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # any byte survives; no lone surrogates reach JSON


def _timings(start: float, sent: float | None, received: tuple[float | None, float | None] | None,
             failed: float | None) -> dict[str, float]:
    first, last = received or (None, None)
    out = {"started": _us(start)}
    if sent:
        out["send"] = _us(sent - start)
        if first:
            out["wait"] = _us(first - sent)
    if first and last:
        out["receive"] = _us(last - first)
    end = last or failed
    if end:
        out["duration"] = _us(end - start)
    return out


def _us(seconds: float) -> float:
    """Rounded to the microsecond (``round(x, 6)`` goes through decimal digits: ten times the
    CPU, and the writer does this five times per exchange)."""
    return round(seconds * 1e6) / 1e6
