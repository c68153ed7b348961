"""The JSON form of a Report: the verdict, the counts, the causes and every failure and
warning, streamed to disk (a report of a million findings is never held in memory)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness import __version__
from harness.judge.findings import NOT_SENT, Report, Verdict
from harness.reports.console import case_counts
from harness.reports.output import open_output


def summary(report: Report) -> dict[str, Any]:
    """Everything but the findings. ``exchanges`` counts what ``unit`` names (calls sent, or
    recorded exchanges read); ``checks`` every finding; ``causes`` the failures and warnings
    grouped by cause, failures first, then differences, then warnings, each by reach;
    ``not_sent`` the recorded exchanges not sent, by why (``service_descriptions``,
    ``not_selected``); ``test_cases`` JUnit's test cases (rule x operation x binding that
    judged something) and those that failed (JUnit's failures; Allure's Failed but for
    certify, whose Allure tests are its ``scenarios``); ``selection`` what a partial run
    covered and left out (null: the whole contract); ``interrupted`` whether a signal stopped
    the run (then ``signal``, and ``planned``: how many ``unit`` the whole run would have
    made, null when unknown)."""
    return {
        "verdict": report.verdict,
        "interrupted": bool(report.interrupted),
        **({"signal": report.interrupted, "planned": report.planned}
           if report.interrupted else {}),
        "command": report.command,
        "target": report.target,
        "environment": report.environment,
        "harness_version": __version__,
        "exchanges": report.exchanges,
        "unit": report.unit,
        "checks": report.checks,
        "duration_s": round((report.finished or time.time()) - report.started, 3),
        "profile": report.profile.name,
        "overrides": {rule: s.value for rule, s in report.profile.overrides},
        "counts": {v.value: report.counts[v] for v in Verdict},
        "test_cases": dict(zip(("total", "failed"), case_counts(report), strict=True)),
        **({"known_from_baseline": report.known} if "baseline" in report.meta else {}),
        "service_descriptions": dict(sorted(report.descriptions.items())),
        "not_sent": {key: report.not_sent[key] for key in NOT_SENT if report.not_sent[key]},
        "rules": {rule: {v.value: c[v] for v in Verdict if c[v]}
                  for rule, c in sorted(report.by_rule.items())},
        "selection": report.scope.to_dict() if report.scope is not None else None,
        "causes": [cause.to_dict() for cause in report.ordered_causes()],
        **report.meta,
    }


def write_json(report: Report, path: str | Path) -> None:
    """``{"verdict", "target", "counts", ..., "causes": [...], "findings": [...]}``."""
    with open_output(path) as out:
        head = json.dumps(summary(report), ensure_ascii=False, indent=1)
        out.write(head[:-2] + ',\n "findings": [')
        for i, data in enumerate(report.kept()):
            out.write(("," if i else "") + "\n  " + json.dumps(data, ensure_ascii=False))
        out.write("\n ]\n}\n")
