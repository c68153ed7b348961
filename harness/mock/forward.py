"""Record-through (``harness mock --fallback URL --record FILE``): a call the mock cannot answer
is forwarded to a real deployment, answered with its reply, and appended to a recording as
``harness capture`` would have recorded it (its writer: classified, redacted with the
recording's key), so the next mock of that recording answers it without the deployment
(WireMock's record mode, over the four bindings)."""

from __future__ import annotations

import sys
import threading
import time
from typing import IO

from harness.capture.writer import Console, Transcriber, recording_setup
from harness.contract.model import Contract
from harness.errors import RecordingError
from harness.traffic import send
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.send import SendOptions


class _Said(Console):
    """capture's console line of each exchange recorded, after ``recorded-through:``."""

    def recorded(self, index: int, line: str, counted: list[str]) -> None:
        super().recorded(index, line, counted)
        self._lines[-1] = "recorded-through: " + self._lines[-1]

    def done(self) -> None:
        self.flush()


class Forwarder:
    """Sends a request to ``base`` (the mock's path moved under it, Host rewritten, body bytes
    unchanged) and, with ``record``, appends the exchange. Safe to call from several
    threads."""

    def __init__(self, contract: Contract, base: str, *, record: str | None = None,
                 key_file: str | None = None, options: SendOptions | None = None,
                 out: IO[str] | None = None) -> None:
        self.base = send.base_url(base)
        self.options = options or SendOptions()
        self.http = send.client(self.options)
        self.recorded = 0
        self._transcriber: Transcriber | None = None
        #: Where the recording's pseudonym key is kept (None: not recording).
        self.key_file = None
        self._lock = threading.Lock()
        if record is not None:
            setup = recording_setup(record, contract, key_file=key_file, upstream=self.base,
                                    mode="record-through", flag="--record")
            self.key_file = setup.key_file
            self._transcriber = Transcriber(setup, _Said(out or sys.stdout))

    def forward(self, request: HttpRequest) -> HttpResponse:
        """The deployment's answer (body decoded); TargetUnreachable when none comes. The
        exchange is in the recording before the answer is returned."""
        moved = send.retarget(request, self.base)
        started = time.perf_counter()
        response = send.send(self.http, moved, self.options)
        if self._transcriber is not None:
            exchange = Exchange(moved, response,
                                timings={"duration": time.perf_counter() - started})
            try:
                with self._lock:
                    self._transcriber.record_exchange(exchange)
                    self._transcriber.flush()
                    self.recorded += 1
            except OSError as exc:  # no answer without its record, as in capture
                raise RecordingError(f"cannot write the recording {self._transcriber.writer.path}"
                                     f": {exc.strerror or exc}") from None
        return response

    def close(self) -> None:
        self.http.close()
        if self._transcriber is not None:
            with self._lock:
                self._transcriber.close()

