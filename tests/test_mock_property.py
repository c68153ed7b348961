"""Property (issue 32 item 5): a recording replayed against its own mock passes, whatever it
holds. Hypothesis draws recordings - native ``.jsonl`` or HAR - of random calls (any operation,
binding and values, the same call over several bindings with answers of their own) answered as a
deployment would (a result, a void answer, a SOAP fault or ASMX's GET/POST error, a gateway's
503); each is mocked and replayed (``harness.replay``, the engine of ``harness replay``), and
replay finds nothing failed.

One server serves every example: its app asks the mock of the current example."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.contract.bindings import Binding, FaultCode, build_fault, build_request, build_response
from harness.contract.model import Operation, school_mobile
from harness.contract.types import ParamType, sample_value
from harness.judge.findings import Verdict
from harness.mock import Mock, Options, load
from harness.mock.faults import status_page
from harness.reference.app import create_app
from harness.reference.server import running
from harness.replay import replay
from harness.traffic.exchange import Exchange
from harness.traffic.har import write_har
from harness.traffic.recording import RecordingWriter

CONTRACT = school_mobile()
STAGING = "http://staging.example:8080"
# What request validation lets through over GET/POST (no markup), spaces and non-ASCII kept.
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc"),
                              blacklist_characters="<&\ufeff"), min_size=0, max_size=12)
answers = st.sampled_from(["result", "result", "fault", "gateway"])


@st.composite
def calls(draw) -> tuple[Operation, dict[str, str]]:
    """An operation and values its parameters' types take (a string: any text; others: the
    type's sample values, a number with digits of its own too)."""
    op = draw(st.sampled_from(CONTRACT.operations))
    return op, {p.name: draw(texts) if p.type is ParamType.STRING else draw(st.one_of(
        st.integers(0, 5).map(lambda n, p=p: sample_value(p.type, n, p.values)),
        *([st.integers(-99999, 99999).map(str)] if p.type is ParamType.INT else [])))
        for p in op.parameters}


@st.composite
def exchanges(draw) -> list[Exchange]:
    """Distinct calls, each recorded over one or more bindings with answers of its own."""
    recorded, seen = [], set()
    for op, args in draw(st.lists(calls(), min_size=1, max_size=6)):
        key = (op.name, tuple(sorted(args.items())))
        if key in seen:
            continue
        seen.add(key)
        bindings = draw(st.lists(st.sampled_from(list(Binding)), min_size=1, max_size=4,
                                 unique=True))
        for binding in bindings:
            request = build_request(CONTRACT, op, args, binding, STAGING)
            recorded.append(Exchange(request, _answer(draw, op, binding)))
    return draw(st.permutations(recorded))


def _answer(draw, op: Operation, binding: Binding):
    kind = draw(answers)
    if kind == "fault":
        return build_fault(binding, draw(st.sampled_from([FaultCode.CLIENT, FaultCode.SERVER])),
                           "staging: " + draw(texts))
    if kind == "gateway":
        return status_page(503)
    return build_response(CONTRACT, op, binding,
                          ("staging-" + draw(texts)) if op.result else None)


class Current:
    """The app of the one server: the mock of the current example."""

    mock: Mock | None = None

    def respond(self, contract, request):
        assert self.mock is not None
        return self.mock.respond(contract, request)


@pytest.fixture(scope="module")
def served():
    current = Current()
    with running(CONTRACT, app=create_app(CONTRACT, current.respond)) as url:
        yield url, current


_numbers = itertools.count()


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(recorded=exchanges(), har=st.booleans())
def test_a_recording_replayed_against_its_mock_passes(served, tmp_path, recorded, har):
    url, current = served
    path = tmp_path / f"r{next(_numbers)}.{'har' if har else 'jsonl'}"
    if har:
        write_har(recorded, path)
    else:
        with RecordingWriter(path, upstream=STAGING, redacted=False) as writer:
            for exchange in recorded:
                writer.write(exchange)
    index = load(CONTRACT, [path])
    said: list[str] = []
    current.mock = Mock(CONTRACT, index, Options(), on_unmatched=said.append)
    try:
        report = replay([path], CONTRACT, url, concurrency=1)
    finally:
        index.close()
    failed = [f for f in report.kept() if f["verdict"] == Verdict.FAILED]
    assert not failed and not said, (failed[:3], said[:3])
    assert current.mock.stats.answered["recorded"] == len(recorded)


def test_the_sample_recordings_replayed_against_their_mock_pass(served):
    root = Path(__file__).resolve().parents[1] / "recordings"
    url, current = served
    for path in (root / "sample-all-bindings.jsonl", root / "sample-all-bindings.har"):
        index = load(CONTRACT, [path])
        current.mock = Mock(CONTRACT, index)
        try:
            report = replay([path], CONTRACT, url, concurrency=1)
        finally:
            index.close()
        assert report.counts[Verdict.FAILED] == 0, (path, list(report.kept())[:3])
