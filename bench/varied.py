"""Recordings for the benchmarks in which no two exchanges are byte-identical.

The 32 clean exchanges of every operation x binding (tests/traffic.py: built by
harness.contract.bindings, answered by the reference) are made once with a marker as the value
of each
operation's first string parameter; exchange ``n`` of a recording is its template with the
marker replaced by a fixed-width counter (``v000000007``), so Content-Length stays true, and
the reference's result for that value put in place of the template's (GetTokenDevice's SHA-256
is of its ``id``). Every exchange stays clean, and a cache keyed on exchange bytes (or on an
argument value) could not make a figure look better.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from traffic import BASE, CLIENT, clean_variant, exchange  # noqa: E402 (the tests' traffic builder)

from harness.contract.bindings import Binding, build_request  # noqa: E402
from harness.contract.model import (  # noqa: E402
    Contract,
    Operation,
    ParamType,
    reference_result,
    sample_arguments,
)
from harness.traffic.recording import FORMAT, FORMAT_VERSION  # noqa: E402

MARKER = "v000000000"  # letters and digits only: the same in a URL, a form, XML and JSON


def _value(n: int) -> str:
    return f"v{n:09d}"


def _template(contract: Contract, op: Operation, binding: Binding, variant: int
              ) -> tuple[str, str, dict[str, str], str | None]:
    """(JSON line with MARKER, parameter carrying it, arguments, result text for MARKER)."""
    args = sample_arguments(op, variant)
    name = next(p.name for p in op.parameters if p.type is ParamType.STRING)
    args[name] = MARKER
    request = build_request(contract, op, args, binding, BASE).with_header("User-Agent", CLIENT)
    line = json.dumps(exchange(contract, request).to_dict(), ensure_ascii=False,
                      separators=(",", ":")) + "\n"
    return line, name, args, reference_result(op, args)


def varied_lines(contract: Contract, count: int) -> Iterator[str]:
    """``count`` JSON lines (no header), cycling through the 32 operation x binding pairs."""
    pairs = [(op, binding) for op in contract.operations for binding in Binding]
    templates = [(op, _template(contract, op, binding, clean_variant(i, binding)))
                 for i, (op, binding) in enumerate(pairs)]
    for n in range(count):
        op, (line, name, args, result) = templates[n % len(templates)]
        value = _value(n + 1)
        varied = line.replace(MARKER, value)
        if result is not None:
            varied = varied.replace(result, reference_result(op, args | {name: value}) or "")
        yield varied


def write_varied(path: Path, contract: Contract, count: int) -> Path:
    """A native recording of ``count`` varied exchanges."""
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"format": FORMAT, "version": FORMAT_VERSION}) + "\n")
        f.writelines(varied_lines(contract, count))
    return path
