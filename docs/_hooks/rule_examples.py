"""One example of a failure for every rule, made when the site is built by the harness's own
checks: a well-formed call of the embedded reference (``harness.reference.app.answer``, a pure
function) is broken in one place and judged as the commands judge it. The finding shown is
the one the check gives, so an example cannot drift from the code; an example that no longer
fails its rule fails the build.

A new rule needs an example here (the build names the rules without one); a new simple type
gets its ``R9-<TYPE>`` example by itself.
"""

from __future__ import annotations

import re
import socket
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from harness.contract import model
from harness.contract.bindings import Binding, FaultCode, build_fault, build_request, build_response
from harness.contract.model import Contract, ParamType, sample_arguments
from harness.contract.xmlsafe import local_name, parse_xml
from harness.diff.consistency import RULE as CROSS_BINDING
from harness.errors import HarnessError, ResponseTooLarge, TargetUnreachable
from harness.judge import asmx_matrix, odd_requests, rules, wsdl_rules
from harness.judge.findings import Finding, Verdict
from harness.probe import checks as probe
from harness.probe.cases import CANARY, ProbeCase
from harness.reference.app import answer
from harness.traffic.defaults import RESPONSE_SIZE_RULE, TRANSPORT_RULE
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse, replace_header

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://staging.example/School"


@dataclass(frozen=True)
class Example:
    what: str  # the broken input, in words
    findings: Callable[[], Iterable[Finding]]


class NoExample(Exception):
    """A rule without an example, or one whose example no longer fails it."""


# ---------------------------------------------------------------------------- building blocks


@cache
def school() -> Contract:
    return model.school_mobile()


@cache
def orders() -> Contract:
    """The contract of tests/services/orders (arrays and complex types, as ASMX publishes them)."""
    return model.load(ROOT / "tests/services/orders/contract.json")


def call(name: str, binding: Binding, contract: Contract | None = None,
         arguments: dict | None = None, base: str = BASE) -> Exchange:
    """The operation's well-formed call over ``binding`` and the reference's answer to it."""
    contract = contract or school()
    op = contract.operation(name)
    request = build_request(contract, op, arguments or sample_arguments(op), binding, base)
    return Exchange(request, answer(contract, request))


def body(message, old: bytes, new: bytes):
    """``message`` (request or response) with every ``old`` replaced in its body, its length
    kept true."""
    if old not in message.body:
        raise NoExample(f"{old!r} is not in the body any more")
    changed = message.body.replace(old, new)
    headers = replace_header(message.headers, "Content-Length", str(len(changed)))
    return replace(message, headers=headers, body=changed)


def judged(exchange: Exchange, contract: Contract | None = None, **options) -> list[Finding]:
    return rules.judge(exchange, contract or school(), **options)


def request_only(request: HttpRequest, **options) -> list[Finding]:
    return judged(Exchange(request, None), sides=[rules.Side.REQUEST], **options)


def response(name: str, binding: Binding, change: Callable[[HttpResponse], HttpResponse],
             contract: Contract | None = None) -> list[Finding]:
    ex = call(name, binding, contract)
    return judged(Exchange(ex.request, change(ex.response)), contract)


def header(name: str, value: str | None) -> Callable[[HttpResponse], HttpResponse]:
    return lambda r: replace(r, headers=replace_header(r.headers, name, value))


# ------------------------------------------------------------------------- the binding rules


def _typed_example(kind: ParamType) -> Example:
    """A value its type's lexical check refuses, sent over SOAP 1.1 to an operation of one
    parameter of that type (an enumeration's members: Red, Green)."""
    values = ("Red", "Green") if kind is ParamType.ENUM else ()
    candidates = ("not a value", "***", "Blue", "1e99999", "2024-02-30", "-1", "")
    text = next(t for t in candidates if not kind.lexical(t, values))
    op = {"name": "Echo", "endpoint": "/Types.asmx", "result": None,
          "parameters": [{"name": "value", "type": kind.value,
                          **({"type_name": "Color", "values": list(values)} if values else {})}]}
    contract = model.from_dict({"format": 1, "name": "Types", "namespace": "http://tempuri.org/",
                                "operations": [op]})
    return Example(f"`{text}` sent over SOAP 1.1 for a parameter of type {kind.value}",
                   lambda: judged(call("Echo", Binding.SOAP11, contract, {"value": text}),
                                  contract))


def _complex_request() -> list[Finding]:
    args = sample_arguments(orders().operation("SaveOrder"))
    args["order"]["Lines"][0]["Quantity"] = "three"
    return judged(call("SaveOrder", Binding.SOAP11, orders(), args), orders())


def _structure() -> list[Finding]:
    op = orders().operation("ListProducts")
    result = model.reference_result(op, {"category": "x"})
    result[0]["Price"] = "cheap"
    request = build_request(orders(), op, {"category": "x"}, Binding.SOAP11, BASE)
    return judged(Exchange(request, build_response(orders(), op, Binding.SOAP11, result)),
                  orders())


def _markup_refused() -> list[Finding]:
    refused = call("SendMarkNotes", Binding.HTTP_GET, arguments=sample_arguments(
        school().operation("SendMarkNotes"), 2))
    return judged(refused, control=call("SendMarkNotes", Binding.HTTP_GET))


def _leak() -> list[Finding]:
    trace = (b"System.FormatException: Input string was not in a correct format.\n"
             b"   at System.Number.ParseInt32(String s)\n"
             b"   at School.CenterlogOut.LogoutFromSchool(String PhoneNumber) in "
             b"C:\\inetpub\\School\\App_Code\\CenterlogOut.cs:line 42")
    error = HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),), trace)
    return response("LogoutFromSchool", Binding.HTTP_GET, lambda r: error)


def _soap11(name: str = "AuthCode") -> HttpRequest:
    return call(name, Binding.SOAP11).request


CATALOGUE: dict[str, Example] = {
    "BIND-METHOD-PATH": Example(
        "a form POST of AuthCode sent as PUT",
        lambda: request_only(replace(call("AuthCode", Binding.HTTP_GET).request, method="PUT"))),
    "BIND-REQUEST-CONTENT-TYPE": Example(
        "a SOAP 1.1 call sent as `application/json`",
        lambda: request_only(_soap11().with_header("Content-Type", "application/json"))),
    "BIND-ENVELOPE": Example(
        "a SOAP 1.1 call whose envelope has another namespace",
        lambda: request_only(body(_soap11(), b"http://schemas.xmlsoap.org/soap/envelope/",
                                  b"http://example.org/not-soap/"))),
    "BIND-OPERATION-ELEMENT": Example(
        "a SOAP 1.1 call whose operation element is in another namespace",
        lambda: request_only(body(_soap11(), b'<AuthCode xmlns="http://tempuri.org/"',
                                  b'<AuthCode xmlns="urn:other"'))),
    "R1-SOAPACTION": Example(
        "an unquoted SOAPAction (a warning under `--profile asmx`)",
        lambda: request_only(_soap11().with_header("SOAPAction", "http://tempuri.org/AuthCode"))),
    "R2-NO-SOAPACTION": Example(
        "a SOAP 1.2 call with a SOAPAction header (zeep sends one)",
        lambda: request_only(call("AuthCode", Binding.SOAP12).request.with_header(
            "SOAPAction", '"http://tempuri.org/AuthCode"'))),
    "R3-LENGTH-HOST": Example(
        "a form POST whose Content-Length is not its body's",
        lambda: request_only(call("AuthCode", Binding.HTTP_POST).request.with_header(
            "Content-Length", "3"))),
    "R4-STATUS": Example(
        "SendMarkNotes not served over HTTP GET (404)",
        lambda: response("SendMarkNotes", Binding.HTTP_GET, lambda r: HttpResponse(
            404, (("Content-Type", "text/html"),), b"The resource cannot be found."))),
    "R5-ENVELOPE": Example(
        "a SOAP 1.2 call answered in a SOAP 1.1 envelope",
        lambda: response("LogoutFromSchool", Binding.SOAP12, lambda r: body(
            r, b"http://www.w3.org/2003/05/soap-envelope",
            b"http://schemas.xmlsoap.org/soap/envelope/"))),
    "R5-RESPONSE-ELEMENT": Example(
        "the response element misnamed",
        lambda: response("AuthCode", Binding.SOAP11, lambda r: body(
            r, b"AuthCodeResponse", b"AuthCodeResult"))),
    "R6-EMPTY-RESPONSE": Example(
        "a void operation's response element not empty",
        lambda: response("SendMarkNotes", Binding.SOAP12, lambda r: body(
            r, b' xmlns="http://tempuri.org/"/>',
            b' xmlns="http://tempuri.org/"><Extra/></SendMarkNotesResponse>'))),
    "R7-SOAP-CONTENT-TYPE": Example(
        "a SOAP 1.1 answer without charset",
        lambda: response("AuthCode", Binding.SOAP11, header("Content-Type", "text/xml"))),
    "R8-HTTP-EMPTY-BODY": Example(
        "a void operation answering HTTP GET with a body",
        lambda: response("AuthCode", Binding.HTTP_GET, lambda r: HttpResponse(
            200, (("Content-Type", "text/xml"),), b"<ok/>"))),
    "R9-PARAMETERS": Example(
        "a GET parameter spelled with another case (`Phone` for `phone`)",
        lambda: request_only(replace(call("AuthCode", Binding.HTTP_GET).request, url=call(
            "AuthCode", Binding.HTTP_GET).request.url.replace("phone=", "Phone=")))),
    "R9-COMPLEX": Example("an order line whose quantity is `three` (tests/services/orders)",
                          _complex_request),
    "GAP-VALUES": Example(
        "markup in a GET value refused (as ASP.NET does) while plain values succeed: a "
        "warning", _markup_refused),
    "OP-ENDPOINT": Example(
        "SendMarkNotes called at another endpoint",
        lambda: judged(Exchange(replace(call("SendMarkNotes", Binding.HTTP_GET).request,
                                        url=call("SendMarkNotes", Binding.HTTP_GET).request.url
                                        .replace("/NotificationNotes.asmx/",
                                                 "/CenterlogOut.asmx/")), None))),
    "OP-RESULT": Example(
        "GetTokenDevice's result element misnamed",
        lambda: response("GetTokenDevice", Binding.SOAP11, lambda r: body(
            r, b"GetTokenDeviceResult", b"Result"))),
    "OP-RESULT-STRUCTURE": Example("a product's price `cheap` (tests/services/orders)",
                                   _structure),
    "V1-VERSION-BY-CONTENT-TYPE": Example(
        "a SOAP 1.2 call answered in SOAP 1.1",
        lambda: response("AuthCode", Binding.SOAP12, lambda r: call(
            "AuthCode", Binding.SOAP11).response)),
    "V2-NO-VERSION-SEGMENT": Example(
        "the service deployed under `/api/v1`",
        lambda: judged(call("AuthCode", Binding.SOAP12, base=f"{BASE}/api/v1"))),
    "SEC-LEAK": Example("an error answer carrying a stack trace (a warning but in probe)", _leak),
    rules.UNCLASSIFIED: Example(
        "a call of an endpoint the contract does not have",
        lambda: judged(Exchange(HttpRequest("GET", f"{BASE}/Nowhere.asmx/AuthCode",
                                            (("Host", "staging.example"),)), None))),
}
for _rule in rules.TYPED_RULES:
    _kind = next(k for k in ParamType if k.rule_id == _rule.id)
    if _kind.is_simple:
        CATALOGUE.setdefault(_rule.id, _typed_example(_kind))


# ---------------------------------------------------------------------------- the WSDL rules


def _wsdl(change: Callable[[bytes], bytes]) -> Callable[[], list[Finding]]:
    from harness.contract.wsdl_import import describe
    from harness.reference.wsdl import wsdl_document

    def findings() -> list[Finding]:
        endpoint = "/PushNotificationMobile.asmx"
        document = wsdl_document(school(), endpoint, f"{BASE}{endpoint}")
        changed = change(document)
        if changed == document:
            raise NoExample("the WSDL change changed nothing")
        with warnings.catch_warnings():  # zeep's own about parts of the changed document
            warnings.simplefilter("ignore")
            described = describe(f"{BASE}{endpoint}?WSDL", changed)
        return wsdl_rules.judge_endpoint(school(), endpoint, described)
    return findings


def _drop_binding(document: bytes) -> bytes:
    """The HttpPost binding and its port left out, as ASMX does with the protocol removed."""
    from lxml import etree

    root = parse_xml(document)
    for element in list(root.iter()):
        if local_name(element) in ("binding", "port") and "HttpPost" in (
                element.get("name") or ""):
            element.getparent().remove(element)
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def _unpublished() -> list[Finding]:
    """?WSDL answered as hardened ASP.NET answers it: customErrors' HTML page, status 500."""
    endpoint = "/PushNotificationMobile.asmx"
    page = HttpResponse(500, (("Content-Type", "text/html"),),
                        b"<html><head><title>Runtime Error</title></head></html>")
    return wsdl_rules.judge_answer(school(), endpoint, page, f"{BASE}{endpoint}?WSDL")


WSDL: dict[str, Example] = {
    "WSDL-PUBLISHED": Example("?WSDL answered with an HTML error page (the Documentation "
                              "protocol removed, as production deployments do)", _unpublished),
    "WSDL-DOCUMENT": Example("a WSDL of another target namespace", _wsdl(
        lambda d: d.replace(b"http://tempuri.org/", b"http://example.org/other/"))),
    "WSDL-OPERATIONS": Example("GetTokenDevice renamed in the WSDL", _wsdl(
        lambda d: d.replace(b"GetTokenDevice", b"GetDeviceToken"))),
    "WSDL-PARAMETERS": Example("GetTokenDevice's parameter `id` renamed `deviceId`", _wsdl(
        lambda d: d.replace(b'name="id"', b'name="deviceId"'))),
    "WSDL-TYPES": Example("GetTokenDevice's `id` published as an int", _wsdl(
        lambda d: d.replace(b'name="id" type="s:string"', b'name="id" type="s:int"'))),
    "WSDL-RESULT": Example("GetTokenDevice's result published as an int", _wsdl(
        lambda d: d.replace(b'name="GetTokenDeviceResult" type="s:string"',
                            b'name="GetTokenDeviceResult" type="s:int"'))),
    "WSDL-BINDINGS": Example("the HttpPost binding removed (a protocol off in web.config)",
                             _wsdl(_drop_binding)),
    "WSDL-SOAPACTION": Example("a SOAPAction with two slashes", _wsdl(
        lambda d: d.replace(b'soapAction="http://tempuri.org/GetTokenDevice"',
                            b'soapAction="http://tempuri.org//GetTokenDevice"'))),
    "WSDL-ADDRESS": Example("ports addressed at another endpoint", _wsdl(
        lambda d: d.replace(b"/PushNotificationMobile.asmx\"", b"/Other.asmx\""))),
}


# ------------------------------------------------------- the requests the spec does not describe


def _odd(name: str, binding: Binding, kind: str,
         change: Callable[[HttpResponse], HttpResponse]) -> Callable[[], list[Finding]]:
    """The odd request ``kind`` answered by the reference, then ``change``d, judged."""
    def findings() -> list[Finding]:
        contract = school()
        odd = odd_requests.odd_request(contract, contract.find(name), binding, kind, BASE)
        assert odd is not None  # School Mobile has another operation for every kind
        return [odd_requests.judge(odd, change(answer(contract, odd.request)))]
    return findings


def _bare_get() -> list[Finding]:
    odd = odd_requests.bare_get(school(), "/AuthCodeSending.asmx", BASE)
    return [odd_requests.judge(odd, HttpResponse(200, (), b""))]


def _routed_by_body(response: HttpResponse) -> HttpResponse:
    """The answer of a stack that ignores the SOAPAction: the body's operation answers."""
    contract = school()
    op = contract.find("AuthCode")
    return answer(contract, build_request(contract, op, sample_arguments(op), Binding.SOAP11,
                                          BASE))


ODD: dict[str, Example] = {
    "ODD-SOAPACTION": Example("AuthCode with `SOAPAction: \"http://tempuri.org/NoSuchOperation\"` "
                              "answered as if it named AuthCode (the SOAPAction ignored)",
                              _odd("AuthCode", Binding.SOAP11, "a wrong SOAPAction",
                                   _routed_by_body)),
    "ODD-EXTRA-ELEMENT": Example("an unknown element in GetTokenDevice refused with a Client "
                                 "fault", _odd("GetTokenDevice", Binding.SOAP11,
                                               "an unknown extra element",
                                               lambda r: build_fault(Binding.SOAP11,
                                                                     FaultCode.CLIENT, "x"))),
    "ODD-CHARSET": Example("text/xml without charset answered `Content-Type: text/xml`",
                           _odd("GetTokenDevice", Binding.SOAP11, "text/xml without charset",
                                header("Content-Type", "text/xml"))),
    "ODD-BARE-GET": Example("`GET /AuthCodeSending.asmx` answered 200 with an empty body",
                            _bare_get),
}


def _matrix(row_id: str, name: str,
            odd: Callable[[Contract, HttpRequest], HttpResponse]) -> Callable[[], list[Finding]]:
    """The ASMX matrix's row ``row_id`` for operation ``name``, answered by ``odd`` (the
    reference's own spec calls to compare with), judged."""
    def findings() -> list[Finding]:
        contract = school()
        row = next(r for r in asmx_matrix.matrix().rows if r.id == row_id)
        mreq = asmx_matrix.build(contract, contract.find(name), row, BASE)
        assert mreq is not None and mreq.plain is not None
        control = answer(contract, mreq.control) if mreq.control is not None else None
        return [asmx_matrix.judge(mreq, asmx_matrix.Answers(
            odd(contract, mreq.request), control, answer(contract, mreq.plain)))]
    return findings


def _names_exact(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A stack matching GET field names exactly: a name in another case is no value."""
    url = re.sub(r"\?[^=]+=", "?id=", request.url).replace("=A10", "=")
    return answer(contract, replace(request, url=url))


def _soap_any_type(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A stack that reads a SOAP body whatever its Content-Type."""
    return answer(contract, request.with_header("Content-Type", "text/xml; charset=utf-8"))


def _latin1_as_utf8(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A stack that reads the body as UTF-8 and labels its answer with the request's charset."""
    body = request.body.decode("utf-8", errors="replace").encode("utf-8")
    response = answer(contract, replace(request, body=body).with_header(
        "Content-Type", "text/xml; charset=utf-8"))
    return replace_response_type(response, "text/xml; charset=iso-8859-1")


def replace_response_type(response: HttpResponse, content_type: str) -> HttpResponse:
    return HttpResponse(response.status, replace_header(response.headers, "Content-Type",
                                                        content_type), response.body)


def _refuse(status: int) -> Callable[[Contract, HttpRequest], HttpResponse]:
    return lambda contract, request: HttpResponse(status, (("Content-Type", "text/plain"),),
                                                  b"refused")


MATRIX: dict[str, Example] = {
    "ODD-CONTENT-TYPE": Example("a SOAP 1.1 call typed `application/xml` answered as usual "
                                "(ASMX: 415)", _matrix("soap11-application-xml",
                                                       "GetTokenDevice", _soap_any_type)),
    "ODD-ENCODING": Example("a body in ISO-8859-1 read as UTF-8, the answer labelled "
                            "`charset=iso-8859-1`", _matrix("soap11-iso-8859-1",
                                                            "GetTokenDevice", _latin1_as_utf8)),
    "ODD-NAMES": Example("`?ID=A10` answered as `?id=` (the value dropped)",
                         _matrix("get-names-case", "GetTokenDevice", _names_exact)),
    "ODD-DUPLICATES": Example("`?id=A10&id=A10b` refused with 400 (ASMX joins the values)",
                              _matrix("get-duplicated", "GetTokenDevice", _refuse(400))),
    "ODD-METHOD": Example("`HEAD /PushNotificationMobile.asmx` answered 200",
                          _matrix("soap11-head", "GetTokenDevice",
                                  lambda c, r: HttpResponse(200, (), b""))),
    "ODD-ENVELOPE": Example("an unknown header with `mustUnderstand=\"1\"` answered as usual "
                            "(ASMX: a MustUnderstand fault)",
                            _matrix("soap11-must-understand", "GetTokenDevice",
                                    lambda c, r: answer(c, replace(r, body=re.sub(
                                        rb"<soap:Header>.*</soap:Header>", b"", r.body))))),
    "ODD-VALUES": Example("an unknown extra field refused with 400 (ASMX ignores it)",
                          _matrix("get-extra-parameter", "GetTokenDevice", _refuse(400))),
}


# ------------------------------------------------------------- sending, replay, diff, probe


def _closed_port() -> str:
    """A loopback address nothing listens on (a port just freed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _unreachable(exchange: Exchange) -> TargetUnreachable:
    """What the one sending path raises for a request nobody answers."""
    from harness.traffic.send import Sender, SendOptions, retarget

    with Sender(SendOptions(timeout=5)) as sender:
        try:
            sender.send(retarget(exchange.request, _closed_port()))
        except TargetUnreachable as exc:
            return exc
    raise NoExample("a closed port answered")


def _too_large(exchange: Exchange) -> ResponseTooLarge:
    """What the one sending path raises for an answer over the cap (here 0.0001 MB)."""
    from harness.reference.server import running
    from harness.traffic.send import Sender, SendOptions, retarget

    with running(school()) as url, Sender(SendOptions(max_response_mb=0.0001)) as s:
        try:
            s.send(retarget(exchange.request, url))
        except ResponseTooLarge as exc:
            return exc
    raise NoExample("the reference's answer fit in 0.0001 MB")


def _sending(kind: str) -> list[Finding]:
    from harness.judge.sending import size_finding, transport_finding

    ex = call("GetTokenDevice", Binding.SOAP11)
    if kind == "size":
        return [size_finding(_too_large(ex), "GetTokenDevice", "SOAP 1.1")]
    return [transport_finding(_unreachable(ex), "GetTokenDevice", "SOAP 1.1")]


SENDING: dict[str, Example] = {
    TRANSPORT_RULE: Example("a target that does not answer (a closed port)",
                            lambda: _sending("transport")),
    RESPONSE_SIZE_RULE: Example("an answer larger than `--max-response-mb 0.0001` (104 bytes)",
                                lambda: _sending("size")),
}


def _replayed(name: str, binding: Binding,
              change: Callable[[HttpResponse], HttpResponse]) -> list[Finding]:
    from harness.replay.engine import check_replayed

    recorded = call(name, binding)
    return check_replayed(recorded, change(recorded.response), school()).findings


def _replay_refusal_now_served() -> list[Finding]:
    from harness.replay.engine import check_replayed

    refused = _soap11().with_header("Content-Type", "application/soap+xml; charset=utf-8")
    recorded = Exchange(refused, answer(school(), refused))
    if recorded.response.status != 415:
        raise NoExample(f"the reference answers it {recorded.response.status}, not 415")
    return check_replayed(recorded, call("AuthCode", Binding.SOAP11).response,
                          school()).findings


def _replay_without_key() -> list[Finding]:
    """A redacted recording (capture's Redactor) replayed without its key."""
    from harness.replay.engine import check_replayed
    from harness.traffic.redaction import Redactor

    recorded = call("GetTokenDevice", Binding.HTTP_GET)
    redacted = Redactor.for_contract(school(), b"k" * 32).exchange(
        Exchange(recorded.request, recorded.response, meta={"operation": "GetTokenDevice"}))
    return check_replayed(redacted, recorded.response, school(), key=None).findings


def _replay_unanswered() -> list[Finding]:
    from harness.replay.engine import transport_failure

    recorded = call("AuthCode", Binding.HTTP_POST)
    return [transport_failure(recorded, _unreachable(recorded), school())]


REPLAY: dict[str, Example] = {
    "REPLAY-STATUS": Example(
        "a recorded 415 (SOAP 1.1 sent as `application/soap+xml`) answered now with 200",
        _replay_refusal_now_served),
    "REPLAY-CONTENT-TYPE": Example(
        "the recorded `text/xml; charset=utf-8` answered now as `text/plain`",
        lambda: _replayed("GetTokenDevice", Binding.HTTP_GET,
                          header("Content-Type", "text/plain; charset=utf-8"))),
    "REPLAY-BODY": Example(
        "GetTokenDevice's result changed", lambda: _replayed(
            "GetTokenDevice", Binding.SOAP12,
            lambda r: body(r, b"<GetTokenDeviceResult>", b"<GetTokenDeviceResult>0"))),
    "REPLAY-TRANSPORT": Example("a target that does not answer (a closed port)",
                                _replay_unanswered),
    "REPLAY-REDACTED": Example(
        "a redacted recording replayed without its key (GetTokenDevice's result not compared)",
        _replay_without_key),
}


def _candidate(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A candidate that differs from the reference in one place per diff rule."""
    from harness.contract.bindings import classify

    response = answer(contract, request)
    try:
        op, binding = (lambda c: (c.operation.name, c.binding))(classify(contract, request))
    except HarnessError:
        return _reworded(response)
    if (op, binding) == ("GetTokenDevice", Binding.SOAP11) and response.status == 200:
        return body(response, b"<GetTokenDeviceResult>", b"<GetTokenDeviceResult>0")
    if (op, binding) == ("AuthCode", Binding.SOAP12):
        return replace(response, status=500)
    if (op, binding) == ("GetTokenDevice", Binding.HTTP_POST):
        return header("Content-Type", "text/plain; charset=utf-8")(response)
    return _reworded(response)


def _reworded(response: HttpResponse) -> HttpResponse:
    """A fault's reason in the candidate's own words."""
    changed = re.sub(rb"(<(?:\w+:)?(?:faultstring|Text)\b[^>]*>)[^<]+",
                     rb"\1The candidate words it otherwise", response.body)
    return response if changed == response.body else body(response, response.body, changed)


@cache
def _diff(inconsistent_primary: bool = False) -> list[dict]:
    """A real Diff of the reference (or, ``inconsistent_primary``, of the candidate itself as
    its primary) against the candidate."""
    from harness.diff import Diff, Targets, generated_cases
    from harness.reference.app import create_app
    from harness.reference.server import running

    with running(app=create_app(school(), respond=_candidate)) if inconsistent_primary \
            else running(school()) as primary, \
            running(app=create_app(school(), respond=_candidate)) as candidate:
        result = Diff(school(), Targets(primary, candidate), jobs=4).run(
            generated_cases(school(), errors=True))
    return [data for verdict in (Verdict.FAILED, Verdict.WARNING)
            for data in result.report.kept(verdict)]


DIFF: dict[str, Example] = {
    "DIFF-STATUS": Example("the candidate answers AuthCode over SOAP 1.2 with status 500",
                           _diff),
    "DIFF-CONTENT-TYPE": Example(
        "the candidate types GetTokenDevice's HTTP POST result `text/plain`", _diff),
    "DIFF-BODY": Example("the candidate's GetTokenDevice result differs over SOAP 1.1", _diff),
    "DIFF-FAULT-REASON": Example("the candidate words its faults otherwise (`--errors`)", _diff),
    CROSS_BINDING: Example("the candidate fails AuthCode over SOAP 1.2 and succeeds over the "
                           "other bindings, as the primary does (inherited: a warning; where "
                           "the primary succeeds, the difference from it is the one failure, "
                           "DIFF-STATUS, and this check is not applicable)", lambda: _diff(True)),
}


def _shadow() -> list[Finding]:
    """What shadow makes of a call that found its mirror queue full (``--queue 1000``)."""
    from harness.diff.cases import case_of
    from harness.shadow.worker import not_compared, queue_full

    case = case_of(school(), call("GetTokenDevice", Binding.SOAP11).request, 0)
    return [not_compared(case, queue_full(1000), 1512, "shadow.jsonl")]


SHADOW: dict[str, Example] = {
    "SHADOW-COMPARED": Example("a call arrives while 1,000 calls wait for the mirror",
                               _shadow),
}


def _probe(rule: str, case_name: str, make_answer: Callable[[ProbeCase], probe.Answer],
           bound: float = 5.0) -> list[Finding]:
    """The probe's check of ``rule`` on one of its real cases and a broken answer, as the
    probe reports it (the case named in actual, its description the message)."""
    from harness.probe.attacks import malformed_envelopes, xml_attacks
    from harness.probe.values import Generated, value_case

    cases = [*xml_attacks(school(), BASE), *malformed_envelopes(school(), BASE)]
    op = school().operation("LogoutFromSchool")
    cases.append(value_case(school(), op, Binding.HTTP_GET, op.parameter("id_row_central"),
                            Generated("value", "2147483648"), BASE))
    case = next((c for c in cases if c.name == case_name), None)
    if case is None:
        raise NoExample(f"the probe has no case {case_name} any more")
    check = next(r.check for r in probe.PROBE_RULES if r.id == rule)
    outcome = check(case, make_answer(case), bound)
    return [Finding(rule, outcome.verdict, case.operation.name, case.binding.label,
                    expected=outcome.expected, actual=f"{case.name}: {outcome.actual}",
                    message=case.what)]


def _answered(response: HttpResponse, seconds: float = 0.05) -> Callable[..., probe.Answer]:
    return lambda case: probe.Answer(response, seconds)


_OK = HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),), b"<ok/>")
PROBE: dict[str, Example] = {
    "SEC-ENTITY": Example("the canary of an internal entity comes back expanded", lambda: _probe(
        "SEC-ENTITY", "xml/internal-entity/parameter", _answered(HttpResponse(
            200, (("Content-Type", "text/xml; charset=utf-8"),),
            f"<r>token for {CANARY}</r>".encode())))),
    "SEC-LEAK": Example("a malformed envelope answered with a stack trace", lambda: _probe(
        "SEC-LEAK", "envelope/truncated", _answered(HttpResponse(
            500, (("Content-Type", "text/plain"),),
            b"System.Xml.XmlException: Unexpected end of file.\n   at System.Xml.XmlTextReaderImpl"
            b".Throw(Exception e)\n   at School.Service.Read() in D:\\src\\School\\Service.cs"
            b":line 17")))),
    "ROB-NO-CRASH": Example("the connection reset where an answer is due", lambda: _probe(
        "ROB-NO-CRASH", "envelope/truncated", lambda case: probe.Answer(
            None, 0.01, error="connection reset by peer"))),
    "ROB-TIME": Example("a billion-laughs document answered after 7 s", lambda: _probe(
        "ROB-TIME", "xml/billion-laughs/parameter", _answered(HttpResponse(400), 7.2))),
    "ROB-FAULT-SHAPE": Example("a truncated envelope answered as a success", lambda: _probe(
        "ROB-FAULT-SHAPE", "envelope/truncated", _answered(_OK))),
    "ROB-REJECT": Example("an int one past Int32's bound accepted over HTTP GET", lambda: _probe(
        "ROB-REJECT", "value/id_row_central/value", _answered(HttpResponse(200)))),
}


# ----------------------------------------------------------------------------------- finding


def _fields(finding: Finding | dict) -> dict:
    return finding if isinstance(finding, dict) else finding.to_dict()


def finding_for(rule: str, example: Example) -> dict:
    """The first failure (or warning) of ``rule`` that ``example`` gives, as a dict."""
    for finding in map(_fields, example.findings()):
        if finding["rule"] == rule and finding["verdict"] in (Verdict.FAILED, Verdict.WARNING):
            return finding
    raise NoExample(f"{rule}: the example ({example.what}) does not fail it any more")


def line(finding: dict) -> str:
    """The finding as the console names it: rule, where, expected and actual, why."""
    where = f"{finding.get('operation') or '(unclassified)'} x {finding.get('binding') or '-'}"
    if not finding.get("operation") and finding.get("source"):
        where = finding["source"]
    text = (f"[{finding['rule']}] {where}: expected {finding.get('expected', '')}, "
            f"actual {finding.get('actual', '')}")
    message = finding.get("message")
    if message and "expected " not in message:
        text += f" ({message})"
    return text + ("" if finding["verdict"] == Verdict.FAILED else
                   f"   <- {finding['verdict']}")


def examples_of(wanted: Iterable[str], examples: dict[str, Example]
                ) -> list[tuple[str, str, str]]:
    """(rule, the input in words, the finding's line) for each wanted rule, in order;
    NoExample names the rules without one."""
    wanted = list(wanted)
    missing = [rule for rule in wanted if rule not in examples]
    if missing:
        raise NoExample(f"no example for {', '.join(missing)} (add one in "
                        "docs/_hooks/rule_examples.py)")
    return [(rule, examples[rule].what, line(finding_for(rule, examples[rule])))
            for rule in wanted]


def catalogue_examples() -> list[tuple[str, str, str]]:
    """The binding rules', the WSDL rules' and the odd requests' examples, in the catalogue's
    order."""
    return examples_of([*(r.id for r in rules.CATALOGUE), rules.UNCLASSIFIED,
                        *(r.id for r in wsdl_rules.CATALOGUE),
                        *(r.id for r in odd_requests.CATALOGUE),
                        *(r.id for r in asmx_matrix.matrix().rules)],
                       CATALOGUE | WSDL | ODD | MATRIX)



def examples(family: str) -> list[tuple[str, str, str]]:
    """The examples of one family of rules, in the order their catalogue lists them."""
    from harness.diff.engine import TITLES
    from harness.judge.sending import RULE_TITLES
    from harness.replay.engine import REPLAY_RULES

    if family == "rules":
        return catalogue_examples()
    wanted, chosen = {"sending": (RULE_TITLES, SENDING), "replay": (REPLAY_RULES, REPLAY),
                      "diff": ([r for r in TITLES if r != "SEC-LEAK"], DIFF),
                      "shadow": (list(SHADOW), SHADOW),
                      "probe": (probe.RULE_IDS, PROBE)}[family]
    return examples_of(wanted, chosen)
