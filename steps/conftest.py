"""Fixtures and hooks of the conformance features.

``--target`` and ``--namespace`` choose the service under test; without ``--target`` the
embedded reference runs on a free loopback port, so ``scripts/test`` certifies the reference.
Step modules plug in by being imported here (their step definitions are fixtures).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from harness.certify.engine import CONTRACT_KEY, REPORT_KEY, SETTINGS_KEY, Call, Service
from harness.certify.steps.conformance_steps import *  # noqa: F403 (step definitions)
from harness.certify.steps.mock_steps import *  # noqa: F403 (step definitions)
from harness.certify.steps.recorded_traffic_steps import *  # noqa: F403 (step definitions)
from harness.certify.steps.scenario_steps import *  # noqa: F403 (step definitions)
from harness.contract.model import DEFAULT_NAMESPACE, load, school_mobile
from harness.reports.allure_bridge import (  # noqa: F401 (pytest-bdd hooks: Gherkin steps as Allure steps)
    pytest_bdd_after_scenario,
    pytest_bdd_after_step,
    pytest_bdd_apply_tag,
    pytest_bdd_before_scenario,
    pytest_bdd_before_step,
    pytest_bdd_step_error,
)
from harness.scenarios.state import ScenarioState

if TYPE_CHECKING:
    from harness.mock.client import MockAdmin


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "conformance features")
    group.addoption("--target", default=None,
                    help="base URL of the service under test (default: the embedded reference)")
    group.addoption("--contract", default=None, metavar="FILE",
                    help="contract file of the service (default: School Mobile)")
    group.addoption("--namespace", default=None,
                    help=f"service namespace (default: the contract's, {DEFAULT_NAMESPACE} "
                    "for School Mobile)")
    group.addoption("--recording", action="append", default=[], metavar="PATH",
                    help="recording (native or HAR) whose exchanges the recorded-traffic "
                    "feature replays; repeatable (default: the samples in recordings/)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(id): the scenario judges rule ID `id` of the "
                            "catalogue (from a @RULE-ID tag in a feature)")


@pytest.fixture(scope="session")
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    contract = request.config.stash.get(CONTRACT_KEY, None)
    if contract is None:
        path = request.config.getoption("--contract")
        namespace = request.config.getoption("--namespace")
        contract = load(path).with_namespace(namespace) if path else school_mobile(namespace)
    report = request.config.stash.get(REPORT_KEY, None)
    settings = request.config.stash.get(SETTINGS_KEY, None)
    target = request.config.getoption("--target")
    if target:
        under_test = Service(contract, target, report, settings)
        yield under_test
        under_test.close()
        return
    from harness.reference.server import running

    with running(contract) as url:
        under_test = Service(contract, url, report, settings)
        yield under_test
        under_test.close()


@pytest.fixture
def calls() -> list[Call]:
    """The calls a scenario made, in order."""
    return []


@pytest.fixture
def scenario_state() -> ScenarioState:
    """What the scenario saved, its request headers and its last calls."""
    return ScenarioState()


@pytest.fixture(autouse=True)
def scenario_started() -> float:
    """When the scenario began (seconds since the epoch): a mock's calls are counted from
    then (the mock runs on this machine: its admin API answers loopback clients only)."""
    return time.time()


@pytest.fixture
def mock_admin(service: Service) -> Iterator[MockAdmin]:
    """The admin API of the mock under test; the stubs the scenario set are removed at its
    end."""
    from harness.mock.client import MockAdmin  # the mock's engine: for mock scenarios only

    admin = MockAdmin(service.base_url)
    yield admin
    try:
        admin.remove_added()
    finally:
        admin.close()


@pytest.fixture
def tagged_rules(request: pytest.FixtureRequest) -> list[str]:
    """Rule IDs the scenario is tagged with."""
    return [mark.args[0] for mark in request.node.iter_markers("rule")]
