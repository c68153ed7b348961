"""The one comparison (harness.judge.compare) explains itself: XML aligned by names, the
difference named in words (``Difference.summary``), WSDLs compared as contracts, a text/plain
answer compared by its value, an unreadable body pinned on its side. Through the real commands
(``harness diff``, ``harness replay``, ``harness lint``) against the reference and deliberately
different implementations, all real servers on loopback.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from faulty import where
from lxml import etree
from traffic import BASE, exchange, request, write_recording

from harness.contract.bindings import (
    Binding,
    FaultCode,
    build_fault,
    build_response,
    classify,
)
from harness.contract.model import Contract
from harness.contract.xmlsafe import parse_xml
from harness.errors import ClassificationError
from harness.judge.compare import compare_responses
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse, replace_header

HARNESS = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "harness")
WSDL_NS = "http://schemas.xmlsoap.org/wsdl/"
SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"


# ------------------------------------------------------------------ implementations under test


def _call(contract: Contract, req: HttpRequest):
    try:
        return classify(contract, req)
    except ClassificationError:
        return None


def node_soap_like(contract: Contract, req: HttpRequest) -> HttpResponse:
    """What Node's ``soap`` server does by default: SOAP 1.2 answered with a SOAP 1.1
    envelope (typed application/soap+xml), no HTTP GET/POST at all (404, text/plain)."""
    call = _call(contract, req)
    if call is None:
        return answer(contract, req)
    if not call.binding.is_soap:
        return HttpResponse(404, (("Content-Type", "text/plain; charset=utf-8"),),
                            f"404: Not Found: {req.url.split('/', 3)[-1]}".encode(),
                            "Not Found")
    response = answer(contract, req)
    if call.binding is Binding.SOAP12 and response.status == 200:
        soap11 = build_response(contract, call.operation, Binding.SOAP11,
                                _result_of(contract, call.operation, response))
        return HttpResponse(200, replace_header(soap11.headers, "Content-Type",
                                                "application/soap+xml; charset=utf-8"),
                            soap11.body)
    return response


def _result_of(contract: Contract, op, response: HttpResponse) -> str | None:
    if not op.result_element:
        return None
    found = parse_xml(response.body).find(f".//{{{contract.namespace}}}{op.result_element}")
    return found.text if found is not None else None


def client_fault_for_bad_envelopes(contract: Contract, req: HttpRequest) -> HttpResponse:
    """An envelope of no SOAP version answered with a Client fault and no Upgrade header
    (where ASMX answers VersionMismatch and names the envelopes it takes)."""
    if b"urn:not-a-soap-envelope" in req.body:
        return build_fault(Binding.SOAP11, FaultCode.CLIENT, "Bad envelope")
    return answer(contract, req)


def with_trace_header(contract: Contract, req: HttpRequest) -> HttpResponse:
    """Every SOAP answer with a header block of its own before the Body (no mustUnderstand):
    both answers still have a Body."""
    response = answer(contract, req)
    if b"Envelope" not in response.body:
        return response
    envelope = parse_xml(response.body)
    header = etree.Element(f"{{{etree.QName(envelope).namespace}}}Header")
    etree.SubElement(header, "{urn:trace}Trace").text = "abc"
    envelope.insert(0, header)
    body = etree.tostring(envelope, encoding="utf-8", xml_declaration=True)
    return HttpResponse(response.status, replace_header(response.headers, "Content-Length",
                                                        str(len(body))), body)


def token_as_text_plain(value: str | None = None):
    """GetTokenDevice over HTTP GET answered as text/plain holding the value (``value``: or
    another one), as a stack without ASMX's XML document would."""
    def change(contract: Contract, op, binding: Binding, response: HttpResponse) -> HttpResponse:
        if response.status != 200:  # markup in the value refused, as ASP.NET refuses it
            return response
        text = value if value is not None else parse_xml(response.body).text
        return HttpResponse(200, (("Content-Type", "text/plain; charset=utf-8"),),
                            (text or "").encode())
    return where(Binding.HTTP_GET, "GetTokenDevice", change)


def typed_void_get(contract: Contract, op, binding: Binding,
                   response: HttpResponse) -> HttpResponse:
    """A void answer over GET typed text/xml (ASMX gives no Content-Type)."""
    return HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),
                              ("Content-Length", "0")), b"")


def migrated_wsdl(contract: Contract, req: HttpRequest) -> HttpResponse:
    """The WSDL of a migrating team's stack: no soap12 binding and port, soapActions without
    the namespace; everything else as the reference."""
    response = answer(contract, req)
    if not req.url.lower().endswith("?wsdl"):
        return response
    root = parse_xml(response.body)
    for parent, tag in ((root, "binding"), (root.find(f"{{{WSDL_NS}}}service"), "port")):
        for element in parent.findall(f"{{{WSDL_NS}}}{tag}"):
            if element.get("name", "").endswith("Soap12"):
                parent.remove(element)
    body = etree.tostring(root, encoding="utf-8", xml_declaration=True)
    body = body.replace(f'soapAction="{contract.namespace}'.encode(), b'soapAction="')
    return HttpResponse(200, response.headers, body)


# ------------------------------------------------------------------------------- helpers


@contextmanager
def serving(contract: Contract, *responders) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [stack.enter_context(running(contract, app=create_app(contract, respond=r)
                                           if r else None)) for r in responders]


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    proc = subprocess.run([HARNESS, *args, "--json", str(out)], capture_output=True, text=True,
                          timeout=300)
    return proc, json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}


def kept(report: dict[str, Any], verdict: str = "failed") -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["verdict"] == verdict]


def summaries(report: dict[str, Any], verdict: str = "failed") -> set[tuple[str, str]]:
    return {(f["rule"], f.get("summary", "")) for f in kept(report, verdict)}


# --------------------------------------------------------------------------------- diff


def test_soap12_in_a_soap11_envelope_and_missing_get_post_are_named(
        contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, node_soap_like) as (primary, candidate):
        proc, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 1
    # markup in GET/POST values: ASP.NET's (and the reference's) refusal vs a 404 is no
    # refusal of values on the candidate's side (a 404 never read them): the same cause as
    # every other call of a binding not served
    assert summaries(report) - {("CROSS-BINDING", "")} == {
        ("DIFF-BODY", "SOAP 1.2 answered with a SOAP 1.1 envelope"),
        ("DIFF-STATUS", "HTTP 404 instead of a result"),
        ("DIFF-STATUS", "HTTP status 500 expected, 404 given")}
    assert summaries(report, "warning") == set()
    assert {f["cause"] for f in kept(report) if f["rule"] == "DIFF-STATUS"} == {
        "HTTP 404: the call is not served"}
    soap12 = [f for f in kept(report) if f["binding"] == "SOAP 1.2"]
    assert {f["rule"] for f in soap12} == {"DIFF-BODY"}  # the payload itself matches
    assert len(soap12) == 8 * 3
    assert soap12[0]["path"] == "/Envelope" and soap12[0]["primary"] == \
        "SOAP 1.2 envelope (http://www.w3.org/2003/05/soap-envelope)"
    # A 404 is one failure per call, not status + Content-Type + body + reason.
    missing = [f for f in kept(report) if f["binding"] in ("HTTP GET", "HTTP POST")]
    assert {f["rule"] for f in missing} == {"DIFF-STATUS"}
    assert len(missing) == 8 * 2 * 3
    assert {f["candidate"][:26] for f in missing} == {"HTTP 404: 404: Not Found: "}
    assert report["rules"]["DIFF-BODY"]["not applicable"] == 8 * 2 * 3
    assert "missing" not in proc.stdout


def test_version_mismatch_fault_code_and_upgrade_header(contract: Contract,
                                                        tmp_path: Path) -> None:
    with serving(contract, None, client_fault_for_bad_envelopes) as (primary, candidate):
        proc, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate,
                           "--errors")
    assert proc.returncode == 1
    bad = [f for f in kept(report) if f.get("source") == "error: wrong envelope namespace"]
    assert {(f["rule"], f["summary"], f["primary"], f["candidate"]) for f in bad} == {
        ("DIFF-BODY", "faultcode VersionMismatch vs Client, Upgrade header missing",
         "soap:VersionMismatch", "soap:Client")}
    assert len(bad) == 8 * 2  # every operation, both SOAP versions
    # nothing else: both answers have a Body; the reason is prose (a warning)
    assert {f["summary"] for f in kept(report)} == {
        "faultcode VersionMismatch vs Client, Upgrade header missing"}
    assert {f["rule"] for f in kept(report, "warning")} == {"DIFF-FAULT-REASON"}
    assert "Body" not in " ".join(f["message"] for f in report["findings"])


def test_a_header_block_more_is_no_missing_body(contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, with_trace_header) as (primary, candidate):
        proc, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate)
    assert proc.returncode == 0, proc.stdout  # a header block without mustUnderstand: a warning
    assert kept(report) == []
    warned = kept(report, "warning")
    assert {(f["rule"], f["summary"], f["path"]) for f in warned} == {
        ("DIFF-BODY", "unexpected Trace header", "/Envelope/Header/Trace")}
    assert len(warned) == 8 * 2 * 3


def test_text_plain_answer_with_the_same_value_differs_in_form_only(
        contract: Contract, tmp_path: Path) -> None:
    with serving(contract, None, token_as_text_plain(), token_as_text_plain("other")) as urls:
        proc, report = run(tmp_path, "diff", "--primary", urls[0], "--candidate", urls[1],
                           "--operation", "GetTokenDevice", "--binding", "get")
        form = ("DIFF-CONTENT-TYPE", "answer form: an XML <string> document expected, a "
                "text/plain body given (the same value)")
        assert summaries(report) == {form}, report["findings"][:2]
        typed = kept(report)[0]
        assert (typed["primary"], typed["candidate"]) == ("text/xml; charset=utf-8",
                                                          "text/plain; charset=utf-8")
        assert "unreadable" not in proc.stdout and "malformed" not in proc.stdout
        proc, report = run(tmp_path, "diff", "--primary", urls[0], "--candidate", urls[2],
                           "--operation", "GetTokenDevice", "--binding", "get")
    assert ("DIFF-BODY", "value differs (an XML <string> document vs a text/plain body)") \
        in summaries(report)
    value = next(f for f in kept(report) if f["rule"] == "DIFF-BODY")
    # the token is a sensitive result: shown by its pseudonym (one face), never in clear
    assert re.fullmatch(r"redacted-[0-9a-f]{16}", value["candidate"]) and value["path"] == "/string"
    assert value["candidate"] != value["primary"]


def test_absent_content_type_is_written_one_way(contract: Contract, tmp_path: Path) -> None:
    typed = where(Binding.HTTP_GET, "AuthCode", typed_void_get)
    with serving(contract, None, typed) as (primary, candidate):
        _, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate,
                        "--operation", "AuthCode", "--binding", "get")
        assert {(f["expected"], f["actual"], f["summary"]) for f in kept(report)
                if f["rule"] == "DIFF-CONTENT-TYPE"} == {(
                    "no Content-Type", "text/xml; charset=utf-8",
                    "Content-Type text/xml; charset=utf-8 where none is expected")}
        recording = write_recording(tmp_path / "r.jsonl", [
            exchange(contract, request(contract, "AuthCode", Binding.HTTP_GET))])
        _, report = run(tmp_path, "replay", str(recording), "--target", candidate)
    assert {(f["rule"], f["expected"], f["actual"]) for f in kept(report)} == {
        ("REPLAY-CONTENT-TYPE", "no Content-Type", "text/xml; charset=utf-8")}


def _wsdl_recording(contract: Contract, path: Path) -> Path:
    fetches = [Exchange(HttpRequest("GET", f"{BASE}{endpoint}?WSDL",
                                    (("Host", "school.example:8080"),)), None)
               for endpoint in contract.endpoints]
    return write_recording(path, fetches)


def test_wsdls_are_compared_as_contracts(contract: Contract, tmp_path: Path) -> None:
    recording = _wsdl_recording(contract, tmp_path / "wsdl.jsonl")
    with serving(contract, None, migrated_wsdl) as (primary, candidate):
        proc, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate,
                           str(recording))
    assert proc.returncode == 1
    found = kept(report)
    assert {f["summary"] for f in found} == {"soapAction differs"}
    # a binding left out is a warning, as WSDL-BINDINGS weighs it (the calls show what is
    # served)
    assert {(f["summary"], f["path"]) for f in kept(report, "warning")} == {
        ("soap12 binding missing", "/definitions/soap12")}
    assert len(kept(report, "warning")) == 7
    actions = [f for f in found if f["summary"] == "soapAction differs"]
    assert len(actions) == 8  # one per operation (the soap binding; soap12 is missing)
    auth = next(f for f in actions if "AuthCode" in f["path"])
    assert (auth["primary"], auth["candidate"]) == (f"{contract.namespace}AuthCode",
                                                    "AuthCode")
    assert auth["path"] == "/definitions/soap/AuthCode/soapAction"


def test_the_same_wsdl_from_two_deployments_does_not_differ(contract: Contract,
                                                           tmp_path: Path) -> None:
    """Each WSDL names its own address: by path, they are the same contract."""
    recording = _wsdl_recording(contract, tmp_path / "wsdl.jsonl")
    with serving(contract, None, None) as (primary, candidate):
        with httpx.Client() as http:
            one = http.get(f"{primary}/AuthCodeSending.asmx?WSDL")
            two = http.get(f"{candidate}/AuthCodeSending.asmx?WSDL")
        assert one.content != two.content  # the addresses differ
        assert compare_responses(*(HttpResponse(r.status_code, tuple(r.headers.items()),
                                                r.content) for r in (one, two))) == []
        proc, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate,
                           str(recording))
    assert proc.returncode == 0 and report["findings"] == []


# ------------------------------------------------------------------------------- replay


def test_unreadable_recorded_body_is_pinned_on_the_recording(contract: Contract,
                                                           tmp_path: Path) -> None:
    recorded = exchange(contract, request(contract, "GetTokenDevice", Binding.SOAP11))
    assert recorded.response is not None
    truncated = HttpResponse(200, recorded.response.headers, recorded.response.body[:-20])
    recording = write_recording(tmp_path / "r.jsonl", [Exchange(recorded.request, truncated)])
    with serving(contract, None) as (target,):
        _, report = run(tmp_path, "replay", str(recording), "--target", target)
    (body,) = [f for f in kept(report) if f["rule"] == "REPLAY-BODY"]
    assert body["summary"] == "the expected answer is not well-formed XML"
    assert "malformed XML" in body["expected"] and "malformed XML" not in body["actual"]


def test_unreadable_new_body_is_pinned_on_the_new_answer(contract: Contract,
                                                        tmp_path: Path) -> None:
    def truncated(contract: Contract, op, binding, response: HttpResponse) -> HttpResponse:
        return HttpResponse(200, response.headers, response.body[:-20])

    recording = write_recording(tmp_path / "r.jsonl", [
        exchange(contract, request(contract, "GetTokenDevice", Binding.SOAP11))])
    with serving(contract, where(Binding.SOAP11, "GetTokenDevice", truncated)) as (target,):
        _, report = run(tmp_path, "replay", str(recording), "--target", target)
    (body,) = [f for f in kept(report) if f["rule"] == "REPLAY-BODY"]
    assert body["summary"] == "the answer is not well-formed XML"
    assert "malformed XML" in body["actual"] and "malformed XML" not in body["expected"]


def test_fault_where_the_recording_succeeded_is_one_failure_with_its_cause(
        contract: Contract, tmp_path: Path) -> None:
    def fault(contract: Contract, op, binding: Binding, response: HttpResponse) -> HttpResponse:
        return build_fault(binding, FaultCode.SERVER,
                           "Object reference not set to an instance of an object.\n   at X()")

    recording = write_recording(tmp_path / "r.jsonl", [
        exchange(contract, request(contract, "GetTokenDevice", Binding.SOAP12))])
    with serving(contract, where(Binding.SOAP12, "GetTokenDevice", fault)) as (target,):
        proc, report = run(tmp_path, "replay", str(recording), "--target", target)
    assert proc.returncode == 1
    assert [(f["rule"], f["actual"]) for f in kept(report)] == [
        ("R4-STATUS", "HTTP 500: Receiver fault: Object reference not set to an instance of "
                      "an object.")]
    assert report["rules"]["REPLAY-BODY"] == {"not applicable": 1}
    assert "(client " not in proc.stdout  # the server's doing, whoever sent the request


def test_lint_names_the_client_on_request_findings_only(contract: Contract,
                                                       tmp_path: Path) -> None:
    good = exchange(contract, request(contract, "GetTokenDevice", Binding.SOAP11,
                                      client="Zeep/4.3.1"))
    assert good.response is not None
    no_charset = good.request.with_header("Content-Type", "text/xml")
    wrong_answer = HttpResponse(200, replace_header(good.response.headers, "Content-Type",
                                                    "text/html"), good.response.body)
    recording = write_recording(tmp_path / "r.jsonl", [Exchange(no_charset, wrong_answer)])
    proc, report = run(tmp_path, "lint", str(recording))
    by_rule = {f["rule"]: f for f in kept(report) + kept(report, "warning")}
    assert by_rule["R7-SOAP-CONTENT-TYPE"].get("client") is None
    request_side = [f for f in by_rule.values() if f.get("client")]
    assert request_side and all(f["client"] == "Zeep/4.3.1" for f in request_side)
    response_line = next(line for line in proc.stdout.splitlines()
                         if "[R7-SOAP-CONTENT-TYPE]" in line)
    assert "(client" not in response_line


@pytest.mark.parametrize("order", ["same", "reordered"])
def test_same_named_siblings_compare_in_order(order: str) -> None:
    """Arrays: the n-th item against the n-th item of that name; other names by name."""
    def doc(*items: str, extra_first: bool = False) -> HttpResponse:
        note = "<Note>n</Note>"
        body = ("<ArrayOfItem xmlns='urn:x'>" + (note if extra_first else "")
                + "".join(f"<Item>{i}</Item>" for i in items)
                + ("" if extra_first else note) + "</ArrayOfItem>")
        return HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),), body.encode())

    found = compare_responses(doc("a", "b"), doc("a", "c", extra_first=order == "reordered"))
    assert [(d.kind, d.path, d.expected, d.actual) for d in found if d.kind != "order"] == [
        ("text", "/ArrayOfItem/Item", "b", "c")]
    assert [d.summary for d in found if d.kind == "order"] == (
        ["elements of the result in another order"]
        if order == "reordered" else [])


def test_text_plain_value_is_the_same_result_over_every_binding(contract: Contract,
                                                               tmp_path: Path) -> None:
    """CROSS-BINDING reads a text/plain GET answer by its value, not as unreadable."""
    with serving(contract, None, token_as_text_plain()) as (primary, candidate):
        _, report = run(tmp_path, "diff", "--primary", primary, "--candidate", candidate,
                        "--operation", "GetTokenDevice")
    assert [f for f in report["findings"] if f["rule"] == "CROSS-BINDING"] == []
    assert report["rules"]["CROSS-BINDING"] == {"passed": 2}  # primary and candidate
