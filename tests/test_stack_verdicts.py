"""The harness's verdicts on the third-party stacks of tests/services (spyne, Node's soap) and on
the hardened ASMX: calibrated, each one checked by hand with curl against the real ASMX runtime
(/work/coord/stack-findings.md). A finding that proved false is pinned here as not given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=900, check=False)


def report(tmp_path: Path, command: str, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / f"{command}.json"
    extra = {"certify": ["--no-html", "--report-dir", str(tmp_path / "reports")],
             "probe": ["--allure-dir", "", "--failures", str(tmp_path / "failures.jsonl")],
             }.get(command, ["--allure-dir", ""])
    done = harness(command, *args, "--json", str(out), *extra, cwd=tmp_path)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return done.returncode, data, done.stdout + done.stderr


def failed(data: dict) -> dict[str, int]:
    return {rule: c["failed"] for rule, c in data["rules"].items() if c.get("failed")}


def test_spyne_over_soap_fails_only_its_wsdl_soapactions(spyne_url, tmp_path):
    """spyne's WSDL names each operation as its soapAction ("AuthCode"): a client generated
    from it sends a SOAPAction the real ASMX refuses with a Client fault (checked with curl),
    so WSDL-SOAPACTION fails, once per operation. Its WSDL describes the SOAP 1.1 binding
    only while spyne serves SOAP 1.2 too: a warning (the calls judge what is served)."""
    code, data, out = report(tmp_path, "certify", "--target", spyne_url,
                             "--binding", "soap11", "--binding", "soap12")
    assert code == 1, out
    assert failed(data) == {"WSDL-SOAPACTION": 8}, out
    actions = {f["actual"] for f in data["findings"] if f["rule"] == "WSDL-SOAPACTION"}
    assert "AuthCode" in actions
    assert data["rules"]["WSDL-BINDINGS"]["warning"] == 7  # no soap12 port, per endpoint


def test_spyne_probe_finds_no_leak_in_its_dotted_fault_codes(spyne_url, tmp_path):
    """spyne's faults carry SOAP 1.1 dotted codes (Client.ValidationError, also first in its
    text/plain errors): no SEC-LEAK failure; a class it names in an error is a warning."""
    _, data, out = report(tmp_path, "probe", "--target", spyne_url,
                          "--max-requests", "500")
    assert data["rules"]["SEC-LEAK"].get("failed", 0) == 0, out
    leaks = [f["actual"] for f in data["findings"] if f["rule"] == "SEC-LEAK"]
    assert not any("ValidationError" in actual for actual in leaks), leaks


# ------------------------------------------------------------ findings that proved false


def test_diff_reads_a_dotted_soap11_fault_code_as_its_class(asmx_url, spyne_url, tmp_path):
    """spyne refuses a non-integer id_row_central with ``Client.SchemaValidationError``, ASMX
    with ``Client``: the same class of fault (SOAP 1.1 section 4.4.1 refines codes with dots:
    "Client.Authentication"), only spelled more precisely. Was a DIFF-BODY failure
    ("faultcode Client vs Client.SchemaValidationError"); now a warning, while a fault of
    another class (VersionMismatch vs Client.SoapError) still fails."""
    _, data, out = report(tmp_path, "diff", "--primary", asmx_url, "--candidate", spyne_url,
                          "--errors", "--operation", "LogoutFromSchool", "--binding", "soap11")
    codes = {(f["verdict"], f["summary"]) for f in data["findings"]
             if f.get("summary", "").startswith("faultcode ")}
    assert ("failed", "faultcode Client vs Client.SchemaValidationError") not in codes, out
    assert ("warning", "faultcode Client refined as Client.SchemaValidationError") in codes
    assert ("failed", "faultcode VersionMismatch vs Client.SoapError, Upgrade header missing"
            ) in codes


def test_diff_of_a_candidate_without_wsdl_is_one_warning_per_endpoint(
        asmx_url, asmx_hardened_url, tmp_path):
    """The hardened ASMX publishes no WSDL (Documentation removed): certify says so with one
    WSDL-PUBLISHED warning per endpoint. diff said 'HTTP 500 instead of a result', a
    DIFF-STATUS failure per endpoint: the same behaviour, now the same verdict (a warning in
    WSDL-PUBLISHED's words); the calls themselves are compared as before."""
    code, data, out = report(tmp_path, "diff", "--primary", asmx_url,
                             "--candidate", asmx_hardened_url)
    wsdl = [f for f in data["findings"] if f["binding"] == "WSDL"
            and f["rule"].startswith("DIFF-")]
    assert {f["verdict"] for f in wsdl} == {"warning"}, out
    assert len(wsdl) == 7
    assert {f["cause"] for f in wsdl} == {
        "the candidate publishes no WSDL (HTTP 500, text/html): Documentation protocol off?"}
    assert code == 0, out
