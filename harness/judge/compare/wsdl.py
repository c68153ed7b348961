"""Two WSDLs compared as contracts, not as XML: what a client generated from one would find
changed in the other.

Both documents are read by the contract's WSDL reader (``harness.contract.wsdl_import``: zeep's
parser, hardened) and compared in the WSDL rules' terms (``harness.judge.wsdl_rules``): target
namespace, operations, their parameters (names, order, types) and result types, the bindings
(``soap``, ``soap12``, ``HttpGet``, ``HttpPost``) with the operations each offers, each SOAP
operation's soapAction and HTTP operation's location, and each port's address (its path: the
host is the deployment's). "soap12 binding missing", not 180 lines of elements.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import urlsplit

from harness.contract.model import ALL_BINDINGS, Operation
from harness.contract.wsdl_import import Description, describe
from harness.errors import HarnessError
from harness.judge.compare.difference import Difference
from harness.judge.findings import Verdict
from harness.judge.wsdl_rules import WSDL_BINDINGS, _judge_operation

#: What each WSDL rule's difference is called (the rules' own words, for two WSDLs).
_SUMMARIES = {
    "WSDL-PARAMETERS": "parameters differ (names or order)",
    "WSDL-TYPES": "parameter type differs",
    "WSDL-RESULT": "result type differs",
}
#: Where an operation's drift sits, below /definitions/<operation> (a type: <parameter>/type).
_PLACES = {"WSDL-PARAMETERS": "parameters", "WSDL-RESULT": "result"}
#: The locations zeep is handed (messages name them; never fetched).
_EXPECTED, _ACTUAL = "http://wsdl.invalid/expected", "http://wsdl.invalid/actual"
_ROOT = "/definitions"


def compare_wsdls(expected: bytes, actual: bytes) -> list[Difference] | None:
    """The differences of two WSDL documents as contracts; None when neither can be read as
    a service description (then they are compared as XML)."""
    exp, act = _described(expected, _EXPECTED), _described(actual, _ACTUAL)
    if isinstance(exp, str) and isinstance(act, str):
        return None
    if isinstance(exp, str):
        return [Difference("wsdl", _ROOT, f"a WSDL that cannot be read: {exp}",
                           "a service description",
                           summary="the expected WSDL cannot be read as a service description")]
    if isinstance(act, str):
        return [Difference("wsdl", _ROOT, "a service description",
                           f"a WSDL that cannot be read: {act}",
                           summary="the WSDL cannot be read as a service description")]
    return list(compare_descriptions(exp, act))


@lru_cache(maxsize=32)
def _described(document: bytes, source: str) -> Description | str:
    """The Description of a WSDL document, or why it cannot be read (diff sends each
    endpoint's WSDL to every implementation: read once per distinct document)."""
    try:
        return describe(source, document)
    except HarnessError as exc:
        return str(exc).removeprefix(f"{source}: ")


def compare_descriptions(exp: Description, act: Description) -> Iterator[Difference]:
    """What ``act`` changes from ``exp``: a failure where a client of ``exp`` would break
    (an operation, its parameters or types, a soapAction, an address); a warning where
    ``act`` offers more, renames its service, or leaves a binding (or an operation of one)
    out, as WSDL-BINDINGS weighs it: the calls themselves show what is served."""
    if exp.namespace != act.namespace:
        yield _diff(f"{_ROOT}/targetNamespace", exp.namespace, act.namespace,
                    "target namespace differs")
    if exp.service != act.service:
        yield _diff(f"{_ROOT}/service", exp.service, act.service, "service name differs",
                    warning=True)
    yield from _operations(exp, act)
    yield from _ports(exp, act)


def _operations(exp: Description, act: Description) -> Iterator[Difference]:
    published = {op.name: op for op in act.operations}
    for op in exp.operations:
        got = published.get(op.name)
        if got is None:
            yield _diff(f"{_ROOT}/{op.name}", op.name, _renamed(op, act),
                        "operation missing from the WSDL")
            continue
        for finding in _judge_operation(op, got, ""):
            if finding.verdict is Verdict.FAILED:
                actual = finding.actual + (f" ({finding.message})" if finding.message else "")
                if finding.rule == "WSDL-TYPES":  # "name: type": the parameter's own place
                    place = f"{finding.expected.split(':', 1)[0]}/type"
                else:
                    place = _PLACES[finding.rule]
                yield _diff(f"{_ROOT}/{op.name}/{place}", finding.expected, actual,
                            _SUMMARIES[finding.rule])
    known = {op.name for op in exp.operations}
    for op in act.operations:
        if op.name not in known:
            yield _diff(f"{_ROOT}/{op.name}", None, op.name, "unexpected operation in the WSDL",
                        warning=True)


def _renamed(op: Operation, act: Description) -> str | None:
    """The likely new name of a missing operation: one with the same parameters."""
    same = [p.name for p in act.operations if p.parameter_names == op.parameter_names]
    return f"renamed to {same[0]}?" if len(same) == 1 else None


def _ports(exp: Description, act: Description) -> Iterator[Difference]:
    offered = {op.name for op in act.operations}
    known = {op.name for op in exp.operations}
    for binding in ALL_BINDINGS:
        label = WSDL_BINDINGS[binding]
        want, got = exp.port(binding), act.port(binding)
        if want is None and got is None:
            continue
        if got is None:
            yield _diff(f"{_ROOT}/{label}", f"a {label} binding",
                        "bindings " + (", ".join(WSDL_BINDINGS[b] for b in act.bindings)),
                        f"{label} binding missing", warning=True)
            continue
        if want is None:
            yield _diff(f"{_ROOT}/{label}", None, f"a {label} binding",
                        f"unexpected {label} binding", warning=True)
            continue
        if _address_path(want.address) != _address_path(got.address):
            yield _diff(f"{_ROOT}/{label}/address", want.address, got.address,
                        "service address differs")
        what = "soapAction" if binding in ("soap11", "soap12") else "location"
        for name, action in want.actions.items():
            if name not in got.actions:
                if name in offered:  # else: missing from the WSDL, said once
                    yield _diff(f"{_ROOT}/{label}/{name}", f"{name} in the {label} binding",
                                "missing", f"operation missing from the {label} binding",
                                warning=True)
            elif got.actions[name] != action:
                yield _diff(f"{_ROOT}/{label}/{name}/{what}", action, got.actions[name],
                            f"{what} differs")
        for name in sorted(got.actions.keys() - want.actions.keys()):
            if name in known:  # else: an operation the WSDL adds, said once
                    yield _diff(f"{_ROOT}/{label}/{name}", None, f"{name} in the {label} binding",
                            f"unexpected operation in the {label} binding", warning=True)


def _address_path(address: str) -> str:
    """The path of a port's address: the host is the deployment's (diff writes each
    implementation's own base URL as ``{base_url}``)."""
    return urlsplit(address.replace("{base_url}", "", 1)).path


def _diff(path: str, expected: str | None, actual: str | None, summary: str,
          warning: bool = False) -> Difference:
    return Difference("wsdl", path, expected, actual, warning, summary)
