"""pytest-bdd -> Allure: each Gherkin step an Allure step, rule-ID tags as Allure tags.

allure-pytest records pytest tests but not pytest-bdd's steps, and allure-pytest-bdd cannot run
beside it (both claim ``--alluredir``). These hooks, imported by
``steps/conftest.py``, open an
Allure step when pytest-bdd starts a step and close it when the step ends or fails, through
allure_commons (a no-op when no Allure listener is active). ``attach_call`` attaches the HTTP
request and response of a call, and labels the test: feature = binding, story = operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import allure
import pytest

from harness.judge import rules, wsdl_rules
from harness.reports.allure_results import http_text

if TYPE_CHECKING:
    from harness.certify.engine import Call

_OPEN_STEP = pytest.StashKey[Any]()


def pytest_bdd_apply_tag(tag: str, function: Any) -> bool | None:
    """A rule-ID tag becomes ``pytest.mark.rule(ID)`` plus an Allure tag; others the default."""
    if tag not in rules.RULES and tag not in wsdl_rules.RULES:
        return None
    pytest.mark.rule(tag)(function)
    allure.tag(tag)(function)
    return True


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any,
                               scenario: Any) -> None:
    allure.dynamic.title(scenario.name)
    allure.dynamic.parent_suite("conformance features")
    allure.dynamic.suite(feature.name)
    if feature.description:
        allure.dynamic.description(feature.description)


def pytest_bdd_before_step(request: pytest.FixtureRequest, feature: Any, scenario: Any,
                           step: Any, step_func: Any) -> None:
    context = allure.step(f"{step.keyword} {step.name}")
    context.__enter__()
    request.node.stash[_OPEN_STEP] = context


def pytest_bdd_after_step(request: pytest.FixtureRequest, **_: Any) -> None:
    _close(request, None)


def pytest_bdd_step_error(request: pytest.FixtureRequest, exception: BaseException,
                          **_: Any) -> None:
    _close(request, exception)


def _close(request: pytest.FixtureRequest, exception: BaseException | None) -> None:
    context = request.node.stash.get(_OPEN_STEP, None)
    if context is None:
        return
    del request.node.stash[_OPEN_STEP]
    if exception is None:
        context.__exit__(None, None, None)
    else:
        context.__exit__(type(exception), exception, exception.__traceback__)


def attach_call(call: Call) -> None:
    """The request and response as text attachments of the current step; labels of the test."""
    label = f"{call.operation.name} {call.binding.label}"
    allure.dynamic.feature(call.binding.label)
    allure.dynamic.story(call.operation.name)
    allure.attach(http_text(call.exchange.request), name=f"{label} request",
                  attachment_type=allure.attachment_type.TEXT)
    response = call.exchange.response
    if response is not None:
        allure.attach(http_text(response), name=f"{label} response",
                      attachment_type=allure.attachment_type.TEXT)
    if call.control is not None and call.control.response is not None:
        allure.attach(http_text(call.control.request) + "\n\n" + http_text(call.control.response),
                      name=f"{label} with plain values (GAP-VALUES)",
                      attachment_type=allure.attachment_type.TEXT)
    judged = [f"{f.rule}: {f.verdict}" + (f" - expected {f.expected}, actual {f.actual}"
                                          if f.verdict in ("failed", "warning") else "")
              for f in call.findings]
    allure.attach("\n".join(judged), name=f"{label} findings",
                  attachment_type=allure.attachment_type.TEXT)
