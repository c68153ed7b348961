"""WSDL conformance: does the WSDL a deployment publishes at ``<endpoint>?WSDL`` hold the contract?

Publishing a WSDL is optional: the spec never asks for one, and ASP.NET serves it (and the help
page) through the Documentation protocol, which production deployments often remove. An
endpoint that answers ``?WSDL`` with an error status or an HTML page publishes none: one
WSDL-PUBLISHED warning for it ("Documentation protocol off?"), the other WSDL-* rules not
applicable. ``certify --require-wsdl`` (``--severity WSDL-PUBLISHED=failure``) makes
publication mandatory.

A published WSDL is judged: the WSDL-* rules hold one endpoint's Description
(``harness.contract.wsdl_import``) against the contract's operations at that endpoint: every
operation with its parameters in order, their types and occurrences, and its result type; the
four bindings (soap, soap12, HttpGet, HttpPost) each offering every operation; SOAPAction =
namespace + "/" + operation; a service address at the endpoint. A run restricted to some
operations and bindings (``Selection``) judges what the WSDL says of those only.
Certify runs them from ``features/wsdl.feature``; ``harness contract --check`` prints them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, Parameter, ParamType
from harness.contract.selection import Selection
from harness.contract.structure import differences, signature
from harness.contract.wsdl_import import Description
from harness.judge.findings import Finding, Verdict
from harness.traffic.exchange import HttpResponse, media_type

#: Binding names of the contract -> how the WSDL spells the binding.
WSDL_BINDINGS = {"soap11": "soap", "soap12": "soap12", "get": "HttpGet", "post": "HttpPost"}
CLAUSE = "WSDL 1.1 as ASMX publishes it"
#: No selection: every operation and binding.
EVERYTHING = Selection()


@dataclass(frozen=True)
class WsdlRule:
    id: str
    clause: str
    title: str
    level: str = "mandatory"


CATALOGUE: tuple[WsdlRule, ...] = (
    WsdlRule("WSDL-PUBLISHED", "optional (the spec asks for no WSDL)",
             "<endpoint>?WSDL answers a WSDL; none (the Documentation protocol off) is a "
             "warning, a failure with --require-wsdl", "permitted"),
    WsdlRule("WSDL-DOCUMENT", CLAUSE, "the published WSDL is a WSDL of the service namespace"),
    WsdlRule("WSDL-OPERATIONS", CLAUSE, "the WSDL names every operation of the endpoint"),
    WsdlRule("WSDL-PARAMETERS", CLAUSE, "each operation's parameters, named and in order"),
    WsdlRule("WSDL-TYPES", CLAUSE, "each parameter's type"),
    WsdlRule("WSDL-RESULT", CLAUSE, "each operation's result type (or none)"),
    WsdlRule("WSDL-BINDINGS", CLAUSE,
             "soap, soap12, HttpGet and HttpPost bindings, each with every operation (one "
             "left out is a warning: the calls judge what is served)", "permitted"),
    WsdlRule("WSDL-SOAPACTION", "4.1 rule 1", "SOAPAction = namespace + \"/\" + operation"),
    WsdlRule("WSDL-ADDRESS", CLAUSE, "every port's address is the endpoint"),
)
RULES = {rule.id: rule for rule in CATALOGUE}


def titles() -> dict[str, str]:
    return {rule.id: rule.title for rule in CATALOGUE}


def _finding(rule: str, verdict: Verdict, source: str, op: str | None = None,
             binding: str | None = None, expected: str = "", actual: str = "",
             message: str = "", cause: str = "", detail: str | None = None) -> Finding:
    return Finding(rule=rule, verdict=verdict, operation=op, binding=binding,
                   expected=expected, actual=actual, message=message, source=source,
                   endpoint=source.removesuffix("?WSDL"), cause=cause, detail=detail)


NOT_PUBLISHED = "no WSDL published: Documentation protocol off?"


def unpublished(response: HttpResponse) -> str | None:
    """Why the answer to ``?WSDL`` publishes no WSDL (an error status, an HTML page, an empty
    body), in a few words; None when it may be one (it is read to find out)."""
    head = response.body[:512].lstrip().lower()
    media = media_type(response.content_type) or "no Content-Type"
    if response.status != 200:
        return f"HTTP {response.status}, {media}"
    if media == "text/html" or head.startswith((b"<!doctype html", b"<html")):
        return "HTTP 200, an HTML page"
    if not head:
        return "HTTP 200, an empty body"
    return None


def judge_answer(contract: Contract, endpoint: str, response: HttpResponse, url: str,
                 selection: Selection = EVERYTHING) -> list[Finding]:
    """Every WSDL-* finding on the answer to ``endpoint``?WSDL (fetched from ``url``)."""
    from harness.contract.wsdl_import import describe
    from harness.errors import HarnessError

    why = unpublished(response)
    if why is not None:
        return not_published(endpoint, why)
    try:
        described: Description | str = describe(url, response.body)
    except HarnessError as exc:
        described = str(exc)
    return judge_endpoint(contract, endpoint, described, selection)


def not_published(endpoint: str, why: str) -> list[Finding]:
    """An endpoint without a WSDL: one WSDL-PUBLISHED warning, the other rules not
    applicable (there is nothing for them to judge)."""
    source = f"{endpoint}?WSDL"
    return [_finding("WSDL-PUBLISHED", Verdict.WARNING, source, expected="a WSDL",
                     actual=why, message=NOT_PUBLISHED),
            *(_finding(rule.id, Verdict.NOT_APPLICABLE, source, message=NOT_PUBLISHED)
              for rule in CATALOGUE if rule.id != "WSDL-PUBLISHED")]


def judge_endpoint(contract: Contract, endpoint: str, described: Description | str,
                   selection: Selection = EVERYTHING) -> list[Finding]:
    """Every WSDL-* finding for ``endpoint``; ``described`` is the WSDL's Description or why
    the document published could not be read as one; ``selection``: the operations and
    bindings judged (default all)."""
    source = f"{endpoint}?WSDL"
    published = _finding("WSDL-PUBLISHED", Verdict.PASSED, source, expected="a WSDL",
                         actual="published")
    if isinstance(described, str):
        return [published, _finding("WSDL-DOCUMENT", Verdict.FAILED, source,
                                    expected="a WSDL", actual=described)]
    served = contract.endpoints[endpoint]
    ops = tuple(op for op in served if selection.allows(op.name, None))
    return [published, *_judge(contract, ops, described, source, selection,
                               {op.name for op in served})]


def _judge(contract: Contract, ops: tuple[Operation, ...], d: Description, source: str,
           selection: Selection, served: set[str]) -> Iterator[Finding]:
    ok, bad = Verdict.PASSED, Verdict.FAILED
    ns_ok = d.namespace == contract.namespace
    yield _finding("WSDL-DOCUMENT", ok if ns_ok else bad, source,
                   expected=f"targetNamespace {contract.namespace}",
                   actual=f"targetNamespace {d.namespace}")
    published = {op.name: op for op in d.operations}
    for op in ops:
        found = published.get(op.name)
        if found is None:
            yield _finding("WSDL-OPERATIONS", bad, source, op.name, expected=op.name,
                           actual=", ".join(published) or "no operation",
                           message=_renamed_hint(op, d.operations, served))
            continue
        yield _finding("WSDL-OPERATIONS", ok, source, op.name, expected=op.name,
                       actual=op.name)
        yield from _judge_operation(op, found, source)
    for extra in sorted(set(published) - served):
        if selection.allows(extra, None):
            yield _finding("WSDL-OPERATIONS", Verdict.WARNING, source, extra,
                           expected="only the contract's operations", actual=extra,
                           message="the WSDL offers an operation the contract does not name")
    yield from _judge_ports(contract, ops, d, source, selection)


def _renamed_hint(op: Operation, published: tuple[Operation, ...], wanted: set[str]) -> str:
    """Name the likely new name: an unknown published operation with the same parameters."""
    same = [p.name for p in published if p.name not in wanted
            and p.parameter_names == op.parameter_names]
    return f"renamed to {same[0]}?" if same else "missing from the WSDL"


def _type_of(p: Parameter) -> str:
    if p.values:
        return f"{p.type_name or 'enumeration'}({'|'.join(p.values)})"
    return p.type_name or p.type.value


def _result_of(op: Operation) -> str:
    if op.result is None:
        return "no result"
    return f"{op.result}({'|'.join(op.result_values)})" if op.result_values else op.result


def _judge_operation(want: Operation, got: Operation, source: str) -> Iterator[Finding]:
    ok, bad = Verdict.PASSED, Verdict.FAILED
    names = " > ".join(want.parameter_names) or "no parameters"
    sent = " > ".join(got.parameter_names) or "no parameters"
    yield _finding("WSDL-PARAMETERS", ok if names == sent else bad, source, want.name,
                   expected=names, actual=sent)
    for p in want.parameters:
        other = got.parameter(p.name)
        if other is None:
            continue  # WSDL-PARAMETERS said so
        expected, actual = _type_of(p), _type_of(other)
        drift = _drift(want, got, p.type_name, other.type_name, p.name) \
            if p.type is ParamType.COMPLEX else []
        if drift or expected != actual:
            expected, actual = _shown(want, p.type_name, expected), _shown(got, other.type_name,
                                                                           actual)
        if not drift and expected == actual and p.occurrence != other.occurrence:
            # the spec shows no optionality (4.10): as ASMX publishes it, else a warning
            was, now = _occurrence_change(p.occurrence, other.occurrence)
            yield _finding("WSDL-TYPES", Verdict.WARNING, source, want.name,
                           expected=f"{p.name}: {expected}, {_occurs(p.occurrence)}",
                           actual=f"{p.name}: {actual}, {_occurs(other.occurrence)}",
                           message=_OPTIONALITY,
                           cause=f"parameters published {now} (the contract: {was})",
                           detail=p.name)
            continue
        differs = bool(drift) or expected != actual
        yield _finding("WSDL-TYPES", bad if differs else ok, source, want.name,
                       expected=f"{p.name}: {expected}", actual=f"{p.name}: {actual}",
                       message="; ".join(drift),
                       cause=(f"parameter of type {actual} where the contract has {expected}"
                              if differs and not drift else ""),
                       detail=p.name if differs else None)
    expected, actual = _result_of(want), _result_of(got)
    drift = _drift(want, got, want.result, got.result) \
        if want.result_type is ParamType.COMPLEX else []
    if drift:
        expected, actual = signature(want.schema, expected), signature(got.schema, actual)
    yield _finding("WSDL-RESULT", bad if drift or expected != actual else ok, source, want.name,
                   expected=expected, actual=actual, message="; ".join(drift))


_OPTIONALITY = "optionality is not shown in the spec (4.10); ASMX publishes it so"


def _occurrence_change(want: tuple[int, int | None, bool], got: tuple[int, int | None, bool]
                       ) -> tuple[str, str]:
    """The parts of two occurrences that differ, in words: ("minOccurs 1, not nillable",
    "minOccurs 0, nillable")."""
    def parts(occurrence: tuple[int, int | None, bool]) -> list[str]:
        low, high, nillable = occurrence
        return [f"minOccurs {low}", f"maxOccurs {'unbounded' if high is None else high}",
                "nillable" if nillable else "not nillable"]
    changed = [(w, g) for w, g in zip(parts(want), parts(got), strict=True) if w != g]
    return ", ".join(w for w, _ in changed), ", ".join(g for _, g in changed)


def _occurs(occurrence: tuple[int, int | None, bool]) -> str:
    low, high, nillable = occurrence
    return (f"minOccurs {low}, maxOccurs {'unbounded' if high is None else high}"
            + (", nillable" if nillable else ""))


def _drift(want: Operation, got: Operation, type_name: str | None, got_name: str | None,
           path: str | None = None) -> list[str]:
    """What changed in an array or complex type (nested types included), by path."""
    if not type_name or type_name not in want.schema:
        return []
    return differences(want.schema, got.schema, type_name, got_name or type_name, path)


def _shown(op: Operation, type_name: str | None, text: str) -> str:
    return signature(op.schema, type_name) if type_name in op.schema else text


def _judge_ports(contract: Contract, ops: tuple[Operation, ...], d: Description,
                 source: str, selection: Selection) -> Iterator[Finding]:
    ok, bad = Verdict.PASSED, Verdict.FAILED
    if not ops:
        return
    if not any(selection.allows(None, Binding(b).label) for b in contract.bindings
               if b in ("soap11", "soap12")):
        yield replace(_finding("WSDL-SOAPACTION", Verdict.NOT_APPLICABLE, source),
                      cause="no SOAP binding selected (--binding)")
    for binding in contract.bindings:
        if not selection.allows(None, Binding(binding).label):
            continue
        label = WSDL_BINDINGS[binding]
        port = d.port(binding)
        if port is None:
            yield _finding("WSDL-BINDINGS", Verdict.WARNING, source, None, label,
                           expected=f"a {label} binding and port",
                           actual=f"bindings {', '.join(WSDL_BINDINGS[b] for b in d.bindings)}",
                           message=_UNDESCRIBED, detail=label,
                           cause="bindings the WSDL does not describe")
            continue
        for op in ops:  # one finding per operation: a drift names the operation it hits
            if binding in contract.bindings_of(op):
                offered = op.name in port.actions
                yield _finding("WSDL-BINDINGS", ok if offered else Verdict.WARNING, source,
                               op.name, label, expected=f"{op.name} in the {label} binding",
                               actual="offered" if offered else "missing",
                               message="" if offered else _UNDESCRIBED)
        at_endpoint = _path_of(port.address).lower().endswith(ops[0].endpoint.lower())
        yield _finding("WSDL-ADDRESS", ok if at_endpoint else bad, source, None, label,
                       expected=f"an address ending {ops[0].endpoint}",
                       actual=port.address or "no address")
        if binding in ("soap11", "soap12"):
            for op in ops:
                if op.name in port.actions:
                    want = contract.soap_action(op).strip('"')
                    got = port.actions[op.name]
                    yield _finding("WSDL-SOAPACTION", ok if got == want else bad, source,
                                   op.name, label, expected=want, actual=got)


#: Why a binding or operation the WSDL leaves out is a warning: the spec asks for no WSDL, a
#: client can use what it describes, and the calls certify makes judge what is served.
_UNDESCRIBED = ("the WSDL does not describe it (ASMX publishes every binding it serves); "
                "whether the service serves it is judged by its calls")


def _path_of(address: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(address).path


def judge_deployment(contract: Contract, descriptions: dict[str, Description | str]
                     ) -> list[Finding]:
    """Every endpoint of ``contract``: its findings (``descriptions`` by endpoint)."""
    return [f for endpoint in contract.endpoints
            for f in judge_endpoint(contract, endpoint, descriptions.get(
                endpoint, "not fetched"))]


def describe_deployment(contract: Contract, base_url: str) -> dict[str, Description | str]:
    """Each endpoint's ``?WSDL`` under ``base_url``, read (or why it could not be)."""
    from harness.errors import HarnessError
    from harness.traffic.wsdls import describe

    found: dict[str, Description | str] = {}
    for endpoint in contract.endpoints:
        try:
            found[endpoint] = describe(f"{base_url.rstrip('/')}{endpoint}?WSDL")
        except HarnessError as exc:
            found[endpoint] = str(exc)
    return found


def describe_sources(contract: Contract, sources: list[str]) -> dict[str, Description | str]:
    """The WSDLs at ``sources`` by the contract endpoint they describe (paths compare
    case-insensitively, as IIS does)."""
    from harness.traffic.wsdls import describe

    found: dict[str, Description | str] = {}
    for source in sources:
        d = describe(source)
        found[contract.endpoint(d.endpoint) or d.endpoint] = d
    return found
