"""The probe's Allure results: one test per rule x operation x binding (feature = binding,
story = operation, tag = rule) with its own exchange (the first failing or warned one, else
its first) as request and response attachments, its own duration (its operation x binding's
calls), and as message its first failure's cause, expected, actual and where."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.judge.findings import Report, Verdict
from harness.reports.allure_results import (
    AllureResults,
    Attach,
    findings_by_place,
    write_overview,
)
from harness.reports.console import applied
from harness.reports.junit import describe


def write_allure(report: Report, directory: str | Path,
                 exchanges: Mapping[tuple[str, str, str], tuple[str, str]] | None = None,
                 first_sent: Mapping[tuple[str, str], float] | None = None) -> int:
    """Write the results (and the overview); returns how many. ``exchanges``: the request and
    response each test shows, by (rule, operation, binding); ``first_sent``: when each
    (operation, binding)'s first call went out."""
    allure = AllureResults(directory, suite="harness probe")
    write_overview(directory, report, namespace=report.meta.get("namespace"))
    exchanges, first_sent = exchanges or {}, first_sent or {}
    found = findings_by_place(report, by_rule=True)
    for (rule, op, binding), counts in sorted(report.by_case.items()):
        if not applied(counts):
            continue  # judged nothing: not a test (the JSON counts it)
        listed = found.get((rule, op, binding), [])
        verdict = ("failed" if counts[Verdict.FAILED]
                   else "warning" if counts[Verdict.WARNING] else "passed")
        start = first_sent.get((op, binding), report.started)
        attachments = [Attach(f"{rule} request", text) if i == 0 else
                       Attach(f"{rule} response", text)
                       for i, text in enumerate(exchanges.get((rule, op, binding), ()))]
        allure.add(f"{rule} {op} [{binding}]", verdict, full_name=f"probe.{rule}.{op}.{binding}",
                   labels={"feature": binding, "story": op, "tag": rule},
                   parameters={v.value: str(counts[v]) for v in Verdict if counts[v]},
                   message=describe(listed[0]) if listed else report.titles.get(rule),
                   details="\n".join(f"{d['count']} x {describe(d)}" for d in listed) or None,
                   attachments=attachments, start=start,
                   stop=start + report.seconds.get((op, binding), 0.0))
    return allure.written
