"""Failing cases saved to a file and read back (``harness probe --replay FILE``).

One JSON line per case: the request as recordings keep it (``Exchange.to_dict``, body byte-exact)
plus what the probe knew of it under ``"probe"``: name, family, operation, binding, what a sound
target does, and the rules it failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.errors import RecordingError, UsageError
from harness.probe.cases import Expect, Family, ProbeCase
from harness.traffic.exchange import Exchange


class CaseFile:
    """Appends failing cases to ``path`` (created, with its folder, on the first one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0
        self._out: IO[str] | None = None

    def save(self, case: ProbeCase, failed_rules: list[str]) -> None:
        if self._out is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._out = self.path.open("w", encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        line = Exchange(case.request, None).to_dict()
        line["probe"] = {"case": case.name, "family": case.family.value,
                         "operation": case.operation.name, "binding": case.binding.value,
                         "expect": case.expect.value, "entity": case.entity,
                         "what": case.what, "failed": failed_rules}
        self._out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._out.flush()  # a probe stopped half-way keeps what it found
        self.written += 1

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


def read_cases(path: Path, contract: Contract) -> Iterator[ProbeCase]:
    """The cases saved in ``path``; RecordingError (one line) for a file that is not one."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                yield _case(_load(line, path, number), contract, path, number)


def _load(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{path}:{number}: not a JSON line ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("probe"), dict):
        raise RecordingError(f"{path}:{number}: not a probe case (no \"probe\" object)")
    return data


def _case(data: dict[str, Any], contract: Contract, path: Path, number: int) -> ProbeCase:
    meta = data["probe"]
    try:
        request = Exchange.from_dict(data).request
        op = contract.find(meta["operation"])
        binding = Binding(meta["binding"])
        if op is None:
            raise KeyError(meta["operation"])
        return ProbeCase(meta["case"], Family(meta["family"]), op, binding, request,
                         Expect(meta["expect"]), meta.get("what", ""),
                         bool(meta.get("entity", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordingError(f"{path}:{number}: broken probe case ({exc})") from None
