"""What diff sends: cases generated from the contract, or requests read from recordings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from harness.contract.bindings import (
    Binding,
    build_request,
    call_arguments,
    classify,
    service_description,
)
from harness.contract.model import Contract, Operation, ParamType, sample_arguments
from harness.contract.selection import Selection
from harness.contract.structure import Value, canonical
from harness.errors import ClassificationError
from harness.judge import asmx_matrix, odd_requests
from harness.judge.asmx_matrix import MatrixRequest
from harness.judge.odd_requests import OddRequest
from harness.traffic.exchange import HttpRequest, replace_header
from harness.traffic.recording import read_exchanges

#: Value sets per generated operation x binding: plain, non-ASCII, XML-special.
VARIANTS = 3
_XML_SPECIAL = 2  # sample_arguments' XML-special value set
#: Generated requests are built for this base and retargeted to every implementation.
_PLACEHOLDER = "http://diff.invalid"


@dataclass(frozen=True)
class Case:
    """One request to send to every implementation, and what it is in the contract's terms."""

    request: HttpRequest
    operation: Operation | None  # None: the request is none of the contract's calls
    binding: Binding | None
    #: Arguments in the operation's parameter order (None where one was absent): calls with
    #: equal arguments over different bindings must give the same result.
    arguments: tuple[str | None, ...] | None
    index: int
    source: str | None = None
    #: The endpoint whose WSDL the request fetches: the case compares two contracts, not
    #: two calls (reported at that endpoint x WSDL).
    described: str | None = None
    #: A request the spec does not describe (``--errors``): the answers are compared by what
    #: they are (``odd_requests.compare``), not body by body.
    odd: OddRequest | None = None
    #: Read from a recording (not generated): one left out by the selection is counted as a
    #: recorded exchange not sent.
    recorded: bool = False
    #: A row of the ASMX matrix (``--errors``), compared by shape (``asmx_matrix.compare``).
    matrix: MatrixRequest | None = None

    @property
    def operation_name(self) -> str:
        if self.odd is not None and self.odd.endpoint is not None:
            return self.odd.endpoint  # a bare GET: its endpoint
        if self.operation:
            return self.operation.name
        return self.described or "(unclassified)"

    @property
    def binding_label(self) -> str:
        if self.binding:
            return self.binding.label
        return WSDL if self.described else "-"


#: The binding label of a WSDL case.
WSDL = "WSDL"


def generated_cases(contract: Contract, variants: int = VARIANTS, errors: bool = False,
                    chosen: Selection | None = None) -> Iterator[Case]:
    """Every operation x binding it is offered on, with ``variants`` argument sets each (an
    array or complex argument generated from the schema), each endpoint's WSDL
    (``wsdl_cases``), then (``errors``) the erroneous requests of ``error_cases`` (none runs
    an operation ``chosen`` leaves out)."""
    index = 0
    for op in contract.operations:
        offered = contract.bindings_of(op)
        for variant in range(variants):
            for binding in Binding:
                if binding.value not in offered:
                    continue
                args = sample_arguments(op, variant, binding.value)
                index += 1
                request = build_request(contract, op, args, binding, _PLACEHOLDER)
                # ASP.NET's request validation refuses markup in GET/POST values, not in SOAP:
                # an error there by design, so left out of the cross-binding check
                markup = variant == _XML_SPECIAL and not binding.is_soap
                yield Case(request, op, binding, None if markup else _ordered(op, args), index)
    for case in wsdl_cases(contract, index):
        index = case.index
        yield case
    if errors:
        yield from error_cases(contract, index, chosen)


def wsdl_cases(contract: Contract, start: int = 0) -> Iterator[Case]:
    """``GET <endpoint>?WSDL`` of every endpoint, numbered after ``start``: the two
    implementations' contracts compared (bindings, operations, soapAction, types)."""
    host = urlsplit(_PLACEHOLDER).netloc
    for index, endpoint in enumerate(contract.endpoints, start + 1):
        request = HttpRequest("GET", f"{_PLACEHOLDER}{endpoint}?WSDL", (("Host", host),))
        yield Case(request, None, None, None, index, described=endpoint)


def error_cases(contract: Contract, start: int = 0, chosen: Selection | None = None
                ) -> Iterator[Case]:
    """Erroneous requests for every operation, numbered after ``start``: what a client gets
    wrong, where clients depend on the answer being the legacy one's (status, Content-Type,
    fault version and code). Their ``source`` names the error; their arguments are None, so
    the cross-binding check leaves them out (an error over GET and a default over SOAP differ
    by design, e.g. a missing parameter)."""
    index = start
    for op in contract.operations:
        offered = contract.bindings_of(op)
        for what, request, binding in _errors(contract, op):
            if binding.value not in offered:
                continue
            index += 1
            yield Case(request, op, binding, None, index, f"error: {what}")
        for odd in odd_requests.requests_for(contract, op, _PLACEHOLDER, chosen):
            index += 1
            yield Case(odd.request, op, odd.binding, None, index, f"error: {odd.kind}", odd=odd)
        for row in asmx_matrix.requests_for(contract, op, _PLACEHOLDER):
            index += 1
            # named in its differences' own words (a spec rule every answer breaks folds
            # into the plain calls' line)
            yield Case(row.request, op, row.binding, None, index,
                       f"asmx matrix: {row.row.label}", matrix=row)
    for endpoint in contract.endpoints:
        odd = odd_requests.bare_get(contract, endpoint, _PLACEHOLDER)
        index += 1
        yield Case(odd.request, odd.operation, odd.binding, None, index, f"error: {odd.kind}",
                   odd=odd)


def _errors(contract: Contract, op: Operation) -> Iterator[tuple[str, HttpRequest, Binding]]:
    plain = sample_arguments(op)
    soap11, soap12 = (build_request(contract, op, plain, b, _PLACEHOLDER)
                      for b in (Binding.SOAP11, Binding.SOAP12))
    action = soap11.header("SOAPAction")
    yield ("SOAP 1.1 envelope as application/soap+xml",
           _retyped(soap11, Binding.SOAP12.request_content_type, None), Binding.SOAP12)
    yield "SOAP 1.2 envelope as text/xml", _retyped(soap12, Binding.SOAP11.request_content_type,
                                                    action), Binding.SOAP11
    for binding, request in ((Binding.SOAP11, soap11), (Binding.SOAP12, soap12)):
        yield "malformed XML", _with_body(request, request.body[:-12]), binding
        wrong = request.body.replace((binding.envelope_ns or "").encode(),
                                     b"urn:not-a-soap-envelope")
        yield "wrong envelope namespace", _with_body(request, wrong), binding
    for binding in Binding if op.parameters else ():  # without parameters: nothing to miss
        yield "missing parameters", _without_parameters(contract, op, binding), binding
    for binding in (Binding.HTTP_GET, Binding.HTTP_POST):
        for value in ("<b>", "&#65;"):
            markup = dict.fromkeys(op.parameter_names, value)
            yield ("markup in values", build_request(contract, op, markup, binding, _PLACEHOLDER),
                   binding)
    ints = [p.name for p in op.parameters if p.type is ParamType.INT]
    for value in ("x", "2147483648") if ints else ():
        for binding in Binding:
            wrong_int = {**plain, **dict.fromkeys(ints, value)}
            yield (f"non-integer int parameter ({value})",
                   build_request(contract, op, wrong_int, binding, _PLACEHOLDER), binding)


def _retyped(request: HttpRequest, content_type: str | None, action: str | None) -> HttpRequest:
    return request.with_header("Content-Type", content_type).with_header("SOAPAction", action)


def _with_body(request: HttpRequest, body: bytes) -> HttpRequest:
    headers = replace_header(request.headers, "Content-Length", str(len(body)))
    return HttpRequest(request.method, request.url, headers, body)


def _without_parameters(contract: Contract, op: Operation, binding: Binding) -> HttpRequest:
    """The call with no parameter at all (an empty query, form or operation element)."""
    request = build_request(contract, op, {}, binding, _PLACEHOLDER)
    if binding is Binding.HTTP_GET:
        return HttpRequest("GET", request.url.split("?", 1)[0], request.headers)
    if binding is Binding.HTTP_POST:
        return _with_body(request, b"")
    start = request.body.index(f"<{op.name} ".encode())
    end = request.body.index(f"</{op.name}>".encode()) + len(op.name) + 3
    empty = f'<{op.name} xmlns="{contract.namespace}"/>'.encode()
    return _with_body(request, request.body[:start] + empty + request.body[end:])


def recorded_cases(contract: Contract, paths: Iterable[str | Path],
                   on_broken: Callable[[Path, int, str], None] | None = None) -> Iterator[Case]:
    """The requests of recordings (native or HAR), classified where they can be."""
    for exchange in read_exchanges(paths, on_broken=on_broken):
        yield replace(case_of(contract, exchange.request, exchange.index or 0,
                              exchange.source or None), recorded=True)


def case_of(contract: Contract, request: HttpRequest, index: int,
            source: str | None = None) -> Case:
    """A recorded (or proxied: ``harness shadow``) request as a case, classified where it can
    be: a call, a WSDL fetch, or neither ("(unclassified)", still compared)."""
    op = binding = arguments = described = None
    try:
        call = classify(contract, request)
        op, binding = call.operation, call.binding
        arguments = _ordered(op, call_arguments(call))
    except ClassificationError:  # still compared, reported as (unclassified)
        described = _wsdl_of(contract, request)
    except ValueError:
        pass  # an argument that does not convert: left out of the cross-binding check
    return Case(request, op, binding, arguments, index, source, described)


def _wsdl_of(contract: Contract, request: HttpRequest) -> str | None:
    """The endpoint whose WSDL ``request`` fetches, if it fetches one."""
    if service_description(contract, request) != WSDL:
        return None
    segment = next(s for s in urlsplit(request.url).path.split("/")
                   if s.lower().endswith(".asmx"))
    return contract.endpoint(segment)


def _ordered(op: Operation, args: Mapping[str, Value]) -> tuple[str | None, ...]:
    """The arguments in parameter order, an array or complex one as its canonical JSON."""
    return tuple(None if (v := args.get(name)) is None else canonical(v)
                 for name in op.parameter_names)
