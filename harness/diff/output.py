"""Diff's own parts of the output: a table per operation x binding, the noise section, and the
Allure results. Findings themselves go through findings.Report (console, JSON, JUnit)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import IO, Any

from harness.diff.consistency import RULE as CROSS_BINDING
from harness.diff.engine import CANDIDATE, PRIMARY, SECONDARY, DiffResult
from harness.reports.allure_results import Attach, exchange_attachments, write_cases
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
    """One Allure test per test case, as JUnit's (rule x operation x binding: feature =
    binding, story = operation, tag = rule), with the requests and responses of both sides of
    an example of its difference attached, and the noise learned at its operation x binding;
    a cross-binding case shows each implementation's values per binding. A test's message is
    its first difference (its cause, expected, actual and where), its details every cause with
    its count; a test with warnings only passes, tagged ``warning``. The overview (Metadata)
    names the primary, candidate and secondary, the verdict and the counts. Returns results
    written."""
    report = result.report
    roles = result.targets
    examples: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for example in result.examples:
        examples[(example["rule"], example["operation"], example["binding"])].append(example)
    noise: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in report.meta.get("noise", []):
        noise[(entry["operation"], entry["binding"])].append(entry)
    values: dict[tuple[str, str, str], list[Attach]] = defaultdict(list)
    for finding in report.kept():
        if finding["rule"] == CROSS_BINDING:
            case = (CROSS_BINDING, finding["operation"], finding["binding"] or "-")
            values[case].append(Attach(f"values per binding ({finding['implementation']})",
                                       "\n".join(f"{label}: {value}" for label, value
                                                 in finding["values"].items())))

    def attachments(case: tuple[str, str, str]) -> list[Attach]:
        rule, op, binding = case
        files = [a for example in examples[case] for a in _example_files(example)]
        files += values.get(case, [])
        if rule.startswith("DIFF-") and noise[(op, binding)]:
            files.append(Attach("noise (not held against the candidate)", "\n".join(
                f"{n['kind']} at {n['path'] or '(HTTP)'}: suppressed {n['suppressed']}"
                for n in noise[(op, binding)])))
        return files

    started = {place: p.started for place, p in result.places.items()}
    return write_cases(report, directory, attachments=attachments, started=started,
                       facts={"primary": roles[PRIMARY], "candidate": roles[CANDIDATE],
                              "secondary": roles.get(SECONDARY)})


def _example_files(example: dict[str, Any]) -> list[Attach]:
    files = []
    for role in (PRIMARY, CANDIDATE):
        exchange = Exchange.from_dict(example[role])
        files += exchange_attachments(f"{example['rule']} {role}", exchange.request,
                                      exchange.response)
    return files


