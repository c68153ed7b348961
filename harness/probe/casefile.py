"""Failing cases saved to a file and read back (``harness probe --replay FILE``).

The file is a harness recording (``traffic.recording``: a header line, then one exchange a line,
body byte-exact) whose exchanges carry no response and keep what the probe knew of the case
under ``meta.probe``: name, family, operation, binding, what a sound target does, the rules it
failed. So ``harness replay`` and ``harness diff`` read it too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.errors import RecordingError, UsageError
from harness.probe.cases import Expect, Family, ProbeCase
from harness.traffic.exchange import Exchange
from harness.traffic.recording import RecordingWriter, read_exchanges


class CaseFile:
    """Writes failing cases to ``path``, replaced by each run that has some, created on the
    first case.

    The cases go to a temporary file beside ``path`` that ``close`` moves into place in one
    step (``os.replace``) when the run ended; an interrupted run (``close(complete=False)``)
    never replaces a complete file with its partial one: it keeps its cases in ``partial``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0
        #: Where the cases of an interrupted run are kept (the last complete file left as is).
        self.partial = path.with_name(path.name + ".partial")
        self._temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self._out: RecordingWriter | None = None

    def save(self, case: ProbeCase, failed_rules: list[str]) -> None:
        if self._out is None:
            try:
                self._temporary.unlink(missing_ok=True)
            except OSError as exc:
                raise UsageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            # sample values only: no personal data to redact
            self._out = RecordingWriter(self._temporary, redacted=False,
                                        source="harness probe")
        meta = {"case": case.name, "family": case.family.value,
                "operation": case.operation.name, "binding": case.binding.value,
                "expect": case.expect.value, "entity": case.entity, "what": case.what,
                "failed": failed_rules, **({"matrix": case.matrix} if case.matrix else {})}
        self._out.write(Exchange(case.request, None, meta={"probe": meta}))
        self.written += 1

    def close(self, complete: bool = True) -> Path | None:
        """Move the cases into place (``path``; ``partial`` when not ``complete``); where."""
        if self._out is None:
            return None
        self._out.close()
        self._out = None
        final = self.path if complete else self.partial
        try:
            os.replace(self._temporary, final)
        except OSError as exc:
            raise UsageError(f"cannot write {final}: {exc.strerror or exc}") from None
        return final


def read_cases(path: Path, contract: Contract) -> Iterator[ProbeCase]:
    """The cases saved in ``path``; RecordingError (one line) for a file that holds none."""
    for exchange in read_exchanges([path], skip_broken=False):
        meta = exchange.meta.get("probe")
        if not isinstance(meta, dict):
            raise RecordingError(f"{path}: exchange #{exchange.index} is not a probe case "
                                 "(no meta.probe): not a file of failing cases")
        yield _case(meta, exchange, contract, path)


def _case(meta: dict[str, Any], exchange: Exchange, contract: Contract, path: Path
          ) -> ProbeCase:
    try:
        op = contract.find(meta["operation"])
        if op is None:
            raise KeyError(meta["operation"])
        return ProbeCase(meta["case"], Family(meta["family"]), op, Binding(meta["binding"]),
                         exchange.request, Expect(meta["expect"]), meta.get("what", ""),
                         bool(meta.get("entity", False)), meta.get("matrix"))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordingError(f"{path}: exchange #{exchange.index} is a broken probe case "
                             f"({exc})") from None
