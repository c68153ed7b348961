"""Diff's own parts of the output: a table per operation x binding, the noise section, and the
Allure results. Findings themselves go through findings.Report (console, JSON, JUnit)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import IO, Any

from harness.diff.consistency import RULE as CROSS_BINDING
from harness.diff.engine import CANDIDATE, PRIMARY, SECONDARY, DiffResult
from harness.reports.allure_results import (
    AllureResults,
    Attach,
    exchange_attachments,
    findings_by_place,
    write_overview,
)
from harness.reports.junit import describe
from harness.traffic.exchange import Exchange


def print_places(result: DiffResult, stream: IO[str]) -> None:
    """Who was compared, then cases and differences per operation x binding."""
    roles = result.targets
    print(f"primary {roles[PRIMARY]}" + (f", secondary {roles[SECONDARY]}"
                                         if SECONDARY in roles else "")
          + f", candidate {roles[CANDIDATE]}\n", file=stream)
    width = max([len(f"{op} x {b}") for op, b in result.places] + [19])
    print(f"{'operation x binding':<{width}}  cases  differ  noise  differences", file=stream)
    for (op, binding), place in sorted(result.places.items()):
        rules = ", ".join(f"{rule} x{n}" for rule, n in sorted(place.rules.items())) or "-"
        print(f"{op + ' x ' + binding:<{width}}  {place.cases:>5}  {place.differing:>6}  "
              f"{place.suppressed:>5}  {rules}", file=stream)
    print_noise(result, stream)
    print(file=stream)


def print_noise(result: DiffResult, stream: IO[str]) -> None:
    if SECONDARY not in result.targets:
        print("\nNOISE: none learned (give --secondary, a second instance of the primary, to "
              "learn which differences are noise)", file=stream)
        return
    noise = result.noise.summary()
    print(f"\nNOISE (differences between primary and secondary, not held against the "
          f"candidate): {len(noise)} place(s)", file=stream)
    for entry in noise:
        print(f"  {entry['operation']} x {entry['binding']}: {entry['kind']}"
              f"{' at ' + entry['path'] if entry['path'] else ''} (seen {entry['seen']}x, "
              f"suppressed {entry['suppressed']} candidate difference(s))", file=stream)


def write_allure(result: DiffResult, directory: str | Path) -> int:
    """One Allure test per operation x binding (feature = binding, story = operation, a tag per
    rule that differed), with both requests and responses of an example per rule attached;
    one per implementation x operation for the cross-binding check. A test's message is its
    first difference (its cause, expected, actual and where), its details every cause with its
    count; a test with warnings only is accepted. The overview (Metadata) names the primary,
    candidate and secondary, the verdict and the counts. Returns results written."""
    report = result.report
    command = report.command  # diff, or shadow (the same judgement, live)
    allure = AllureResults(directory, suite=f"harness {command}")
    roles = result.targets
    write_overview(directory, report, primary=roles[PRIMARY], candidate=roles[CANDIDATE],
                   secondary=roles.get(SECONDARY))
    found = findings_by_place(report)
    examples: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for example in result.examples:
        examples[(example["operation"], example["binding"])].append(example)
    noise: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in report.meta.get("noise", []):
        noise[(entry["operation"], entry["binding"])].append(entry)
    for (op, binding), place in sorted(result.places.items()):
        rules = sorted(place.rules)
        listed = found.get((op, binding), [])
        verdict = ("failed" if any(d["verdict"] == "failed" for d in listed)
                   else "warning" if listed else "passed")
        attachments = [a for example in examples[(op, binding)] for a in _example_files(example)]
        if noise[(op, binding)]:
            attachments.append(Attach("noise (not held against the candidate)", "\n".join(
                f"{n['kind']} at {n['path'] or '(HTTP)'}: suppressed {n['suppressed']}"
                for n in noise[(op, binding)])))
        allure.add(f"{op} [{binding}] candidate matches primary", verdict,
                   full_name=f"{command}.{op}.{binding}",
                   labels={"feature": binding, "story": op, "tag": rules or ["DIFF"]},
                   parameters={"calls": str(place.cases), "differing": str(place.differing),
                               "noise suppressed": str(place.suppressed)},
                   message=_message(listed), details=_details(listed),
                   attachments=attachments, start=place.started,
                   stop=place.started + place.seconds)
    for (op, binding), listed in sorted(found.items()):
        # calls never compared (no answer, an answer over the cap; shadow: not mirrored):
        # their findings are tests too, or Allure would show green where the console does not
        listed = [d for d in listed if d["rule"] != CROSS_BINDING]
        if (op, binding) in result.places or not listed:
            continue
        verdict = "failed" if any(d["verdict"] == "failed" for d in listed) else "warning"
        allure.add(f"{op} [{binding}] candidate answers", verdict,
                   full_name=f"{command}.{op}.{binding}",
                   labels={"feature": binding, "story": op,
                           "tag": sorted({d["rule"] for d in listed})},
                   parameters={"calls": str(sum(d["count"] for d in listed))},
                   message=_message(listed), details=_details(listed))
    for finding in report.kept():
        if finding["rule"] == CROSS_BINDING:
            _cross_binding(allure, finding, *_span(result, finding["operation"]), command)
    for role, ops in sorted(result.consistent.items()):
        for op in ops:
            start, stop = _span(result, op)
            allure.add(f"{op} same result over all bindings ({role})", "passed",
                       full_name=f"{command}.cross-binding.{role}.{op}",
                       labels={"feature": "cross-binding", "story": op, "tag": [CROSS_BINDING]},
                       start=start, stop=stop)
    return allure.written


def _message(listed: list[dict[str, Any]]) -> str | None:
    """The first difference: its rule, cause, expected, actual and where."""
    return describe(listed[0]) if listed else None


def _details(listed: list[dict[str, Any]]) -> str | None:
    """Every cause of the test with its count, one line each."""
    return "\n".join(f"{d['count']} x {describe(d)}" for d in listed) or None


def _example_files(example: dict[str, Any]) -> list[Attach]:
    files = []
    for role in (PRIMARY, CANDIDATE):
        exchange = Exchange.from_dict(example[role])
        files += exchange_attachments(f"{example['rule']} {role}", exchange.request,
                                      exchange.response)
    return files


def _span(result: DiffResult, op: str) -> tuple[float, float]:
    """(start, stop) of a test over every binding of ``op``: its own calls' time."""
    places = [p for (name, _), p in result.places.items() if name == op]
    start = min((p.started for p in places), default=0.0)
    return start, start + sum(p.seconds for p in places)


def _cross_binding(allure: AllureResults, finding: dict[str, Any], start: float,
                   stop: float | None, command: str = "diff") -> None:
    role, op = finding["implementation"], finding["operation"]
    values = "\n".join(f"{label}: {value}" for label, value in finding["values"].items())
    allure.add(f"{op} same result over all bindings ({role})",
               finding["verdict"],  # a warning passes (Allure's "broken" is a crashed test)
               full_name=f"{command}.cross-binding.{role}.{op}",
               labels={"feature": "cross-binding", "story": op, "tag": [CROSS_BINDING]},
               message=finding["message"], details=values,
               attachments=[Attach("values per binding", values)], start=start, stop=stop)
