"""JUnit that CI tools read well, for lint and replay as for certify: ``time`` on every suite
and test case, a failure message with expected and actual, the first failing exchange
(request and response, credential headers redacted) in ``system-out``, one test case per
rule x operation x binding. Read through the hardened parser, from the real commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from traffic import clean_exchanges, exchange, request, write_recording

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.contract.xmlsafe import parse_xml
from harness.traffic.exchange import Exchange, HttpResponse

HARNESS = [sys.executable, "-m", "harness"]
SECRET = "Bearer s3cr3t-token"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=180, check=False)


def _faulty(contract: Contract) -> list[Exchange]:
    """Clean traffic plus two SOAP 1.2 calls with a SOAPAction (R2), one with a token."""
    wrong = request(contract, "AuthCode", Binding.SOAP12).with_header(
        "SOAPAction", '"http://tempuri.org/AuthCode"').with_header("Authorization", SECRET)
    return [*clean_exchanges(contract), exchange(contract, wrong), exchange(contract, wrong)]


def _cases(path: Path) -> dict[tuple[str, str], object]:
    root = parse_xml(path.read_bytes())
    assert root.get("time") is not None and float(root.get("time")) >= 0
    cases = {}
    for suite in root.iter("testsuite"):
        assert suite.get("time") is not None
        for case in suite.iter("testcase"):
            assert case.get("time") is not None
            key = (case.get("classname"), case.get("name"))
            assert key not in cases, key  # one test case per rule x operation x binding
            cases[key] = case
    return cases


def _check_r2_case(cases: dict, command: str) -> None:
    case = cases[(f"{command}.R2-NO-SOAPACTION",
                  "AuthCode [SOAP 1.2] SOAP 1.2 request carries no SOAPAction")]
    failure = case.find("failure")
    assert failure.get("message").startswith(
        '2 failed: expected no SOAPAction header, actual SOAPAction: '
        '"http://tempuri.org/AuthCode" (at AuthCode x SOAP 1.2 #')
    out = case.find("system-out").text
    assert "POST http://school.example:8080/AuthCodeSending.asmx" in out
    assert "SOAPAction: \"http://tempuri.org/AuthCode\"" in out and "HTTP/1.1 200" in out
    assert "Authorization: [redacted]" in out and "s3cr3t" not in out


def test_lint_junit(contract: Contract, tmp_path: Path) -> None:
    path = write_recording(tmp_path / "r.jsonl", _faulty(contract))
    done = run("lint", path, "--junit", tmp_path / "lint.xml")
    assert done.returncode == 1
    cases = _cases(tmp_path / "lint.xml")
    _check_r2_case(cases, "lint")
    assert ("lint.R1-SOAPACTION", "AuthCode [SOAP 1.1] SOAP 1.1 SOAPAction is "
            '"{namespace}/<Operation>"') in cases


def test_replay_junit_shows_the_new_answer_and_its_time(contract: Contract,
                                                        reference_url: str,
                                                        tmp_path: Path) -> None:
    req = request(contract, "GetTokenDevice", Binding.HTTP_GET).with_header(
        "Authorization", SECRET)
    recorded = Exchange(req, HttpResponse(500, (("Content-Type", "text/plain"),), b"down"),
                        meta={"operation": "GetTokenDevice", "binding": "get"})
    path = write_recording(tmp_path / "r.jsonl", [recorded])
    done = run("replay", path, "--target", reference_url, "--quiet", "--junit",
               tmp_path / "replay.xml")
    assert done.returncode == 1
    cases = _cases(tmp_path / "replay.xml")
    case = cases[("replay.REPLAY-STATUS", "GetTokenDevice [HTTP GET] status as recorded")]
    assert case.find("failure").get("message").startswith(
        "1 failed: a result instead of HTTP 500: expected HTTP 500: down, actual HTTP 200: an "
        "XML <string> document (at GetTokenDevice x HTTP GET #1 in ")
    out = case.find("system-out").text
    assert "HTTP/1.1 200" in out and "down" not in out  # the answer judged, not the recording
    assert re.search(r"Authorization: redacted-[0-9a-f]{16}\n", out) and "s3cr3t" not in out
    assert float(case.get("time")) > 0  # the target's answer time
