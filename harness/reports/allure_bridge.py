"""pytest-bdd -> Allure: each Gherkin step an Allure step, rule-ID tags as Allure tags.

allure-pytest records pytest tests but not pytest-bdd's steps, and allure-pytest-bdd cannot run
beside it (both claim ``--alluredir``). These hooks, imported by
``steps/conftest.py``, open an
Allure step when pytest-bdd starts a step and close it when the step ends or fails, through
allure_commons (a no-op when no Allure listener is active). A rule's step says what its rule
found (``step_verdict``): passed, failed, a warning (broken, with the warning) or not
applicable (skipped, with its cause): never green for a check that did not apply.
``attach_call`` attaches the HTTP request and response of a call, and labels the test from
the contract: feature = binding, story = operation (a WSDL: feature WSDL, story its endpoint).
A scenario with warnings is marked for ``allure_results.tidy`` (run after pytest), which tags
it ``warning`` and lists its warnings in its description: it stays passed (no red).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import allure
import pytest

from harness.judge import rules
from harness.judge.findings import Finding, Verdict, cause_of
from harness.reports.allure_results import HeldResults, http_text

if TYPE_CHECKING:
    from harness.judge.calls import Call

_OPEN_STEP = pytest.StashKey[Any]()
#: What the step under way found, when it judged a rule (``step_verdict``).
_STEP_VERDICT = pytest.StashKey[BaseException | None]()
#: The label ``tidy`` turns into a scenario's warning message (then drops).
WARNING_LABEL = "harness.warning"


class PermittedDeviation(Exception):
    """A rule's step that found only permitted deviations: Allure shows the step broken
    (yellow) with its warnings, and the scenario passes."""


class NotApplicable(pytest.skip.Exception):
    """A rule's step whose rule applied to no call of the scenario: Allure shows it skipped
    with the cause."""


# Allure writes an exception as "module.Name: message": the name alone says it here.
PermittedDeviation.__module__ = NotApplicable.__module__ = "builtins"


def step_verdict(request: pytest.FixtureRequest, found: list[Finding]) -> None:
    """Record what a rule's step found, for the Allure step that closes after it: warnings
    make it a broken step, not-applicable-only a skipped step (with the cause); else the
    step's own outcome stands (passed, or failed by its AssertionError)."""
    warned = [f for f in found if f.verdict is Verdict.WARNING]
    applied = [f for f in found if f.verdict is not Verdict.NOT_APPLICABLE]
    outcome: BaseException | None = None
    if warned:
        outcome = PermittedDeviation("\n".join(warning_line(f) for f in warned))
    elif found and not applied:
        outcome = NotApplicable("; ".join(
            dict.fromkeys(f.message or f.cause or "no call to judge" for f in found)))
    request.node.stash[_STEP_VERDICT] = outcome


def warning_line(f: Finding) -> str:
    """``WARNING [GAP-VALUES] <cause>: expected .., actual .. (at SendMarkNotes x HTTP GET)``."""
    cause = cause_of(f)
    text = f"expected {f.expected}, actual {f.actual}"
    if not cause.startswith("expected "):
        text = f"{cause}: {text}"
    return f"WARNING [{f.rule}] {text} (at {f.where})"


def pytest_bdd_apply_tag(tag: str, function: Any) -> bool | None:
    """A rule-ID tag becomes ``pytest.mark.rule(ID)`` plus an Allure tag; others the default."""
    if tag not in rules.catalogue_ids():
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
    _close(request, request.node.stash.get(_STEP_VERDICT, None))


def pytest_bdd_after_scenario(request: pytest.FixtureRequest, **_: Any) -> None:
    """A scenario whose calls found warnings: marked for ``tidy``, which tags the test
    ``warning`` and says its warnings at the top of its description (a passed scenario stays
    passed: Allure 3 counts every failed result, an accepted one too, under Failed)."""
    calls = request.getfixturevalue("calls") if "calls" in request.fixturenames else []
    warned = [f for call in calls for f in call.findings if f.verdict is Verdict.WARNING]
    if warned:
        allure.dynamic.label(WARNING_LABEL, *dict.fromkeys(warning_line(f) for f in warned))


def pytest_bdd_step_error(request: pytest.FixtureRequest, exception: BaseException,
                          **_: Any) -> None:
    _close(request, exception)


def _close(request: pytest.FixtureRequest, exception: BaseException | None) -> None:
    context = request.node.stash.get(_OPEN_STEP, None)
    request.node.stash[_STEP_VERDICT] = None
    if context is None:
        return
    del request.node.stash[_OPEN_STEP]
    if exception is None:
        context.__exit__(None, None, None)
    else:
        context.__exit__(type(exception), exception, exception.__traceback__)


def attach_call(call: Call) -> None:
    """The request and response as text attachments of the current step; labels of the test
    from the contract: feature = binding, story = operation; a WSDL's: WSDL, its endpoint."""
    if call.label is not None:
        label = call.label
        allure.dynamic.feature(call.binding.label)
        allure.dynamic.story(call.operation.name)
    elif call.endpoint is not None:
        label = f"{call.endpoint} WSDL"
        allure.dynamic.feature("WSDL")
        allure.dynamic.story(call.endpoint)
    else:
        label = f"{call.operation.name} {call.binding.label}"
        allure.dynamic.feature(call.binding.label)
        allure.dynamic.story(call.operation.name)
    operation = None if call.endpoint is not None else call.operation.name
    response = call.exchange.response
    sent = response is not None or any(f.verdict != "not applicable" for f in call.findings)
    if sent:  # a request that does not apply to the operation was never sent
        allure.attach(http_text(call.exchange.request), name=f"{label} request",
                      attachment_type=allure.attachment_type.TEXT)
    if response is not None:
        allure.attach(http_text(response, operation), name=f"{label} response",
                      attachment_type=allure.attachment_type.TEXT)
    if call.control is not None and call.control.response is not None:
        allure.attach(http_text(call.control.request) + "\n\n"
                      + http_text(call.control.response, operation),
                      name=f"{label} with plain values (GAP-VALUES)" if call.label is None
                      else f"{label}: the spec call it is held against",
                      attachment_type=allure.attachment_type.TEXT)
    judged = [f"{f.rule}: {f.verdict}" + (f" - expected {f.expected}, actual {f.actual}"
                                          if f.verdict in ("failed", "warning") else "")
              for f in call.findings]
    allure.attach("\n".join(judged), name=f"{label} findings",
                  attachment_type=allure.attachment_type.TEXT)


def hold_results(config: pytest.Config, held: HeldResults) -> None:
    """allure-pytest's file logger swapped for ``held`` for the run (it was made, so
    ``--clean-alluredir`` cleaned the folder as usual); put back at the config's clean-up,
    where allure-pytest's own clean-up unregisters it. Called after allure-pytest's
    ``pytest_configure``."""
    import allure_commons
    from allure_commons.logger import AllureFileLogger

    manager = allure_commons.plugin_manager
    loggers = [p for p in manager.get_plugins() if isinstance(p, AllureFileLogger)]
    for logger in loggers:
        manager.unregister(logger)
    manager.register(held)

    def put_back() -> None:
        manager.unregister(held)
        for logger in loggers:
            manager.register(logger)

    config.add_cleanup(put_back)
