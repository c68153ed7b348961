"""One model of findings with causes, rendered alike for every command (harness/reports/):
findings that share a cause are one line with its reach, every cause is listed (none behind
"... and N more"), failures before differences before warnings, each by reach; the grouping
stays bounded however many findings; the JSON carries the causes and a partial run's scope."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

from harness.contract.xmlsafe import parse_xml
from harness.judge.findings import MAX_CAUSES, Finding, Report, Scope, Verdict, cause_of
from harness.reports.console import print_report
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit

OPERATIONS = ("AuthCode", "LogoutFromSchool", "GetTokenDevice")
BINDINGS = ("SOAP 1.1", "SOAP 1.2", "HTTP GET", "HTTP POST")


def _console(report: Report) -> str:
    out = io.StringIO()
    print_report(report.finish(), out)
    return out.getvalue()


def _cause_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("  ")]


def _calls(report: Report, found: dict[tuple[str, str], list[Finding]]) -> None:
    """Every operation x binding called ``n`` times; the findings given for a pair replace
    its passed R4-STATUS (each call numbered, as the commands number them)."""
    index = 0
    for op in OPERATIONS:
        for binding in BINDINGS:
            for _ in range(3):
                index += 1
                report.exchanges += 1
                for finding in found.get((op, binding), [
                        Finding("R4-STATUS", Verdict.PASSED, op, binding)]):
                    report.add(Finding(**{**finding.__dict__, "index": index,
                                          "source": "http://x"}))


def _not_found(op: str, binding: str) -> list[Finding]:
    return [Finding("R4-STATUS", Verdict.FAILED, op, binding, "HTTP 200", "HTTP 404",
                    cause="HTTP 404: the call is not served"),
            Finding("R5-RESPONSE-ELEMENT", Verdict.NOT_APPLICABLE, op, binding,
                    message="the call failed (see R4-STATUS)")]


def test_one_cause_over_many_calls_is_one_line_naming_its_reach() -> None:
    report = Report("certify", "http://x")
    _calls(report, {(op, b): _not_found(op, b) for op in OPERATIONS
                    for b in ("HTTP GET", "HTTP POST")})
    text = _console(report)
    assert _cause_lines(text) == [
        "  HTTP GET and HTTP POST not served: 404 on every call (18 checks on 18 calls, 6 "
        "operation x binding pairs) [R4-STATUS]"]
    assert "FAILURES: 1 cause, 18 checks" in text
    # and how many of the test cases JUnit and Allure show failed (6 pairs x R4-STATUS)
    assert "certify: FAILED - 54 checks over 36 calls in 12 test cases (6 failed): 18 " \
           "passed, 18 failed, 0 warnings, 18 not applicable" in text
    (cause,) = report.causes.values()
    assert (cause.calls, cause.checks, dict(cause.rules)) == (18, 18, {"R4-STATUS": 18})


def test_a_cause_on_some_calls_says_where_and_not_every_call() -> None:
    report = Report("certify", "http://x")
    _calls(report, {("AuthCode", b): _not_found("AuthCode", b) for b in ("HTTP GET",
                                                                         "HTTP POST")})
    (line,) = _cause_lines(_console(report))
    assert line == ("  HTTP 404: the call is not served -- AuthCode x HTTP GET, HTTP POST, every "
                    "call (6 checks on 6 calls, 2 operation x binding pairs) [R4-STATUS]")


def test_every_cause_is_listed_failures_then_differences_then_warnings_by_reach() -> None:
    report = Report("diff", "http://x")
    findings = [Finding("DIFF-BODY", Verdict.FAILED, "AuthCode", "SOAP 1.1", "a", "b",
                        cause=f"text of /Envelope/Body/R{i} differs", index=i)
                for i in range(60)]
    findings += [Finding("SEC-LEAK", Verdict.WARNING, "AuthCode", "SOAP 1.1", index=100 + i,
                         cause="error answers leak stack frame") for i in range(3)]
    findings += [Finding("R4-STATUS", Verdict.FAILED, op, "SOAP 1.2", "HTTP 200", "HTTP 500",
                         cause="HTTP 500: Server fault", index=200 + i)
                 for i, op in enumerate(OPERATIONS)]
    findings.append(Finding("R4-STATUS", Verdict.FAILED, "AuthCode", "SOAP 1.1", "HTTP 200",
                            "no response", cause="no answer: timeout", index=300))
    report.extend(findings)
    text = _console(report)
    lines = _cause_lines(text)
    assert len(lines) == 60 + 1 + 2 and "more" not in text  # nothing hidden
    assert lines[0].startswith("  HTTP 500: Server fault -- all 3 operations x SOAP 1.2")
    assert lines[1].startswith("  no answer: timeout -- AuthCode x SOAP 1.1")
    assert all("[DIFF-BODY]" in line for line in lines[2:62])
    assert lines[62].startswith("  error answers leak stack frame")
    headings = [line for line in text.splitlines() if line.endswith("checks")]
    assert headings == ["FAILURES: 2 causes, 4 checks", "DIFFERENCES: 60 causes, 60 checks",
                        "WARNINGS: 1 cause, 3 checks"]


def test_a_multi_line_cause_is_one_line_and_values_do_not_split_a_cause() -> None:
    trace = "System.Exception: boom\n   at A.B()\n   at C.D()"
    finding = Finding("SEC-LEAK", Verdict.WARNING, "AuthCode", "SOAP 1.1",
                      "no implementation detail", trace)
    assert cause_of(finding) == ("expected no implementation detail, actual System.Exception:"
                                 " boom at A.B() at C.D()")
    report = Report("lint")
    for i, value in enumerate(("'abc'", "'x1'", "'other'")):
        report.add(Finding("R9-INT", Verdict.FAILED, "LogoutFromSchool", "HTTP GET",
                           "id_row_central: an int", value, index=i, source="day.jsonl"))
    (line,) = _cause_lines(_console(report))
    assert line == ("  expected id_row_central: an int, actual '…' -- LogoutFromSchool x HTTP "
                    "GET e.g. #0 in day.jsonl (3 checks on 3 exchanges, 1 operation x binding "
                    "pair) [R9-INT]")


def test_grouping_stays_bounded() -> None:
    """A million distinct causes keep at most MAX_CAUSES groups and one example each."""
    report = Report("lint")
    tracemalloc.start()
    for i in range(3 * MAX_CAUSES):
        report.add(Finding("R9-INT", Verdict.FAILED, "AuthCode", "HTTP GET", "an int",
                           f"value number {i}", index=i, cause=f"cause number {i}"))
    report.add(Finding("R9-INT", Verdict.FAILED, "AuthCode", "HTTP GET", "", "",
                       cause="cause number 1", index=-1))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(report.causes) == MAX_CAUSES + 1
    other = [c for c in report.causes.values() if "other causes" in c.text]
    assert [c.checks for c in other] == [2 * MAX_CAUSES]
    assert report.causes[Verdict.FAILED, "cause number 1"].checks == 2
    assert peak < 8 * 1024 * 1024


def test_json_lists_causes_and_the_scope_of_a_partial_run(tmp_path: Path) -> None:
    report = Report("certify", "http://x")
    _calls(report, {("AuthCode", "HTTP GET"): _not_found("AuthCode", "HTTP GET")})
    report.scope = Scope(("SOAP 1.1", "SOAP 1.2"), ("HTTP GET", "HTTP POST", "WSDL"),
                         "--binding soap11 --binding soap12")
    write_json(report, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["selection"] == {"covered": ["SOAP 1.1", "SOAP 1.2"], "partial": True,
                                 "left_out": ["HTTP GET", "HTTP POST", "WSDL"],
                                 "chosen": "--binding soap11 --binding soap12"}
    (cause,) = data["causes"]
    assert cause["cause"] == "HTTP 404: the call is not served" and cause["calls"] == 3
    assert cause["pairs"] == [{"operation": "AuthCode", "binding": "HTTP GET", "calls": 3}]
    assert cause["example"]["index"] == 7  # the first call that found it
    assert all(f["cause"] for f in data["findings"])
    assert (data["exchanges"], data["unit"], data["checks"]) == (36, "calls", 39)
    text = _console(report)
    assert "certify: FAILED for SOAP 1.1, SOAP 1.2; HTTP GET, HTTP POST, WSDL not certified" \
        in text


def test_rules_that_judged_nothing_are_left_out_of_the_table_and_junit(tmp_path: Path
                                                                       ) -> None:
    report = Report("lint", titles={"R9-INT": "ints", "R9-BOOLEAN": "booleans"})
    report.add_counts({("R9-INT", "AuthCode", "SOAP 1.1", Verdict.PASSED): 3,
                       ("R9-BOOLEAN", "AuthCode", "SOAP 1.1", Verdict.NOT_APPLICABLE): 3,
                       ("R9-INT", "AuthCode", "HTTP GET", Verdict.NOT_APPLICABLE): 3})
    report.exchanges = 6
    text = _console(report)
    assert "R9-BOOLEAN " not in text
    assert "(1 rule(s) applied to no exchange of this run, left out: R9-BOOLEAN)" in text
    write_junit(report, tmp_path / "j.xml")
    root = parse_xml((tmp_path / "j.xml").read_bytes())
    assert [c.get("name") for c in root.iter("testcase")] == ["AuthCode [SOAP 1.1] ints"]
    left = [p.get("value") for p in root.iter("property")
            if p.get("name") == "cases.not_applicable.left_out"]
    assert left == ["2"]


def test_certify_reports_hold_no_personal_value_in_clear(spyne_url: str, tmp_path: Path) -> None:
    """certify --values against spyne (its GetTokenDevice answers text/plain over GET/POST and
    fails checks, so JUnit holds examples): the values sent (code, phone) and the token got
    back are pseudonyms in the Allure results, JUnit, JSON and HTML; every file is 0600."""
    import base64
    import re
    import subprocess
    import sys

    (tmp_path / "values.toml").write_text(
        '[AuthCode]\ncode = "CODE-4711"\nphone = "0509998877"\n[GetTokenDevice]\nid = "D1"\n',
        encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "certify", "--target", spyne_url, "--values",
         "values.toml", "--operation", "AuthCode", "--operation", "GetTokenDevice",
         "--report-dir", "r", "--json", "c.json", "--junit", "c.xml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    secrets = (b"CODE-4711", b"0509998877", b"token-for-D1")
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "values.toml"]
    attached = b""
    for path in files:
        data = path.read_bytes()
        assert not [s for s in secrets if s in data], path
        if path.name == "index.html":  # the HTML report embeds attachments in base64
            for chunk in re.findall(rb"[A-Za-z0-9+/]{40,}={0,2}", data):
                chunk = chunk.rstrip(b"=")[:len(chunk.rstrip(b"=")) // 4 * 4]
                decoded = base64.b64decode(chunk)
                assert not [s for s in secrets if s in decoded], path
        if path.name.endswith("-attachment.txt"):
            attached += data
        assert path.stat().st_mode & 0o077 == 0, path
    assert b"<code>redacted-" in attached and b"\n\nredacted-" in attached  # text/plain token
    assert b"redacted-" in (tmp_path / "c.xml").read_bytes()  # a failing exchange's example


def test_allure_tests_are_junit_cases_a_warning_passes_tagged(tmp_path: Path) -> None:
    """Allure's tests are JUnit's test cases (an endpoint's WSDL too), its failed ones
    JUnit's failures; a case with warnings only passes, tagged ``warning``, its warning (rule,
    expected, actual) in its description, escaped: never a failed result (Allure 3 counts an
    accepted failed one under Failed)."""
    from harness.reports.allure_results import write_cases

    report = Report("lint", titles={"WSDL-PUBLISHED": "a WSDL"})
    report.add(Finding("R4-STATUS", Verdict.FAILED, "AuthCode", "HTTP GET",
                       expected="HTTP 200", actual="HTTP 404"))
    report.add(Finding("GAP-VALUES", Verdict.WARNING, "AuthCode", "HTTP POST",
                       expected="HTTP 200", actual="HTTP 500: <b>refused</b>"))
    report.add(Finding("WSDL-PUBLISHED", Verdict.FAILED, None, None, expected="a WSDL",
                       actual="HTTP 404", endpoint="/AuthCodeSending.asmx"))
    report.add(Finding("R4-STATUS", Verdict.PASSED, "AuthCode", "SOAP 1.1"))
    report.add(Finding("R4-STATUS", Verdict.NOT_APPLICABLE, "AuthCode", "SOAP 1.2"))
    report.add(Finding("CROSS-BINDING", Verdict.PASSED, "AuthCode", None))
    write_junit(report.finish(), tmp_path / "j.xml")
    assert write_cases(report, tmp_path / "allure") == 5  # the not-applicable case is none
    results = {r["name"]: r for r in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (tmp_path / "allure").glob("*-result.json"))}
    junit = parse_xml((tmp_path / "j.xml").read_bytes())
    assert len(results) == int(junit.get("tests"))
    failed = {name for name, r in results.items() if r["status"] == "failed"}
    assert len(failed) == int(junit.get("failures")) == 2
    wsdl = results["/AuthCodeSending.asmx [WSDL] a WSDL"]
    assert wsdl["statusDetails"]["message"].startswith("[WSDL-PUBLISHED] expected a WSDL, "
                                                      "actual HTTP 404")
    # a case over no one binding is named without one (not "AuthCode [-] ...")
    assert "feature" not in {label["name"] for label in results["AuthCode CROSS-BINDING"]
                             ["labels"]}
    warned = results["AuthCode [HTTP POST] GAP-VALUES"]
    assert warned["status"] == "passed" and "statusDetails" not in warned
    assert {"name": "tag", "value": "warning"} in warned["labels"]
    assert "[GAP-VALUES] expected HTTP 200, actual HTTP 500: &lt;b&gt;refused" in \
        warned["descriptionHtml"]
