"""The recorded-traffic feature, one test per exchange of ``--recording`` (default: the sample
recordings), replayed against ``--target`` (default: the embedded reference)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_bdd import scenario

from harness.certify.engine import FEATURES
from harness.contract.bindings import classify
from harness.contract.model import school_mobile
from harness.errors import HarnessError
from harness.traffic.exchange import Exchange
from harness.traffic.recording import read_exchanges

FEATURE = FEATURES / "recorded_traffic.feature"
#: The sample recordings of a clone (the default of ``--recording`` there).
SAMPLES = Path(__file__).resolve().parents[1] / "recordings"


@scenario(str(FEATURE), "A recorded exchange replays as recorded")
def test_recorded_exchange(recorded_exchange: Exchange) -> None:
    """Steps do the work."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "recorded_exchange" not in metafunc.fixturenames:
        return
    paths = metafunc.config.getoption("--recording") or sorted(SAMPLES.glob("*.jsonl"))
    try:
        exchanges = list(read_exchanges(paths))
    except HarnessError as exc:
        raise pytest.UsageError(f"--recording: {exc}") from None
    contract = school_mobile(metafunc.config.getoption("--namespace"))
    metafunc.parametrize("recorded_exchange", exchanges,
                         ids=[_name(contract, e) for e in exchanges])


def _name(contract, exchange: Exchange) -> str:
    try:
        call = classify(contract, exchange.request)
        what = f"{call.operation.name} {call.binding.label}"
    except HarnessError:
        what = f"{exchange.request.method} {exchange.request.path}"
    return f"{Path(exchange.source).name}#{exchange.index} {what}"
