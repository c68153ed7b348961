"""`harness diff` end to end: the real command (subprocess) between the reference and
deliberately different implementations, all real servers on loopback."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from harness.contract.bindings import (
    Binding,
    Classification,
    FaultCode,
    build_fault,
    build_request,
    build_response,
    classify,
    soap_payload,
)
from harness.contract.model import Contract
from harness.contract.xmlsafe import parse_xml
from harness.errors import ClassificationError
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.recording import RecordingWriter

HARNESS = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "harness")
Respond = Callable[[Contract, HttpRequest], HttpResponse]


# ------------------------------------------------------------------ implementations under test


def _call(contract: Contract, request: HttpRequest) -> Classification | None:
    try:
        return classify(contract, request)
    except ClassificationError:  # WSDL, help page, bad requests: answered by the reference
        return None


def changed_result(contract: Contract, request: HttpRequest) -> HttpResponse:
    """Every binding answers GetTokenDevice with another (but self-consistent) result."""
    call = _call(contract, request)
    if call and call.operation.result_element and _succeeds(contract, request):
        return build_response(contract, call.operation, call.binding, "changed")
    return answer(contract, request)


def _succeeds(contract: Contract, request: HttpRequest) -> bool:
    """The reference answers 200 (not, e.g., a refusal of markup in a GET/POST value)."""
    return answer(contract, request).status == 200


def fault_on(operation: str, binding: Binding) -> Respond:
    """A server fault where the reference succeeds, for one operation x binding."""
    def respond(contract: Contract, request: HttpRequest) -> HttpResponse:
        call = _call(contract, request)
        if call and (call.operation.name, call.binding) == (operation, binding):
            return build_fault(binding, FaultCode.SERVER, "Object reference not set")
        return answer(contract, request)
    return respond


def get_result_differs(contract: Contract, request: HttpRequest) -> HttpResponse:
    """HTTP GET answers GetTokenDevice differently from SOAP and POST."""
    call = _call(contract, request)
    if (call and call.binding is Binding.HTTP_GET and call.operation.result_element
            and _succeeds(contract, request)):
        return build_response(contract, call.operation, call.binding, "from-get")
    return answer(contract, request)


def harmless(contract: Contract, request: HttpRequest) -> HttpResponse:
    """Other prefixes, pretty-printed, no XML declaration, charset in capitals, an extra header."""
    response = answer(contract, request)
    if request.url.lower().endswith("?wsdl"):
        return response  # a WSDL's QName attribute values hold its prefixes: not harmless
    headers = (*((k, v.replace("utf-8", "UTF-8")) for k, v in response.headers
                 if k.lower() != "content-length"), ("X-Powered-By", "ASP.NET"))
    body = response.body
    if body.strip() and "xml" in (response.content_type or ""):  # not a text/plain error
        root = parse_xml(body)
        body = etree.tostring(_reprefix(root, {"s": "x", "soap12": "y"}), encoding="utf-8",
                              pretty_print=True)
    return HttpResponse(response.status, headers, body, response.reason)


def _reprefix(element: etree._Element, rename: dict[str, str]) -> etree._Element:
    nsmap = {rename.get(p, "ns0") if p is None else rename.get(p, f"{p}x"): ns
             for p, ns in element.nsmap.items()}
    copy = etree.Element(element.tag, dict(element.attrib), nsmap=nsmap)
    copy.text = element.text
    prefix, colon, local = (element.text or "").partition(":")
    if colon and prefix in element.nsmap and " " not in prefix:  # a QName (a fault code)
        copy.text = f"{rename.get(prefix, prefix + 'x')}:{local}"
    for child in element:
        if isinstance(child.tag, str):
            copy.append(_reprefix(child, rename))
    return copy


def timestamped(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The reference plus a per-call Timestamp element in every SOAP response element."""
    return _stamp(contract, answer(contract, request))


def result_with_time(contract: Contract, request: HttpRequest) -> HttpResponse:
    """GetTokenDevice's result carries the time of the call: its text changes on every call."""
    call = _call(contract, request)
    if call and call.operation.result_element and _succeeds(contract, request):
        return build_response(contract, call.operation, call.binding, f"t{time.time_ns()}")
    return answer(contract, request)


def timestamped_and_changed(contract: Contract, request: HttpRequest) -> HttpResponse:
    return _stamp(contract, changed_result(contract, request))


def _stamp(contract: Contract, response: HttpResponse) -> HttpResponse:
    if b"Envelope" not in response.body:
        return response
    envelope = parse_xml(response.body)
    stamp = etree.SubElement(soap_payload(envelope), f"{{{contract.namespace}}}Timestamp")
    stamp.text = str(time.time_ns())
    headers = tuple((k, v) for k, v in response.headers if k.lower() != "content-length")
    return HttpResponse(response.status, headers, etree.tostring(
        envelope, encoding="utf-8", xml_declaration=True), response.reason)


# ------------------------------------------------------------------------------- helpers


@contextmanager
def serving(contract: Contract, *responders: Respond | None) -> Iterator[list[str]]:
    """Base URLs of one server per responder (None: the reference itself)."""
    with ExitStack() as stack:
        yield [stack.enter_context(running(contract, app=create_app(contract, respond=r)
                                           if r else None)) for r in responders]


def diff(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "diff.json"
    out.unlink(missing_ok=True)
    proc = subprocess.run([HARNESS, "diff", *args, "--json", str(out), "--allure-dir",
                           str(tmp_path / "allure")], capture_output=True, text=True,
                          timeout=120)
    report = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return proc, report


def failures(report: dict[str, Any], rule: str | None = None) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["verdict"] == "failed"
            and (rule is None or f["rule"] == rule)]


def places(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f["operation"], f["binding"]) for f in findings}


# --------------------------------------------------------------------------------- tests


def test_same_implementation_matches(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, None) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["verdict"] == "passed"
    # every operation x binding, 3 value sets: the calls; each endpoint's WSDL, apart
    assert report["exchanges"] == 8 * 4 * 3 and report["service_descriptions"] == {"WSDL": 7}
    assert report["rules"]["DIFF-BODY"] == {"passed": 96 + 7}
    assert report["findings"] == [] and report["examples"] == []


def test_erroneous_requests_are_compared_with_errors(contract: Contract,
                                                     tmp_path: Path) -> None:
    """--errors: 191 erroneous requests more (120, and 71 the spec does not describe), each
    named by its error; the reference against
    itself (and against its harmless variation, fault codes included) does not differ."""
    with serving(contract, None, harmless) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", primary, "--errors")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # the 7 WSDLs apart (service descriptions), + the ASMX matrix
        assert report["exchanges"] == 8 * 4 * 3 + 120 + 8 * 8 + 7 + 382
        assert report["rules"]["DIFF-STATUS"] == {"passed": 294 + 382}
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate,
                            "--errors")
    assert proc.returncode == 0, json.dumps(report["findings"][:3])
    assert report["counts"]["failed"] == 0 and report["counts"]["warning"] == 0
    with serving(contract, None, fault_on("LogoutFromSchool", Binding.SOAP12)) as urls:
        proc, report = diff(tmp_path, "--primary", urls[0], "--candidate", urls[1], "--errors")
    # the reference answers a non-integer with a Sender fault, the candidate with a Receiver
    # fault: found, and named by the erroneous request
    sources = {f.get("source") for f in failures(report, "DIFF-BODY")}
    assert "error: non-integer int parameter (x)" in sources and proc.returncode == 1


def test_changed_result_is_reported_per_binding(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, changed_result) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate,
                            "--junit", str(tmp_path / "junit.xml"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    body = failures(report, "DIFF-BODY")
    assert places(body) == {("GetTokenDevice", b.label) for b in Binding}
    assert len(body) == 4 * 3 - 2  # XML-special values over GET/POST: refused by both
    soap = next(f for f in body if f["binding"] == "SOAP 1.1")
    assert soap["path"] == "/Envelope/Body/GetTokenDeviceResponse/GetTokenDeviceResult"
    # the token is a sensitive result: both sides by their pseudonyms, never in clear
    assert soap["candidate"] == pseudonym_shown(soap["candidate"]) != soap["primary"]
    assert pseudonym_shown(soap["primary"]) == soap["primary"]
    assert not failures(report, "DIFF-STATUS") and not failures(report, "CROSS-BINDING")
    # One example per operation x binding x rule, with both requests and responses.
    examples = report["examples"]
    assert {(e["operation"], e["binding"], e["rule"]) for e in examples} == {
        ("GetTokenDevice", b.label, "DIFF-BODY") for b in Binding}
    example = examples[0]
    assert soap["candidate"].encode() in Exchange.from_dict(example["candidate"]).response.body
    assert b"changed" not in Exchange.from_dict(example["candidate"]).response.body
    assert Exchange.from_dict(example["primary"]).request.body == \
        Exchange.from_dict(example["candidate"]).request.body
    assert "GetTokenDevice x SOAP 1.1" in proc.stdout and "DIFF-BODY x3" in proc.stdout
    junit = parse_xml((tmp_path / "junit.xml").read_bytes())
    failed = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert "GetTokenDevice [HTTP GET] candidate's body equals the primary's (XML " \
           "structurally, fault code included)" in failed


def test_fault_where_primary_succeeds(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, fault_on("SendMarkNotes", Binding.SOAP12)) as urls:
        proc, report = diff(tmp_path, "--primary", urls[0], "--candidate", urls[1])
    assert proc.returncode == 1
    status = failures(report, "DIFF-STATUS")
    assert places(status) == {("SendMarkNotes", "SOAP 1.2")}
    # one failure with its cause (fault code, the reason's first line), not status + body
    assert {(f["primary"], f["candidate"], f["summary"]) for f in status} == {(
        "HTTP 200: a SOAP 1.2 envelope with <SendMarkNotesResponse>",
        "HTTP 500: Receiver fault: Object reference not set",
        "Receiver fault instead of a result: Object reference not set")}
    assert failures(report, "DIFF-BODY") == failures(report, "DIFF-CONTENT-TYPE") == []
    assert report["rules"]["DIFF-BODY"]["not applicable"] == len(status)
    (cause,) = [c for c in report["causes"] if c["difference"]]
    assert cause["cause"] == "Receiver fault instead of a result: Object reference not set"
    assert cause["rules"] == {"DIFF-STATUS": len(status)} and cause["calls"] == len(status)
    assert ("  Receiver fault instead of a result: Object reference not set -- SendMarkNotes x "
            f"SOAP 1.2 ({len(status)} checks on {len(status)} calls, 1 operation x binding pair) "
            "[DIFF-STATUS]"
            ) in proc.stdout
    # the candidate answering SOAP 1.2 unlike its other bindings is that same cause: the
    # cross-binding check is not applicable because of it
    assert not failures(report, "CROSS-BINDING")
    assert report["rules"]["CROSS-BINDING"]["not applicable"] == 1
    assert len([line for line in proc.stdout.splitlines() if line.startswith("  ")]) == 1


def test_harmless_differences_are_not_reported(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, harmless) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 0, json.dumps(report["findings"][:3])
    assert report["counts"]["failed"] == 0 and report["counts"]["warning"] == 0


def test_fault_reason_is_only_a_warning(contract: Contract, tmp_path: Path) -> None:
    """Two implementations faulting alike (same code) with other prose: exit 0, a warning."""
    def fault(reason: str) -> Respond:
        def respond(contract: Contract, request: HttpRequest) -> HttpResponse:
            call = _call(contract, request)
            if call and call.binding.is_soap:
                return build_fault(call.binding, FaultCode.CLIENT, reason)
            return answer(contract, request)
        return respond

    with serving(contract, fault("Server was unable to read request."),
                 fault("Bad request")) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 0, proc.stdout
    warnings = [f for f in report["findings"] if f["rule"] == "DIFF-FAULT-REASON"]
    assert warnings and {f["verdict"] for f in warnings} == {"warning"}
    assert {f["binding"] for f in warnings} == {"SOAP 1.1", "SOAP 1.2"}


def test_noise_is_learned_from_a_secondary(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, timestamped, timestamped, timestamped) as urls:
        primary, secondary, candidate = urls
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
        assert proc.returncode == 1
        assert {f["path"].rsplit("/", 1)[1] for f in failures(report)} == {"Timestamp"}
        assert len(places(failures(report))) == 8 * 2  # every operation over both SOAPs

        proc, report = diff(tmp_path, "--primary", primary, "--secondary", secondary,
                            "--candidate", candidate)
    assert proc.returncode == 0, proc.stdout
    assert failures(report) == []
    noise = report["noise"]
    assert {(n["binding"], n["path"].rsplit("/", 1)[1]) for n in noise} == {
        ("SOAP 1.1", "Timestamp"), ("SOAP 1.2", "Timestamp")}
    assert sum(n["suppressed"] for n in noise) == 8 * 2 * 3
    assert "NOISE (differences between primary and secondary" in proc.stdout
    assert "/Envelope/Body/GetTokenDeviceResponse/Timestamp" in proc.stdout


def test_noisy_result_text(contract: Contract, tmp_path: Path) -> None:
    """A result that changes on every call: without a secondary it differs everywhere (and even
    across bindings); with one it is noise, and cross-binding compares success only."""
    with serving(contract, result_with_time, result_with_time, result_with_time) as urls:
        proc, report = diff(tmp_path, "--primary", urls[0], "--candidate", urls[2])
        assert proc.returncode == 1
        assert places(failures(report)) == {("GetTokenDevice", b.label) for b in Binding}
        assert {f["verdict"] for f in report["findings"] if f["rule"] == "CROSS-BINDING"} == {
            "warning"}  # the primary is as inconsistent: the candidate inherits it
        proc, report = diff(tmp_path, "--primary", urls[0], "--secondary", urls[1],
                            "--candidate", urls[2])
    assert proc.returncode == 0, proc.stdout
    assert report["findings"] == []
    assert {n["path"] for n in report["noise"]} == {
        "/Envelope/Body/GetTokenDeviceResponse/GetTokenDeviceResult", "/string"}


def test_noise_does_not_hide_a_real_difference(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, timestamped, timestamped, timestamped_and_changed) as urls:
        proc, report = diff(tmp_path, "--primary", urls[0], "--secondary", urls[1],
                            "--candidate", urls[2])
    assert proc.returncode == 1
    assert {(f["operation"], f["binding"], f["path"].rsplit("/", 1)[1])
            for f in failures(report)} == {
        ("GetTokenDevice", "SOAP 1.1", "GetTokenDeviceResult"),
        ("GetTokenDevice", "SOAP 1.2", "GetTokenDeviceResult"),
        ("GetTokenDevice", "HTTP GET", "string"), ("GetTokenDevice", "HTTP POST", "string")}


def test_cross_binding_inconsistency(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, get_result_differs) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
        assert proc.returncode == 1
        # the candidate's GET answer differs from the primary's: that is the cause, said
        # once (DIFF-BODY); the candidate's GET unlike its other bindings is the same cause
        assert places(failures(report)) == {("GetTokenDevice", "HTTP GET")}
        assert {f["rule"] for f in failures(report)} == {"DIFF-BODY"}
        assert report["rules"]["CROSS-BINDING"] == {"passed": 8 + 7, "not applicable": 1}

        # The same inconsistency in the primary: reported, but inherited (a warning).
        proc, report = diff(tmp_path, "--primary", candidate, "--candidate", candidate)
    assert proc.returncode == 0
    cross = [f for f in report["findings"] if f["rule"] == "CROSS-BINDING"]
    assert {(f["implementation"], f["verdict"]) for f in cross} == {
        ("primary", "warning"), ("candidate", "warning")}


def test_allure_results(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, changed_result) as (primary, candidate):
        diff(tmp_path, "--primary", primary, "--candidate", candidate, "--junit",
             str(tmp_path / "diff.xml"))
    results = [json.loads(p.read_text()) for p in (tmp_path / "allure").glob("*-result.json")]
    # one test per JUnit test case (rule x operation x binding, rule x endpoint's WSDL)
    junit = parse_xml((tmp_path / "diff.xml").read_bytes())
    assert len(results) == int(junit.get("tests"))
    failed = [r for r in results if r["status"] == "failed"]
    assert len(failed) == int(junit.get("failures")) == 4
    token = next(r for r in failed if {"name": "feature", "value": "HTTP GET"} in r["labels"])
    assert {"name": "story", "value": "GetTokenDevice"} in token["labels"]
    assert {"name": "tag", "value": "DIFF-BODY"} in token["labels"]
    assert token["name"] == "GetTokenDevice [HTTP GET] candidate's body equals the primary's " \
                            "(XML structurally, fault code included)"
    names = [a["name"] for a in token["attachments"]]
    assert names == ["DIFF-BODY primary request", "DIFF-BODY primary response",
                     "DIFF-BODY candidate request", "DIFF-BODY candidate response"]
    attached = (tmp_path / "allure" / token["attachments"][3]["source"]).read_text()
    assert attached.startswith("HTTP/1.1 200") and "changed" not in attached
    # the failure box says the difference itself: its cause, expected, actual and where; the
    # token (sensitive) by the one pseudonym its attachment shows
    message = token["statusDetails"]["message"]
    face = re.search(r"redacted-[0-9a-f]{16}", attached)
    assert face and face.group(0) in message, (attached, message)
    assert message.startswith("[DIFF-BODY] ") and "expected " in message
    assert ", actual " in message and "(at GetTokenDevice x HTTP GET call #" in message
    env = (tmp_path / "allure" / "environment.properties").read_text(encoding="utf-8")
    assert f"primary = {primary}".replace(":", "\\:") in env
    assert f"candidate = {candidate}".replace(":", "\\:") in env


def test_recording_is_replayed_to_both(contract: Contract, tmp_path: Path) -> None:
    recording = tmp_path / "traffic.jsonl"
    with RecordingWriter(recording, upstream="http://legacy.example/School") as writer:
        for op in contract.operations:
            for binding in (Binding.SOAP11, Binding.HTTP_GET):
                request = build_request(contract, op, {p: "7" for p in op.parameter_names},
                                        binding, "http://legacy.example/School")
                writer.write(Exchange(request, answer(contract, request)))
        for query in ("?WSDL", ""):  # WSDL and help page: each names its own URL, no difference
            request = HttpRequest("GET", f"http://legacy.example/School/CenterlogOut.asmx{query}",
                                  (("Host", "legacy.example"),))
            writer.write(Exchange(request, None))
    with serving(contract, None, changed_result) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary + "/", "--candidate", candidate,
                            str(recording))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert report["exchanges"] == 17 and report["service_descriptions"] == {"WSDL": 1}
    assert report["rules"]["DIFF-BODY"]["passed"] == 16  # WSDL and help page included
    body = failures(report, "DIFF-BODY")
    assert places(body) == {("GetTokenDevice", "SOAP 1.1"), ("GetTokenDevice", "HTTP GET")}
    assert {(f["index"], f["source"]) for f in body} == {(11, str(recording)),
                                                         (12, str(recording))}
    assert body[0]["request"].startswith("POST /PushNotificationMobile.asmx")


def test_unreachable_target_is_one_line(contract: Contract, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with serving(contract, None) as (primary,):
        proc, _ = diff(tmp_path, "--primary", primary, "--candidate", closed)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and closed in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("args", [["--primary", "http://127.0.0.1:1"],
                                  ["--primary", "http://127.0.0.1:1", "--candidate",
                                   "http://127.0.0.1:2", "--errors", "x.jsonl"],
                                  ["--primary", "ftp://x", "--candidate", "http://127.0.0.1:1"]])
def test_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    proc, _ = diff(tmp_path, *args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_ignored_paths_are_not_compared(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, timestamped) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate,
                            "--ignore", "*/Timestamp")
        assert proc.returncode == 0, proc.stdout
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 1
    assert {f["kind"] for f in failures(report, "DIFF-BODY")} == {"extra"}
    # Without --ignore the added element also makes void SOAP answers unlike GET/POST ones.
    assert len(failures(report, "CROSS-BINDING")) == 7


def test_har_file_is_replayed_to_both(contract: Contract, tmp_path: Path) -> None:
    op = contract.operation("GetTokenDevice")
    entries = []
    for binding in (Binding.SOAP12, Binding.HTTP_POST):
        request = build_request(contract, op, {"id": "طالب"}, binding, "https://legacy.example")
        entries.append({
            "startedDateTime": "2026-01-01T00:00:00Z", "time": 1, "cache": {}, "timings": {},
            "request": {"method": request.method, "url": request.url, "httpVersion": "HTTP/1.1",
                        "headers": [{"name": k, "value": v} for k, v in request.headers],
                        "queryString": [], "cookies": [], "headersSize": -1,
                        "bodySize": len(request.body),
                        "postData": {"mimeType": request.content_type,
                                     "text": request.body.decode("utf-8")}},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                         "headers": [], "cookies": [], "content": {"size": 0, "mimeType": ""},
                         "redirectURL": "", "headersSize": -1, "bodySize": 0}})
    har = tmp_path / "browser.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
                                       "entries": entries}}), encoding="utf-8")
    with serving(contract, None, changed_result) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate, str(har))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert {(f["operation"], f["binding"], f["index"], f["source"])
            for f in failures(report, "DIFF-BODY")} == {
        ("GetTokenDevice", "SOAP 1.2", 1, str(har)), ("GetTokenDevice", "HTTP POST", 2, str(har))}


def test_allure_warning_passes_and_each_test_has_its_own_duration(
        contract: Contract, tmp_path: Path) -> None:
    # The candidate's cross-binding inconsistency is the primary's too: a warning.
    with serving(contract, get_result_differs, get_result_differs) as (primary, candidate):
        proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 0
    assert {f["verdict"] for f in report["findings"] if f["rule"] == "CROSS-BINDING"} == {
        "warning"}
    results = [json.loads(p.read_text()) for p in (tmp_path / "allure").glob("*-result.json")]
    assert results and {r["status"] for r in results} == {"passed"}  # a warning: no red
    warned = [r for r in results if {"name": "tag", "value": "warning"} in r["labels"]]
    assert warned and all({"name": "tag", "value": "CROSS-BINDING"} in r["labels"]
                          and "[CROSS-BINDING]" in r["descriptionHtml"] for r in warned)
    places = [r for r in results if {"name": "tag", "value": "DIFF-STATUS"} in r["labels"]]
    assert len(places) == 8 * 4 + 7  # and each endpoint's WSDL
    assert len({(r["start"], r["stop"]) for r in places}) > 1  # not all the run's span
    first, last = min(r["start"] for r in places), max(r["stop"] for r in places)
    assert all(r["stop"] - r["start"] < last - first for r in places)


def accepts_markup(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A stack without ASP.NET's request validation: markup in GET/POST values is taken."""
    call = _call(contract, request)
    if call and not call.binding.is_soap and not _succeeds(contract, request):
        return build_response(contract, call.operation, call.binding)
    return answer(contract, request)


def test_recorded_values_refused_over_get_are_left_out_of_the_cross_binding_check(
        contract: Contract, tmp_path: Path) -> None:
    """A recorded (or shadowed) call whose value holds markup: refused over GET by request
    validation, taken over SOAP. By design, not one implementation answering the same call
    differently over its bindings (generated cases leave such values out the same way)."""
    from harness.diff import Diff, Targets, recorded_cases

    recording = tmp_path / "markup.jsonl"
    op = contract.find("SendMarkNotes")
    values = {p: "<b>7</b>" if p == op.parameter_names[0] else "7" for p in op.parameter_names}
    with RecordingWriter(recording) as writer:
        for binding in (Binding.SOAP11, Binding.HTTP_GET):
            request = build_request(contract, op, values, binding, "http://legacy.example")
            writer.write(Exchange(request, None))
    with running(contract) as primary, running(contract) as candidate:
        result = Diff(contract, Targets(primary, candidate)).run(
            recorded_cases(contract, [recording]))
    statuses = {f["binding"]: f["verdict"] for f in result.report.kept()
                if f["rule"] == "DIFF-STATUS"}
    assert statuses == {}  # both refuse it over GET: no difference either
    assert not [f for f in result.report.kept() if f["rule"] == "CROSS-BINDING"]


def test_a_markup_refusal_is_a_warning_in_diff_whichever_side(contract: Contract,
                                                              tmp_path: Path) -> None:
    """One verdict per behaviour (4.10): ASP.NET refusing markup in a GET/POST value where
    the other implementation takes it differs, as a warning naming why, never a failure."""
    with serving(contract, None, accepts_markup) as (refusing, accepting):
        for primary, candidate in ((refusing, accepting), (accepting, refusing)):
            proc, report = diff(tmp_path, "--primary", primary, "--candidate", candidate,
                                "--operation", "SendMarkNotes")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            statuses = [f for f in report["findings"] if f["rule"] == "DIFF-STATUS"]
            assert places(statuses) == {("SendMarkNotes", "HTTP GET"),
                                        ("SendMarkNotes", "HTTP POST")}
            assert all(f["verdict"] == "warning" and "request validation" in f["message"]
                       and "4.10" in f["message"] for f in statuses)
            assert report["counts"]["failed"] == 0


def pseudonym_shown(text: str) -> str:
    """``text`` when it is a pseudonym as reports show one (``redacted-`` and 16 hex digits)."""
    return text if re.fullmatch(r"redacted-[0-9a-f]{16}", text) else f"<not a pseudonym: {text}>"
