"""``harness probe`` with the real command against real servers on loopback: the reference passes;
each deliberately faulty implementation fails the rule that names its fault; failing cases are
saved and sent again with ``--replay``; SEC-LEAK is a warning in the commands that judge traffic.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from harness.cli import main
from harness.contract.bindings import FaultCode, build_fault, build_response, classify
from harness.contract.model import Contract, ParamType, school_mobile
from harness.errors import ClassificationError
from harness.judge import rules
from harness.judge.findings import Verdict
from harness.judge.security import find_leaks
from harness.probe.cases import CANARY
from harness.probe.checks import RULE_IDS
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.recording import RecordingWriter, read_exchanges

#: Small budgets: enough to reach every family of cases, a few seconds per run.
FIXED_CASES = 160  # requests the XML, envelope and HTTP cases take with their plain calls
SMALL = ["--max-requests", "260", "--timeout", "10"]

# A .NET stack trace as stock ASP.NET (Mono) sends it to a local client (captured from
# ../shared/asmx's default variant), and the same error with customErrors On.
DOTNET_TRACE = (
    "System.Web.Services.Protocols.SoapException: Server was unable to read request. ---> "
    "System.InvalidOperationException: There is an error in XML document (1, 208). ---> "
    "System.FormatException: Input string was not in a correct format.\n"
    "  at System.Number.ParseInt32 (System.ReadOnlySpan`1[T] value, System.Globalization."
    "NumberStyles styles, System.Globalization.NumberFormatInfo info) [0x0001c] in "
    "<12b418a7818c4ca0893feeaaf67f1e7f>:0 \n"
    "  at School.Service.LogoutFromSchool (System.String PhoneNumber) in "
    "C:\\src\\School\\Service.asmx.cs:line 42\n")
CUSTOM_ERRORS = ("Server was unable to read request. ---> There is an error in XML document "
                 "(1, 208). ---> Input string was not in a correct format.")


def run_probe(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = io.StringIO()
    report = tmp_path / "probe.json"
    argv = ["probe", "--json", str(report), "--allure-dir", str(tmp_path / "allure"),
            "--failures", str(tmp_path / "failures.jsonl"), *args]
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, json.loads(report.read_text(encoding="utf-8")), out.getvalue()


def failed_rules(data: dict) -> set[str]:
    return {f["rule"] for f in data["findings"] if f["verdict"] == "failed"}


# ------------------------------------------------------------------ faulty implementations


def expands_entities(contract: Contract, request: HttpRequest) -> HttpResponse:
    """Parses with entity expansion on (deliberately unsafe: never the harness's parser), then
    answers the expanded document as the reference would."""
    if b"<!DOCTYPE" in request.body:
        unsafe = etree.XMLParser(resolve_entities=True, load_dtd=True, no_network=True)
        with contextlib.suppress(etree.XMLSyntaxError):
            root = etree.fromstring(request.body, unsafe)
            body = etree.tostring(root)
            request = HttpRequest(request.method, request.url, request.headers, body)
    return answer(contract, request)


def returns_stack_traces(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The reference, with a .NET stack trace in every fault and error text."""
    response = answer(contract, request)
    if response.status < 400:
        return response
    trace = DOTNET_TRACE.replace("<", "&lt;").replace(">", "&gt;").encode()
    for end in (b"</faultstring>", b"</soap:Text>"):
        if end in response.body:
            body = response.body.replace(end, trace + end)
            break
    else:
        body = response.body + b"\n" + DOTNET_TRACE.encode()
    return HttpResponse(response.status, response.headers, body, response.reason)


def accepts_any_id(contract: Contract, request: HttpRequest) -> HttpResponse:
    """Answers 200 to a LogoutFromSchool whose id_row_central is not an integer."""
    try:
        call = classify(contract, request)
    except ClassificationError:
        return answer(contract, request)
    value = call.args.get("id_row_central")
    if value is not None and not ParamType.INT.accepts(value):
        return build_response(contract, call.operation, call.binding)
    return answer(contract, request)


def crashes_after_laughs(contract: Contract):
    """An ASGI app that answers as the reference until it reads a billion-laughs document;
    from then on it answers nothing (uvicorn sends its bare 500 for it: a crashed worker)."""
    reference = create_app(contract)
    state = {"dead": False}

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return await reference(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        state["dead"] = state["dead"] or b"<!ENTITY l4" in body
        if state["dead"]:
            return

        async def replay():
            return {"type": "http.request", "body": body, "more_body": False}

        await reference(scope, replay, send)

    return app


@contextlib.contextmanager
def serving(respond=None, app=None) -> Iterator[str]:
    contract = school_mobile()
    with running(app=app or create_app(contract, respond=respond or answer)) as url:
        yield url


# -------------------------------------------------------------------------------- the tests


def test_the_reference_passes_the_probe(tmp_path: Path) -> None:
    code, data, stdout = run_probe(tmp_path, "--max-requests", "400")
    assert code == 0, stdout
    assert data["counts"]["failed"] == 0 and data["counts"]["warning"] == 0
    for rule in RULE_IDS:  # every rule judged something
        assert data["rules"][rule].get("passed", 0) > 0, rule
    assert not (tmp_path / "failures.jsonl").exists()
    assert "probe: PASSED" in stdout
    results = [json.loads(p.read_text(encoding="utf-8"))
               for p in (tmp_path / "allure").glob("*-result.json")]
    assert results
    # each test: its own request and response, and its own duration (not the whole run's)
    run_ms = max(r["stop"] for r in results) - min(r["start"] for r in results)
    for result in results:
        names = [a["name"] for a in result["attachments"]]
        assert len(names) == 2 and names[0].endswith(" request") and \
            names[1].endswith(" response"), result["name"]
    assert len({r["stop"] - r["start"] for r in results}) > 1
    assert all(r["stop"] - r["start"] < run_ms for r in results)


def test_entity_expansion_fails_sec_entity(tmp_path: Path) -> None:
    with serving(expands_entities) as url:
        code, data, stdout = run_probe(tmp_path, "--target", url, "--max-requests",
                                       str(FIXED_CASES))
    assert code == 1
    assert "SEC-ENTITY" in failed_rules(data)
    expanded = [f for f in data["findings"] if f["rule"] == "SEC-ENTITY"
                and f["verdict"] == "failed" and CANARY in f["actual"]]
    assert expanded, stdout  # the canary came back, quoted


def test_stack_traces_fail_sec_leak_with_the_evidence_quoted(tmp_path: Path) -> None:
    with serving(returns_stack_traces) as url:
        code, data, _ = run_probe(tmp_path, "--target", url, *SMALL)
    assert code == 1
    # a trace written into ASMX's empty 400 and 415 makes a text/xml body that is no envelope:
    # an error no SOAP client reads (ROB-FAULT-SHAPE, issue 31)
    assert failed_rules(data) == {"SEC-LEAK", "ROB-FAULT-SHAPE"}
    shapes = {f["actual"].split(":")[0] for f in data["findings"]
              if f["rule"] == "ROB-FAULT-SHAPE" and f["verdict"] == "failed"}
    assert shapes and all(s.startswith(("envelope/", "xml/", "matrix/")) for s in shapes), shapes
    leak = next(f for f in data["findings"] if f["rule"] == "SEC-LEAK")
    assert "at System.Number.ParseInt32" in leak["actual"]
    assert len(leak["actual"]) < 600  # the quote is shortened


def test_a_target_that_crashes_after_a_billion_laughs_fails_rob_no_crash(tmp_path: Path
                                                                          ) -> None:
    with serving(app=crashes_after_laughs(school_mobile())) as url:
        code, data, stdout = run_probe(tmp_path, "--target", url, *SMALL)
    assert code == 1
    assert "ROB-NO-CRASH" in failed_rules(data)
    crash = next(f for f in data["findings"] if f["rule"] == "ROB-NO-CRASH"
                 and f["verdict"] == "failed")
    assert "billion-laughs" in crash["actual"]
    assert "stopped answering" in data["stopped"] and "stopped answering" in stdout


def test_accepting_a_non_integer_id_fails_rob_reject_and_replays(tmp_path: Path) -> None:
    with serving(accepts_any_id) as url:
        code, data, stdout = run_probe(tmp_path, "--target", url, *SMALL)
        assert code == 1, stdout
        assert failed_rules(data) == {"ROB-REJECT"}
        saved = tmp_path / "failures.jsonl"
        lines = list(read_exchanges([saved]))  # a harness recording
        assert lines and all(e.meta["probe"]["failed"] == ["ROB-REJECT"] for e in lines)
        # shrunk by Hypothesis to the smallest failing input: one past Int32's upper bound
        assert {e.meta["probe"]["what"] for e in lines} == {
            "id_row_central (int) = 2147483648"}
        # sent again: still failing against the faulty target...
        again, replayed, _ = run_probe(tmp_path / "again", "--target", url, "--replay",
                                       str(saved))
    assert again == 1 and failed_rules(replayed) == {"ROB-REJECT"}
    assert replayed["exchanges"] == len(lines)
    # ...and passing against the reference
    fixed, against_reference, _ = run_probe(tmp_path / "fixed", "--replay", str(saved))
    assert fixed == 0 and against_reference["exchanges"] == len(lines)


def test_list_rules_and_help(capsys) -> None:
    assert main(["probe", "--list-rules"]) == 0
    listed = capsys.readouterr().out
    assert all(f"`{rule}`" in listed for rule in RULE_IDS)
    with pytest.raises(SystemExit):
        main(["probe", "--help"])
    assert "Example:\n  harness probe --target" in capsys.readouterr().out


def test_bad_budget_and_broken_replay_file_are_one_line_errors(tmp_path: Path, capsys) -> None:
    assert main(["probe", "--max-requests", "3"]) == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    assert main(["probe", "--replay", str(broken)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("harness probe: error:") for line in err)


# ------------------------------------------------------- SEC-LEAK, passive in other commands


def leaky_exchange(contract: Contract, text: str) -> Exchange:
    op = contract.find("LogoutFromSchool")
    from harness.contract.bindings import Binding, build_request

    request = build_request(contract, op, {"id_row_central": "x"}, Binding.SOAP11)
    return Exchange(request, build_fault(Binding.SOAP11, FaultCode.CLIENT, text))


def test_sec_leak_is_a_warning_in_the_catalogue(contract: Contract) -> None:
    found = rules.judge(leaky_exchange(contract, DOTNET_TRACE), contract, rules=["SEC-LEAK"])
    assert [f.verdict for f in found] == [Verdict.WARNING]
    assert "stack frame" in found[0].actual and "at System.Number.ParseInt32" in found[0].actual
    clean = rules.judge(leaky_exchange(contract, CUSTOM_ERRORS), contract, rules=["SEC-LEAK"])
    assert [f.verdict for f in clean] == [Verdict.PASSED]
    assert "SEC-LEAK" in rules.PASSIVE and rules.RULES["SEC-LEAK"].side is rules.Side.RESPONSE


def test_find_leaks_kinds() -> None:
    def leaks(text: str, status: int = 500, headers=()) -> list[str]:
        return [leak.kind for leak in find_leaks(HttpResponse(status, headers, text.encode()))]

    assert {"stack frame", "exception type", "source path"} <= set(leaks(DOTNET_TRACE))
    assert leaks(CUSTOM_ERRORS) == []
    assert leaks(DOTNET_TRACE, status=200) == []  # a result is not an error answer
    assert leaks("Incorrect syntax near 'x'.") == ["SQL error text"]
    assert leaks('Traceback (most recent call last):\n  File "/srv/app/main.py", line 3') == [
        "Python traceback", "source path"]
    assert leaks("", headers=(("X-AspNet-Version", "4.0.30319"),)) == [
        "framework version header"]


def test_sec_leak_is_a_warning_in_diff(tmp_path: Path) -> None:
    contract = school_mobile()
    recording = tmp_path / "invalid.jsonl"
    with RecordingWriter(recording) as writer:
        writer.write(leaky_exchange(contract, ""))
    report = tmp_path / "diff.json"
    with (serving() as primary, serving(returns_stack_traces) as candidate,
          contextlib.redirect_stdout(io.StringIO())):
        main(["diff", str(recording), "--primary", primary, "--candidate", candidate,
              "--json", str(report), "--allure-dir", ""])
    data = json.loads(report.read_text(encoding="utf-8"))
    leaks = [f for f in data["findings"] if f["rule"] == "SEC-LEAK"]
    assert [(f["verdict"], f["implementation"]) for f in leaks] == [("warning", "candidate")]
    assert "at System.Number.ParseInt32" in leaks[0]["actual"]
    assert data["rules"]["SEC-LEAK"] == {"passed": 1, "warning": 1}


def test_sec_leak_is_a_warning_in_lint(tmp_path: Path, contract: Contract) -> None:
    recording = tmp_path / "leaky.jsonl"
    with RecordingWriter(recording) as writer:
        writer.write(leaky_exchange(contract, DOTNET_TRACE))
    report = tmp_path / "lint.json"
    with contextlib.redirect_stdout(io.StringIO()):
        main(["lint", str(recording), "--json", str(report)])  # R9-INT fails the 'x'
    data = json.loads(report.read_text(encoding="utf-8"))
    # a permitted deviation (stock ASP.NET sends it): a warning, never a failure
    assert data["rules"]["SEC-LEAK"] == {"warning": 1}
    leaks = [f for f in data["findings"] if f["rule"] == "SEC-LEAK"]
    assert [f["verdict"] for f in leaks] == ["warning"]
    assert "exception type: 'System.Web.Services.Protocols.SoapException" in leaks[0]["actual"]


# ------------------------------------------------------------ SEC-LEAK calibrated (issue 21)


def dotted_fault_codes(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The reference, but every SOAP 1.1 fault code extended as section 4.4.1 allows and
    spyne does (``Client.ValidationError``), every SOAP 1.2 one with a Subcode (its way to
    extend), and every error text led by the exception type alone, without frames or paths
    (``System.InvalidOperationException: ...``)."""
    response = answer(contract, request)
    if response.status < 400:
        return response
    body = response.body
    for code in (b"soap:Client<", b"soap:Server<"):
        body = body.replace(code, code[:-1] + b".ValidationError<")
    for code in (b"soap:Sender</soap:Value>", b"soap:Receiver</soap:Value>"):
        body = body.replace(code, code + b'<soap:Subcode><soap:Value xmlns:app="urn:app">'
                            b"app:Schema.ValidationError</soap:Value></soap:Subcode>")
    for start in (b"<faultstring>", b'xml:lang="en">'):
        body = body.replace(start, start + b"System.InvalidOperationException: ")
    if body.strip() and not body.lstrip().startswith(b"<"):  # ASMX's empty 400/415 stay so
        body = b"System.InvalidOperationException: " + body
    return HttpResponse(response.status, response.headers, body, response.reason)


def test_dotted_fault_codes_never_leak_and_a_bare_exception_type_is_a_warning(
        tmp_path: Path) -> None:
    with serving(dotted_fault_codes) as url:
        code, data, stdout = run_probe(tmp_path, "--target", url, *SMALL)
    assert code == 0, stdout
    leaks = [f for f in data["findings"] if f["rule"] == "SEC-LEAK"]
    assert leaks and {f["verdict"] for f in leaks} == {"warning"}
    assert all("exception type: " in f["actual"] and "System.InvalidOperationException"
               in f["actual"] for f in leaks), [f["actual"] for f in leaks]
    assert not any("ValidationError" in f["actual"] for f in leaks)  # the code is no leak
    assert data["rules"]["ROB-FAULT-SHAPE"].get("failed", 0) == 0  # a dotted code is a code


def test_what_only_names_the_platform_warns_the_rest_fails_with_the_evidence() -> None:
    from harness.judge.security import judge_leaks

    def verdict(text: str, code: str = "soap:Client") -> tuple[Verdict, str]:
        fault = (f'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
                 f"<soap:Body><soap:Fault><faultcode>{code}</faultcode>"
                 f"<faultstring>{text}</faultstring></soap:Fault></soap:Body></soap:Envelope>")
        judged = judge_leaks(HttpResponse(500, (), fault.encode()))
        assert judged is not None
        return judged[0], judged[2]

    assert verdict("The value could not be validated",
                   "senv:Client.SchemaValidationError")[0] is Verdict.PASSED
    assert verdict("Bad request", "soap:Server.Database.ConnectionError")[0] is Verdict.PASSED
    assert verdict("System.ArgumentNullException: Value cannot be null.") == (
        Verdict.WARNING, "exception type: 'System.ArgumentNullException: Value cannot be null.'")
    for text, kind, quoted in (
            ("Login failed: Server=db01;Database=School;Password=hunter2;", "connection string",
             "Server=db01;Database=School"),
            ("cannot reach mongodb://school:hunter2@10.0.4.2:27017/school", "connection string",
             "mongodb://school:***@10.0.4.2"),
            ("timeout calling 10.20.30.40:8080", "internal host name", "10.20.30.40"),
            ("timeout calling grades.school.internal", "internal host name",
             "grades.school.internal"),
            ("TypeError: Cannot read properties of undefined\n    at Server._process "
             "(/srv/app/node_modules/soap/lib/server.js:361:27)", "stack frame",
             "at Server._process (/srv/app/node_modules/soap/lib/server.js:361:27)")):
        judged, actual = verdict(text)
        assert judged is Verdict.FAILED and f"{kind}: '{quoted}" in actual, (text, actual)
        assert "hunter2" not in actual  # evidence of a leak, not the secret again
    # versions, dotted numbers and .NET namespaces are no host names
    assert verdict("Version 10.0.30319.42000, System.Internal.Foo")[0] is Verdict.PASSED
    # spyne's text/plain error (HttpRpc): its dotted fault code first, no leak; the class it
    # names only names the platform
    spyne = HttpResponse(400, (("Content-Type", "text/plain"),), (
        b"Client.ValidationError\n\n<class 'spyne.model.complex.LogoutFromSchool'>."
        b"id_row_central member must occur at most 1 times."))
    assert judge_leaks(spyne) == (Verdict.WARNING, "nothing naming the platform",
                                  "type name: \"<class 'spyne.model.complex.LogoutFromSchool'>\"")
