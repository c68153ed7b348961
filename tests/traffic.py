"""Recorded traffic for the lint and replay tests and benchmarks: clean exchanges of every
operation x binding (built by harness.contract.bindings, answered by the reference's pure
``answer``),
and a recording writer."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, Operation, sample_arguments
from harness.reference.app import answer
from harness.traffic.exchange import Exchange, HttpRequest
from harness.traffic.recording import RecordingWriter

BASE = "http://school.example:8080"
CLIENT = "SchoolMobile/2.3 (Android 14)"


def request(contract: Contract, op_name: str, binding: Binding, variant: int = 0,
            client: str = CLIENT) -> HttpRequest:
    op = contract.operation(op_name)
    built = build_request(contract, op, sample_arguments(op, variant), binding, BASE)
    return built.with_header("User-Agent", client)


def exchange(contract: Contract, req: HttpRequest) -> Exchange:
    """``req`` with the reference's answer, as a capture would record it."""
    return Exchange(req, answer(contract, req))


def clean_exchanges(contract: Contract, client: str = CLIENT) -> list[Exchange]:
    """One exchange per operation x binding (32), with varied argument values."""
    return [exchange(contract, request(contract, op.name, binding,
                                       variant=clean_variant(i, binding), client=client))
            for i, (op, binding) in enumerate((op, b) for op in contract.operations
                                              for b in Binding)]


def clean_variant(variant: int, binding: Binding) -> int:
    """``variant``, except XML-special values over GET/POST, which ASP.NET's request
    validation (and so the reference) refuses: the non-ASCII set there instead."""
    return variant + 1 if variant % 3 == 2 and not binding.is_soap else variant


def write_recording(path: Path, exchanges: Iterable[Exchange]) -> Path:
    with RecordingWriter(path, upstream=BASE, redacted=False) as writer:
        for ex in exchanges:
            writer.write(ex)
    return path


Call = tuple[Operation, Binding, dict[str, Any]]


def offered_calls(contract: Contract) -> list[Call]:
    """Every operation over every binding that offers it, with the first value set."""
    return [(op, b, sample_arguments(op, 0, b.value)) for op in contract.operations
            for b in Binding if b.value in contract.bindings_of(op)]


def record_calls(contract: Contract, url: str, path: Path, calls: Iterable[Call],
                 edit: Callable[[Call, HttpRequest], HttpRequest] | None = None) -> Path:
    """Send each call to ``url`` (``edit`` may change its request first) and record the
    exchanges, as a capture of that client would."""
    from harness.traffic import send

    with send.client() as http, RecordingWriter(path) as out:
        for call in calls:
            op, binding, args = call
            built = build_request(contract, op, args, binding, url)
            built = edit(call, built) if edit else built
            out.write(Exchange(built, send.send(http, built), source=url))
    return path



def repeated_recording(sample: Path, path: Path, times: int) -> Path:
    """``sample``'s exchanges ``times`` over under its one header line, written to ``path``: a
    recording big enough for worker processes (lint, replay, the mock's indexers)."""
    lines = sample.read_text(encoding="utf-8").splitlines(keepends=True)
    with path.open("w", encoding="utf-8") as f:
        f.write(lines[0])
        for _ in range(times):
            f.writelines(lines[1:])
    return path


def with_recorded_duration(sample: Path, path: Path, seconds: float) -> Path:
    """``sample`` written to ``path`` with every exchange's recorded duration ``seconds``
    (what ``mock --latency recorded`` waits)."""
    lines = sample.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        recorded = json.loads(line)
        recorded.setdefault("timings", {})["duration"] = seconds
        out.append(json.dumps(recorded))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
