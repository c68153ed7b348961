"""Requests the spec does not describe, and how the real ASMX answers them (issue 21).

Clients get these wrong, and stacks differ on them: a wrong, an empty or another operation's
SOAPAction (SOAP 1.2: ``action``), an unknown extra parameter element, a SOAP 1.1 request typed
``text/xml`` without charset, a bare GET of an endpoint (no operation in the path). Built once
here: certify sends them (``features/odd_requests.feature``) and judges each answer with
``judge``; ``diff --errors`` sends the same requests to both implementations.

What the real ASMX answers (Mono's System.Web.Services, checked with curl on
``../shared/asmx``, default and hardened configurations):

- SOAP 1.1 with a SOAPAction naming no operation of the endpoint, or ``""``: a ``soap:Client``
  fault (HTTP 500). Naming another operation of the same endpoint (NotificationNotes): routed
  to that one, which answers (``SendNotificationTypeResponse`` for a ``SendMarkNotes`` body).
- SOAP 1.2: an ``action`` naming no operation of the endpoint is ignored (routed by the body
  element); one naming another operation of the endpoint routes to it.
- An unknown extra child of the operation element: ignored, the call answers as usual.
- ``text/xml`` without charset: answered as usual, ``text/xml; charset=utf-8``.
- A bare GET of an endpoint: the help page (200, text/html); with the Documentation protocol
  removed (hardened), an error page (500, text/html).

Verdicts: where the spec speaks, a failure: a SOAP answer (a body that is XML, or any 200) is an
envelope of the request's SOAP version (4.1 rule 5) typed as rule 7 says. Where only ASMX
speaks (section 7: errors are "not shown"), an answer other than ASMX's is a warning.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lxml import etree

from harness.contract.bindings import Binding, build_request, fault_class, in_its_version
from harness.contract.model import Contract, Operation, sample_arguments
from harness.contract.selection import Selection
from harness.contract.structure import Value
from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.errors import XMLRejected
from harness.judge.compare.difference import NO_CONTENT_TYPE, Difference
from harness.judge.compare.xml import child, fault_code, local_code
from harness.judge.findings import Finding, Verdict
from harness.judge.words import version_words
from harness.traffic.exchange import HttpRequest, HttpResponse, media_type, normalise_content_type


@dataclass(frozen=True)
class OddRule:
    id: str
    clause: str
    title: str


CATALOGUE: tuple[OddRule, ...] = (
    OddRule("ODD-SOAPACTION", "4.1 rules 1, 5, 7; else as ASMX",
            "a wrong, empty or other operation's SOAPAction (SOAP 1.2: action) answered as "
            "ASMX does: a Client fault, routed by the body (SOAP 1.2), or to the operation "
            "it names"),
    OddRule("ODD-EXTRA-ELEMENT", "4.1 rules 5, 7; else as ASMX",
            "an unknown extra parameter element is ignored, as ASMX does"),
    OddRule("ODD-CHARSET", "4.1 rules 5, 7; else as ASMX",
            "a SOAP 1.1 request typed text/xml without charset is answered as usual, typed "
            "text/xml; charset=utf-8"),
    OddRule("ODD-BARE-GET", "as ASMX (the spec is silent)",
            "a GET of an endpoint without an operation: ASMX's help page, or an error status "
            "(the Documentation protocol off)"),
)
RULES = {rule.id: rule for rule in CATALOGUE}
#: The words a feature and diff's case name use for each request, and the rule judging it.
KINDS = {
    "a wrong SOAPAction": "ODD-SOAPACTION",
    "an empty SOAPAction": "ODD-SOAPACTION",
    "another operation's SOAPAction": "ODD-SOAPACTION",
    "an unknown extra element": "ODD-EXTRA-ELEMENT",
    "text/xml without charset": "ODD-CHARSET",
}
BARE_GET = "a bare GET of the endpoint"
#: A SOAP action no contract names.
NO_SUCH_OPERATION = "NoSuchOperation"
#: The element no operation has (ASMX ignores it).
EXTRA_ELEMENT = "harnessUnknownElement"
HELP_PAGE = "a help page (200, text/html)"


def titles() -> dict[str, str]:
    return {rule.id: rule.title for rule in CATALOGUE}


@dataclass(frozen=True)
class OddRequest:
    """One odd request and what ASMX answers to it (``expected``: an outcome's words)."""

    kind: str
    rule: str
    operation: Operation
    binding: Binding
    request: HttpRequest
    expected: str
    #: The endpoint a bare GET asks (None for an operation's call).
    endpoint: str | None = None


def other_operation(contract: Contract, op: Operation, chosen: Selection | None = None
                    ) -> tuple[Operation, bool] | None:
    """The operation whose action is sent instead of ``op``'s, and whether it shares
    ``op``'s endpoint (then ASMX routes to it, so it runs): another of the endpoint when
    ``chosen`` selects it, else a selected one of another endpoint (ASMX routes no action
    across endpoints: nothing runs). None when there is none to name (a one-operation
    service, or ``chosen`` leaves out every other operation: a stack that routes by
    SOAPAction alone would run the one named, which was not asked for)."""
    others = [o for o in contract.operations
              if o is not op and (chosen is None or chosen.allows(o.name, None))]
    same = [o for o in others if o.endpoint == op.endpoint]
    if same:
        return same[0], True
    return next(((o, False) for o in others), None)


def odd_request(contract: Contract, op: Operation, binding: Binding, kind: str,
                base_url: str, arguments: Mapping[str, Value] | None = None,
                chosen: Selection | None = None) -> OddRequest | None:
    """``op`` over ``binding`` (SOAP 1.1 or 1.2) sent with the odd thing ``kind`` (a key of
    KINDS), with ``arguments`` (default: plain generated values), and what ASMX answers;
    another operation's action names one ``chosen`` selects, or one ASMX cannot route to
    (None when there is no such operation: the kind does not apply)."""
    if kind not in KINDS:
        raise ValueError(f"unknown odd request {kind!r} (use: {', '.join(KINDS)})")
    if not binding.is_soap:
        raise ValueError(f"{kind} is sent over SOAP 1.1 or SOAP 1.2, not {binding.label}")
    if arguments is None:
        arguments = sample_arguments(op, 0, binding.value)
    request = build_request(contract, op, arguments, binding, base_url)
    answered = _answered(op)
    if kind == "an unknown extra element":
        end = f"</{op.name}>".encode()
        extra = f"<{EXTRA_ELEMENT}>1</{EXTRA_ELEMENT}>".encode()
        body = (request.body.replace(end, extra + end, 1) if end in request.body
                else request.body.replace(f'<{op.name} xmlns="{contract.namespace}" />'.encode(),
                                          f'<{op.name} xmlns="{contract.namespace}">'.encode()
                                          + extra + end, 1))
        return OddRequest(kind, KINDS[kind], op, binding, _with_body(request, body), answered)
    if kind == "text/xml without charset":
        if binding is not Binding.SOAP11:
            raise ValueError(f"{kind} is sent over SOAP 1.1")
        return OddRequest(kind, KINDS[kind], op, binding,
                          request.with_header("Content-Type", "text/xml"), answered)
    expected = None
    if kind == "another operation's SOAPAction":
        named = other_operation(contract, op, chosen)
        if named is None:
            return None
        other, same_endpoint = named
        action = contract.soap_action(other)
        if same_endpoint:
            expected = _answered(other)
    else:
        action = {"a wrong SOAPAction":
                  f'"{contract.namespace.rstrip("/")}/{NO_SUCH_OPERATION}"',
                  "an empty SOAPAction": '""'}[kind]
    if expected is None:  # SOAP 1.2: an action naming no operation here is ignored
        expected = "a Client fault" if binding is Binding.SOAP11 else answered
    if binding is Binding.SOAP11:
        request = request.with_header("SOAPAction", action)
    else:
        request = request.with_header("Content-Type",
                                      f"{binding.request_content_type}; action={action}")
    return OddRequest(kind, KINDS[kind], op, binding, request, expected)


def bare_get(contract: Contract, endpoint: str, base_url: str) -> OddRequest:
    """A GET of ``endpoint`` without an operation in the path."""
    host = base_url.split("/")[2]
    request = HttpRequest("GET", f"{base_url.rstrip('/')}{endpoint}", (("Host", host),))
    return OddRequest(BARE_GET, "ODD-BARE-GET", contract.endpoints[endpoint][0],
                      Binding.HTTP_GET, request, HELP_PAGE, endpoint)


def requests_for(contract: Contract, op: Operation, base_url: str,
                 chosen: Selection | None = None) -> Iterator[OddRequest]:
    """Every odd request of ``op`` over the SOAP bindings it is offered on (diff --errors),
    none of which runs an operation ``chosen`` leaves out."""
    offered = contract.bindings_of(op)
    for kind in KINDS:
        for binding in (Binding.SOAP11, Binding.SOAP12):
            if binding.value not in offered or (kind == "an empty SOAPAction"
                                                and binding is Binding.SOAP12):
                continue
            if kind == "text/xml without charset" and binding is not Binding.SOAP11:
                continue
            odd = odd_request(contract, op, binding, kind, base_url, chosen=chosen)
            if odd is not None:
                yield odd


def _answered(op: Operation) -> str:
    return f"{op.name}Response"


def outcome(response: HttpResponse) -> str:
    """What an answer is, as a noun comparable with an OddRequest's ``expected`` (a cause
    reads "answered with X where ASMX answers with Y"): "XResponse" (the response element),
    "a Client fault" (SOAP 1.2 Sender alike, a dotted refinement too), "a help page (200,
    text/html)", "HTTP 405, text/html", "an empty body (HTTP 200)"..."""
    document = _document(response)
    payload = _payload(document)
    if payload is not None:
        if local_name(payload) == "Fault":
            if child(payload, "faultcode", "Code") is None:
                return "a fault without a code"
            blame = fault_class(local_code(fault_code(payload)))
            return f"a {blame or 'coded'} fault"
        if response.status == 200:
            return local_name(payload)
    media = media_type(response.content_type) or "no Content-Type"
    if response.status == 200 and media == "text/html":
        return HELP_PAGE
    if response.status == 200 and not response.body.strip():
        return "an empty body (HTTP 200)"
    return f"HTTP {response.status}, {media}"


def _document(response: HttpResponse) -> etree._Element | None:
    body = response.body.strip()
    if not body.startswith(b"<"):
        return None
    try:
        return parse_xml(response.body)
    except XMLRejected:
        return None


def _payload(document: etree._Element | None) -> etree._Element | None:
    if document is None or local_name(document) != "Envelope":
        return None
    body = child(document, "Body")
    kids = element_children(body) if body is not None else []
    return kids[0] if kids else None


@dataclass(frozen=True)
class SpecProblem:
    """What an answer breaks of the spec: the aspect ("envelope", "content-type"), what the
    spec asks and what came, each in words, and what came as the object of "answered with"
    ("Content-Type text/xml, not text/xml; charset=utf-8 (4.1 rule 7)")."""

    aspect: str
    expected: str
    actual: str
    words: str
    #: The answer's SOAP version differs from the request's: the words every comparison uses
    #: (one cause with R5-ENVELOPE's, whatever the request was).
    version: bool = False


def _spec_problem(odd: OddRequest, response: HttpResponse) -> SpecProblem | None:
    return answer_problem(odd.binding, response)


def answer_problem(binding: Binding, response: HttpResponse) -> SpecProblem | None:
    """What the answer to a request over ``binding`` breaks of the spec (4.1 rules 5, 7), if
    anything: a SOAP answer (any 200, or an XML body) is an envelope of the request's
    version, typed ``text/xml; charset=utf-8`` (1.1) or ``application/soap+xml;
    charset=utf-8`` (1.2). The odd requests and the ASMX matrix judge their answers so."""
    if not binding.is_soap:
        return None
    body = response.body.strip()
    media = media_type(response.content_type) or ""
    if response.status != 200 and not (body.startswith(b"<") or media.endswith("xml")):
        return None  # an HTTP error that is no SOAP answer: the spec is silent (section 7)
    if response.status != 200 and not body:
        return None
    label = binding.label
    document = _document(response)
    if document is None or local_name(document) != "Envelope":
        form = "no XML" if document is None else f"an XML <{local_name(document)}> document"
        return SpecProblem("envelope", f"a {label} envelope", form,
                           f"{form}, no SOAP envelope (4.1 rule 5)")
    payload = _payload(document)
    answered = next((b for b in (Binding.SOAP11, Binding.SOAP12)
                     if b.envelope_ns == namespace(document)), None)
    code = fault_code(payload) if payload is not None and local_name(payload) == "Fault" \
        else None
    if not in_its_version(binding, answered, code):
        other = answered.label if answered else f"{namespace(document) or 'no'} namespace"
        return SpecProblem("envelope", f"a {label} envelope", f"a {other} envelope",
                           version_words(label, other), version=True)
    if payload is not None and local_name(payload) == "Fault":
        code = "faultcode" if binding is Binding.SOAP11 else "Code"
        if child(payload, code) is None:
            return SpecProblem("envelope", f"a {label} fault (with its {code})",
                               f"a fault without {code}",
                               f"a fault without {code}: no {label} fault (4.1 rule 5)")
    want = normalise_content_type(binding.soap_content_type)
    got = normalise_content_type(response.content_type)
    if got != want:
        shown = response.content_type or NO_CONTENT_TYPE
        return SpecProblem("content-type", f"Content-Type {want}", f"Content-Type {shown}",
                           f"Content-Type {shown}, not {want} (4.1 rule 7)")
    return None


def judge(odd: OddRequest, response: HttpResponse | None, *, index: int | None = None,
          source: str | None = None) -> Finding:
    """The one finding of an odd request's answer (see the module's docstring)."""
    where = {"operation": odd.endpoint or odd.operation.name,  # a bare GET: its endpoint
             "binding": odd.binding.label, "index": index, "source": source}
    sent = f"{odd.kind}" + (f" over {odd.binding.label}" if odd.endpoint is None else "")
    if response is None:
        return Finding(odd.rule, Verdict.NOT_APPLICABLE, **where, message=f"{sent}: no answer",
                       cause="no answer to judge")
    actual = outcome(response)
    problem = _spec_problem(odd, response)
    if problem is not None:  # an answer in the other version: R5-ENVELOPE's cause, said once
        return Finding(odd.rule, Verdict.FAILED, **where, expected=problem.expected,
                       actual=problem.actual, message=f"{sent}: answered with {actual}",
                       cause=problem.words if problem.version
                       else f"{sent}: answered with {problem.words}")
    if _as_asmx(odd, actual, response):
        return Finding(odd.rule, Verdict.PASSED, **where, expected=odd.expected, actual=actual)
    return Finding(odd.rule, Verdict.WARNING, **where, expected=odd.expected, actual=actual,
                   message="the spec is silent; the real ASMX answers otherwise",
                   cause=f"{sent}: answered with {actual} where ASMX answers with "
                         f"{odd.expected}")


def compare(odd: OddRequest, primary: HttpResponse, candidate: HttpResponse
            ) -> list[Difference]:
    """``diff --errors``: the candidate's answer to an odd request against the primary's, by
    what each is (not body by body: two help pages, two faults' texts differ by nature). What
    the candidate breaks of the spec is a difference that fails; another outcome than the
    primary's is a warning (the spec is silent)."""
    expected, actual = outcome(primary), outcome(candidate)
    problem = _spec_problem(odd, candidate)
    if problem is not None and _spec_problem(odd, primary) is None:
        kind = "content-type" if problem.aspect == "content-type" else "body"
        return [Difference(kind, "", problem.expected, problem.actual,
                           summary=problem.words if problem.version
                           else f"the candidate answers with {problem.words}")]
    if _same_outcome(odd, expected, actual, primary, candidate):
        return []
    return [Difference("outcome", "", expected, actual, True,
                       f"the candidate answers with {actual} where the primary answers with "
                       f"{expected} (the spec is silent)")]


def _same_outcome(odd: OddRequest, expected: str, actual: str, primary: HttpResponse,
                  candidate: HttpResponse) -> bool:
    if odd.endpoint is not None:  # a help page, or an error status: alike
        def kind(text: str, response: HttpResponse) -> str:
            return "error" if response.status >= 400 else text
        return kind(expected, primary) == kind(actual, candidate)
    return expected == actual


def _as_asmx(odd: OddRequest, actual: str, response: HttpResponse) -> bool:
    if odd.endpoint is not None:  # help page, or an error page with Documentation off
        return actual == HELP_PAGE or response.status >= 400
    return actual == odd.expected


def _with_body(request: HttpRequest, body: bytes) -> HttpRequest:
    return HttpRequest(request.method, request.url, request.headers,
                       body).with_header("Content-Length", str(len(body)))
