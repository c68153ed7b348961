"""The ASMX matrix in the probe: each row of ``harness/contract/asmx_matrix.json`` for the
attacked operations (one with a result, one with an int), over the bindings they are offered
on; the runner judges each by its row's rule against the target's own answer to the
equivalent spec call (``asmx_matrix.verdict``), besides the probe's rules."""

from __future__ import annotations

from collections.abc import Iterator

from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.judge import asmx_matrix
from harness.probe.attacks import attacked_operations
from harness.probe.cases import Expect, Family, ProbeCase


def matrix_cases(contract: Contract, base: str, chosen: Selection | None = None
                 ) -> Iterator[ProbeCase]:
    for op in attacked_operations(contract, chosen):
        for mreq in asmx_matrix.requests_for(contract, op, base):
            row = mreq.row
            yield ProbeCase(f"matrix/{row.id}", Family.MATRIX, op, row.binding, mreq.request,
                            Expect.ANY, f"{row.label} (ASMX: {row.expected.words()})",
                            matrix=row.id)
