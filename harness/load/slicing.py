"""Which worker sends which recorded exchange, and the name Locust's stats give it.

Each worker reads the same recordings and keeps its own slice: an exchange goes to worker
``crc32(session key) % workers``, so every exchange of one session (the same phone or device,
as the recording's redacted arguments name it; pseudonyms are stable, so they still group)
goes to one worker, in its recorded order. An exchange without a session key is dealt by its
position. The master reads the recordings too, only for their start times.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contract.bindings import Binding, classify
from harness.contract.model import Contract
from harness.errors import ClassificationError
from harness.traffic.exchange import Exchange
from harness.traffic.recording import read_exchanges

#: Argument names (lower case) that identify a session, the first found wins: the phone comes
#: before the device id so that AuthCode (phone) and LogoutFromSchool (PhoneNumber, UuId) of
#: one person stay together.
SESSION_NAMES = ("phone", "phonenumber", "uuid", "id")


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
        if self.operation is None:
            return f"{self.exchange.request.method} {self.exchange.request.path}"
        return f"{self.operation} [{self.binding}]"


@dataclass
class Recordings:
    """Every recorded start time (for the schedule) and this worker's slice of exchanges."""

    started: list[float | None]
    entries: list[Entry]
    broken: int = 0


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
               pause: Callable[[], None] = lambda: None) -> Recordings:
    """The start time of every exchange and, with ``keep``, the exchanges of worker ``index``
    of ``workers``. ``pause`` is called now and then (a worker yields to Locust's heartbeats)."""
    out = Recordings([], [])

    def broken(path, number, reason) -> None:
        out.broken += 1

    for position, exchange in enumerate(read_exchanges(paths, on_broken=broken)):
        out.started.append(exchange.timings.get("started"))
        if keep:
            operation, binding, key = describe(exchange, contract)
            if worker_of(key, position, workers) == index:
                out.entries.append(Entry(position, exchange, operation, binding))
        if position % 256 == 255:
            pause()
    return out
