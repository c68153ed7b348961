"""mitmproxy addons that turn live traffic into a harness recording.

``Recorder`` records every exchange with the service as it completes (hook ``response``, and
``error`` for an exchange that got no response): it takes a snapshot of the flow (bytes and
headers as on the wire) and hands it to the recording writer, a child process
(``harness.capture.writer``) that classifies it with
``harness.contract.bindings.classify``, redacts it
before it touches the disk, writes it as one flushed JSON line and prints one console line
(and a summary when capture stops). The proxy's event loop does only the snapshot.

It runs inside ``harness capture``, or in your own mitmproxy::

    mitmdump -s harness/capture/addon.py --mode reverse:https://staging.example \\
        --set recording=traffic.jsonl
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from mitmproxy import ctx, exceptions, http
from mitmproxy.proxy.mode_specs import ReverseMode

from harness.capture import addresses
from harness.capture.release import Release
from harness.capture.writer import (
    Snapshot,
    WriterProcess,
    WriterSetup,
    recording_setup,
)
from harness.contract.model import Contract, school_mobile
from harness.errors import HarnessError

#: Marks a flow already handed to the writer (an error after its response adds nothing).
METADATA_KEY = "harness"
#: Bodies larger than this (``--max-body-mb``; mitmproxy's ``stream_large_bodies``) are
#: streamed through as they come instead of being held, and recorded truncated: their first
#: KEPT_BYTES, with their size and SHA-256 in ``meta.truncated``. Capture's memory then does
#: not depend on the size of a body.
DEFAULT_MAX_BODY_MB = 16
KEPT_BYTES = 64 * 1024
#: The largest --max-body-mb: a held body must fit what the writer's pipe carries.
MAX_BODY_MB = 1024
logger = logging.getLogger(__name__)


class Recorder:
    """Records every exchange with the service into a harness recording (JSON Lines)."""

    #: The module of the writer process (``WriterProcess``'s entry).
    entry = "harness.capture.writer"
    #: Whether a response waits until its exchange is in the recording (capture's guarantee:
    #: no answer without its record).
    hold = True
    #: Bytes held in the proxy while the writer's pipe is full (``WriterProcess``'s backlog).
    backlog = 0

    def __init__(self, contract: Contract | None = None, out: IO[str] | None = None) -> None:
        self.contract = contract or school_mobile()
        self.out = out  # where the writer prints the console lines (None: our stdout)
        self.writer: WriterProcess | None = None
        #: Where the redactor's key is (None: in memory only, or no redaction).
        self.key_file: Path | None = None
        self.failed: str | None = None  # why recording stopped, when it did
        self.rewrite = True  # ctx.options.rewrite_addresses (an option read costs a deep copy)

    def load(self, loader) -> None:
        loader.add_option("recording", str | None, None,
                          "Append every exchange with the service to this harness recording "
                          "(JSON Lines); created when missing, never truncated.")
        loader.add_option("recording_upstream", str | None, None,
                          "The service's base URL: named in the recording's header; traffic to "
                          "other hosts (or other ports, when it names one) is foreign.")
        loader.add_option("recording_mode", str, "reverse",
                          "Proxy mode named in the recording's header.")
        loader.add_option("keep_foreign", bool, False,
                          "Also record traffic that is not for the service, marked foreign.")
        loader.add_option("redact", bool, True,
                          "Replace personal data (sensitive parameters, results and headers) by "
                          "stable pseudonyms before anything is written.")
        loader.add_option("redact_names", Sequence[str], [],
                          "More parameter, element or header names to redact.")
        loader.add_option("rewrite_addresses", bool, True,
                          "Rewrite the service's own address in the service descriptions it "
                          "serves (WSDL, disco, help page) to the address the client used, so "
                          "that clients keep calling through the proxy.")
        loader.add_option("max_body_mb", int, DEFAULT_MAX_BODY_MB,
                          "Bodies larger than this many MB are streamed through and recorded "
                          "truncated (their first 64 KiB, size and SHA-256); sets mitmproxy's "
                          "stream_large_bodies.")
        loader.add_option("redaction_key_file", str | None, None,
                          "Key file of the pseudonyms (default: the recording's key in the "
                          "per-user key store, harness.traffic.keys, created 0600); '-' for a "
                          "random key kept in memory for this run only.")

    def configure(self, updated: set[str]) -> None:
        if "rewrite_addresses" in updated:
            self.rewrite = ctx.options.rewrite_addresses
        if "max_body_mb" in updated:
            if not 0 < ctx.options.max_body_mb <= MAX_BODY_MB:
                raise exceptions.OptionsError(
                    f"--max-body-mb must be 1 to {MAX_BODY_MB}")
            ctx.options.update(stream_large_bodies=f"{ctx.options.max_body_mb}m")
        watched = {"recording", "redact", "redact_names", "redaction_key_file",
                   "recording_upstream", "recording_mode", "keep_foreign"}
        if not updated & watched:
            return
        self.close()
        path = ctx.options.recording
        if not path:
            return
        try:
            setup = recording_setup(path, self.contract, redact=ctx.options.redact,
                                    redact_names=ctx.options.redact_names,
                                    key_file=ctx.options.redaction_key_file,
                                    upstream=ctx.options.recording_upstream,
                                    mode=ctx.options.recording_mode,
                                    keep_foreign=ctx.options.keep_foreign,
                                    header=self.extra_header())
        except HarnessError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        self.key_file = setup.key_file
        self.writer = WriterProcess(self.writer_setup(setup), self.out, self._writer_failed,
                                    self.entry, self.backlog)

    def extra_header(self) -> dict[str, object]:
        """More for the recording's header line (a subclass's own settings)."""
        return {}

    def writer_setup(self, setup: WriterSetup) -> object:
        """What the writer process is handed first (a subclass's writer may need more)."""
        return setup

    # -- events ------------------------------------------------------------------------------

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """A request body mitmproxy streams (over --max-body-mb) goes through a Tap."""
        if flow.request.stream is True:
            flow.request.stream = Tap()

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """A response mitmproxy streams (its Content-Length is over --max-body-mb) goes
        through a Tap: the client gets it as it comes, the recording its first bytes, size and
        hash. (A chunked one that grows past the limit is streamed without a tap: its
        recording says so.)"""
        if flow.response is not None and flow.response.stream is True:
            flow.response.stream = Tap()

    def response(self, flow: http.HTTPFlow) -> Release | None:
        """Record the exchange, and release the response only once it is in the recording: no
        client gets an answer the recording lacks (a 502 instead, with a ``meta.error`` line
        when the exchange cannot be handed to the writer; a 502 alone if the writer died).

        Not a coroutine: it returns the ``Release`` mitmproxy waits for (settled once the
        writer has the exchange), so that capture's connection handler completes the hook in
        the callback that reads the writer's acknowledgement, without a task per exchange
        (``harness.capture.lean``)."""
        try:
            snapshot = self._snapshot(flow)  # what the upstream sent, before any rewriting
        except Exception as exc:  # a flow the harness cannot take a snapshot of
            self._refuse_recorded(flow, f"no snapshot: {type(exc).__name__}: {exc}")
            return
        rewritten = keep_on_proxy(flow) if self.rewrite else None
        if snapshot is None:
            return
        writer = self.writer
        if writer is None or self.failed:
            refuse(flow, self.failed)
            return
        if rewritten:
            snapshot = (*snapshot[:-1], {**(snapshot[-1] or {}),
                                         "addresses_rewritten": rewritten})
        try:
            number = writer.put(snapshot)
        except Exception as exc:  # e.g. more than a pipe frame can carry
            self._refuse_recorded(flow, f"not recorded: {type(exc).__name__}: {exc}")
            return
        if not self.hold:
            return None
        return released(flow, writer.written(number))

    def error(self, flow: http.HTTPFlow) -> None:
        """An exchange that failed (the upstream hung up mid-body, the client gave up, no
        connection): recorded with the error and what came of the response (``snapshot_of``);
        nothing when its response was recorded already."""
        self._record(flow)

    def done(self) -> None:
        self.close()

    def close(self) -> None:
        """Stop the writer once it has written everything handed to it."""
        if self.writer is not None:
            failed = self.writer.close()
            self.failed = self.failed or failed
            self.writer = None

    # -- recording ---------------------------------------------------------------------------

    def _record(self, flow: http.HTTPFlow) -> None:
        # No response to hold back: the client has its error already.
        snapshot = self._snapshot(flow)
        if snapshot is not None and self.writer is not None and not self.failed:
            self.writer.put(snapshot)

    def _snapshot(self, flow: http.HTTPFlow) -> Snapshot | None:
        """The flow's snapshot when it is still to be recorded (once per flow, and only while
        recording), else None."""
        if METADATA_KEY in flow.metadata or flow.websocket is not None:
            return None
        flow.metadata[METADATA_KEY] = True
        if self.writer is None and not self.failed:
            return None  # no recording configured
        return snapshot_of(flow)

    def _refuse_recorded(self, flow: http.HTTPFlow, why: str) -> None:
        """Answer 502, and record the exchange as failed: its request (without its body) and
        ``meta.error``, so the recording says what the client was refused."""
        refuse(flow, why)
        flow.metadata[METADATA_KEY] = True
        if self.writer is None or self.failed:
            return
        req = flow.request
        self.writer.put((req.method, req.url, req.headers.fields, b"", req.http_version,
                         req.timestamp_start, req.timestamp_end, None, (why, time.time()),
                         {"request_body_left_out": len(req.raw_content or b"")}))

    def _writer_failed(self, message: str) -> None:
        # Disk full, file gone: stop visibly, never go on passing traffic unrecorded.
        self.failed = message
        logger.error(message)
        ctx.master.shutdown()


def released(flow: http.HTTPFlow, written: Release) -> Release:
    """Settled once ``written`` is: the response goes out then, or a 502 instead if the writer
    stopped first (``WriterGone``)."""
    done = Release()

    def settle() -> None:
        if written.exception is not None:
            refuse(flow, str(written.exception))
        done.settle()

    written.then(settle)
    return done


def refuse(flow: http.HTTPFlow, why: str | None) -> None:
    """Answer 502 instead of a response that could not be recorded."""
    flow.response = http.Response.make(
        502, f"harness capture: this exchange could not be recorded, so its response is "
             f"withheld ({why or 'the recording writer stopped'})\n".encode(),
        {"content-type": "text/plain; charset=utf-8"})


class Tap:
    """mitmproxy's stream callable for a body over --max-body-mb: passes every chunk on as it
    is, keeping the first KEPT_BYTES, the size and the SHA-256."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.size = 0
        self.head = bytearray()

    def __call__(self, data: bytes) -> bytes:
        self.hash.update(data)
        self.size += len(data)
        if len(self.head) < KEPT_BYTES:
            self.head += data[:KEPT_BYTES - len(self.head)]
        return data

    def note(self) -> dict[str, object]:
        return {"size": self.size, "sha256": self.hash.hexdigest(), "kept": len(self.head)}


def _body(message: http.Message, which: str, notes: dict[str, object]) -> bytes:
    """The body to record: as on the wire, or, streamed, what its Tap kept (noted)."""
    stream = message.stream
    if isinstance(stream, Tap):
        notes.setdefault("truncated", {})[which] = stream.note()  # type: ignore[index]
        return bytes(stream.head)
    if stream:  # streamed by mitmproxy without a tap (chunked, grew past the limit)
        notes.setdefault("truncated", {})[which] = {"size": None, "sha256": None, "kept": 0}
        return b""
    return message.raw_content or b""


def snapshot_of(flow: http.HTTPFlow) -> Snapshot:
    """What the writer needs of a finished flow, as plain tuples (cheap to take and to send):
    bytes and headers as on the wire, timestamps, the error if any. A flow that failed after
    its response began (the upstream hung up mid-body, the client gave up) is recorded
    without a response: its status and headers go in ``meta.partial_response``."""
    req, resp, error = flow.request, flow.response, flow.error
    notes: dict[str, object] = {}
    body = _body(req, "request", notes)
    answer = None
    if resp is not None and error is not None:
        notes["partial_response"] = {"status": resp.status_code, "reason": resp.reason,
                                     "headers": [[k.decode("utf-8", "replace"),
                                                  v.decode("utf-8", "replace")]
                                                 for k, v in resp.headers.fields]}
        if isinstance(resp.stream, Tap):  # streamed: what had come through
            notes["partial_response"]["received"] = resp.stream.note()
    elif resp is not None:
        answer = (resp.status_code, resp.headers.fields, _body(resp, "response", notes),
                  resp.reason, resp.http_version, resp.timestamp_start, resp.timestamp_end)
    return (req.method, req.url, req.headers.fields, body, req.http_version,
            req.timestamp_start, req.timestamp_end, answer,
            None if error is None else (error.msg, error.timestamp), notes or None)


def keep_on_proxy(flow: http.HTTPFlow) -> dict[str, object] | None:
    """Rewrite the service's own addresses in a service description on its way to the client
    (see ``harness.capture.addresses``); what was rewritten, or None."""
    req, resp = flow.request, flow.response
    if resp is None or not addresses.is_description(req.method, req.path, resp.status_code):
        return None
    try:
        body = resp.content or b""
    except ValueError:  # a content coding mitmproxy cannot undo: leave it as it is
        return None
    served = {addresses.origin(req.scheme, req.host, req.port)}
    if req.host_header:
        served.add(f"{req.scheme}://{req.host_header}")
    if "xml" in resp.headers.get("content-type", "xml").lower():
        served |= addresses.named_origins(body)
    to = client_origin(flow)
    new, found = addresses.rewrite(body, served, to)
    if not found:
        return None
    resp.content = new  # mitmproxy re-encodes it and sets Content-Length
    return {"from": found, "to": to}


def client_origin(flow: http.HTTPFlow) -> str:
    """The origin the client addressed: in reverse mode the proxy as the client reached it (the
    name it sent over TLS, else the socket address; mitmproxy has already replaced the Host
    header by the upstream's), in regular mode the scheme and Host header it asked for."""
    client, req = flow.client_conn, flow.request
    if isinstance(client.proxy_mode, ReverseMode):
        scheme = "https" if client.tls_established else "http"
        host, port = client.sockname[:2]
        return addresses.origin(scheme, client.sni or host, port)
    return f"{req.scheme}://{req.host_header}" if req.host_header else (
        addresses.origin(req.scheme, req.host, req.port))


#: For ``mitmdump -s harness/capture/addon.py``.
addons = [Recorder()]
