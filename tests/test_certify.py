"""``harness certify`` end to end: the real command as a subprocess against real servers on
loopback (the reference, deliberately faulty implementations, harmless variations of it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from faulty import (
    FAULTS,
    Fault,
    assert_markup_refusal_warnings,
    harmless,
    refuses_everything_for,
    serve_fault,
)
from pytest_bdd.parser import FeatureParser

from harness.certify.engine import FEATURE_FILES, FEATURES
from harness.certify.generate import WSDL_FEATURE
from harness.contract.types import ParamType
from harness.contract.xmlsafe import parse_xml
from harness.judge import asmx_matrix, odd_requests, rules, wsdl_rules
from harness.reference.server import running
from harness.reports import allure_report

ROOT = Path(__file__).resolve().parent.parent
HAS_ALLURE = allure_report.ALLURE.exists()


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=240, check=False)


def certify(tmp_path: Path, *args: str, html: bool = False) -> tuple[int, dict, str, str]:
    out = tmp_path / "certify.json"
    done = harness("certify", "--json", str(out), "--report-dir", str(tmp_path / "reports"),
                   *(() if html else ("--no-html",)), *args, cwd=tmp_path)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return done.returncode, data, done.stdout, done.stderr


def failed(data: dict) -> list[dict]:
    return [f for f in data["findings"] if f["verdict"] == "failed"]


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory) -> tuple[Path, int, dict, str]:
    """One certify run of the embedded reference with every output."""
    where = tmp_path_factory.mktemp("certify-reference")
    code, data, stdout, _ = certify(where, "--junit", str(where / "junit.xml"), html=HAS_ALLURE)
    return where, code, data, stdout


def test_reference_certifies(reference_run):
    _where, code, data, stdout = reference_run
    assert code == 0, stdout
    assert data["verdict"] == "passed" and data["counts"]["failed"] == 0
    # the reference refuses markup in GET/POST values as ASP.NET does, and takes the same
    # calls with plain values: 4.10 warnings judged by behaviour, exit 0; no leak (SEC-LEAK)
    assert_markup_refusal_warnings(data)
    assert data["counts"]["warning"] == 4
    assert data["rules"]["R4-STATUS"]["not applicable"] == 4
    # one cause, one line: the four refusals
    assert "WARNINGS: 1 cause, 4 checks\n  values refused while the same call with plain " \
           "values succeeds (4.10): HTTP 500 -- SendMarkNotes, SendNotificationType x HTTP " \
           "GET, HTTP POST (4 checks on 4 calls, 4 operation x binding pairs) [GAP-VALUES]\n" \
           in stdout
    gap = [f for f in data["findings"] if f["rule"] == "GAP-VALUES"]
    assert all("A potentially dangerous Request." in f["actual"] for f in gap)
    assert data["exchanges"] >= 32  # every operation x binding, plus the probes
    # the features judge every rule, of the types School Mobile has (string and int; no
    # array or complex result, so no OP-RESULT-STRUCTURE)
    typed = {kind.rule_id for kind in ParamType} - {ParamType.INT.rule_id}
    typed.add("OP-RESULT-STRUCTURE")
    assert set(data["rules"]) == ((set(rules.RULES) - typed) | set(wsdl_rules.RULES)
                                  | set(odd_requests.RULES) | set(asmx_matrix.titles()))
    assert "embedded reference at http://127.0.0.1:" in data["target"]
    assert re.search(r"^R1-SOAPACTION +\d+ +0 ", stdout, re.M)  # summary per rule ID
    assert "certify: PASSED" in stdout and "reports/allure-results" in stdout


def test_junit_and_allure_results(reference_run):
    where, _, data, _ = reference_run
    suites = parse_xml((where / "junit.xml").read_bytes())
    names = {s.get("name") for s in suites}
    assert names == set(data["rules"]) and all(s.get("failures") == "0" for s in suites)
    results = where / "reports" / "allure-results"
    env = (results / "environment.properties").read_text(encoding="utf-8")
    assert "target = embedded reference at http\\://127.0.0.1\\:" in env
    assert "namespace = http\\://tempuri.org/" in env and "harness.version" in env
    tests = [json.loads(p.read_text(encoding="utf-8")) for p in results.glob("*-result.json")]
    # 54 binding scenarios, 7 endpoints' WSDL, 23 odd requests, 32 of the ASMX matrix (8
    # operations x 4 bindings)
    assert len(tests) == 84 + 32
    token = next(t for t in tests if t["name"] == "GetTokenDevice over HTTP POST with plain values")
    labels = {(label["name"], label["value"]) for label in token["labels"]}
    assert {("feature", "HTTP POST"), ("story", "GetTokenDevice"), ("tag", "OP-RESULT"),
            ("tag", "R4-STATUS")} <= labels
    steps = [s["name"] for s in token["steps"]]
    assert steps[1] == "When the client calls GetTokenDevice over HTTP POST with plain values"
    attached = {a["name"]: (results / a["source"]).read_text(encoding="utf-8")
                for a in token["steps"][1]["attachments"]}
    request = attached["GetTokenDevice HTTP POST request"]
    assert request.startswith("POST http://127.0.0.1:") and "id=A10" in request
    assert "<string xmlns=\"http://tempuri.org/\">" in attached[
        "GetTokenDevice HTTP POST response"]


def test_allure_results_hold_the_service_not_pytest(reference_run):
    """No pytest internals (the example's dict, fixtures, <lambda> teardowns, host and thread
    labels); labels from the contract; a warning passes, tagged and saying it; a step
    whose rule did not apply is skipped with its cause, never green."""
    where, _, _, _ = reference_run
    results = where / "reports" / "allure-results"
    files = list(results.glob("*.json"))
    assert not [p for p in files if "_pytest_bdd" in p.read_text() or "<lambda>" in
                p.read_text()]
    tests = [json.loads(p.read_text(encoding="utf-8")) for p in results.glob("*-result.json")]
    labels = {label["name"] for t in tests for label in t["labels"]}
    assert not labels & {"host", "thread", "framework", "language", "package"}
    token = next(t for t in tests if t["name"] == "GetTokenDevice over HTTP POST with plain values")
    assert {(p["name"], p["value"]) for p in token["parameters"]} >= {
        ("binding", "HTTP POST"), ("values", "plain")}
    wsdl = [t for t in tests if {"name": "feature", "value": "WSDL"} in t["labels"]]
    stories = {label["value"] for t in wsdl for label in t["labels"] if label["name"] == "story"}
    assert len(wsdl) == 7 and stories == {"/AuthCodeSending.asmx", "/CenterlogOut.asmx",
                                          "/GetStudentsAudit.asmx", "/GetTeacherGroups.asmx",
                                          "/GetTeacherSubjects.asmx", "/NotificationNotes.asmx",
                                          "/PushNotificationMobile.asmx"}
    # a warning passes (no red on a passing run), tagged "warning", its warnings (rule,
    # expected, actual) atop its description, before the feature's own words
    assert {t["status"] for t in tests} == {"passed"}
    warned = [t for t in tests if {"name": "tag", "value": "warning"} in t["labels"]]
    assert len(warned) == 4 and not [t for t in warned if "statusDetails" in t]
    for test in warned:
        html = test["descriptionHtml"]
        assert "<code>WARNING [GAP-VALUES] values refused while the same call with plain " \
               "values succeeds" in html and "expected HTTP 200, actual HTTP 500" in html
        assert html.index("WARNING [GAP-VALUES]") < html.index("Spec clauses 4.8 and 4.9")
    steps = {s["name"]: s for s in warned[0]["steps"]}
    status = steps["And the call returns HTTP status 200 (R4-STATUS)"]
    assert status["status"] == "skipped" and "refuses these values" in \
        status["statusDetails"]["message"]
    gap = next(s for name, s in steps.items() if "(GAP-VALUES)" in name)
    assert gap["status"] == "broken" and "WARNING [GAP-VALUES]" in gap["statusDetails"]["message"]
    env = (results / "environment.properties").read_text(encoding="utf-8")
    assert "verdict = PASSED" in env and "warnings = 4 (1 cause(s)\\: values refused" in env
    # JUnit: each warning a skipped case GitLab and Jenkins show, with rule, expected, actual
    junit = parse_xml((where / "junit.xml").read_bytes())
    skipped = [c.find("skipped") for c in junit.iter("testcase") if c.find("skipped") is not None]
    assert len(skipped) == 4 and junit.get("skipped") == "4"
    for element in skipped:
        assert element.get("type") == "warning"
        assert "[GAP-VALUES]" in element.text and "expected HTTP 200, actual HTTP 500" in \
            element.text


@pytest.mark.skipif(not HAS_ALLURE, reason="Allure 3 not installed (scripts/setup installs it)")
def test_a_second_run_in_the_same_folder_holds_only_its_own_results(tmp_path):
    """The first run's results are set aside (hidden, beside) and deleted once the second's
    are written: the folder then holds the second run's alone, and nothing is left beside."""
    for _ in range(2):
        code, data, _, stderr = certify(tmp_path, "--rule", "R4-STATUS")
        assert code == 0, stderr
    reports = tmp_path / "reports"
    assert sorted(p.name for p in reports.iterdir()) == ["allure-results", "features"]
    results = list((reports / "allure-results").glob("*-result.json"))
    assert len(results) == sum(data["scenarios"].values())


def test_html_report_is_offline(reference_run, tmp_path):
    where, _, _, stdout = reference_run
    html = where / "reports" / "allure-report" / "index.html"
    assert f"HTML report in {Path('reports') / 'allure-report' / 'index.html'}" in stdout or (
        "HTML report in" in stdout)
    text = html.read_text(encoding="utf-8")
    assert allure_report.external_scripts(text) == []
    assert "googletagmanager" not in text and "gtag(" not in text
    # harness report renders the same results to a file of the user's choice
    out = tmp_path / "out" / "report.html"
    done = harness("report", "--results", str(where / "reports" / "allure-results"),
                   "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert allure_report.external_scripts(out.read_text(encoding="utf-8")) == []


def test_strip_analytics_removes_what_allure_embeds():
    page = ('<html><head><script src="data:text/javascript;base64,AAAA"></script>'
            '<script async src="https://www.googletagmanager.com/gtag/js?id=G-X"></script>\n'
            "<script>window.dataLayer = window.dataLayer || [];function gtag(){}"
            "gtag('js', new Date());</script><script>window.allure = {};</script>"
            "</head><body></body></html>")
    assert len(allure_report.external_scripts(page)) == 2
    stripped = allure_report.strip_analytics(page)
    assert allure_report.external_scripts(stripped) == []
    assert "base64,AAAA" in stripped and "window.allure = {}" in stripped


@pytest.mark.parametrize("tag", [
    '<script src="//cdn.example/x.js">', "<script SRC = 'https://a.example/'>",
    "<script a=1 src=http://b.example/>", '<script \u017frc="//a.example">',
    '<script xsrc="//a.example">', '<script data-src="//a.example">',
    '<script src="http:x">', '<script src="data:text/javascript;base64,Ly8vLw==">'])
def test_a_script_from_the_network_is_found_as_by_the_plain_search(tag):
    """The search for a network src starts where "src" does (a 3.6 MB data: URL made the plain
    search 0.1 s a tag): the same answers, word boundary and case folding included."""
    plain = re.compile(r"""\bsrc\s*=\s*["']?\s*(?:https?:)?//""", re.I)
    page = f"<html>{tag}</script></html>"
    assert bool(allure_report.external_scripts(page)) == bool(plain.search(tag))
    assert (tag in allure_report.strip_analytics(page)) != bool(plain.search(tag))


@pytest.mark.parametrize("fault", FAULTS.values(), ids=list(FAULTS))
def test_certify_fails_each_fault_naming_rule_operation_binding(tmp_path, fault: Fault):
    with serve_fault(fault) as url:
        code, data, stdout, stderr = certify(tmp_path, "--target", url)
    assert code == 1, (stdout, stderr)
    assert data["verdict"] == "failed"
    bad = failed(data)
    named = [f for f in bad if f["rule"] == fault.rule
             and fault.operation in (None, f["operation"])
             and fault.binding in (None, f["binding"])]
    assert named, f"{fault.name}: no failed {fault.rule}; failures: {bad}"
    assert all(f["expected"] and f["actual"] for f in named)
    # nothing outside the fault's scope fails
    assert {f["operation"] for f in bad} <= ({fault.operation} if fault.operation
                                              else {f["operation"] for f in bad})
    if fault.binding:
        assert {f["binding"] for f in bad} == {fault.binding}
    # the cause line ends with the rules it failed: [R5-ENVELOPE, V1-VERSION-BY-CONTENT-TYPE]
    assert re.search(rf"\[(?:[\w-]+, )*{fault.rule}(?:, [\w-]+)*\]$", stdout, re.M), stdout
    assert "certify: FAILED" in stdout


def test_harmless_variations_pass(tmp_path):
    with serve_fault(harmless) as url:
        code, data, stdout, _ = certify(tmp_path, "--target", url)
    assert code == 0, stdout
    assert data["counts"]["failed"] == 0
    assert_markup_refusal_warnings(data)


def test_a_call_that_fails_with_plain_values_too_fails_once_with_its_cause(tmp_path):
    with serve_fault(refuses_everything_for("SendMarkNotes")) as url:
        code, data, stdout, _ = certify(tmp_path, "--target", url)
    assert code == 1
    bad = {(f["rule"], f["operation"], f["binding"]) for f in failed(data)}
    assert bad == {("R4-STATUS", "SendMarkNotes", "HTTP GET")}  # one cause, one failure
    assert data["counts"]["failed"] == 2  # the plain call and the call with markup
    assert ("  HTTP 500: Object reference not set to an instance of an object. -- SendMarkNotes x "
            "HTTP GET, every call (2 checks on 2 calls, 1 operation x binding pair) [R4-STATUS]"
            ) in stdout


def test_version_segment_in_the_deployment_path_fails(tmp_path):
    with running() as url:
        code, data, _, _ = certify(tmp_path, "--target", url + "/api/v1")
    assert code == 1
    assert {f["rule"] for f in failed(data)} == {"V2-NO-VERSION-SEGMENT"}


def test_other_namespace(tmp_path):
    from harness.contract.model import school_mobile

    with running(school_mobile("http://school.example/ws/")) as url:
        code, _, stdout, _ = certify(tmp_path, "--target", url,
                                     "--namespace", "http://school.example/ws/")
        assert code == 0, stdout
        code, _, stdout, _ = certify(tmp_path, "--target", url)  # read from its ?WSDL
        assert code == 0 and "namespace http://school.example/ws/ (from the target's ?WSDL" \
            in stdout, stdout
        code, data, _, _ = certify(tmp_path, "--target", url, "--namespace",
                                   "http://tempuri.org/")  # the wrong namespace
    # SOAP calls fail (R4-STATUS, once each, with the fault); GET/POST results succeed in
    # the wrong namespace (OP-RESULT); the WSDLs name another namespace and SOAPActions
    assert code == 1 and {"R4-STATUS", "OP-RESULT", "WSDL-DOCUMENT", "WSDL-SOAPACTION"} == {
        f["rule"] for f in failed(data)}


def test_unreachable_target_is_one_line_exit_2(tmp_path):
    with running() as url:
        pass  # the port is free again: nothing listens there
    code, data, _stdout, stderr = certify(tmp_path, "--target", url)
    assert code == 2 and data == {}
    assert stderr.count("\n") == 1 and "unreachable" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("args", [["--target", "ftp://x"], ["--target"], ["--bogus"]])
def test_usage_errors_exit_2(tmp_path, args):
    done = harness("certify", *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_list_rules_prints_the_catalogue(tmp_path):
    done = harness("certify", "--list-rules", cwd=tmp_path)
    assert done.returncode == 0
    for rule in rules.CATALOGUE:
        assert f"| `{rule.id}` | {rule.clause} | {rule.side} |" in done.stdout


def test_features_match_contract_and_catalogue(contract):
    tagged: set[str] = set()
    for name in (*FEATURE_FILES, WSDL_FEATURE):
        feature = FeatureParser(str(FEATURES), name).parse()
        for scenario in feature.scenarios.values():
            in_steps = {m.group(1) for s in scenario.steps
                        for m in [re.search(r"\(([A-Z0-9-]+)\)$", s.name)] if m}
            assert scenario.tags == in_steps, (name, scenario.name)  # tags = rules checked
            tagged |= scenario.tags
            for examples in scenario.examples:
                if "operation" in examples.example_params:
                    at = examples.example_params.index("operation")
                    ops = {row[at] for row in examples.examples}
                    assert ops <= {op.name for op in contract.operations}, name
                    if name.startswith(("soap", "http", "versioning")):
                        assert ops == {op.name for op in contract.operations}, name
    # every rule but the passive ones (they judge every call) and the types School Mobile
    # does not use (the features of a contract that uses them carry them: certify/generate.py),
    # nor OP-RESULT-STRUCTURE (generated for array and complex results)
    typed = {kind.rule_id for kind in ParamType} - {ParamType.INT.rule_id}
    typed.add("OP-RESULT-STRUCTURE")
    assert tagged | set(rules.PASSIVE) == ((set(rules.RULES) - typed) | set(wsdl_rules.RULES)
                                           | set(odd_requests.RULES)
                                           | set(asmx_matrix.titles()))
