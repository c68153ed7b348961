"""The probe's Allure results: one test per rule x operation x binding (feature = binding,
story = operation, tag = rule), failed with its examples when a case failed it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.judge.findings import Report, Verdict
from harness.reports.allure_results import AllureResults

#: Failing examples listed per test.
EXAMPLES = 20


def write_allure(report: Report, directory: str | Path) -> int:
    """Write the results; returns how many."""
    allure = AllureResults(directory, suite="harness probe")
    examples: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for data in report.kept():
        key = (data["rule"], data.get("operation", "-"), data.get("binding", "-"))
        if len(examples[key]) < EXAMPLES:
            examples[key].append(data)
    for (rule, op, binding), counts in sorted(report.by_case.items()):
        if counts[Verdict.FAILED]:
            verdict = "failed"
        elif counts[Verdict.PASSED] or counts[Verdict.WARNING]:
            verdict = "passed"
        else:
            verdict = "not applicable"
        shown = examples[(rule, op, binding)]
        allure.add(f"{rule} {op} [{binding}]", verdict, full_name=f"probe.{rule}.{op}.{binding}",
                   labels={"feature": binding, "story": op, "tag": rule},
                   parameters={v.value: str(counts[v]) for v in Verdict if counts[v]},
                   message=report.titles.get(rule),
                   details="\n".join(f"[{d['verdict']}] expected {d.get('expected', '')}, "
                                     f"actual {d.get('actual', '')}" for d in shown) or None,
                   start=report.started, stop=report.finished)
    return allure.written
