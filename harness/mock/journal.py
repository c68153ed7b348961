"""The call journal: every call a mock received, to list, count and verify (WireMock's request
journal, in the contract's terms).

An entry says which operation was called over which binding with which values (by meaning, as
``harness.mock.values`` reads them; a sensitive one as its pseudonym, never in clear), how it
was answered (``stub``, ``recorded``, ``forwarded``, ``reference``, ``unmatched``), by which
stub, what fault was injected, and the status sent. The newest ``KEPT`` entries are held for
the admin API (harness.mock.admin), which says how many were dropped before them;
``--journal FILE`` writes every entry as a JSON line as it happens.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from harness.errors import UsageError

#: Entries held for the admin API (the oldest dropped beyond).
KEPT = 100_000


class Entry(NamedTuple):  # a tuple: one is made per call, and 100,000 are held
    seq: int
    time: float  # seconds since the epoch
    operation: str
    binding: str  # its label: "SOAP 1.1"
    values: tuple[tuple[str, str], ...]  # (parameter, value by meaning or pseudonym)
    answered: str
    stub: str | None
    injected: tuple[str, ...]
    status: int | None  # None: no answer was sent (a reset or an empty reply)

    def to_data(self) -> dict[str, Any]:
        return {"seq": self.seq,
                "time": datetime.fromtimestamp(self.time, UTC).isoformat(
                    timespec="milliseconds").replace("+00:00", "Z"),
                "operation": self.operation, "binding": self.binding,
                "values": dict(self.values), "answered": self.answered, "stub": self.stub,
                "injected": list(self.injected), "status": self.status}


@dataclass(frozen=True)
class Filter:
    """Which entries: each given criterion must hold (values by meaning, as recorded)."""

    operation: str | None = None
    binding: str | None = None  # a label
    answered: str | None = None
    values: tuple[tuple[str, str], ...] = ()
    since: float | None = None  # seconds since the epoch
    after: int | None = None  # entries after this seq

    def admits(self, entry: Entry) -> bool:
        if self.operation is not None and entry.operation != self.operation:
            return False
        if self.binding is not None and entry.binding != self.binding:
            return False
        if self.answered is not None and entry.answered != self.answered:
            return False
        if self.since is not None and entry.time < self.since:
            return False
        if self.after is not None and entry.seq <= self.after:
            return False
        if self.values:
            given = dict(entry.values)
            return all(given.get(name) == value for name, value in self.values)
        return True


class Journal:
    """Safe to use from several threads."""

    def __init__(self, path: str | Path | None = None, kept: int = KEPT) -> None:
        self._entries: collections.deque[Entry] = collections.deque(maxlen=kept)
        self._kept = kept
        self._seq = 0
        self.dropped = 0  # entries no longer held (the file has them)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self.path = Path(path) if path else None
        if self.path is not None:
            try:
                self._file = self.path.open("ab")
            except OSError as exc:
                raise UsageError(f"cannot write --journal {path}: "
                                 f"{exc.strerror or exc}") from None

    def record(self, operation: str, binding: str, values: tuple[tuple[str, str], ...],
               answered: str, stub: str | None, injected: tuple[str, ...],
               status: int | None) -> Entry:
        now = time.time()
        with self._lock:
            self._seq += 1
            entry = Entry(self._seq, now, operation, binding, values, answered, stub,
                          injected, status)
            if len(self._entries) == self._kept:
                self.dropped += 1
            self._entries.append(entry)
            if self._file is not None:
                try:
                    self._file.write(orjson.dumps(entry.to_data(),
                                                  option=orjson.OPT_APPEND_NEWLINE))
                    self._file.flush()  # a killed mock keeps every call it answered
                except OSError:
                    self._file = None  # said once, at the end (``failed``)
                    self.failed = True
        return entry

    failed = False

    def select(self, which: Filter) -> list[Entry]:
        with self._lock:
            held = list(self._entries)
        return [e for e in held if which.admits(e)]

    def reset(self) -> int:
        """Forget every held entry (the file keeps them); how many were held."""
        with self._lock:
            gone = len(self._entries)
            self._entries.clear()
            self.dropped = 0
        return gone

    @property
    def received(self) -> int:
        return self._seq

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
