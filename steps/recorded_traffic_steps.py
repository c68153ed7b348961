"""Steps of the recorded-traffic feature: words glued to harness.replay, nothing more.

Imported with ``*`` by steps/conftest.py (pytest-bdd steps are module-level fixtures). The
``recorded_exchange`` fixture is parametrized by steps/test_recorded_traffic.py, one test per
exchange of the recording.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import allure
import httpx
import pytest
from pytest_bdd import given, then, when

from harness.certify.engine import Service
from harness.judge.findings import Finding, Verdict
from harness.replay import Replayed, replay_exchange
from harness.reports.allure_results import http_text
from harness.traffic import send
from harness.traffic.exchange import Exchange


@pytest.fixture(scope="session")
def replay_client() -> Iterator[httpx.Client]:
    with send.client() as http:
        yield http


def _attach(name: str, text: str) -> None:
    allure.attach(text, name=name, attachment_type=allure.attachment_type.TEXT)


def _failures(findings: list[Finding]) -> list[str]:
    return [f"{f.rule}: expected {f.expected}, actual {f.actual}" for f in findings
            if f.verdict is Verdict.FAILED]


@functools.cache
def _key(recording: str) -> bytes | None:
    """The recording's pseudonym key, where capture put it: its redacted values are compared
    by pseudonym (``harness.replay.check_replayed``)."""
    from harness.traffic.keys import recording_keys

    return recording_keys([recording])[str(Path(recording))].key if recording else None


@given("a recorded exchange")
def a_recorded_exchange(recorded_exchange: Exchange, request: pytest.FixtureRequest) -> None:
    where = f"#{recorded_exchange.index} in {recorded_exchange.source}"
    allure.dynamic.title(f"Recorded exchange {request.node.callspec.id}")
    allure.dynamic.feature("Recorded traffic")
    allure.dynamic.story(Path(recorded_exchange.source).name)
    _attach(f"recorded request {where}", http_text(recorded_exchange.request))
    if recorded_exchange.response is not None:
        _attach("recorded response", http_text(recorded_exchange.response))


@when("its request is replayed against the service under test", target_fixture="replayed")
def replay_it(recorded_exchange: Exchange, service: Service,
              replay_client: httpx.Client) -> Replayed:
    replayed = replay_exchange(replay_client, recorded_exchange, service.contract,
                               service.base_url, key=_key(recorded_exchange.source or ""))
    if replayed.response is not None:
        _attach("new response", http_text(replayed.response))
    _attach("findings", "\n".join(f"{f.rule}: {f.verdict}" + (
        f" - expected {f.expected}, actual {f.actual}" if f.verdict != Verdict.PASSED else "")
        for f in replayed.findings))
    return replayed


@then("the response follows the response rules of its operation and binding")
def follows_response_rules(replayed: Replayed) -> None:
    failures = _failures(replayed.judged)
    assert not failures, "; ".join(failures)


@then("the response matches the recorded response")
def matches_recorded(replayed: Replayed) -> None:
    if replayed.recorded.response is None:
        pytest.skip("nothing was recorded to compare with")
    failures = _failures(replayed.compared)
    assert not failures, "; ".join(failures)
