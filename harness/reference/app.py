"""The reference service as an ASGI app: every operation on every binding, as spec 4 says, and as
ASP.NET ASMX behaves where the spec is silent (faults, status codes, WSDL, help page).

``answer`` is a pure function from HttpRequest to HttpResponse; the ASGI app is a thin shell
around it, so tests can build deliberately faulty implementations by wrapping ``answer``.
``answer`` checks a call as ASMX does (the binding rules) and then asks ``produce`` for the
answer to the accepted call: the reference computes one (``reference_answer``); ``harness mock``
looks one up in a recording (harness.mock), keeping every binding rule of the reference.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from html import escape
from urllib.parse import SplitResult, urlsplit

from starlette.datastructures import URL

from harness.contract.bindings import (
    FORM_TYPE,
    Binding,
    Classification,
    FaultCode,
    build_fault,
    build_response,
    classify,
    soap_payload,
    soap_version,
    structured_argument,
)
from harness.contract.model import (
    Contract,
    Operation,
    Parameter,
    ParamType,
    reference_result,
    school_mobile,
)
from harness.contract.structure import Value
from harness.contract.xmlsafe import (
    element_children,
    local_name,
    namespace,
    parse_xml,
    root_tag,
)
from harness.errors import ClassificationError, MalformedXML, XMLRejected
from harness.reference.reading import as_read
from harness.reference.wsdl import service_name, wsdl_document
from harness.traffic.exchange import HttpRequest, HttpResponse, content_type_params, media_type


@dataclass(frozen=True)
class Disrupted:
    """An answer delivered wrong on purpose (``harness mock``'s fault injection): ``how`` is
    ``reset`` (the connection reset, nothing sent), ``empty`` (the connection closed, nothing
    sent) or ``trickle`` (``response`` sent in small pieces over ``seconds``)."""

    how: str
    response: HttpResponse | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class Delayed:
    """A response to send after ``seconds`` (``harness mock --latency recorded``, a stub's
    delay); the wait holds no thread and no other request."""

    response: HttpResponse | Disrupted
    seconds: float


@dataclass(frozen=True)
class Later:
    """An answer ``make`` makes on a worker thread, off the event loop: it waits on something
    else (``harness mock --fallback URL`` forwards the call to a real deployment)."""

    make: Callable[[], HttpResponse | Delayed | Disrupted]


Delivery = HttpResponse | Delayed | Disrupted | Later
Answer = Callable[[Contract, HttpRequest], Delivery]
#: The answer to a call the binding rules accept: (contract, call, answering binding, its
#: arguments by parameter) -> response (Delayed: to be sent later; Disrupted: sent wrong;
#: Later: made on a worker thread).
Produce = Callable[[Contract, Classification, Binding, dict[str, Value]], Delivery]
#: A predicate on an argument's text: True lets it pass the parameter's type check (the mock
#: takes a recording's pseudonyms for any type).
Wildcard = Callable[[str], bool]
#: Largest request body the reference reads; beyond it the request is refused unread.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: The text of a fault for an unexpected error: ASMX's words, with nothing of the cause.
SERVER_ERROR = "Server was unable to process request."
#: Bodies larger than this are answered on a worker thread (lxml parses without the GIL), so
#: one large request does not hold up the event loop; small ones stay on the loop (hot path).
OFF_LOOP_BYTES = 64 * 1024


class Refusal(Exception):
    """The request is well-formed HTTP but wrong for the operation: answer with a fault, or
    with ``response`` when ASMX answers otherwise (415, 400, request validation)."""

    def __init__(self, message: str, code: FaultCode = FaultCode.CLIENT,
                 response: HttpResponse | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.response = response


NOT_FOUND = HttpResponse(404, (("Content-Type", "text/plain; charset=utf-8"),),
                         b"The resource cannot be found.", "Not Found")


def _route(contract: Contract, path: str) -> tuple[str | None, str, bool]:
    """(contract endpoint or None, the path up to the .asmx segment, whether an operation
    segment follows it)."""
    segments = [s for s in path.split("/") if s]
    at = next((i for i, s in enumerate(segments) if s.lower().endswith(".asmx")), None)
    if at is None:
        return None, "", False
    return (contract.endpoint(segments[at]), "/".join(["", *segments[:at + 1]]),
            len(segments) > at + 1)


def reference_answer(contract: Contract, call: Classification, binding: Binding,
                     arguments: dict[str, Value]) -> HttpResponse:
    """The reference's result for an accepted call (``reference_result``), over ``binding``."""
    result = reference_result(call.operation, arguments)
    if result is None:  # the same bytes every time: built once
        return _void_response(contract, call.operation, binding)
    return build_response(contract, call.operation, binding, result)


def answer(contract: Contract, request: HttpRequest, produce: Produce = reference_answer, *,
           wildcard: Wildcard | None = None) -> Delivery:
    """The response to ``request``: the refusal ASMX gives, else ``produce``'s answer (the
    reference's by default)."""
    parts = urlsplit(request.url)
    endpoint, endpoint_path, has_operation = _route(contract, parts.path)
    if endpoint is None:
        return NOT_FOUND
    base = f"{parts.scheme}://{parts.netloc}{endpoint_path}"
    if request.method == "GET" and not has_operation:
        return _describe(contract, endpoint, base, parts.query)
    if request.method not in ("GET", "POST"):  # HEAD, OPTIONS, PUT...: refused unread
        return _OPERATION_PATH_METHOD if has_operation else _ENDPOINT_METHOD
    request = as_read(request, has_operation)
    binding = _binding_for_errors(request, has_operation)
    try:
        call = _routed(contract, request, classify(contract, request))
        binding = call.binding
        binding, arguments = _accepted(contract, request, endpoint, call, wildcard)
        return produce(contract, call, binding, arguments)
    except ClassificationError as exc:
        if not has_operation and request.method == "POST":
            return _refused_soap(request, binding, exc)
        return build_fault(binding, FaultCode.CLIENT, str(exc))
    except Refusal as exc:
        return exc.response or build_fault(binding, exc.code, str(exc))
    except Exception:  # an ASMX service answers a server fault, never a dropped socket;
        # and no implementation detail (exception type or text) ever reaches the client
        return build_fault(binding, FaultCode.SERVER, SERVER_ERROR)


def accepted_call(contract: Contract, request: HttpRequest, *,
                  wildcard: Wildcard | None = None
                  ) -> tuple[Classification, Binding, dict[str, Value]]:
    """(call, answering binding, arguments) of a request the binding rules accept, as
    ``answer`` hands them to ``produce``; ClassificationError or Refusal otherwise."""
    call = _routed(contract, request, classify(contract, request))
    endpoint = _route(contract, urlsplit(request.url).path)[0]
    return (call, *_accepted(contract, request, endpoint or "", call, wildcard))


def _routed(contract: Contract, request: HttpRequest, call: Classification) -> Classification:
    """The call as ASMX routes it: a SOAP action (1.1's SOAPAction, 1.2's ``action``) naming
    another operation of the endpoint calls that one, with the parameters the body holds
    (checked with curl on the real ASMX: SOAPAction SendNotificationType on a SendMarkNotes
    body answers SendNotificationTypeResponse)."""
    if not call.binding.is_soap or call.problem is not None or call.guess is not None:
        return call
    action = _action(request, call.binding)
    if not action:
        return call
    for op in contract.endpoints.get(call.operation.endpoint, ()):
        if op is not call.operation and action.strip('"') == contract.soap_action(op).strip('"'):
            return replace(call, operation=op)
    return call


def _accepted(contract: Contract, request: HttpRequest, endpoint: str, call: Classification,
              wildcard: Wildcard | None) -> tuple[Binding, dict[str, Value]]:
    _check(contract, request, endpoint, call)
    return _answering_binding(call), _arguments(call, wildcard)


def _void_response(contract: Contract, op: Operation, binding: Binding) -> HttpResponse:
    key = (contract.namespace, op.name, op.result, binding)  # all build_response reads
    if (cached := _VOID_RESPONSES.get(key)) is None:
        cached = _VOID_RESPONSES[key] = build_response(contract, op, binding)
    return cached


_VOID_RESPONSES: dict[tuple[str, str, str | None, Binding], HttpResponse] = {}


def too_large(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The answer to a body over MAX_REQUEST_BYTES (read no further). ASP.NET throws
    "Maximum request length exceeded" (its 4 MB maxRequestLength) while ASMX reads the body,
    which ASMX reports as a server fault of the request's version, or 500 text/plain."""
    endpoint, _, has_operation = _route(contract, urlsplit(request.url).path)
    if endpoint is None:
        return NOT_FOUND
    return build_fault(_binding_for_errors(request, has_operation), FaultCode.SERVER,
                       "Maximum request length exceeded.")


def _binding_for_errors(request: HttpRequest, has_operation: bool) -> Binding:
    """The binding whose error shape answers a request that may not classify."""
    if has_operation:
        return Binding.HTTP_GET if request.method == "GET" else Binding.HTTP_POST
    return soap_version(media_type(request.content_type)) or Binding.SOAP11


def _check(contract: Contract, request: HttpRequest, endpoint: str, call: Classification) -> None:
    """Refuse what ASMX refuses: wrong endpoint, values request validation refuses (GET/POST),
    a SOAP Content-Type or envelope ASMX does not take, a wrong action or namespace."""
    op = call.operation
    if call.problem is not None or call.guess is not None:
        # classified leniently for the rules (attributed to the operation it most likely
        # meant); ASMX serves only exact calls
        raise ClassificationError(call.problem or call.guess or "")
    if op.endpoint != endpoint:
        raise Refusal(f"{op.name} is not an operation of {endpoint}")
    if request.method.upper() != call.binding.method:  # a SOAP POST to an operation's path
        raise Refusal("Request format is unrecognized for URL unexpectedly ending in "
                      f"'/{op.name}'.")
    if call.binding.value not in contract.bindings_of(op):  # disabled, or not carried by HTTP
        raise Refusal(f"{op.name} Web Service method name is not valid over "
                      f"{call.binding.label}.")
    if call.binding is Binding.HTTP_POST and media_type(request.content_type) != FORM_TYPE:
        # no Content-Type, multipart/form-data, text/plain: ASMX reads only a URL-encoded form
        raise Refusal(f"Request format is invalid: {request.content_type or ''}.")
    if not call.binding.is_soap:
        _validate_values(call)
        return
    media = soap_version(media_type(request.content_type))
    envelope = _SOAP_BY_NS.get(namespace(call.envelope) or "") if call.envelope is not None \
        else None
    if media is None:  # ASMX: 415 before it reads the envelope
        raise Refusal("not a SOAP Content-Type", response=_UNSUPPORTED_MEDIA[
            Binding.SOAP11 if request.header("SOAPAction") else Binding.SOAP12])
    if envelope is None:
        raise Refusal("not a SOAP envelope", response=VERSION_MISMATCH)
    if envelope is Binding.SOAP11 and media is Binding.SOAP12:
        raise Refusal("SOAP 1.1 envelope as SOAP 1.2", response=_UNSUPPORTED_MEDIA[envelope])
    if call.operation_namespace != contract.namespace:
        raise Refusal(f"operation element namespace {call.operation_namespace!r} is not "
                      f"{contract.namespace!r}")
    # A missing SOAPAction is routed by the body element, as ASMX does; so is any SOAP 1.2
    # action that names no operation of the endpoint (1.1: a Client fault, even for "").
    action = _action(request, call.binding)
    if call.binding is Binding.SOAP11 and action is not None \
            and action.strip('"') != contract.soap_action(op).strip('"'):
        raise Refusal(f"Server did not recognize the value of SOAPAction: {action}")
    _check_envelope(call, envelope or call.binding)


def _check_envelope(call: Classification, version: Binding) -> None:
    """What ASMX refuses inside an envelope it reads: a header block it must understand and
    does not know (a MustUnderstand fault: the reference knows none), a comment or processing
    instruction inside a parameter's value (400 and an empty body: XmlSerializer's reader)."""
    envelope = call.envelope
    header = next((c for c in element_children(envelope) if local_name(c) == "Header"), None) \
        if envelope is not None else None
    for block in element_children(header) if header is not None else ():
        understood = next((v for k, v in block.attrib.items()
                           if k.endswith("}mustUnderstand")), "")
        if understood.strip() in ("1", "true"):
            raise Refusal(f"SOAP header {local_name(block)} was not understood.",
                          FaultCode.MUST_UNDERSTAND)
    payload = soap_payload(envelope) if envelope is not None else None
    for parameter in element_children(payload) if payload is not None else ():
        if any(not isinstance(node.tag, str) for node in parameter):
            raise Refusal("a comment inside a value", response=HttpResponse(
                400, (("Content-Type", version.soap_content_type or ""),), b"", "Bad Request"))


def _answering_binding(call: Classification) -> Binding:
    """The binding the answer takes: a SOAP call is answered in its envelope's version (ASMX
    answers a SOAP 1.2 envelope sent as text/xml in SOAP 1.2); others in their own."""
    if call.binding.is_soap and call.envelope is not None:
        return _SOAP_BY_NS.get(namespace(call.envelope) or "", call.binding)
    return call.binding


_SOAP_BY_NS = {b.envelope_ns: b for b in (Binding.SOAP11, Binding.SOAP12)}
#: 415 and an empty body, typed as ASMX types it: text/xml for a SOAP 1.1 envelope sent as
#: application/soap+xml, and for a Content-Type that is not SOAP, text/xml with a SOAPAction,
#: application/soap+xml without.
_UNSUPPORTED_MEDIA = {b: HttpResponse(415, (("Content-Type", b.soap_content_type or ""),), b"",
                                      "Unsupported Media Type")
                      for b in (Binding.SOAP11, Binding.SOAP12)}
#: ASMX's answer to a root element that is no SOAP envelope, whatever the Content-Type: a SOAP
#: 1.1 VersionMismatch fault with the SOAP 1.2 Upgrade header naming both envelopes it takes.
VERSION_MISMATCH = HttpResponse(
    500, (("Content-Type", "text/xml; charset=utf-8"),),
    b'<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap'
    b'.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd='
    b'"http://www.w3.org/2001/XMLSchema"><soap:Header><soap12:Upgrade xmlns:soap12="http://'
    b'www.w3.org/2003/05/soap-envelope"><soap12:SupportedEnvelope qname="soap:Envelope" '
    b'xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" /><soap12:SupportedEnvelope '
    b'qname="soap12:Envelope" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope" />'
    b"</soap12:Upgrade></soap:Header><soap:Body><soap:Fault><faultcode>soap:VersionMismatch"
    b"</faultcode><faultstring>Possible SOAP version mismatch: Envelope namespace was "
    b"unexpected.</faultstring><detail /></soap:Fault></soap:Body></soap:Envelope>",
    "Internal Server Error")


def _refused_soap(request: HttpRequest, binding: Binding, exc: ClassificationError
                  ) -> HttpResponse:
    """ASMX's answer to a SOAP POST that does not classify. A Content-Type that is not SOAP
    gets 415. ASMX routes a SOAP 1.1 call with a SOAPAction by it, others by peeking at the
    body: there no readable root (not XML, empty, a DTD) gets a SOAP 1.2 Receiver fault
    whatever the Content-Type, while a routed call's unreadable body gets 400. A root that is
    no SOAP envelope gets a VersionMismatch fault; an envelope whose document breaks later 400
    and an empty body; any other problem a Client fault. (This error path alone reads the
    body a second time.)"""
    media = soap_version(media_type(request.content_type))
    routed = media is Binding.SOAP11 and bool(request.header("SOAPAction"))
    if media is None:
        return _UNSUPPORTED_MEDIA[Binding.SOAP11 if request.header("SOAPAction")
                                  else Binding.SOAP12]
    bad_request = HttpResponse(400, (("Content-Type", binding.soap_content_type or ""),), b"",
                               "Bad Request")
    tag = root_tag(request.body)
    if tag is None:
        return bad_request if routed else build_fault(
            Binding.SOAP12, FaultCode.SERVER, SERVER_ERROR)
    if tag not in _ENVELOPE_TAGS:
        return VERSION_MISMATCH
    try:
        parse_xml(request.body)
    except MalformedXML:
        return bad_request
    except XMLRejected:
        pass
    return build_fault(binding, FaultCode.CLIENT, str(exc))


_ENVELOPE_TAGS = {f"{{{ns}}}Envelope" for ns in _SOAP_BY_NS}


def _error_page(status: int, reason: str) -> HttpResponse:
    """ASP.NET's HTML error page for a request refused before any service code runs (as with
    customErrors On: no exception text, no version)."""
    page = (f"<html><head><title>Runtime Error</title></head><body><h1>Server Error</h1>"
            f"<h2>HTTP {status}. {reason}.</h2></body></html>").encode()
    return HttpResponse(status, (("Content-Type", "text/html"),), page, reason)


#: Another method than GET and POST: ASMX refuses it before routing, 405 at the endpoint, 500
#: at an operation's path (the reverse with the Documentation protocol removed; a HEAD gets
#: the status without the page).
_ENDPOINT_METHOD = _error_page(405, "Method Not Allowed")
_OPERATION_PATH_METHOD = _error_page(500, "Internal Server Error")


def _validate_values(call: Classification) -> None:
    """ASP.NET's request validation (on by default): a GET/POST value with markup in it, a
    ``<`` before a letter or ``!``, or ``&#``, is refused with 500 text/plain before the
    service reads its parameters. Names are not checked, values of every field are."""
    where = "QueryString" if call.binding is Binding.HTTP_GET else "Form"
    for name, value in call.arguments:
        if _DANGEROUS.search(value):
            shown = escape(f'{name}="{value}"').replace("&#x27;", "&#39;")  # as ASP.NET
            raise Refusal("request validation", response=HttpResponse(
                500, (("Content-Type", "text/plain; charset=utf-8"),),
                f"A potentially dangerous Request.{where} value was detected from the client "
                f"({shown}).\n".encode(), "Internal Server Error"))


#: What request validation takes for markup (Mono's System.Web, the runtime the interop lane
#: runs: ``<?`` and ``</`` pass there).
_DANGEROUS = re.compile(r"<[A-Za-z!]|&#")


def _action(request: HttpRequest, binding: Binding) -> str | None:
    if binding is Binding.SOAP11:
        return request.header("SOAPAction")
    return content_type_params(request.content_type).get("action")  # SOAP 1.2's action


def _arguments(call: Classification, wildcard: Wildcard | None = None) -> dict[str, Value]:
    """The call's arguments, checked against the operation's parameters (an array or complex
    one read into a list or dict; a simple one ``wildcard`` takes is not type-checked)."""
    op, given = call.operation, _given(call)
    structured: dict[str, Value] = {}
    for p in op.parameters:  # an element that is no parameter is ignored, as ASMX does
        if p.name not in given:
            if not call.binding.is_soap:
                raise Refusal(f"Missing parameter: {p.name}.")
            continue  # ASMX binds a missing SOAP parameter as its default (null, 0)
        if p.type is ParamType.COMPLEX:
            structured[p.name] = _structured(call, p)
        elif not p.accepts(given[p.name], http=not call.binding.is_soap) and not (
                wildcard and wildcard(given[p.name])):
            raise Refusal(f"Cannot convert {given[p.name]!r} to {p.type_name or p.type} "
                          f"({p.name})")
    return {p.name: structured[p.name] if p.name in structured else given.get(p.name, "")
            for p in op.parameters}


def _structured(call: Classification, p: Parameter) -> Value:
    """An array or complex argument as ASMX reads it (a Client fault when it does not
    convert)."""
    try:
        return structured_argument(call, p.name)
    except ValueError as exc:
        raise Refusal(f"Cannot convert {p.name}: {exc}") from None


def _given(call: Classification) -> dict[str, str]:
    """The arguments by name as ASMX reads them: in SOAP only elements in the operation's
    namespace (XmlSerializer: an unqualified one is no parameter), the first of repeated ones;
    in GET/POST field names in any case, repeated values joined with "," (ASP.NET's
    NameValueCollection)."""
    given: dict[str, str] = {}
    if call.binding.is_soap:
        payload = soap_payload(call.envelope) if call.envelope is not None else None
        for element in element_children(payload) if payload is not None else ():
            if namespace(element) == call.operation_namespace:
                given.setdefault(local_name(element), element.text or "")
        return given
    names = {p.name.lower(): p.name for p in call.operation.parameters}
    for sent, value in call.arguments:
        name = names.get(sent.lower(), sent)
        given[name] = f"{given[name]},{value}" if name in given else value
    return given


def _describe(contract: Contract, endpoint: str, base: str, query: str) -> HttpResponse:
    """``?WSDL`` gives the WSDL; a bare GET the service help page, as ASMX does."""
    if query.lower() == "wsdl":
        body = wsdl_document(contract, endpoint, base)
        return HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),), body, "OK")
    ops = "".join(f'<li><a href="{escape(base)}/{op.name}">{op.name}</a></li>'
                  for op in contract.endpoints[endpoint])
    name = escape(service_name(endpoint))
    page = (f"<html><head><title>{name} Web Service</title></head><body><h1>{name}</h1>"
            f'<ul>{ops}</ul><p><a href="{escape(base)}?WSDL">Service Description</a></p>'
            "</body></html>")
    return HttpResponse(200, (("Content-Type", "text/html; charset=utf-8"),),
                        page.encode("utf-8"), "OK")


def create_app(contract: Contract | None = None, respond: Answer = answer):
    """An ASGI app serving ``contract`` with ``respond`` (the reference's ``answer`` by default)."""
    contract = contract or school_mobile()

    async def app(scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        body = await read_body(receive)
        if body is DISCONNECTED:
            return  # nobody to answer
        headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
        call = HttpRequest(scope["method"], _url(scope), headers, body or b"")
        if body is None:
            response = too_large(contract, call)
        elif len(body) > OFF_LOOP_BYTES:  # parsing it must not stall the other requests
            response = await asyncio.get_running_loop().run_in_executor(
                None, respond, contract, call)
        else:
            response = respond(contract, call)
        await deliver(response, scope, receive, send)

    return app


async def deliver(response: Delivery, scope, receive, send) -> None:
    """Send ``response`` as it says: at once, later, made on a worker thread, or wrong. A
    client that hangs up while its answer waits on purpose (or is made) is not waited for;
    nor is one whose server stops (harness.reference.server closes such connections)."""
    if isinstance(response, Later):
        made = await _made(response, scope, receive)
        if made is None:
            return
        response = made
    while isinstance(response, Delayed):
        if not await _pause(response.seconds, scope, receive):
            return
        response = response.response
    if isinstance(response, Disrupted):
        await _disrupted(response, scope, receive, send)
        return
    await _send(response, send)


#: The scope key under which the server (harness.reference.server) hands the app the
#: connection's transport: only a dropped connection needs it.
TRANSPORT = "harness.transport"
#: True in a request's scope while its answer waits on purpose (a delay, a trickle, a call
#: forwarded): a server that stops closes such a connection rather than wait for it.
WAITING = "harness.waiting"


async def _pause(seconds: float, scope, receive) -> bool:
    """Wait ``seconds``; False when the connection went away meanwhile (the client gave up,
    or the server is stopping). The request's body is read: ``receive`` says only that."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    scope[WAITING] = True
    try:
        while (left := until - loop.time()) > 0:
            try:
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                return True
            if message["type"] == "http.disconnect":
                return False
        return True
    finally:
        scope[WAITING] = False


async def _made(later: Later, scope, receive):
    """``later``'s answer, made on a worker thread; None when the connection went away first
    (the work goes on: a forwarded call is still recorded)."""
    job = asyncio.get_running_loop().run_in_executor(None, later.make)
    gone = asyncio.ensure_future(receive())
    scope[WAITING] = True
    try:
        while True:
            done, _ = await asyncio.wait({job, gone}, return_when=asyncio.FIRST_COMPLETED)
            if job in done:
                return job.result()
            if gone.result()["type"] == "http.disconnect":
                return None
            gone = asyncio.ensure_future(receive())
    finally:
        scope[WAITING] = False
        if not gone.done():
            gone.cancel()


async def _disrupted(response: Disrupted, scope, receive, send) -> None:
    if response.how == "trickle" and response.response is not None:
        await _trickle(response.response, response.seconds, scope, receive, send)
        return
    if scope.get(TRANSPORT) is None:  # a server that does not hand it over: a 500 is all
        await _send(HttpResponse(500, (), b"", "Internal Server Error"), send)
        return
    await _dropped(response, scope, receive)


async def _dropped(response: Disrupted, scope, receive) -> None:
    """The connection reset (``reset``) or closed, nothing sent."""
    transport = scope[TRANSPORT]
    if response.how == "reset":
        import socket
        import struct

        sock = transport.get_extra_info("socket")
        if sock is not None:  # SO_LINGER 0: close() sends RST, not FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
    else:
        transport.close()
    while (await receive())["type"] != "http.disconnect":  # the server sees it gone: no 500
        pass


#: Pieces a trickled body is sent in (fewer for a shorter body): ``harness mock --fault
#: trickle`` (``Disrupted``).
TRICKLE_PIECES = 16


def trickle_pieces(body: bytes) -> list[bytes]:
    """``body`` in at most TRICKLE_PIECES pieces, in order."""
    count = max(1, min(TRICKLE_PIECES, len(body)))
    size = -(-len(body) // count) if body else 1
    return [body[at:at + size] for at in range(0, len(body), size)] or [b""]


async def _trickle(response: HttpResponse, seconds: float, scope, receive, send) -> None:
    pieces = trickle_pieces(response.body)
    await _send_start(response, send)
    for number, piece in enumerate(pieces, 1):
        if not await _pause(seconds / len(pieces), scope, receive):
            return
        await send({"type": "http.response.body", "body": piece,
                    "more_body": number < len(pieces)})


# The ASGI shell speaks raw ASGI (no starlette Request/Response objects per request): it is the
# hot path of the load benchmark. The URL is the one starlette's Request.url gives.

DISCONNECTED = b"\0disconnected"


async def read_body(receive, limit: int = MAX_REQUEST_BYTES) -> bytes | None:
    """The whole body; None beyond ``limit`` bytes (read no further); DISCONNECTED when the
    client went away."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return DISCONNECTED
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _url(scope) -> str:
    scheme = scope.get("scheme", "http")
    host = next((v for k, v in scope["headers"] if k == b"host"), None)
    path = scope["path"].replace("?", "%3F").replace("#", "%23").replace("\\", "%5C")
    netloc = _netloc(scheme, host, scope.get("server"))
    query = scope.get("query_string", b"").decode()
    if netloc is None:
        return URL(scope=scope).__str__()
    return SplitResult(scheme, netloc, path, query, "").geturl()


@lru_cache(maxsize=256)
def _netloc(scheme: str, host: bytes | None, server: tuple[str, int] | None) -> str | None:
    """The authority starlette derives from the Host header (validated) or the server."""
    headers = [(b"host", host)] if host is not None else []
    scope = {"type": "http", "scheme": scheme, "server": server, "path": "/", "headers": headers}
    return URL(scope=scope).netloc or None


async def _send(response: HttpResponse, send) -> None:
    await _send_start(response, send)
    await send({"type": "http.response.body", "body": response.body})


async def _send_start(response: HttpResponse, send) -> None:
    # As starlette's Response(body, status, headers) sends it: names lowercased, our
    # Content-Length replaced by the body's; no Content-Type added to a void answer (ASMX
    # sends none).
    headers = {k.lower(): v for k, v in response.headers if k.lower() != "content-length"}
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    if not (response.status < 200 or response.status in (204, 304)):
        raw.append((b"content-length", str(len(response.body)).encode("latin-1")))
    await send({"type": "http.response.start", "status": response.status, "headers": raw})


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
