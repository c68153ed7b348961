"""The rules catalogue: every binding rule of the spec as a plain named check, keyed by a stable
rule ID tied to its clause.

A check is a function over a Case (one exchange, read once in the contract's terms) that yields
Outcomes; ``judge`` turns them into Findings naming rule, operation, binding, expected and
actual. The list of checks is data (``CATALOGUE``): certify, lint and replay all judge traffic
through ``judge`` and may restrict it to chosen rule IDs or to the request or response side.

Harmless variation passes every check: namespace prefixes, whitespace and pretty-printing, an
XML declaration or none, extra headers and the charset's case.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import NamedTuple
from urllib.parse import urlsplit

from lxml import etree

from harness.contract.bindings import (
    Binding,
    Classification,
    ResponseReading,
    argument_element,
    classify,
    in_its_version,
    read_response,
    soap_body,
    soap_version,
    structured_argument,
)
from harness.contract.model import Contract, Operation, ParamType
from harness.contract.structure import check as check_structure
from harness.contract.structure import signature
from harness.contract.xmlsafe import element_children, local_name, namespace
from harness.errors import ClassificationError, ServiceDescription
from harness.frozen import frozen
from harness.http_messages import charset as charset_of
from harness.judge import request_validation
from harness.judge.causes import failed_call_cause, leak_cause
from harness.judge.findings import DESCRIPTION, Finding, Verdict
from harness.judge.profiles import Profile
from harness.judge.request_validation import markup_refused
from harness.judge.security import judge_leaks
from harness.judge.words import message_words, shortened, shown_value, version_words
from harness.traffic.exchange import (
    Exchange,
    HttpRequest,
    HttpResponse,
    media_type,
)


class Level(StrEnum):
    MANDATORY = "mandatory"  # a failure fails the run
    PERMITTED = "permitted"  # a deviation is reported as a warning only


class Side(StrEnum):
    REQUEST = "request"
    RESPONSE = "response"
    BOTH = "both"


class Outcome(NamedTuple):  # a tuple: built ~20 times per exchange, cheaply
    """What one check found on one exchange."""

    verdict: Verdict
    expected: str = ""
    actual: str = ""
    message: str = ""
    #: A deviation the ASMX runtime accepts: failed under the spec profile, a warning under
    #: the asmx profile (``harness.judge.profiles``).
    tolerated: bool = False
    #: What happened, in words shared by every finding it explains (``Finding.cause``);
    #: empty: expected and actual say it.
    cause: str = ""
    #: What it is about among the findings of its cause (``Finding.detail``): the value.
    detail: str = ""


# The helpers build the tuple directly: NamedTuple's own __new__ is a Python-level layer more.
_new = tuple.__new__


def passed(expected: str = "", actual: str = "", message: str = "") -> Outcome:
    return _new(Outcome, (Verdict.PASSED, expected, actual, message, False, "", ""))


def failed(expected: str, actual: str, message: str = "", cause: str = "",
           detail: str = "") -> Outcome:
    return _new(Outcome, (Verdict.FAILED, expected, actual, message, False, cause, detail))


def warning(expected: str, actual: str, message: str = "", cause: str = "") -> Outcome:
    return _new(Outcome, (Verdict.WARNING, expected, actual, message, False, cause, ""))


def tolerated(expected: str, actual: str, message: str, cause: str = "",
              detail: str = "") -> Outcome:
    """A deviation the spec forbids and the ASMX runtime accepts: a failure under the spec
    profile, a warning under the asmx profile."""
    return _new(Outcome, (Verdict.FAILED, expected, actual, message, True, cause, detail))


def not_applicable(message: str) -> Outcome:
    """Not applicable; ``message`` says why (its cause, e.g. "the call failed with HTTP
    500 (see R4-STATUS)")."""
    return _new(Outcome, (Verdict.NOT_APPLICABLE, "", "", message, False, message, ""))


#: Outcomes that are the same every time, made once (a check returns them ~3 times an
#: exchange).
_HTTP_200 = (passed("HTTP 200", "HTTP 200"),)
_NO_CONTENT_TYPE = (passed("no Content-Type", "no Content-Type"),)
_NO_SOAP_ACTION = (passed("no SOAPAction header", "no SOAPAction header"),)
_NOT_AN_ERROR = (not_applicable("not an error answer"),)
_NO_SOAP_VERSION = (not_applicable("request Content-Type names no SOAP version"),)
_GET_WITHOUT_LENGTH = not_applicable("a GET without a body has no Content-Length")


@frozen  # built for every exchange judged
class Case:
    """One exchange in the contract's terms, built once and shared by every check."""

    exchange: Exchange
    contract: Contract
    operation: Operation
    binding: Binding
    #: None when the request did not classify (certify judges what it meant to send).
    classification: Classification | None
    #: None when there is no response.
    reading: ResponseReading | None
    sides: frozenset[Side]
    #: The same operation x binding sent again with the spec's plain values, when certify made
    #: such a call because this one failed (GAP-VALUES judges the refusal by it).
    control: Exchange | None = None
    #: Replay: the answer the recording holds for this request. Where it is a failed call, the
    #: rules that presuppose success do not apply; replay's comparison judges the new answer.
    recorded: HttpResponse | None = None
    #: The exchange's request and response, as attributes of their own (``read_case`` sets
    #: them): the checks read them ~20 times an exchange, a property call each.
    request: HttpRequest = None  # type: ignore[assignment]
    response: HttpResponse | None = None
    #: The request URL's path (``read_case``: from urlsplit's cache, classify split it).
    path: str = ""
    #: Why the response-side rules do not apply (its side not judged, no response), or None:
    #: worked out once (``read_case``), asked by ~5 rules an exchange.
    unanswered: Outcome | None = None

    def judges(self, side: Side) -> bool:
        return side in self.sides

    # Read once per exchange, on first use, and shared by the checks that need them.

    @cached_property
    def request_defect(self) -> str | None:
        """The first request-side rule the request breaks ("RULE: expected .., actual .."),
        or None for a valid call. Worked out only when an error answer asks for it."""
        request_only = replace(self, sides=frozenset((Side.REQUEST,)), unanswered=_NOT_JUDGED)
        for rule in _applicable(None, request_only.sides):
            for outcome in rule.outcomes(request_only):
                if outcome.verdict is Verdict.FAILED and rule.level is Level.MANDATORY:
                    return f"{rule.id}: expected {outcome.expected}, actual {outcome.actual}"
        return None

    @cached_property
    def values_refused(self) -> bool:
        """The target refuses these values, which the spec leaves open (4.10): this call failed
        while the same call with plain values (the control, certify's) succeeded; without a
        control (a recording), when the answer is ASP.NET's request validation refusing markup
        in a value (``request_validation``)."""
        response, control = self.response, self.control
        if response is None or response.status == 200:
            return False
        if control is None:
            return markup_refused(self.request, response) is not None
        return control.response is not None and control.response.status == 200

    @cached_property
    def payloads(self) -> list[etree._Element] | None:
        """Elements inside the request's SOAP Body (None when there is no envelope)."""
        envelope = self.classification.envelope if self.classification else None
        body = soap_body(envelope) if envelope is not None else None
        return element_children(body) if body is not None else None


@dataclass(frozen=True)
class Rule:
    id: str
    clause: str
    title: str
    level: Level
    side: Side
    check: Callable[[Case], Iterable[Outcome]]
    #: The deviation the asmx profile turns into a warning, when there is one.
    tolerates: str = ""
    #: Why the rule cannot apply to an operation x binding, known without the exchange (None:
    #: it may apply): worked out once per pair, not once per exchange (``_plan``).
    scope: Callable[[Operation, Binding], str | None] | None = None

    def applies_to(self, sides: frozenset[Side]) -> bool:
        return self.side is Side.BOTH or self.side in sides

    def out_of_scope(self, op: Operation, binding: Binding) -> Outcome | None:
        reason = self.scope(op, binding) if self.scope is not None else None
        return None if reason is None else not_applicable(reason)

    def outcomes(self, case: Case) -> Iterable[Outcome]:
        """The check's outcomes on ``case``, or the one not-applicable of its scope."""
        if (na := self.out_of_scope(case.operation, case.binding)) is not None:
            return (na,)
        return self.check(case)


# ------------------------------------------------------------------------------ small helpers


def _qname(ns: str | None, name: str) -> str:
    return f"{{{ns}}}{name}" if ns else name


def _describe_element(element: etree._Element | None) -> str:
    if element is None:
        return "no element"
    tag = element.tag
    if isinstance(tag, str):  # lxml's "{ns}name" or "name": _qname's own form already
        return tag
    return _qname(namespace(element), local_name(element))


def _content_type(value: str | None) -> str:
    return value if value is not None else "no Content-Type"


def soap_only(op: Operation, binding: Binding) -> str | None:
    """Scope of the SOAP rules."""
    return None if binding.is_soap else f"{binding.label} is not SOAP"


def http_only(op: Operation, binding: Binding) -> str | None:
    """Scope of the GET/POST rules."""
    return f"{binding.label} is SOAP" if binding.is_soap else None


def soap11_only(op: Operation, binding: Binding) -> str | None:
    return None if binding is Binding.SOAP11 else f"{binding.label} carries no SOAPAction"


def soap12_only(op: Operation, binding: Binding) -> str | None:
    return None if binding is Binding.SOAP12 else "only SOAP 1.2 requests"


def with_result(op: Operation, binding: Binding) -> str | None:
    return None if op.result is not None and op.result_element is not None else (
        f"{op.name} has no result")


def with_structure(op: Operation, binding: Binding) -> str | None:
    return None if op.result_type is ParamType.COMPLEX else (
        f"{op.name} has no array or complex result")


def _with(guess: str | None, message: str) -> str:
    """``message``, led by the attribution's "did you mean" when the request was not exact."""
    return f"{guess}: {message}" if guess else message


def _no_envelope(case: Case) -> Outcome | None:
    """not applicable when a SOAP body is no envelope at all (BIND-ENVELOPE reports it once)."""
    classification = case.classification
    if classification is not None and classification.envelope is None and case.binding.is_soap:
        return not_applicable("no SOAP envelope (see BIND-ENVELOPE)")
    return None


def _unanswered(sides: frozenset[Side], response: HttpResponse | None) -> Outcome | None:
    """not applicable unless the response side is judged and there is a response
    (``Case.unanswered``)."""
    if Side.RESPONSE not in sides:
        return _NOT_JUDGED
    if response is None:
        return _NO_RESPONSE
    return None


_NOT_JUDGED = not_applicable("response side not judged")
_NO_RESPONSE = not_applicable("no response")


def _refusal_permitted(case: Case) -> Outcome | None:
    """not applicable when an error answers a request that is not a valid call (refusing it
    is right: its request rule reports the defect, e.g. a non-integer R9-INT) or refuses
    values the spec leaves open (GAP-VALUES reports it)."""
    response = case.response
    if response is None or response.status == 200:
        return None
    if response.status >= 400 and case.request_defect is not None:
        return not_applicable(f"an error answers an invalid request ({case.request_defect})")
    if case.values_refused:
        return not_applicable(f"HTTP {response.status}: the target refuses these values "
                              "(see GAP-VALUES)")
    return None


def _recorded_failure(case: Case) -> Outcome | None:
    """not applicable when the recording replayed holds a failed call: the target is judged
    against the recording (REPLAY-STATUS and the other comparisons), not against success."""
    recorded = case.recorded
    if recorded is None or recorded.status == 200:
        return None
    return not_applicable(f"the recording holds a failed call (HTTP {recorded.status}): "
                          "the answer is compared with it (REPLAY-*)")


def _presupposes_success(case: Case) -> Outcome | None:
    """The one gate of every rule that presupposes a successful call: not applicable when the
    call did not succeed, or when the recording it replays holds a failed call. R4-STATUS
    reports a failed call once, with its cause (one cause, one failure)."""
    if case.recorded is not None and (na := _recorded_failure(case)) is not None:
        return na  # (replay's: lint and certify have no recorded answer, ~3 calls saved)
    response = case.response
    if response is None or response.status == 200:
        return None
    return _refusal_permitted(case) or not_applicable(
        f"the call failed with HTTP {response.status} (see R4-STATUS)")


def _fault_expected(case: Case) -> Outcome | None:
    """The SOAP form rules (envelope version, Content-Type) judge a failed call only when it
    answers with a SOAP envelope, a fault; any other error body is R4-STATUS's one failure."""
    response, reading = case.response, case.reading
    if response is None or response.status == 200:
        return None
    if reading is not None and reading.envelope_binding is not None:
        return None
    return _presupposes_success(case)


def failure_cause(response: HttpResponse, reading: ResponseReading | None,
                  width: int = 120) -> str:
    """Why a call failed, in one line: the status, then the fault code and the first line of
    its reason, an HTML page's title, or the body's first line that says something (not an
    XML declaration), shortened to ``width``."""
    head = f"HTTP {response.status}"
    if reading is not None and (reading.fault_code or reading.fault_reason):
        said = message_words(reading.fault_reason or "")
        detail = f"{reading.fault_code or 'no code'} fault" + (f": {said}" if said else "")
    else:
        detail = message_words(_first_words(response.body[:4096].decode("utf-8", "replace")),
                               width)
        if not detail:
            return f"{head}, empty body"
    return shortened(f"{head}: {detail}", width)


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_MARKUP_ONLY = re.compile(r"^(<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|\s)*$", re.I)


def _first_words(text: str) -> str:
    """What an error body says first: an HTML page's title, else its first line that is not
    only an XML declaration, a doctype or a comment."""
    if (title := _TITLE.search(text)) is not None and title.group(1).strip():
        return "page " + repr(" ".join(title.group(1).split()))
    for line in text.splitlines():
        if line.strip() and not _MARKUP_ONLY.match(line):
            return line.strip()
    return ""


def _unreadable(reading: ResponseReading) -> str:
    return f"unreadable body ({reading.problem})" if reading.problem else "empty body"


# ------------------------------------------------------------------------ request-side checks


def method_and_path(case: Case) -> tuple[Outcome, ...]:
    """4.1 table: method and path per binding (a binding the target does not serve is a
    failed call: R4-STATUS reports it with its cause)."""
    request, op = case.request, case.operation
    want_path = op.endpoint if case.binding.is_soap else f"{op.endpoint}/{op.name}"
    expected = f"{case.binding.method} .../{want_path.lstrip('/')}"
    path = case.path
    actual = f"{request.method} {path}"
    guess = case.classification.guess if case.classification else None
    if request.method.upper() != case.binding.method:
        return (failed(expected, actual, _with(guess, "wrong method for the binding")),)
    elif path.endswith(want_path):
        return (passed(expected, actual),)
    elif (path.lower().endswith(want_path.lower())
          and path.endswith(want_path[len(op.endpoint):])):
        return (tolerated(expected, actual, "endpoint path differs in case only (IIS accepts it)"),)
    elif path.lower().endswith(want_path.lower()):
        return (failed(expected, actual, _with(guess, "operation names are case-sensitive "
                                                       "(ASMX refuses another case)")),)
    else:
        return (failed(expected, actual, _with(guess, "path is not the binding's path")),)


def request_content_type(case: Case) -> tuple[Outcome, ...]:
    """4.1 table: request Content-Type per binding; none for GET."""
    want = case.binding.request_content_type
    actual = case.request.content_type
    if want is None:
        if actual is None:
            return _NO_CONTENT_TYPE
        return (warning("no Content-Type", actual, "a GET carries no body to type"),)
    media, charset = media_type(actual), charset_of(actual)
    if media != media_type(want):
        return (failed(want, _content_type(actual)),)
    elif not case.binding.is_soap or (charset or "").lower() == "utf-8":
        return (passed(want, _content_type(actual)),)
    elif charset is None:
        return (tolerated(want, _content_type(actual), "no charset (ASMX reads it as UTF-8)"),)
    else:
        return (failed(want, _content_type(actual), "charset is not utf-8"),)


def request_envelope(case: Case) -> tuple[Outcome, ...]:
    """4.1 table: the request envelope's namespace is the one of the SOAP version."""
    envelope = case.classification.envelope if case.classification else None
    want = _qname(case.binding.envelope_ns, "Envelope")
    if envelope is None:
        problem = case.classification.problem if case.classification else None
        return (failed(want, "no SOAP envelope" + (f" ({problem})" if problem else "")),)
    elif namespace(envelope) == case.binding.envelope_ns and local_name(envelope) == "Envelope":
        return (passed(want, _describe_element(envelope)),)
    else:
        return (failed(want, _describe_element(envelope), "envelope does not match the "
                        "Content-Type's SOAP version"),)


def operation_element(case: Case) -> tuple[Outcome, ...]:
    """4.1 table: the Body holds one element named <Operation> in the service namespace."""
    if (na := _no_envelope(case)) is not None:
        return (na,)
    want = _qname(case.contract.namespace, case.operation.name)
    payloads = case.payloads
    guess = case.classification.guess if case.classification else None
    if not payloads:
        return (failed(want, "no element in the SOAP Body"),)
    elif len(payloads) > 1:
        return (failed(f"one element {want}",
                        ", ".join(_describe_element(p) for p in payloads), "Body holds more"),)
    elif _describe_element(payloads[0]) == want:
        return (passed(want, want),)
    else:
        return (failed(want, _describe_element(payloads[0]), guess or ""),)


def soap_action(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 1: SOAP 1.1 requests carry SOAPAction "{namespace}/<Operation>"."""
    want = case.contract.soap_action(case.operation)
    actual = case.request.header("SOAPAction")
    if actual is None:
        return (failed(want, "no SOAPAction header"),)
    elif actual.strip() == want:
        return (passed(want, actual),)
    elif actual.strip().strip('"') == want.strip('"'):
        return (tolerated(want, actual, "SOAPAction not quoted (the spec and WS-I BP R2744 "
                           "say quoted; ASMX accepts it)"),)
    else:
        return (failed(want, actual),)


def no_soap_action(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 2: SOAP 1.2 requests carry no SOAPAction header."""
    actual = case.request.header("SOAPAction")
    if actual is None:
        return _NO_SOAP_ACTION
    else:
        return (failed("no SOAPAction header", f"SOAPAction: {actual}"),)


def length_and_host(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 3: Content-Length equal to the body's length, and a Host header."""
    request = case.request
    host = request.header("Host")
    if not (host or "").strip():
        has_host = failed("a Host header", "no Host header")
    else:
        has_host = passed("a Host header", f"Host: {host}")
    length = request.header("Content-Length")
    if not request.body and length is None and request.method.upper() == "GET":
        return has_host, _GET_WITHOUT_LENGTH
    want = str(len(request.body))
    if length is None:
        return has_host, failed(f"Content-Length: {want}", "no Content-Length")
    if length.strip() == want:
        return has_host, passed(f"Content-Length: {want}", f"Content-Length: {length}")
    return has_host, failed(f"Content-Length: {want}", f"Content-Length: {length}")


def parameters(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 9: parameters named exactly as the spec; SOAP: child elements in table order."""
    want = list(case.operation.parameter_names)
    if case.classification is None:
        return (failed(", ".join(want), "request does not classify"),)
    if (na := _no_envelope(case)) is not None:
        return (na,)
    sent = [name for name, _ in case.classification.arguments]
    if case.binding.is_soap:
        return _soap_parameters(case, want, sent)
    missing = [n for n in want if n not in sent]
    extra = [n for n in sent if n not in want]
    if missing:
        return (failed(", ".join(want), ", ".join(sent) or "no fields",
                        f"missing {', '.join(missing)}"),)
    elif extra:
        return (warning(", ".join(want), ", ".join(sent), f"extra fields {', '.join(extra)}"),)
    else:
        return (passed(", ".join(want), ", ".join(sent)),)


def _soap_parameters(case: Case, want: list[str], sent: list[str]) -> tuple[Outcome, ...]:
    expected = " > ".join(want) + " (in order)"
    if sent != want:
        return (failed(expected, " > ".join(sent) or "no child elements"),)
    payloads = case.payloads or []
    stray = [_describe_element(c) for p in payloads[:1] for c in element_children(p)
             if namespace(c) != case.contract.namespace]
    if stray:
        return (failed(f"children in {case.contract.namespace}", ", ".join(stray)),)
    else:
        return (passed(expected, " > ".join(sent)),)


_VERSION_SEGMENT = re.compile(r"v\d+(\.\d+)*|version\d*", re.I)


@lru_cache(maxsize=256)  # a path takes few values in any traffic; bounded all the same
def _version_segments(path: str) -> tuple[str, ...]:
    """The segments of ``path`` that are version segments (v2, v1.1, version3), in order."""
    return tuple(s for s in path.split("/") if _VERSION_SEGMENT.fullmatch(s))


def typed_parameters(kind: ParamType) -> Callable[[Case], Iterator[Outcome]]:
    """4.1 rule 9: a parameter of type ``kind`` carries a value of that type: its XSD lexical
    form in SOAP, text ASMX converts in GET/POST (``ParamType.accepts``, the one check the
    reference uses too); of a type ASMX reads as any text (xs:integer, xs:token...), a value
    outside XSD's form is tolerated (``ParamType.lexical``: the spec profile fails it)."""
    def check(case: Case) -> Iterator[Outcome]:
        typed = [p for p in case.operation.parameters if p.type is kind]
        args = case.classification.args if case.classification else {}
        for p in typed:
            value = args.get(p.name)
            want = f"{p.name}: {_a(p.type_name or kind.value)}"
            if value is None:
                yield not_applicable(f"{p.name} not sent (see R9-PARAMETERS)")
            elif not p.accepts(value, http=not case.binding.is_soap):
                yield failed(want, repr(value), cause=f"{p.name}: values that are no "
                             f"{p.type_name or kind.value}", detail=shown_value(value))
            elif not p.lexical(value, http=not case.binding.is_soap):
                # ASMX reads this type as any text, while the WSDL promises XSD's form
                yield tolerated(want, repr(value), f"no {kind.value} by XSD; ASMX takes any "
                                                   "text for it",
                                cause=f"{p.name}: values that are no {kind.value} by XSD "
                                      "(ASMX takes any text)", detail=shown_value(value))
            else:
                yield passed(want, value)
    return check


def complex_parameters(case: Case) -> Iterator[Outcome]:
    """4.1 rule 9: an array or complex parameter as its type says: in SOAP its element holds
    the type's structure (``structure.check``: names, order, occurrences, each leaf by its
    R9-<TYPE> check); in GET/POST an array of a simple type is one field per item, each a
    value of the item type."""
    op, call = case.operation, case.classification
    for p in (p for p in op.parameters if p.type is ParamType.COMPLEX):
        want = signature(op.schema, p.type_name or "")
        if call is None or p.name not in dict(call.arguments):
            yield not_applicable(f"{p.name} not sent (see R9-PARAMETERS)")
            continue
        if case.binding.is_soap:
            element = argument_element((case.payloads or [None])[0], p.name)
            problems = [] if element is None else check_structure(
                op.schema, p.type_name or "", element, case.contract.namespace)
        else:
            try:
                structured_argument(call, p.name)
                problems = []
            except ValueError as exc:
                problems = [str(exc)]
        if problems:
            yield failed(f"{p.name}: {want}", problems[0], "; ".join(problems[1:]))
        else:
            yield passed(f"{p.name}: {want}", f"{p.name} as its type says")


def _typed_scope(kind: ParamType) -> Callable[[Operation, Binding], str | None]:
    def scope(op: Operation, binding: Binding) -> str | None:
        if any(p.type is kind for p in op.parameters):
            return None
        return f"{op.name} has no {kind.value} parameter"
    return scope


def _a(type_name: str) -> str:
    return f"{'an' if type_name[:1].lower() in 'aeiou' else 'a'} {type_name}"


#: The R9 rule of each type (none for a type every text is a value of: string, token...;
#: arrays and complex types: R9-COMPLEX).
TYPED_RULES: tuple[Rule, ...] = (
    *(Rule(kind.rule_id, "4.1 rule 9", f"{kind.value} parameters carry {kind.value} values"
           + (" (integers; as text in GET/POST)" if kind is ParamType.INT else ""),
           Level.MANDATORY, Side.REQUEST, typed_parameters(kind), scope=_typed_scope(kind))
      for kind in ParamType if kind.is_simple and not kind.any_text),
    Rule(ParamType.COMPLEX.rule_id, "4.1 rule 9", "array and complex parameters carry their "
         "type's structure: elements named and in order, each leaf a value of its type",
         Level.MANDATORY, Side.REQUEST, complex_parameters,
         scope=_typed_scope(ParamType.COMPLEX)),
)


def no_version_segment(case: Case) -> tuple[Outcome, ...]:
    """9.2: no version segment in any path."""
    path = case.path
    segments = _version_segments(path)
    if segments:
        return (failed("no version segment", path, f"version segment {segments[0]!r}"),)
    else:
        return (passed("no version segment", path),)


# ----------------------------------------------------------------------- response-side checks


def status_ok(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 4: a successful call returns 200. A failed call is reported here, once, with
    its cause; the rules that presuppose success are not applicable to it."""
    response = case.response
    if Side.RESPONSE not in case.sides:
        return (not_applicable("response side not judged"),)
    elif response is None:
        return (failed("HTTP 200", "no response"),)
    elif (na := _recorded_failure(case)) is not None:
        return (na,)
    elif response.status == 200:
        return _HTTP_200
    elif (na := _refusal_permitted(case)) is not None:
        return (na,)
    else:
        line = failure_cause(response, case.reading)
        return (failed("HTTP 200", line, cause=failed_call_cause(response.status, line)),)


def allowed_values(case: Case) -> tuple[Outcome, ...]:
    """4.10: allowed values are not shown. A target may refuse values (ASP.NET's request
    validation refuses markup in GET/POST values) as long as the same call with the spec's
    plain values succeeds: certify makes that call, and the refusal is a permitted deviation.
    A recording holds no such call: there ASP.NET's refusal of markup is recognised itself."""
    if (na := case.unanswered) is not None:
        return (na,)
    response = case.response
    assert response is not None
    if response.status == 200:
        return _HTTP_200
    elif case.values_refused and case.control is None:
        return (warning("HTTP 200", failure_cause(response, case.reading, width=100),
                         f"{request_validation.EXPLANATION}: "
                         f"{markup_refused(case.request, response)}"),)
    elif case.values_refused:
        line = failure_cause(response, case.reading, width=100)
        return (warning("HTTP 200", line,
                         "these values are refused while the same call with plain values succeeds;"
                         " allowed values are not shown (4.10)",
                         cause="values refused while the same call with plain values succeeds "
                               f"(4.10): HTTP {response.status}"),)
    elif case.control is None:
        return (not_applicable("no call with plain values to compare (see R4-STATUS)"),)
    else:
        return (not_applicable("the call fails with plain values too (see R4-STATUS)"),)


def response_envelope(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 5: a SOAP response has the same envelope type as the request."""
    return _envelope_version(case, case.binding, "the request's")


def version_by_content_type(case: Case) -> tuple[Outcome, ...]:
    """9.1: SOAP 1.1 and 1.2 share the path; the Content-Type picks the version answered."""
    named = soap_version(media_type(case.request.content_type))
    if named is None:
        return _NO_SOAP_VERSION
    return _envelope_version(case, named, "the Content-Type's")


def _envelope_version(case: Case, want: Binding, whose: str) -> tuple[Outcome, ...]:
    if (na := case.unanswered or _fault_expected(case)) is not None:
        return (na,)
    reading = case.reading
    expected = f"{want.label} envelope ({whose} version)"
    got = reading.envelope_binding if reading else None
    if got is not None and in_its_version(want, got, reading.fault_code):
        return (passed(expected, f"{got.label} envelope"),)
    elif got is not None:  # in the comparison's words: one cause with replay's and diff's
        return (failed(expected, f"{got.label} envelope",
                        cause=version_words(want.label, got.label)),)
    elif reading is not None and reading.document is not None:
        return (failed(expected, f"root {_describe_element(reading.document)}"),)
    else:
        return (failed(expected, _unreadable(reading or ResponseReading())),)


def response_element(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 5: the SOAP Body holds <Operation>Response in the service namespace."""
    if (na := case.unanswered) is not None:
        return (na,)
    if (na := _presupposes_success(case)) is not None:
        return (na,)
    want = _qname(case.contract.namespace, case.operation.response_element)
    payload = case.reading.payload if case.reading else None
    if payload is None:
        reading = case.reading or ResponseReading()
        return (failed(want, "no element in the SOAP Body" if reading.document is not None
                        else _unreadable(reading)),)
    elif _describe_element(payload) == want:
        return (passed(want, want),)
    else:
        return (failed(want, _describe_element(payload)),)


def _response_payload(case: Case) -> etree._Element | None:
    """The SOAP response element when it is the right one (others are R5's business)."""
    payload = case.reading.payload if case.reading else None
    want = _qname(case.contract.namespace, case.operation.response_element)
    return payload if payload is not None and _describe_element(payload) == want else None


def _void_success(case: Case) -> Outcome | None:
    """not applicable unless a judged response answers a successful call of an operation
    without a result (R6 and R8 share this gate)."""
    if (na := case.unanswered) is not None:
        return na
    if case.operation.result is not None:
        return not_applicable(f"{case.operation.name} has a result (see OP-RESULT)")
    return _presupposes_success(case)


def empty_response(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 6: <Operation>Response is empty for every operation without a result."""
    if (na := _void_success(case)) is not None:
        return (na,)
    payload = _response_payload(case)
    if payload is None:
        return (not_applicable("no response element (see R5-RESPONSE-ELEMENT)"),)
    children = element_children(payload)
    text = (payload.text or "").strip()
    if children or text:
        content = ", ".join(_describe_element(c) for c in children) or repr(text)
        return (failed(f"empty {case.operation.response_element}", content),)
    else:
        return (passed(f"empty {case.operation.response_element}", "empty"),)


def soap_content_type(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 7: SOAP responses are text/xml or application/soap+xml, charset=utf-8."""
    if (na := case.unanswered or _fault_expected(case)) is not None:
        return (na,)
    return (_typed(case.response, case.binding.soap_content_type or ""),)


def _typed(response: HttpResponse, want: str) -> Outcome:
    """Media type equal, charset utf-8 in any case; a missing charset fails."""
    actual = response.content_type
    charset = charset_of(actual)
    if media_type(actual) == media_type(want) and (charset or "").lower() == "utf-8":
        return passed(want, actual or "")
    reason = "no charset" if actual and charset is None else ""
    return failed(want, _content_type(actual), reason)


def http_empty_body(case: Case) -> tuple[Outcome, ...]:
    """4.1 rule 8: a GET/POST call of an operation without a result gets 200 and no body."""
    if (na := _void_success(case)) is not None:
        return (na,)
    response = case.response
    body = response.body.decode("utf-8", "replace")
    actual = f"HTTP {response.status}, " + (f"body {body[:80]!r}" if body else "no body")
    if response.status == 200 and not response.body.strip():
        return (passed("HTTP 200, no body", actual),)
    else:
        return (failed("HTTP 200, no body", actual),)


def operation_endpoint(case: Case) -> tuple[Outcome, ...]:
    """4.2-4.9: the operation is served at its own endpoint (4.8 and 4.9 share one)."""
    op = case.operation
    endpoint = case.classification.endpoint if case.classification else op.endpoint
    if Side.REQUEST not in case.sides:  # replay judges the target, not the recorded request
        asked = not_applicable("request side not judged")
    elif endpoint != op.endpoint:
        return (failed(f"{op.name} at {op.endpoint}", f"asked at {endpoint}",
                       f"clause {op.clause}"),)
    else:
        asked = passed(f"{op.name} at {op.endpoint}", f"asked at {endpoint}")
    if Side.RESPONSE not in case.sides or case.response is None:
        return (asked,)
    if (na := _presupposes_success(case)) is not None:
        return asked, na
    return asked, passed(f"{op.name} served at {op.endpoint}", f"HTTP {case.response.status}")


def operation_result(case: Case) -> Iterator[Outcome]:
    """4.7: the result shape: SOAP <Operation>Result in the response element; GET/POST a root
    element of the result type in the service namespace, text/xml; charset=utf-8."""
    op = case.operation
    if (na := case.unanswered or _presupposes_success(case)) is not None:
        yield na
        return
    ns = case.contract.namespace
    if case.binding.is_soap:
        payload = _response_payload(case)
        if payload is None:
            yield not_applicable("no response element (see R5-RESPONSE-ELEMENT)")
            return
        want = _qname(ns, op.result_element)
        children = [_describe_element(c) for c in element_children(payload)]
        if children == [want]:
            yield passed(f"one {want}", want)
            yield _result_value(op, case.reading)
        else:
            yield failed(f"one {want}", ", ".join(children) or "empty response element")
        return
    response, reading = case.response, case.reading
    yield _typed(response, "text/xml; charset=utf-8")
    want = _qname(ns, op.result_root or "")
    root = reading.document if reading else None
    if root is None:
        yield failed(f"root {want}", _unreadable(reading or ResponseReading()))
    elif _describe_element(root) == want and (op.result_type is ParamType.COMPLEX
                                              or not element_children(root)):
        yield passed(f"root {want}", f"root {want}")
        yield _result_value(op, reading, http=True)
    else:
        yield failed(f"root {want}", f"root {_describe_element(root)}")


def _result_value(op: Operation, reading: ResponseReading | None,
                  http: bool = False) -> Outcome:
    """The result's text is a value of the result type (as XmlSerializer writes it; a
    GET/POST document of a hexBinary holds base64: ``ParamType.http_result``)."""
    kind, text = op.result_type, reading.result if reading else None
    if http and kind is ParamType.HEX_BINARY:
        kind = kind.http_result
    want = f"{_a(op.result or '')} result"
    if kind is None or text is None or not kind.is_simple:
        return not_applicable(f"{op.name}: no simple result to read")
    if kind.lexical(text, op.result_values):
        return passed(want, text if len(text) <= 80 else text[:77] + "...")
    return failed(want, repr(text[:80]))


def result_structure(case: Case) -> Iterator[Outcome]:
    """4.7: an array or complex result has its type's structure as XmlSerializer writes it:
    child elements in the service namespace, named and in the sequence's order, as often as
    their occurrences allow, and each leaf a value of its type (its R9-<TYPE> check)."""
    op = case.operation
    if (na := case.unanswered or _presupposes_success(case)) is not None:
        yield na
        return
    node = case.reading.result_node if case.reading else None
    if node is None:
        yield not_applicable("no result element (see OP-RESULT)")
        return
    want = signature(op.schema, op.result or "")
    problems = check_structure(op.schema, op.result or "", node, case.contract.namespace)
    if problems:
        yield failed(want, problems[0], "; ".join(problems[1:]))
    else:
        yield passed(want, f"{sum(1 for _ in node.iter()) - 1} elements as the type says")


def no_leak(case: Case) -> tuple[Outcome, ...]:
    """7 (silent): an error answer leaks no implementation detail (security.judge_leaks). A
    permitted deviation here: stock ASP.NET sends stack traces to local clients; ``harness
    probe`` fails it."""
    if (skip := case.unanswered) is not None:
        return (skip,)
    judged = judge_leaks(case.response)  # type: ignore[arg-type]
    if judged is None:
        return _NOT_AN_ERROR
    else:
        verdict, expected, actual = judged
        return (Outcome(verdict, expected, actual, "", False, leak_cause(expected, actual)),)


# -------------------------------------------------------------------------------- catalogue

UNCLASSIFIED = "UNCLASSIFIED"
#: The default profile: the spec's rules as written, no overrides.
SPEC = Profile()

CATALOGUE: tuple[Rule, ...] = (
    Rule("BIND-METHOD-PATH", "4.1 table", "method and path of the binding",
         Level.MANDATORY, Side.REQUEST, method_and_path, "endpoint path differing in case"),
    Rule("BIND-REQUEST-CONTENT-TYPE", "4.1 table", "request Content-Type of the binding",
         Level.MANDATORY, Side.REQUEST, request_content_type, "SOAP Content-Type without charset"),
    Rule("BIND-ENVELOPE", "4.1 table", "request envelope namespace of the SOAP version",
         Level.MANDATORY, Side.REQUEST, request_envelope, scope=soap_only),
    Rule("BIND-OPERATION-ELEMENT", "4.1 table",
         "Body holds one <Operation> element in the service namespace",
         Level.MANDATORY, Side.REQUEST, operation_element, scope=soap_only),
    Rule("R1-SOAPACTION", "4.1 rule 1", "SOAP 1.1 SOAPAction is \"{namespace}/<Operation>\"",
         Level.MANDATORY, Side.REQUEST, soap_action, "unquoted SOAPAction",
         scope=soap11_only),
    Rule("R2-NO-SOAPACTION", "4.1 rule 2", "SOAP 1.2 request carries no SOAPAction",
         Level.MANDATORY, Side.REQUEST, no_soap_action, scope=soap12_only),
    Rule("R3-LENGTH-HOST", "4.1 rule 3", "Content-Length matches the body; Host present",
         Level.MANDATORY, Side.REQUEST, length_and_host),
    Rule("R4-STATUS", "4.1 rule 4", "a successful call returns HTTP 200",
         Level.MANDATORY, Side.RESPONSE, status_ok),
    Rule("R5-ENVELOPE", "4.1 rule 5", "SOAP response envelope of the request's version",
         Level.MANDATORY, Side.RESPONSE, response_envelope, scope=soap_only),
    Rule("R5-RESPONSE-ELEMENT", "4.1 rule 5",
         "Body holds <Operation>Response in the service namespace",
         Level.MANDATORY, Side.RESPONSE, response_element, scope=soap_only),
    Rule("R6-EMPTY-RESPONSE", "4.1 rule 6", "<Operation>Response empty (operations without result)",
         Level.MANDATORY, Side.RESPONSE, empty_response, scope=soap_only),
    Rule("R7-SOAP-CONTENT-TYPE", "4.1 rule 7", "SOAP response Content-Type with charset=utf-8",
         Level.MANDATORY, Side.RESPONSE, soap_content_type, scope=soap_only),
    Rule("R8-HTTP-EMPTY-BODY", "4.1 rule 8", "GET/POST without result: 200 and no body",
         Level.MANDATORY, Side.RESPONSE, http_empty_body, scope=http_only),
    Rule("R9-PARAMETERS", "4.1 rule 9", "parameters named as the spec, SOAP in table order",
         Level.MANDATORY, Side.REQUEST, parameters),
    *TYPED_RULES,
    Rule("GAP-VALUES", "4.10", "values the spec leaves open: refused only where plain ones "
         "succeed", Level.PERMITTED, Side.RESPONSE, allowed_values),
    Rule("OP-ENDPOINT", "4.2-4.9", "operation served at its own endpoint",
         Level.MANDATORY, Side.BOTH, operation_endpoint),
    Rule("OP-RESULT", "4.7", "result element / result document of the operation",
         Level.MANDATORY, Side.RESPONSE, operation_result, scope=with_result),
    Rule("OP-RESULT-STRUCTURE", "4.7", "an array or complex result has its type's structure: "
         "elements named and in order, each leaf a value of its type",
         Level.MANDATORY, Side.RESPONSE, result_structure, scope=with_structure),
    Rule("V1-VERSION-BY-CONTENT-TYPE", "9.1",
         "SOAP version answered is the one the Content-Type names",
         Level.MANDATORY, Side.RESPONSE, version_by_content_type, scope=soap_only),
    Rule("V2-NO-VERSION-SEGMENT", "9.2", "no version segment in the path",
         Level.MANDATORY, Side.REQUEST, no_version_segment),
    Rule("SEC-LEAK", "7", "an error answer leaks no implementation detail (stack frames, "
         "source paths, SQL text, connection strings, internal host names; exception types, "
         "framework version)",
         Level.PERMITTED, Side.RESPONSE, no_leak),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in CATALOGUE}
#: Rules judged on every exchange a command sees, whatever rules it selects (certify's
#: scenarios select theirs by tag).
PASSIVE: tuple[str, ...] = ("SEC-LEAK",)


def with_passive(ids: Iterable[str] | None) -> tuple[str, ...] | None:
    """``ids`` plus the passive rules (None, all rules, stays None)."""
    return None if ids is None else tuple(dict.fromkeys([*ids, *PASSIVE]))


def titles() -> dict[str, str]:
    """Rule ID -> title, for ``Report(titles=...)``."""
    from harness.judge import asmx_matrix, odd_requests, wsdl_rules

    return {UNCLASSIFIED: "request is none of the contract's operation x binding pairs",
            **{rule.id: rule.title for rule in CATALOGUE}, **wsdl_rules.titles(),
            **odd_requests.titles(), **asmx_matrix.titles()}


def catalogue_ids() -> frozenset[str]:
    """Every rule ID a feature may check: the exchange rules, the WSDL rules and the rules of
    the requests the spec does not describe (``odd_requests``, the ASMX matrix)."""
    from harness.judge import asmx_matrix, odd_requests, wsdl_rules

    return (frozenset(RULES) | frozenset(wsdl_rules.RULES) | frozenset(odd_requests.RULES)
            | frozenset(asmx_matrix.titles()))


def select(ids: Iterable[str] | None) -> tuple[Rule, ...]:
    """The rules named by ``ids`` (all when None); an unknown ID is a KeyError naming it."""
    if ids is None:
        return CATALOGUE
    chosen = set(ids)
    unknown = chosen - set(RULES) - {UNCLASSIFIED}
    if unknown:
        raise KeyError(f"unknown rule ID(s): {', '.join(sorted(unknown))}")
    return tuple(rule for rule in CATALOGUE if rule.id in chosen)


Tally = Counter[tuple[str, str | None, str | None, Verdict]]


class BulkTally(Counter[tuple[str, str | None, str | None, Verdict]]):
    """A Tally that counts the not-applicable outcomes of the rules out of scope of an
    operation x binding (most of the catalogue for most pairs: ~55 of ~70 keys an exchange)
    as one number per pair, and spreads them into their keys in ``settle``: lint over a
    chunk of exchanges counts each of them once, not once per exchange."""

    def __init__(self) -> None:
        super().__init__()
        #: id(plan) -> [plan, exchanges judged under it] (the plan is held: its id stays)
        self.plans: dict[int, list] = {}

    def settle(self) -> BulkTally:
        """Every deferred count in its key (in the plan's rule order); returns itself."""
        for plan, n in self.plans.values():
            for key in plan.out_of_scope_counts:
                self[key] += n
        self.plans.clear()
        return self


BOTH_SIDES = frozenset((Side.REQUEST, Side.RESPONSE))


def judge(exchange: Exchange, contract: Contract, *,
          sides: Iterable[Side] = BOTH_SIDES,
          intended: tuple[Operation, Binding] | None = None,
          rules: Iterable[str] | None = None,
          tally: Tally | None = None,
          control: Exchange | None = None,
          profile: Profile = SPEC,
          ) -> list[Finding]:
    """Judge one exchange against the catalogue (or the chosen rule IDs).

    The request is classified once and the response read once. ``intended`` is what the caller
    meant to send (certify): the operation and binding come from it, so a broken response is
    judged against what was asked. With ``tally``, passed and not-applicable outcomes are only
    counted there, as ``(rule, operation, binding label, verdict)``, and the Findings returned
    are the failures and warnings (lint over a million exchanges builds no Finding it drops).
    ``control`` is the same call made with the spec's plain values (see ``Case.control``).
    ``profile`` weighs the verdicts (``harness.judge.profiles``; default: the spec's letter).
    """
    side_set = sides if type(sides) is frozenset else frozenset(sides)
    chosen = _applicable(rules, side_set, profile.off)  # unknown IDs fail before any reading
    return _judge(exchange, contract, side_set, chosen, intended, control, tally, profile)


def judge_each(exchanges: Iterable[Exchange], contract: Contract, *, tally: Tally,
               sides: frozenset[Side] = BOTH_SIDES, profile: Profile = SPEC
               ) -> list[list[Finding]]:
    """``judge`` of each exchange (lint's chunk: every rule, the same sides, tally and
    profile), the rules chosen once for them all."""
    chosen = _applicable(None, sides, profile.off)
    return [_judge(exchange, contract, sides, chosen, None, None, tally, profile)
            for exchange in exchanges]


def _judge(exchange: Exchange, contract: Contract, sides: frozenset[Side],
           chosen: tuple[Rule, ...], intended: tuple[Operation, Binding] | None,
           control: Exchange | None, tally: Tally | None, profile: Profile) -> list[Finding]:
    try:
        case = read_case(exchange, contract, sides, intended, control)
    except ServiceDescription as exc:
        return described(exchange, exc.kind, tally)
    except ClassificationError as exc:
        return [_finding(exchange, UNCLASSIFIED, None, None,  # the request's: whose it is
                         failed("an operation x binding of the contract", str(exc)),
                         exchange.client)]
    return _judge_case(case, chosen, tally, profile)


def described(exchange: Exchange, kind: str, tally: Tally | None = None) -> list[Finding]:
    """A service description request: counted by kind (``Report.descriptions``), judged by
    no rule. With ``tally`` only counted there."""
    if tally is not None:
        tally[DESCRIPTION, kind, None, Verdict.NOT_APPLICABLE] += 1
        return []
    return [Finding(DESCRIPTION, Verdict.NOT_APPLICABLE, None, None, actual=kind,
                    message="service description: counted, not judged", index=exchange.index,
                    source=exchange.source or None, client=exchange.client)]


def read_case(exchange: Exchange, contract: Contract, sides: frozenset[Side] = BOTH_SIDES,
              intended: tuple[Operation, Binding] | None = None,
              control: Exchange | None = None, *,
              recorded: HttpResponse | None = None) -> Case:
    """``exchange`` read once in the contract's terms: the request classified, the response
    read when its side is judged. ClassificationError when the request is none of the
    contract's pairs and no ``intended`` (operation, binding) says what it meant to be
    (ServiceDescription for a documentation request). ``recorded``: see ``Case.recorded``."""
    try:
        classification: Classification | None = classify(contract, exchange.request)
    except ClassificationError:
        if intended is None:
            raise
        classification = None
    if intended is not None:
        op, binding = intended
    else:
        assert classification is not None
        op, binding = classification.operation, classification.binding
    reading = None
    if exchange.response is not None and Side.RESPONSE in sides:
        reading = read_response(op, binding, exchange.response)
    return Case(exchange, contract, op, binding, classification, reading, sides, control,
                recorded, exchange.request, exchange.response,
                urlsplit(exchange.request.url).path, _unanswered(sides, exchange.response))


def judge_case(case: Case, *, rules: Iterable[str] | None = None,
               tally: Tally | None = None, profile: Profile = SPEC) -> list[Finding]:
    """``judge`` of a Case already read (``read_case``)."""
    return _judge_case(case, _applicable(rules, case.sides, profile.off), tally, profile)


def _judge_case(case: Case, chosen: tuple[Rule, ...], tally: Tally | None,
                profile: Profile = SPEC) -> list[Finding]:
    exchange, op, binding = case.exchange, case.operation, case.binding
    findings: list[Finding] = []
    plan = _plan(chosen, op, binding)
    if tally is None:
        # The client matters to the request's findings only: a response is the server's doing.
        client = exchange.client if Side.REQUEST in case.sides else None  # once, not per finding
        for rule, out_of_scope in plan.ordered:
            for outcome in rule.check(case) if out_of_scope is None else (out_of_scope,):
                findings.append(_finding(exchange, rule.id, op, binding,
                                         _weigh(rule, outcome, profile),
                                         client if rule.side is not Side.RESPONSE else None))
        return findings
    if type(tally) is BulkTally:  # the out-of-scope rules' outcomes: one count per pair
        if (entry := tally.plans.get(id(plan))) is None:
            tally.plans[id(plan)] = [plan, 1]
        else:
            entry[1] += 1
        counted = []
    else:
        counted = list(plan.out_of_scope_counts)
    kept: list[tuple[Rule, Outcome]] = []
    for rule, check, keys in plan.tallied:
        for outcome in check(case):
            verdict = outcome[0]
            if verdict is not _FAILED and verdict is not _WARNING:
                counted.append(keys[verdict])  # (rule, op, binding, verdict), made once
            else:
                kept.append((rule, outcome))
    tally.update(counted)  # counted in C, once per exchange
    if kept:  # the client (a header lookup) only for an exchange with findings
        client = exchange.client if Side.REQUEST in case.sides else None
        findings += [_finding(exchange, rule.id, op, binding, _weigh(rule, outcome, profile),
                              client if rule.side is not Side.RESPONSE else None)
                     for rule, outcome in kept]
    return findings


class _Plan(NamedTuple):
    """The chosen rules for one operation x binding: most rules have nothing to say of most
    pairs (the typed rules, the SOAP-only and GET/POST-only ones), and deciding that once per
    pair keeps lint's cost per exchange from growing with the catalogue."""

    #: Each chosen rule, in catalogue order, with its out-of-scope outcome or None.
    ordered: tuple[tuple[Rule, Outcome | None], ...]
    in_scope: tuple[Rule, ...]
    #: The tally keys of the out-of-scope rules' not-applicable outcomes.
    out_of_scope_counts: tuple[tuple[str, str | None, str | None, Verdict], ...]
    #: Each in-scope rule with its check and its tally key by verdict (passed, not
    #: applicable): made once per pair, not once per outcome.
    tallied: tuple[tuple[Rule, Callable[[Case], Iterable[Outcome]],
                         dict[Verdict, tuple[str, str | None, str | None, Verdict]]], ...]


#: (chosen rules, operation, binding) by identity -> (chosen, operation, their plan).
_PLANS: dict[tuple[int, int, Binding], tuple[tuple[Rule, ...], Operation, _Plan]] = {}


def _plan(chosen: tuple[Rule, ...], op: Operation, binding: Binding) -> _Plan:
    entry = _PLANS.get((id(chosen), id(op), binding))
    if entry is None or entry[0] is not chosen or entry[1] is not op:  # ids may be reused
        if len(_PLANS) > 10_000:
            _PLANS.clear()
        ordered = tuple((rule, rule.out_of_scope(op, binding)) for rule in chosen)
        in_scope = tuple(rule for rule, na in ordered if na is None)
        plan = _Plan(ordered, in_scope,
                     tuple((rule.id, op.name, binding.label, Verdict.NOT_APPLICABLE)
                           for rule, na in ordered if na is not None),
                     tuple((rule, rule.check, {verdict: (rule.id, op.name, binding.label, verdict)
                                               for verdict in _TALLIED})
                           for rule in in_scope))
        entry = _PLANS[id(chosen), id(op), binding] = (chosen, op, plan)
    return entry[2]


def _weigh(rule: Rule, outcome: Outcome, profile: Profile) -> Outcome:
    """``outcome`` weighed under ``profile``: a tolerated deviation is a warning under asmx; a
    permitted rule only warns. (Per-rule overrides are the Report's: they weigh every
    command's findings alike, replay's and diff's own included.)"""
    verdict = outcome[0]
    if profile.tolerant and len(outcome) > 4 and outcome[4]:
        verdict = _WARNING
    if verdict is _FAILED and rule.level is Level.PERMITTED:
        verdict = _WARNING
    return outcome if verdict is outcome[0] else outcome._replace(verdict=verdict)


_FAILED, _WARNING = Verdict.FAILED, Verdict.WARNING
#: The verdicts a tally counts rather than keeps.
_TALLIED = (Verdict.PASSED, Verdict.NOT_APPLICABLE)
#: (chosen rule IDs or None, sides, rules off) -> the rules that apply, in catalogue order.
_APPLICABLE: dict[tuple[tuple[str, ...] | None, frozenset[Side], frozenset[str]],
                  tuple[Rule, ...]] = {}


def _applicable(ids: Iterable[str] | None, sides: frozenset[Side],
                off: frozenset[str] = frozenset()) -> tuple[Rule, ...]:
    """``select(ids)`` restricted to the rules that judge ``sides`` and are not ``off``,
    worked out once."""
    key = (None if ids is None else tuple(sorted(set(ids))), sides, off)
    found = _APPLICABLE.get(key)
    if found is None:
        found = _APPLICABLE[key] = tuple(rule for rule in select(key[0])
                                         if rule.applies_to(sides) and rule.id not in off)
    return found


def _finding(exchange: Exchange, rule: str, op: Operation | None, binding: Binding | None,
             outcome: Outcome, client: str | None = None) -> Finding:
    """``client``: who sent the request, for findings on the request (None on the
    response's: the server's doing)."""
    return Finding(rule=rule, verdict=outcome.verdict, operation=op.name if op else None,
                   binding=binding.label if binding else None, expected=outcome.expected,
                   actual=outcome.actual, message=outcome.message, index=exchange.index,
                   source=exchange.source or None, client=client, cause=outcome.cause,
                   detail=outcome.detail or None)


def catalogue_table(cell: Callable[[str], str] = str,
                    clause: Callable[[str], str] = str) -> str:
    """The catalogue as a Markdown table (``harness certify --list-rules``), with what each
    profile makes of a deviation per rule; ``cell`` writes a title into its cell (the docs
    escape ``<Operation>`` as HTML: Markdown has no backslash escape for ``<``), ``clause`` a
    clause (the docs link it to the contract page)."""
    lines = ["| rule | clause | side | `--profile spec` | `--profile asmx` | title |",
             "|---|---|---|---|---|---|"]
    for r in CATALOGUE:
        spec = "warning" if r.level is Level.PERMITTED else "failure"
        asmx = f"{spec}; warning: {r.tolerates}" if r.tolerates else spec
        lines.append(f"| `{r.id}` | {clause(r.clause)} | {r.side} | {spec} | {asmx} | "
                     f"{cell(r.title)} |")
    lines.append(f"| `{UNCLASSIFIED}` | {clause('4.1')} | request | failure | failure | "
                 f"{titles()[UNCLASSIFIED]} |")
    from harness.judge import wsdl_rules

    for r in wsdl_rules.CATALOGUE:
        level = "warning" if r.level == "permitted" else "failure"
        lines.append(f"| `{r.id}` | {clause(r.clause)} | WSDL | {level} | {level} | "
                     f"{cell(r.title)} |")
    from harness.judge import odd_requests

    for o in odd_requests.CATALOGUE:
        verdicts = "failure where the spec speaks; warning where only ASMX does"
        lines.append(f"| `{o.id}` | {clause(o.clause)} | response | {verdicts} | {verdicts} | "
                     f"{cell(o.title)} |")
    from harness.judge import asmx_matrix

    for m in asmx_matrix.matrix().rules:
        verdicts = ("failure where the spec speaks or a value is lost; warning where only "
                    "ASMX does")
        lines.append(f"| `{m.id}` | {clause('4.1; else as ASMX')} | response | {verdicts} | "
                     f"{verdicts} | {cell(m.title)} |")
    return "\n".join(lines)
