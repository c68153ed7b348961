"""A mobile team's features driving ``harness mock``: stubs set from a scenario, calls verified
(steps/mock_steps.py), run by ``harness certify --features DIR --target MOCK`` against a mock on
loopback; the feature is docs/mock.md's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from test_mock_stubs import mock_of
from test_scenarios import certify_features

from harness.certify.engine import Service
from harness.errors import UsageError
from harness.mock.client import MockAdmin, NotAMock
from harness.scenarios.lint import check_features
from harness.scenarios.state import ScenarioState

DOCS = Path(__file__).resolve().parents[1] / "docs" / "mock.md"


def docs_feature() -> str:
    page = DOCS.read_text(encoding="utf-8")
    return re.search(r"^```gherkin\n(.*?)^```$", page, re.M | re.S).group(1)


@pytest.fixture(scope="module")
def logout_stubbed(tmp_path_factory):
    path = tmp_path_factory.mktemp("stubs") / "stubs.toml"
    path.write_text('[[stub]]\noperation = "LogoutFromSchool"\n', encoding="utf-8")
    from harness.contract.model import school_mobile

    with mock_of(school_mobile(), [path]) as served:
        yield served


def test_the_docs_feature_passes_in_certify_against_the_mock(logout_stubbed, tmp_path):
    url, mock = logout_stubbed
    run = certify_features(tmp_path, {"app.feature": docs_feature()}, "--target", url)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert run.scenarios == {"a stubbed token, then one logout": ("passed", ""),
                             "an expired code": ("passed", "")}
    assert httpx.get(f"{url}/__harness/stubs").json()["stubs"][0]["operation"] == \
        "LogoutFromSchool"  # the scenarios' stubs are gone with them
    assert mock.stats.answered["stub"] >= 3


def test_a_wrong_count_fails_saying_what_the_mock_received(contract, logout_stubbed):
    from harness.certify.steps.mock_steps import mock_received

    url, _mock = logout_stubbed
    service, admin = Service(contract, url), MockAdmin(url)
    try:
        started = time.time()
        httpx.post(f"{url}/CenterlogOut.asmx/LogoutFromSchool",
                   data={"PhoneNumber": "0501234567", "id_row_central": "7", "UuId": "u"})
        table = [["parameter", "value"], ["PhoneNumber", "0509999999"]]
        with pytest.raises(AssertionError) as failed:
            mock_received("1", "LogoutFromSchool", service, admin, ScenarioState(), started,
                          matched=" with:", datatable=table)
        mock_received("1", "LogoutFromSchool", service, admin, ScenarioState(), started,
                      binding="HTTP POST")
    finally:
        admin.close()
        service.close()
    message = str(failed.value)
    assert message.startswith("the mock received 0 call(s) of LogoutFromSchool with "
                              "PhoneNumber=[redacted] since the scenario began, expected 1; "
                              "its calls of LogoutFromSchool: HTTP POST {'PhoneNumber': "
                              "'redacted-"), message
    assert "0509999999" not in message and "0501234567" not in message


def test_the_steps_against_a_target_that_is_no_mock_say_so(contract, reference_url):
    admin = MockAdmin(reference_url)
    try:
        with pytest.raises(NotAMock) as failed:
            admin.calls(operation="GetTokenDevice")
    finally:
        admin.close()
    assert "has no mock admin API" in str(failed.value)
    assert "these steps need `harness mock` as the target" in str(failed.value)


def test_a_feature_with_a_wrong_mock_step_is_refused_before_the_run(contract, tmp_path):
    feature = tmp_path / "app.feature"
    feature.write_text(docs_feature().replace("the mock received 1 call of LogoutFromSchool "
                                              "with:", "the mock received 1 call of "
                                              "LogoutFromSchol with:"), encoding="utf-8")
    with pytest.raises(UsageError) as error:
        check_features([feature], contract)
    assert "'LogoutFromSchol' is not an operation" in str(error.value)
    assert str(error.value).startswith(f"{feature}:19:")
