"""A scenario of a team's own features as one finding of the run's Report: its test case in
JUnit (named after the scenario, in a suite of its own), its line in the console and JSON, and
the run's verdict. Its steps pass or fail as pytest-bdd steps (``harness.scenarios.checks``);
the scenario's outcome is what reaches the Report, under the pseudo-rule ``SCENARIO`` (no rule
of the catalogue: the rules a scenario's steps name report their own findings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.judge.findings import Finding, Verdict

SCENARIO = "SCENARIO"
TITLE = "every step of your scenario holds (--features)"
_VERDICTS = {"passed": Verdict.PASSED, "failed": Verdict.FAILED,
             "skipped": Verdict.NOT_APPLICABLE}


@dataclass
class ScenarioRun:
    """One scenario while it runs: what pytest-bdd's hooks said of it."""

    feature: Any  # pytest_bdd.parser.Feature
    scenario: Any  # pytest_bdd.parser.Scenario (rendered: an outline's example filled in)
    example: Mapping[str, str]
    failed_step: Any = None  # pytest_bdd.parser.Step
    error: BaseException | None = None

    @property
    def name(self) -> str:
        """The scenario's name; an outline's example values added when its name does not
        tell the examples apart."""
        name = self.scenario.name
        if self.example and not any(v in name for v in self.example.values() if v):
            name += " (" + ", ".join(f"{k}={v}" for k, v in self.example.items()) + ")"
        return name

    @property
    def feature_file(self) -> str:
        return Path(self.feature.filename).name


def scenario_finding(run: ScenarioRun, outcome: str, reason: str = "") -> Finding:
    """The scenario as a finding: operation = its name, binding = its feature file (the
    JUnit case ``<scenario> [<file>]``); a failure's expected is the step that failed, its
    actual what the step found."""
    verdict = _VERDICTS.get(outcome, Verdict.FAILED)
    where = f"{run.feature_file}:{run.scenario.line_number}"
    expected, actual, cause = "every step holds", "every step held", ""
    if verdict is Verdict.FAILED:
        step = run.failed_step
        if step is not None:
            expected = f"{step.keyword.strip()} {step.name} (line {step.line_number})"
        actual = cause = _said(run.error) or reason or "failed"
    elif verdict is Verdict.NOT_APPLICABLE:
        actual = cause = reason or "skipped"
    return Finding(SCENARIO, verdict, run.name, run.feature_file, expected=expected,
                   actual=actual, source=where, cause=cause)


def _said(error: BaseException | None) -> str:
    """What an exception says, on one line (a check's message lists each failing call)."""
    if error is None:
        return ""
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    if not isinstance(error, AssertionError):
        text = f"{type(error).__name__}: {text}"
    return text[:1000]
