"""The probe's Allure results: one test per rule x operation x binding (as JUnit's: feature =
binding, story = operation, tag = rule) with its own exchange (the first failing or warned one,
else its first) as request and response attachments, its own duration (its operation x
binding's calls), and as message its first failure's cause, expected, actual and where."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.judge.findings import Report
from harness.reports.allure_results import Attach, write_cases


def write_allure(report: Report, directory: str | Path,
                 exchanges: Mapping[tuple[str, str, str], tuple[str, str]] | None = None,
                 first_sent: Mapping[tuple[str, str], float] | None = None) -> int:
    """Write the results (and the overview); returns how many. ``exchanges``: the request and
    response each test shows, by (rule, operation, binding); ``first_sent``: when each
    (operation, binding)'s first call went out."""
    exchanges = exchanges or {}

    def attachments(case: tuple[str, str, str]) -> list[Attach]:
        return [Attach(f"{case[0]} {'request' if i == 0 else 'response'}", text)
                for i, text in enumerate(exchanges.get(case, ()))]

    return write_cases(report, directory, facts={"namespace": report.meta.get("namespace")},
                       attachments=attachments, started=first_sent)
