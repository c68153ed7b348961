"""The JUnit XML form of a Report, for CI (GitLab, Jenkins).

A test suite per rule, a test case per rule x operation x binding (rule x endpoint for the
WSDL checks), each with the ``time`` its calls took. What CI shows of a case decides its form:

- a failed case: ``<failure>`` whose message is the first cause with its expected and actual
  and where, and whose text lists every cause of the case with its count, then up to
  ``LISTED`` failures; ``system-out`` holds the first failing exchange;
- a case with warnings and no failure: ``<skipped type="warning">`` with each warning's rule,
  expected and actual. GitLab shows a case's text only for failed, errored and skipped cases
  (``system-out`` and ``properties`` of a passed case are never shown), and Jenkins shows a
  skipped case's message on its page and counts it apart: a passed case would hide the
  warning in both. The warnings are also the case's ``properties`` (Jenkins lists each);
- a case whose checks were all not applicable is left out (it judged nothing), counted in
  the suites' properties.

Every suite carries the run's properties: command, target, verdict, the counts in the words
every output uses (checks, calls or exchanges) and, for a partial run, what it covered and
left out.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from lxml import etree

from harness.judge.findings import UNCOMPARED, Report, Verdict
from harness.reports.console import applied
from harness.reports.output import open_output, xml_safe

#: Failures (and warnings) listed in a case's text; the JSON has every one.
LISTED = 20
_KEPT = (Verdict.FAILED.value, Verdict.WARNING.value)


def write_junit(report: Report, path: str | Path) -> None:
    duration = (report.finished or time.time()) - report.started
    suites = etree.Element("testsuites", name=f"harness {report.command}",
                           time=f"{duration:.3f}")
    listed = _listed(report)
    cases = {case: counts for case, counts in report.by_case.items() if applied(counts)}
    idle = len(report.by_case) - len(cases)
    properties = run_properties(report, idle)
    totals = Counter[str]()
    for rule in sorted({case[0] for case in cases}):
        mine = sorted(case for case in cases if case[0] == rule)
        suite = etree.SubElement(suites, "testsuite", name=rule, tests=str(len(mine)))
        _properties(suite, properties)
        counted = Counter[str]()
        for case in mine:
            counted.update(_case(report, suite, case, listed.get(case, [])))
        suite.set("failures", str(counted["failures"]))
        suite.set("skipped", str(counted["skipped"]))
        suite.set("time", f"{counted['time'] / 1000:.3f}")
        totals.update(counted, tests=len(mine))
    for name in ("tests", "failures", "skipped"):
        suites.set(name, str(totals[name]))
    with open_output(path, binary=True) as out:
        out.write(etree.tostring(suites, xml_declaration=True, encoding="utf-8",
                                 pretty_print=True))


def run_properties(report: Report, idle_cases: int = 0) -> dict[str, str]:
    """What every suite says of the run (Jenkins shows suite properties; GitLab none)."""
    c = report.counts
    found = {"command": report.command, "target": report.target or "",
             **({"environment": report.environment} if report.environment else {}),
             "verdict": report.verdict, "checks": str(report.checks),
             report.unit: str(report.exchanges),
             **{f"checks.{v.value}": str(c[v]) for v in Verdict},
             "cases.not_applicable.left_out": str(idle_cases),
             **{f"not_sent.{key}": str(n) for key, n in report.not_sent.items() if n}}
    if report.meta.get(UNCOMPARED):
        found["redacted_values.not_compared"] = str(report.meta[UNCOMPARED])
    if report.interrupted:
        found |= {"interrupted": report.interrupted,
                  **({"planned": str(report.planned)} if report.planned is not None else {})}
    scope = report.scope
    if scope is not None:
        found |= {"selection.covered": ", ".join(scope.covered),
                  "selection.left_out": ", ".join(scope.left_out),
                  "selection.chosen": scope.chosen}
    return found


def _properties(parent: etree._Element, values: dict[str, str]) -> None:
    props = etree.SubElement(parent, "properties")
    for name, value in values.items():
        etree.SubElement(props, "property", name=name, value=xml_safe(value))


def _listed(report: Report) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Up to LISTED failures and warnings per case, failures first (one pass over them)."""
    found: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for data in report.kept():
        if data["verdict"] not in _KEPT:
            continue
        bucket = found.setdefault(_case_key(data), [])
        if len(bucket) < LISTED:
            bucket.append(data)
    for bucket in found.values():
        bucket.sort(key=lambda d: d["verdict"] != Verdict.FAILED.value)
    return found


def _case_key(data: dict[str, Any]) -> tuple[str, str, str]:
    if data.get("endpoint"):
        return data["rule"], data["endpoint"], "WSDL"
    return data["rule"], data.get("operation") or "(unclassified)", data.get("binding") or "-"


def _case(report: Report, suite: etree._Element, case: tuple[str, str, str],
          listed: list[dict[str, Any]]) -> Counter[str]:
    """One test case into ``suite``; what it counts (failures, skipped, time in ms)."""
    rule, where, binding = case
    counts, title = report.by_case[case], report.titles.get(rule, "")
    seconds = report.seconds.get((where, binding), 0.0)
    testcase = etree.SubElement(suite, "testcase", classname=f"{report.command}.{rule}",
                                name=f"{where} [{binding}]" + (f" {title}" if title else ""),
                                time=f"{seconds:.3f}")
    counted = Counter(time=round(seconds * 1000))
    failed = [d for d in listed if d["verdict"] == Verdict.FAILED.value]
    warned = [d for d in listed if d["verdict"] == Verdict.WARNING.value]
    if warned:
        props = etree.SubElement(testcase, "properties")
        for i, data in enumerate(warned, 1):
            etree.SubElement(props, "property", name=f"warning {i}",
                             value=xml_safe(describe(data)))
    if counts[Verdict.FAILED]:
        counted["failures"] += 1
        failure = etree.SubElement(testcase, "failure", type=rule, message=xml_safe(
            _message(counts[Verdict.FAILED], "failed", failed)))
        failure.text = xml_safe(_text(counts[Verdict.FAILED], failed + warned))
        if case in report.examples:
            etree.SubElement(testcase, "system-out").text = xml_safe(
                f"first failing exchange:\n{report.examples[case]}")
    elif counts[Verdict.WARNING]:
        counted["skipped"] += 1
        skipped = etree.SubElement(testcase, "skipped", type="warning", message=xml_safe(
            _message(counts[Verdict.WARNING], "warning(s), a permitted deviation", warned)))
        skipped.text = xml_safe(_text(counts[Verdict.WARNING], warned))
    return counted


def _message(count: int, what: str, listed: list[dict[str, Any]]) -> str:
    """``2 failed: expected .., actual .. (at AuthCode x SOAP 1.2 #3 in day.jsonl)``, led by
    the cause when it says more than the actual value."""
    if not listed:
        return f"{count} {what}"
    return f"{count} {what}: {describe(listed[0], rule=False)}"[:1000]


def _text(count: int, listed: list[dict[str, Any]]) -> str:
    causes = Counter(d["cause"] for d in listed)
    lines = [f"{n} x {cause}" for cause, n in causes.most_common()]
    lines += ["", *(describe(d) for d in listed)]
    if (more := count - len([d for d in listed if d["verdict"] == listed[0]["verdict"]])) > 0:
        lines.append(f"... and {more} more in the JSON report (--json)")
    return "\n".join(lines)


def describe(data: dict[str, Any], *, rule: bool = True) -> str:
    """One finding on one line: rule, cause, expected, actual, where."""
    where = data.get("endpoint") or (f"{data.get('operation') or '(unclassified)'} x "
                                     f"{data.get('binding') or '-'}")
    source = str(data.get("source") or "")
    if data.get("index") is not None:  # a recording's exchange, or a run's call
        where += (f" call #{data['index']}" if "://" in source or not source
                  else f" #{data['index']} in {source}")
    actual = str(data.get("actual", ""))
    text = f"expected {data.get('expected', '')}, actual {actual}"
    cause = data.get("cause", "")
    if cause and not cause.startswith("expected ") and cause not in actual:
        text = f"{cause}: {text}"
    return (f"[{data['rule']}] " if rule else "") + f"{text} (at {where})"
