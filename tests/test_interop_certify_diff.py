"""Interop lane: ``harness certify`` and ``harness diff`` against the real ASMX runtime.

Both variants of a stock deployment (customErrors RemoteOnly and On) must certify clean: the
verdicts are the platform's, never the harness's own (markup refused by request validation is a
4.10 warning; a failed call fails once). The reference must answer as the real runtime does,
erroneous requests included: a diff with the runtime as primary shows nothing but fault texts
and GetTokenDevice's documented result.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from faulty import assert_markup_refusal_warnings

from harness.contract.xmlsafe import parse_xml
from harness.reference.server import running

pytestmark = pytest.mark.interop

VARIANTS = ["asmx_url", "asmx_customerrors_url"]
#: GetTokenDevice's result: the reference's is its documented digest, the test deployment's
#: "token-for-<id>" (docs/reference-implementation.md).
TOKEN_RESULT = ("--ignore", "*/GetTokenDeviceResult", "--ignore", "/string")


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, check=False)


@pytest.mark.parametrize("variant", VARIANTS)
def test_stock_asmx_certifies_clean(request, tmp_path, variant):
    url = request.getfixturevalue(variant)
    done = harness("certify", "--target", url, "--no-html", "--json", str(tmp_path / "c.json"),
                   "--junit", str(tmp_path / "c.xml"), "--report-dir", str(tmp_path / "reports"),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 0
    # request validation refuses the XML-special values over GET/POST, the same calls with
    # plain values succeed: GAP-VALUES warnings, R4 not applicable, nothing else
    assert_markup_refusal_warnings(data)
    assert data["rules"]["R4-STATUS"] == {"passed": 38, "not applicable": 4}
    # the requests the spec does not describe are judged as this very runtime answers them
    # (the ASMX matrix's rows too, every one passed: test_asmx_matrix_interop holds the
    # hardened runtime to them; a row that does not apply to an operation is counted not
    # applicable, nothing sent)
    assert {rule: counts for rule, counts in data["rules"].items()
            if rule.startswith("ODD-")} == {
        "ODD-SOAPACTION": {"passed": 40 + 48}, "ODD-EXTRA-ELEMENT": {"passed": 16},
        "ODD-CHARSET": {"passed": 8}, "ODD-BARE-GET": {"passed": 7},
        "ODD-CONTENT-TYPE": {"passed": 56}, "ODD-ENCODING": {"passed": 72},
        "ODD-NAMES": {"passed": 32},
        "ODD-DUPLICATES": {"passed": 30, "not applicable": 2},
        "ODD-METHOD": {"passed": 48}, "ODD-ENVELOPE": {"passed": 64},
        "ODD-VALUES": {"passed": 32}}
    # one cause, one line, with its reach; the details in the JSON and the JUnit
    assert ("  values refused while the same call with plain values succeeds (4.10): HTTP 500 "
            "-- SendMarkNotes, SendNotificationType x HTTP GET, HTTP POST (4 checks on 4 calls, 4 "
            "operation x binding pairs) [GAP-VALUES]") in done.stdout
    assert any("A potentially dangerous Request.Form value" in f["actual"]
               for f in data["findings"])
    assert "certify: PASSED" in done.stdout
    # the JUnit carries every warning's rule, expected and actual where CI shows them
    junit = parse_xml((tmp_path / "c.xml").read_bytes())
    shown = [c.find("skipped").text for c in junit.iter("testcase")
             if c.find("skipped") is not None]
    warnings = [f for f in data["findings"] if f["verdict"] == "warning"]
    assert len(warnings) >= 4 and len(shown) >= 4  # GAP-VALUES, and SEC-LEAK on stock ASP.NET
    for f in warnings:
        assert any(f"[{f['rule']}]" in text and f"expected {f['expected']}, actual "
                   f"{f['actual']}" in text for text in shown), f


@pytest.fixture(scope="module")
def reference():
    with running() as url:
        yield url


@pytest.mark.parametrize("variant", VARIANTS)
def test_reference_answers_as_the_real_runtime(request, tmp_path, reference, variant):
    """Generated and erroneous requests (415, 400, VersionMismatch, request validation,
    missing and non-integer parameters): the same status, Content-Type, fault version and
    code and body shape; only the prose of faults and errors differs (warnings)."""
    url = request.getfixturevalue(variant)
    out = tmp_path / "diff.json"
    done = harness("diff", "--primary", url, "--candidate", reference, *TOKEN_RESULT,
                   "--errors", "--json", str(out), "--allure-dir", "", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    # 96 generated + 120 erroneous + 71 the spec does not describe (8 per operation: wrong,
    # empty, other SOAPAction, extra element, no charset; 7 bare GETs) + 382 rows of the
    # ASMX matrix (48 rows, each for the operations it applies to); the 7 WSDLs apart
    assert data["exchanges"] == 287 + 382 and data["service_descriptions"] == {"WSDL": 7}
    assert data["counts"]["failed"] == 0
    warned = {(f["rule"], f.get("implementation")) for f in data["findings"]
              if f["verdict"] == "warning"}
    # besides fault texts: the runtime's own leaks (X-AspNet-Version, stack traces), passive
    # SEC-LEAK warnings of the primary; the reference leaks nothing
    assert {rule for rule, _ in warned} <= {"DIFF-FAULT-REASON", "SEC-LEAK"}, warned
    assert ("SEC-LEAK", "candidate") not in warned
    prose = {f.get("source") for f in data["findings"]}  # only the texts of errors differ
    assert "error: missing parameters" in prose  # ASMX: "Missing parameter: {0}."


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_getttokendevice_result_differs_without_ignore(request, tmp_path, reference,
                                                            variant):
    url = request.getfixturevalue(variant)
    out = tmp_path / "diff.json"
    done = harness("diff", "--primary", url, "--candidate", reference, "--errors", "--json",
                   str(out), "--allure-dir", "", cwd=tmp_path)
    assert done.returncode == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    failed = [f for f in data["findings"] if f["verdict"] == "failed"]
    assert failed and {(f["rule"], f["operation"]) for f in failed} == {
        ("DIFF-BODY", "GetTokenDevice")}
    assert {f["path"].rsplit("/", 1)[-1] for f in failed} == {"GetTokenDeviceResult", "string"}
    # the token is a sensitive result: by its pseudonym (one face), a different one each side
    assert all(f["primary"].startswith("redacted-") and f["candidate"].startswith("redacted-")
               and f["primary"] != f["candidate"] for f in failed), failed
    assert "token-for-" not in out.read_text(encoding="utf-8")


def test_hardened_asmx_certifies_clean(asmx_hardened_url, tmp_path):
    """The real runtime as Microsoft advises to harden it (Documentation removed: no ?WSDL,
    no help page; customErrors On) passes: no WSDL is one warning per endpoint, the WSDL's
    own checks are not applicable; --require-wsdl makes it fail."""
    done = harness("certify", "--target", asmx_hardened_url, "--no-html", "--json",
                   str(tmp_path / "c.json"), "--report-dir", str(tmp_path / "reports"),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 0
    assert data["rules"]["WSDL-PUBLISHED"] == {"warning": 7}
    assert data["rules"]["WSDL-DOCUMENT"] == {"not applicable": 7}
    published = [f for f in data["findings"] if f["rule"] == "WSDL-PUBLISHED"]
    assert {f["actual"] for f in published} == {"HTTP 500, text/html"}
    required = harness("certify", "--target", asmx_hardened_url, "--no-html", "--require-wsdl",
                       "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert required.returncode == 1 and "overrides WSDL-PUBLISHED=failure" in required.stdout
