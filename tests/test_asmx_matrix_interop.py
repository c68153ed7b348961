"""The ASMX matrix holds on the real runtime: stock ASP.NET (customErrors RemoteOnly), customErrors
On and hardened (the Documentation protocol removed, customErrors On) answer every row, for every
School Mobile operation it applies to, as harness/contract/asmx_matrix.json says. The matrix is
sent once per configuration, in-process (about 600 requests each, spec calls sent once).
scripts/asmx_matrix --check says whether the file's evidence is still what they answer."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.contract.model import school_mobile
from harness.judge import asmx_matrix
from harness.judge.findings import Verdict
from harness.traffic import send

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("variant", ["asmx_url", "asmx_customerrors_url", "asmx_hardened_url"])
def test_the_real_runtime_passes_every_row(request: pytest.FixtureRequest, variant: str) -> None:
    url = request.getfixturevalue(variant)
    contract = school_mobile()
    off, judged = [], Counter[str]()
    with send.Sender(send.SendOptions(timeout=30)) as sender:
        for mreq, answers in asmx_matrix.run(contract, url, sender.send):
            verdict = asmx_matrix.verdict(mreq, answers)
            judged[mreq.row.id] += 1
            if verdict.verdict is not Verdict.PASSED:
                off.append(f"{mreq.row.id} x {mreq.operation.name}: {verdict}")
    assert not off, "\n".join(off)
    assert set(judged) == {row.id for row in asmx_matrix.matrix().rows}
