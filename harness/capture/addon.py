"""mitmproxy addons that turn live traffic into a harness recording.

``Recorder`` writes every exchange with the service to the recording as it completes (hook
``response``, and ``error`` for an exchange that got no response): classified by
``harness.bindings.classify``, redacted before it touches the disk, one flushed JSON line each.
``Console`` prints one line per exchange and a summary when mitmproxy shuts down.

They run inside ``harness capture``, or in your own mitmproxy::

    mitmdump -s harness/capture/addon.py --mode reverse:https://staging.example \\
        --set recording=traffic.jsonl
"""

from __future__ import annotations

import logging
import secrets
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import SplitResult, urlsplit

from mitmproxy import ctx, exceptions, http

from harness.bindings import classify
from harness.contract import Contract, school_mobile
from harness.errors import ClassificationError, HarnessError
from harness.exchange import Exchange, HttpRequest, HttpResponse
from harness.recording import RecordingWriter, read_header
from harness.redaction import Redactor, key_id, load_or_create_key

#: Where the Recorder leaves its verdict on a flow for the addons after it.
METADATA_KEY = "harness"
logger = logging.getLogger(__name__)


class Recorder:
    """Records every exchange with the service into a harness recording (JSON Lines)."""

    def __init__(self, contract: Contract | None = None) -> None:
        self.contract = contract or school_mobile()
        self.writer: RecordingWriter | None = None
        self.redactor: Redactor | None = None
        self.failed: str | None = None  # why recording stopped, when it did

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
        loader.add_option("redaction_key_file", str | None, None,
                          "Key file of the pseudonyms (default: <recording>.key, created 0600); "
                          "'-' for a random key kept in memory for this run only.")

    def configure(self, updated: set[str]) -> None:
        watched = {"recording", "redact", "redact_names", "redaction_key_file",
                   "recording_upstream", "recording_mode"}
        if not updated & watched:
            return
        self.close()
        path = ctx.options.recording
        if not path:
            return
        try:
            self.redactor = self._redactor(path) if ctx.options.redact else None
            self._check_append(path)
            self.writer = RecordingWriter(
                path, upstream=ctx.options.recording_upstream, redacted=self.redactor is not None,
                mode=ctx.options.recording_mode,
                redaction=self.redactor.settings() if self.redactor else None)
        except HarnessError as exc:
            raise exceptions.OptionsError(str(exc)) from None

    def _redactor(self, path: str) -> Redactor:
        key_file = ctx.options.redaction_key_file or f"{path}.key"
        key = secrets.token_bytes(32) if key_file == "-" else load_or_create_key(key_file)
        return Redactor.for_contract(self.contract, key, ctx.options.redact_names)

    def _check_append(self, path: str) -> None:
        """Appending to a recording must keep its redaction: same setting, same key."""
        if not Path(path).is_file() or Path(path).stat().st_size == 0:
            return
        header = read_header(path)
        if header is None:
            raise HarnessError(f"{path} exists and is not a harness recording; "
                               "choose another --out")
        if bool(header.get("redacted")) != (self.redactor is not None):
            raise HarnessError(f"{path} was recorded with redaction "
                               f"{'on' if header.get('redacted') else 'off'}; append to it the "
                               "same way or choose another --out")
        theirs = (header.get("redaction") or {}).get("key_id")
        if self.redactor is not None and theirs and theirs != key_id(self.redactor.key):
            raise HarnessError(f"{path} was redacted with another key; pass its key file "
                               "(--key-file) or choose another --out")

    # -- events ------------------------------------------------------------------------------

    def response(self, flow: http.HTTPFlow) -> None:
        self._record(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.response is None:  # an error after the response was recorded adds nothing
            self._record(flow)

    def done(self) -> None:
        self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # -- recording ---------------------------------------------------------------------------

    def _record(self, flow: http.HTTPFlow) -> None:
        if METADATA_KEY in flow.metadata or flow.websocket is not None:
            return
        exchange = exchange_of(flow)
        meta, envelope = self._classify(exchange.request)
        verdict = {**meta, "recorded": False}
        flow.metadata[METADATA_KEY] = verdict
        if self.writer is None or self.failed or (meta.get("foreign")
                                                  and not ctx.options.keep_foreign):
            return
        exchange.meta.update(meta)
        exchange = self._redact(exchange, envelope)
        try:
            self.writer.write(exchange)
        except OSError as exc:  # disk full, file gone: stop visibly, never pass data unrecorded
            self.failed = f"cannot write recording {self.writer.path}: {exc.strerror or exc}"
            logger.error(self.failed)
            ctx.master.shutdown()
            return
        verdict.update(recorded=True, index=self.writer.count)

    def _classify(self, request: HttpRequest) -> tuple[dict[str, Any], Any]:
        if not is_for_service(self.contract, request, ctx.options.recording_upstream):
            return {"foreign": True}, None
        try:
            call = classify(self.contract, request)
        except ClassificationError as exc:
            return {"unclassified": str(exc)}, None
        arguments = call.arguments
        if self.redactor is not None:
            arguments = tuple(self.redactor.arguments(arguments))
        return ({"binding": call.binding.value, "operation": call.operation.name,
                 "arguments": [list(a) for a in arguments]}, call.envelope)

    def _redact(self, exchange: Exchange, envelope: Any) -> Exchange:
        if self.redactor is None:
            return exchange
        try:
            notes: list[str] = []
            request = self.redactor.request(exchange.request, envelope=envelope, notes=notes)
            response = (self.redactor.response(exchange.response, notes=notes)
                        if exchange.response else None)
        except Exception as exc:  # never write what could not be redacted
            logger.warning(f"redaction failed ({type(exc).__name__}); bodies left out")
            return _stripped(exchange, f"redaction failed: {type(exc).__name__}")
        if notes:
            exchange.meta["redaction_dropped"] = notes
        exchange.request, exchange.response = request, response
        return exchange


class Console:
    """One line per captured exchange, and a summary when the proxy stops."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self.counts: Counter[str] = Counter()

    def response(self, flow: http.HTTPFlow) -> None:
        verdict = flow.metadata.get(METADATA_KEY)
        if verdict is None or verdict.get("printed"):
            return
        verdict["printed"] = True
        if not verdict.get("recorded"):
            self.counts["foreign left out" if verdict.get("foreign") else "not recorded"] += 1
            return
        self.counts["recorded"] += 1
        if flow.response is None:
            status = f"error: {flow.error.msg if flow.error else 'no response'}"
            self.counts["errors"] += 1
        else:
            status = str(flow.response.status_code)
        if "operation" in verdict:
            what = f"{verdict['binding']:<6} {verdict['operation']}"
            self.counts[what] += 1
        elif verdict.get("foreign"):
            what = f"foreign {flow.request.method} {flow.request.pretty_url}"
            self.counts["foreign"] += 1
        else:
            what = f"unclassified {flow.request.method} {flow.request.path} " \
                   f"({verdict['unclassified']})"
            self.counts["unclassified"] += 1
        print(f"#{verdict['index']:<5} {what} {status} {_elapsed_ms(flow):.1f} ms",
              file=self.out, flush=True)

    def error(self, flow: http.HTTPFlow) -> None:
        self.response(flow)

    def done(self) -> None:
        print(summary(self.counts), file=self.out, flush=True)


def summary(counts: Counter[str]) -> str:
    lines = [f"captured {counts['recorded']} exchange(s)"]
    pairs = sorted(k for k in counts if k[:1].islower() and " " in k
                   and k not in ("foreign left out", "not recorded"))
    lines += [f"  {k}: {counts[k]}" for k in pairs]
    lines.append("  " + ", ".join(f"{k}: {counts[k]}" for k in
                                  ("unclassified", "foreign", "errors", "foreign left out")))
    return "\n".join(lines)


# -- flows -> exchanges ------------------------------------------------------------------------


def exchange_of(flow: http.HTTPFlow) -> Exchange:
    """The flow as the harness's Exchange: headers in order and case, bodies as on the wire."""
    req = flow.request
    request = HttpRequest(req.method, req.url, _headers(req.headers.fields),
                          req.raw_content or b"", req.http_version)
    response = None
    if flow.response is not None:
        resp = flow.response
        response = HttpResponse(resp.status_code, _headers(resp.headers.fields),
                                resp.raw_content or b"", resp.reason, resp.http_version)
    meta: dict[str, Any] = {}
    if flow.error is not None and flow.response is None:
        meta["error"] = flow.error.msg
    return Exchange(request, response, timings=_timings(flow), meta=meta)


def _headers(fields: Sequence[tuple[bytes, bytes]]) -> tuple[tuple[str, str], ...]:
    return tuple((_text(k), _text(v)) for k, v in fields)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # any byte survives; no lone surrogates reach JSON


def _timings(flow: http.HTTPFlow) -> dict[str, float]:
    req, resp = flow.request, flow.response
    start = req.timestamp_start
    out = {"started": start}
    if req.timestamp_end:
        out["send"] = req.timestamp_end - start
        if resp is not None and resp.timestamp_start:
            out["wait"] = resp.timestamp_start - req.timestamp_end
    if resp is not None and resp.timestamp_start and resp.timestamp_end:
        out["receive"] = resp.timestamp_end - resp.timestamp_start
    end = (resp.timestamp_end if resp is not None else None) or (
        flow.error.timestamp if flow.error else None)
    if end:
        out["duration"] = end - start
    return {k: round(v, 6) for k, v in out.items()}


def _elapsed_ms(flow: http.HTTPFlow) -> float:
    end = (flow.response.timestamp_end if flow.response else None) or (
        flow.error.timestamp if flow.error else None) or flow.request.timestamp_start
    return (end - flow.request.timestamp_start) * 1000


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


def _stripped(exchange: Exchange, reason: str) -> Exchange:
    from dataclasses import replace

    request = replace(exchange.request, url=exchange.request.url.split("?", 1)[0], body=b"",
                      headers=())
    response = replace(exchange.response, body=b"", headers=()) if exchange.response else None
    return replace(exchange, request=request, response=response,
                   meta={**exchange.meta, "redaction_dropped": [reason]})


#: For ``mitmdump -s harness/capture/addon.py``.
addons = [Recorder(), Console()]
