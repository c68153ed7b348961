"""Deliberately faulty implementations of the service, and harmless variations of it.

Each faulty implementation wraps the reference's pure ``answer`` (or serves a deliberately wrong
contract) and breaks exactly one rule for one operation and/or binding; ``Fault`` says which
rule a conformance judge must name, for which operation and binding. ``HARMLESS`` changes only
what the spec allows to vary. Other engineers' tests may import this module:

    from faulty import FAULTS, serve_fault
    with serve_fault(FAULTS["soap12-missing-charset"]) as url: ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from lxml import etree

from harness.contract.bindings import Binding, build_response, classify
from harness.contract.model import Contract, Operation, reference_result, school_mobile
from harness.contract.xmlsafe import element_children, parse_xml
from harness.errors import ClassificationError
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import HttpRequest, HttpResponse, replace_header

Answer = Callable[[Contract, HttpRequest], HttpResponse]
Change = Callable[[Contract, Operation, Binding, HttpResponse], HttpResponse]


@dataclass(frozen=True)
class Fault:
    name: str
    what: str
    respond: Answer
    rule: str  # the rule a judge must fail
    operation: str | None  # the operation the failure names (None: every operation)
    binding: str | None  # the binding's label (None: every binding)
    #: The contract the faulty implementation serves (None: the real one).
    served: Contract | None = None


def where(binding: Binding | None = None, operation: str | None = None,
          change: Change | None = None) -> Answer:
    """The reference's answer, changed by ``change`` for requests of ``binding`` x
    ``operation`` (None matches any)."""
    def respond(contract: Contract, request: HttpRequest) -> HttpResponse:
        response = answer(contract, request)
        try:
            call = classify(contract, request)
        except ClassificationError:
            return response
        if (binding is None or call.binding is binding) and (
                operation is None or call.operation.name == operation):
            return change(contract, call.operation, call.binding, response)  # type: ignore[misc]
        return response
    return respond


def _body(response: HttpResponse, body: bytes) -> HttpResponse:
    headers = replace_header(response.headers, "Content-Length", str(len(body)))
    return HttpResponse(response.status, headers, body, response.reason)


def _typed(content_type: str | None) -> Change:
    return lambda c, op, b, r: HttpResponse(
        r.status, replace_header(r.headers, "Content-Type", content_type), r.body, r.reason)


def _replace(old: str, new: str) -> Change:
    """Replace text in the body; ``{op}``, ``{ns}`` stand for the operation and namespace."""
    def change(contract: Contract, op: Operation, binding: Binding,
               response: HttpResponse) -> HttpResponse:
        def fill(text: str) -> bytes:
            return text.format(op=op.name, ns=contract.namespace).encode()
        assert fill(old) in response.body, (old, response.body)
        return _body(response, response.body.replace(fill(old), fill(new)))
    return change


def _other_envelope(contract: Contract, op: Operation, binding: Binding,
                    response: HttpResponse) -> HttpResponse:
    """The right body in the other SOAP version's envelope (Content-Type unchanged)."""
    other = Binding.SOAP11 if binding is Binding.SOAP12 else Binding.SOAP12
    body = build_response(contract, op, other, reference_result(op, {})).body
    return _body(response, body)


def _status(code: int) -> Change:
    return lambda c, op, b, r: HttpResponse(code, r.headers, r.body, "Accepted")


def _not_found(contract: Contract, op: Operation, binding: Binding,
               response: HttpResponse) -> HttpResponse:
    return HttpResponse(404, (("Content-Type", "text/plain; charset=utf-8"),),
                        b"The resource cannot be found.", "Not Found")


def _contract_with(operation: str, **changes: str) -> Contract:
    """The real contract with one operation changed (a wrong implementation's idea of it)."""
    real = school_mobile()
    ops = tuple(replace(op, **changes) if op.name == operation else op for op in real.operations)
    return replace(real, operations=ops)


def _serving(served: Contract) -> Answer:
    """The reference answering as if ``served`` were the contract."""
    return lambda contract, request: answer(served.with_namespace(contract.namespace), request)


_MOVED = _contract_with("SendMarkNotes", endpoint="/SendMarkNotes.asmx")
_CORRECTED = _contract_with("GetStudentsAudtiNote", name="GetStudentsAuditNote")

FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault("soap11-missing-charset", "SOAP 1.1 answers typed text/xml without a charset",
          where(Binding.SOAP11, change=_typed("text/xml")),
          "R7-SOAP-CONTENT-TYPE", None, "SOAP 1.1"),
    Fault("soap12-wrong-content-type", "SOAP 1.2 answers typed text/xml",
          where(Binding.SOAP12, change=_typed("text/xml; charset=utf-8")),
          "R7-SOAP-CONTENT-TYPE", None, "SOAP 1.2"),
    Fault("soap12-answered-in-soap11", "SOAP 1.2 calls of LogoutFromSchool answered in a "
          "SOAP 1.1 envelope", where(Binding.SOAP12, "LogoutFromSchool", _other_envelope),
          "R5-ENVELOPE", "LogoutFromSchool", "SOAP 1.2"),
    Fault("response-element-misnamed", "AuthCode's SOAP 1.1 response element is AuthCodeReply",
          where(Binding.SOAP11, "AuthCode", _replace("{op}Response", "{op}Reply")),
          "R5-RESPONSE-ELEMENT", "AuthCode", "SOAP 1.1"),
    Fault("response-element-wrong-namespace", "SendMarkNotesResponse in another namespace "
          "(SOAP 1.2)", where(Binding.SOAP12, "SendMarkNotes",
                              _replace('xmlns="{ns}"', 'xmlns="urn:not-the-service"')),
          "R5-RESPONSE-ELEMENT", "SendMarkNotes", "SOAP 1.2"),
    Fault("void-response-not-empty", "SendNotificationTypeResponse holds an element",
          where(Binding.SOAP11, "SendNotificationType",
                _replace('<{op}Response xmlns="{ns}"/>',
                         '<{op}Response xmlns="{ns}"><Status>ok</Status></{op}Response>')),
          "R6-EMPTY-RESPONSE", "SendNotificationType", "SOAP 1.1"),
    Fault("void-get-with-body", "AuthCode over HTTP GET answers a document",
          where(Binding.HTTP_GET, "AuthCode",
                lambda c, op, b, r: HttpResponse(
                    200, (("Content-Type", "text/xml; charset=utf-8"),),
                    f'<string xmlns="{c.namespace}">ok</string>'.encode(), "OK")),
          "R8-HTTP-EMPTY-BODY", "AuthCode", "HTTP GET"),
    Fault("token-without-result", "GetTokenDeviceResponse without GetTokenDeviceResult",
          where(Binding.SOAP11, "GetTokenDevice",
                lambda c, op, b, r: build_response(c, replace(op, result=None), b)),
          "OP-RESULT", "GetTokenDevice", "SOAP 1.1"),
    Fault("string-root-without-namespace", "GetTokenDevice over HTTP POST: a string root "
          "in no namespace", where(Binding.HTTP_POST, "GetTokenDevice",
                                   _replace(' xmlns="{ns}"', "")),
          "OP-RESULT", "GetTokenDevice", "HTTP POST"),
    Fault("wrong-status", "LogoutFromSchool over HTTP POST answers 202",
          where(Binding.HTTP_POST, "LogoutFromSchool", _status(202)),
          "R4-STATUS", "LogoutFromSchool", "HTTP POST"),
    # A call that fails is reported once, by R4-STATUS with its cause; OP-ENDPOINT's and
    # BIND-METHOD-PATH's "served" checks presuppose success and are not applicable to it.
    Fault("missing-from-shared-endpoint", "SendMarkNotes served at its own /SendMarkNotes.asmx "
          "instead of the shared NotificationNotes.asmx", _serving(_MOVED),
          "R4-STATUS", "SendMarkNotes", None, _MOVED),
    Fault("name-corrected", "GetStudentsAudtiNote served only as the 'corrected' "
          "GetStudentsAuditNote", _serving(_CORRECTED),
          "R4-STATUS", "GetStudentsAudtiNote", None, _CORRECTED),
    Fault("get-not-served", "the HTTP GET binding is not served (404)",
          where(Binding.HTTP_GET, change=_not_found), "R4-STATUS", None, "HTTP GET"),
)}


# ------------------------------------------------------------------------ harmless variation

_PREFIXES = {"http://schemas.xmlsoap.org/soap/envelope/": "s",
             "http://www.w3.org/2003/05/soap-envelope": "env"}


def reprefixed(body: bytes, service_prefix: str = "tns") -> bytes:
    """The same XML with other prefixes (the service namespace prefixed too), pretty-printed
    with indentation, and without an XML declaration."""
    root = parse_xml(body)
    used = {etree.QName(e).namespace for e in root.iter() if isinstance(e.tag, str)} - {None}
    nsmap = {_PREFIXES.get(ns, service_prefix): ns for ns in used}

    def copy(src: etree._Element, parent: etree._Element | None) -> etree._Element:
        made = (etree.Element(src.tag, nsmap=nsmap) if parent is None
                else etree.SubElement(parent, src.tag))
        made.text = src.text
        for child in element_children(src):
            copy(child, made)
        return made

    return etree.tostring(copy(root, None), pretty_print=True, encoding="utf-8")


def harmless(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The reference's answer with every harmless variation at once: other prefixes, pretty
    printing, no XML declaration, extra headers, an upper-case charset."""
    response = answer(contract, request)
    if request.method == "GET" and "wsdl" in request.url.lower().rsplit("?", 1)[-1]:
        return response  # a WSDL's QName attribute values hold its prefixes: not harmless
    headers = (*response.headers, ("X-Powered-By", "ASP.NET"),
               ("X-AspNet-Version", "4.0.30319"), ("Cache-Control", "private, max-age=0"))
    if response.content_type:
        headers = replace_header(headers, "Content-Type",
                                 response.content_type.replace("utf-8", "UTF-8"))
    body = reprefixed(response.body) if response.body.strip() else response.body
    headers = replace_header(headers, "Content-Length", str(len(body)))
    return HttpResponse(response.status, headers, body, response.reason)


def assert_markup_refusal_warnings(data: dict) -> None:
    """``data`` (certify's JSON) warns GAP-VALUES for markup in GET/POST values, refused as
    ASP.NET's request validation refuses it, and warns nothing else."""
    warned = {(f["rule"], f["operation"], f["binding"]) for f in data["findings"]
              if f["verdict"] == "warning" and f["rule"] == "GAP-VALUES"}
    assert warned == {("GAP-VALUES", op, b) for op in ("SendNotificationType", "SendMarkNotes")
                      for b in ("HTTP GET", "HTTP POST")}, warned
    # besides: a refusal that names its exception type (stock ASP.NET's stack trace to a
    # local client) is the passive SEC-LEAK warning at the same places, nothing else
    others = {(f["rule"], f["operation"], f["binding"]) for f in data["findings"]
              if f["verdict"] == "warning" and f["rule"] != "GAP-VALUES"}
    assert others <= {("SEC-LEAK", op, b) for _, op, b in warned}, others


def refuses_everything_for(operation: str) -> Answer:
    """The reference (which refuses markup in GET/POST values as ASP.NET does), but
    ``operation`` over HTTP GET is refused whatever its values: a real failure."""
    def respond(contract: Contract, request: HttpRequest) -> HttpResponse:
        try:
            refused = classify(contract, request).operation.name == operation
        except ClassificationError:
            refused = False
        if refused and request.method == "GET":
            body = b"Object reference not set to an instance of an object."
            return HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),), body)
        return answer(contract, request)
    return respond


@contextlib.contextmanager
def serve_fault(fault: Fault | Answer, contract: Contract | None = None) -> Iterator[str]:
    """Base URL of a loopback server answering with ``fault`` (a Fault or an answer function)."""
    respond = fault.respond if isinstance(fault, Fault) else fault
    with running(app=create_app(contract or school_mobile(), respond=respond)) as url:
        yield url
