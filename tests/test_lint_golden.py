"""Lint's output does not move when its engine is made faster: the counts, causes, findings
and examples of ``harness lint`` over a varied recording (clean traffic, every faulty client of
test_lint, every faulty service of faulty.py, harmless variation, descriptions, error pages,
missing answers, a broken line) under both profiles, in one process and over two workers with
small chunks, are those of ``tests/golden/lint.json``.

A deliberate change of a rule's words or verdicts rewrites the golden file:

    .venv/bin/python tests/test_lint_golden.py --write

and its diff shows every finding the change moved.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from faulty import FAULTS as SERVICE_FAULTS
from faulty import harmless
from test_lint import FAULTS as CLIENT_FAULTS
from traffic import BASE, clean_exchanges, exchange, write_recording

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments, school_mobile
from harness.judge.findings import Verdict
from harness.judge.lint import lint
from harness.judge.profiles import Profile, Severity
from harness.reports.console import print_report
from harness.reports.json_report import summary
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse

GOLDEN = Path(__file__).parent / "golden" / "lint.json"
#: Varies from run to run (or machine to machine): left out of the comparison.
_VOLATILE = ("duration_s", "harness_version", "recordings", "allure_results")
#: The profiles judged: the spec's letter, ASMX's tolerance, and overrides (one rule off).
PROFILES = {"spec": Profile(),
            "asmx": Profile("asmx"),
            "overrides": Profile("spec", (("R3-LENGTH-HOST", Severity.WARNING),
                                          ("R9-PARAMETERS", Severity.OFF)))}


def varied_traffic(contract: Contract) -> list[Exchange]:
    clean = clean_exchanges(contract)
    requests = [e.request for e in clean]
    traffic = list(clean)
    traffic += [exchange(contract, build(contract)) for _, build, *_ in CLIENT_FAULTS]
    for fault in SERVICE_FAULTS.values():  # each faulty service answering every clean call
        traffic += [Exchange(r, fault.respond(contract, r)) for r in requests]
    traffic += [Exchange(r, harmless(contract, r)) for r in requests]
    traffic += _odd(contract, requests)
    return traffic


def _odd(contract: Contract, requests: list[HttpRequest]) -> list[Exchange]:
    """Exchanges no faulty server makes: no answer, a stack trace, a WSDL request, markup
    refused by request validation, a body that is no XML, an unquoted charset, HEAD."""
    op = contract.operation("SendNotificationType")
    markup = build_request(contract, op, sample_arguments(op) | {"TypeNotfication": "<b>x</b>"},
                           Binding.HTTP_GET, BASE)
    trace = HttpResponse(500, (("Content-Type", "text/html; charset=utf-8"),),
                         b"<html><head><title>Runtime Error</title></head><body>"
                         b"System.NullReferenceException: Object reference not set<br/>"
                         b"at School.Mobile.Service.AuthCode() in C:\\src\\Service.cs:line 42"
                         b"</body></html>", "Internal Server Error")
    wsdl = HttpRequest("GET", f"{BASE}/AuthCodeSending.asmx?WSDL", (("Host", "school"),))
    soap = requests[0]
    return [
        Exchange(requests[1], None),
        Exchange(requests[2], trace),
        exchange(contract, wsdl),
        exchange(contract, markup),
        exchange(contract, replace(soap, body=b"not xml at all").with_header(
            "Content-Length", "14")),
        exchange(contract, soap.with_header("Content-Type", 'text/xml; charset="UTF-8"')),
        exchange(contract, replace(requests[3], method="HEAD")),
        Exchange(requests[4], replace(clean_exchanges(contract)[4].response, status=302)),
    ]


def recording(folder: Path) -> Path:
    path = write_recording(folder / "varied.jsonl", varied_traffic(school_mobile()))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(40, '{"request": {"method": "GET"\n')  # a line cut short by a crash
    path.write_text("".join(lines), encoding="utf-8")
    return path


def outcome(path: Path, profile: Profile, workers: int, chunk_size: int) -> dict[str, Any]:
    """What lint says of ``path``: its summary, its counts by rule x operation x binding,
    every finding, a digest of each failure's example (they quote whole exchanges) and the
    console's report."""
    broken: list[str] = []
    report = lint([path], school_mobile(), workers=workers, chunk_size=chunk_size,
                  profile=profile, on_broken=broken.append)
    head = {k: v for k, v in summary(report).items() if k not in _VOLATILE}
    findings = list(report.kept())
    examples = [[*case, _digest(text.replace(str(path), path.name))]
                for case, text in sorted(report.examples.items())]
    by_case = sorted([*case, *(c[v] for v in Verdict)] for case, c in report.by_case.items())
    console = io.StringIO()
    print_report(report, console)
    said = {"summary": head, "by_case": by_case, "broken": broken, "findings": findings,
            "examples": examples, "console": console.getvalue().splitlines()}
    # as JSON reads it back (tuples are lists), the recording named by its file name only
    return json.loads(json.dumps(said, ensure_ascii=False).replace(str(path), path.name))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def outcomes(path: Path, workers: int, chunk_size: int) -> dict[str, Any]:
    """Each profile's ``outcome``; the counts by case of all but the first as a digest (the
    golden file stays small; a difference there shows in the first profile's in full)."""
    got = {name: outcome(path, profile, workers, chunk_size)
           for name, profile in PROFILES.items()}
    for name in list(PROFILES)[1:]:
        got[name]["by_case"] = _digest(json.dumps(got[name]["by_case"]))
    return got


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("workers", "chunk_size"), [(1, 2000), (2, 37)],
                         ids=["one-process", "two-workers"])
def test_lint_says_what_the_golden_file_says(tmp_path: Path, golden: dict[str, Any],
                                              workers: int, chunk_size: int) -> None:
    got = outcomes(recording(tmp_path), workers, chunk_size)
    for profile in PROFILES:
        want, have = golden[profile], got[profile]
        assert have["summary"] == want["summary"], profile
        assert have["by_case"] == want["by_case"], profile
        assert have["broken"] == want["broken"], profile
        assert len(have["findings"]) == len(want["findings"]), profile
        for i, (h, w) in enumerate(zip(have["findings"], want["findings"], strict=True)):
            assert h == w, f"{profile}: finding {i}"
        assert have["examples"] == want["examples"], profile
        assert have["console"] == want["console"], profile


def test_golden_recording_is_varied(golden: dict[str, Any]) -> None:
    """The golden file covers failures and warnings of many rules on both sides, counted
    descriptions and a broken line: a change anywhere in lint's path shows in it."""
    spec = golden["spec"]
    rules = {f["rule"] for f in spec["findings"]}
    assert len(rules) >= 18, rules
    assert {f["verdict"] for f in spec["findings"]} == {"failed", "warning"}
    assert spec["summary"]["service_descriptions"] and spec["broken"]
    assert spec["summary"]["counts"]["passed"] > 5000


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = outcomes(recording(Path(tmp)), 1, 2000)
    GOLDEN.parent.mkdir(exist_ok=True)
    with GOLDEN.open("w", encoding="utf-8") as out:  # a finding a line: diffs show each one
        out.write("{\n")
        for p, (profile, result) in enumerate(data.items()):
            out.write(f'"{profile}": {{\n')
            for k, (key, value) in enumerate(result.items()):
                if isinstance(value, list):
                    items = ",\n  ".join(json.dumps(v, ensure_ascii=False) for v in value)
                    text = f"[\n  {items}\n ]" if value else "[]"
                else:
                    text = json.dumps(value, ensure_ascii=False)
                out.write(f' "{key}": {text}{"," if k < len(result) - 1 else ""}\n')
            out.write("}" + ("," if p < len(data) - 1 else "") + "\n")
        out.write("}\n")
    print(f"wrote {GOLDEN}")
