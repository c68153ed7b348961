"""One call, as a QA lead sends it to explore a deployment (SoapUI's request editor): an
operation over a binding with the values given (the others generated, or from ``--values``),
sent once and judged by the binding rules. Nothing else is sent: no reachability probe, no
``?WSDL`` for the namespace, no control call with plain values (GAP-VALUES then recognises
ASP.NET's request validation by its answer alone, as lint does).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from harness.contract.bindings import Binding, build_request, did_you_mean
from harness.contract.model import Contract, Operation, sample_arguments
from harness.contract.selection import Values
from harness.contract.structure import Value
from harness.errors import ResponseTooLarge, TargetUnreachable, UsageError
from harness.judge import rules, sending
from harness.judge.findings import Finding, Report
from harness.judge.profiles import Profile
from harness.traffic.exchange import Exchange
from harness.traffic.redaction import ReportRedaction
from harness.traffic.send import Sender, SendOptions


@dataclass
class Answered:
    """One binding's call: the exchange (no response when it outgrew the cap), the findings
    judged on it and how long the answer took."""

    binding: Binding
    exchange: Exchange
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


def operation(contract: Contract, name: str) -> Operation:
    """The operation ``name`` (any case); a UsageError with a did-you-mean when there is none."""
    found = contract.find(name) or next(
        (op for op in contract.operations if op.name.lower() == name.lower()), None)
    if found is None:
        names = [op.name for op in contract.operations]
        raise UsageError(f"{name!r} is not an operation of {contract.name}"
                         f"{did_you_mean(name, names)} (operations: {', '.join(names)})")
    return found


def given_values(contract: Contract, op: Operation, pairs: Iterable[str]) -> Values:
    """``NAME=VALUE`` words as the values of ``op``'s parameters (an array or complex one as
    JSON); a UsageError naming the parameter meant for an unknown name."""
    given: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise UsageError(f"{pair!r} is not NAME=VALUE (e.g. {op.parameter_names[0]}=7)"
                             if op.parameter_names else f"{op.name} takes no parameter")
        if name not in op.parameter_names:
            known = ", ".join(op.parameter_names) or "none"
            raise UsageError(f"{op.name} has no parameter {name!r}"
                             f"{did_you_mean(name, op.parameter_names)} (parameters: {known})")
        given[name] = value
    return Values.load(contract, {op.name: given})


def bindings_of(contract: Contract, op: Operation, chosen: str | None,
                every: bool) -> list[Binding]:
    """The bindings to call ``op`` over: each it is offered over (``every``), else the one
    ``chosen`` (default SOAP 1.1, as SoapUI starts); a UsageError for one it is not offered
    over."""
    offered = [Binding(b) for b in contract.bindings_of(op)]
    if every:
        return offered
    binding = Binding.parse(chosen) if chosen else Binding.SOAP11
    if binding not in offered:
        raise UsageError(f"{op.name} is not offered over {binding.label} (its bindings: "
                         f"{', '.join(b.label for b in offered)})")
    return [binding]


def arguments(op: Operation, binding: Binding, *layers: Values) -> dict[str, Value]:
    """Generated plain values for ``op`` over ``binding``, each layer's values over them."""
    found = sample_arguments(op, 0, binding.value)
    for values in layers:
        found = values.apply(op, found)
    return found


def wsdl_base(url: str) -> str | None:
    """The service's base URL of a WSDL address (``http://host/app/Stock.asmx?WSDL`` ->
    ``http://host/app``), the contract's endpoints being relative to it; None for a file."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    segments = parts.path.split("/")
    at = next((i for i in range(len(segments) - 1, -1, -1)
               if segments[i].lower().endswith(".asmx")), len(segments))
    return urlunsplit((parts.scheme, parts.netloc, "/".join(segments[:at]).rstrip("/"), "", ""))


def call(contract: Contract, op: Operation, bindings: Iterable[Binding], base_url: str,
         values: Iterable[Values] = (), options: SendOptions | None = None,
         profile: Profile | None = None, shown: str | None = None,
         redaction: ReportRedaction | None = None) -> tuple[Report, list[Answered]]:
    """``op`` sent once over each of ``bindings`` to ``base_url`` and judged. A target that does
    not answer stops the call (TargetUnreachable: exit 2); an answer over the size cap is the
    finding SEND-RESPONSE-SIZE. ``shown``: how reports name the target; ``redaction``: the
    call's one face for every secret (its findings quote them by pseudonym)."""
    options = options or SendOptions()
    layers = tuple(values)
    report = Report("call", shown or base_url, rules.titles() | sending.RULE_TITLES,
                    profile=profile, environment=options.environment,
                    operation=op.name, namespace=contract.namespace)
    report.redaction = redaction
    answers: list[Answered] = []
    with Sender(options, connections=1) as sender:
        for binding in bindings:
            request = build_request(contract, op, arguments(op, binding, *layers), binding,
                                    base_url)
            started = time.monotonic()
            try:
                response = sender.send(request)
            except TargetUnreachable as exc:  # nothing to judge: exit 2, one line
                raise TargetUnreachable(f"{op.name} over {binding.label} got no answer: {exc}"
                                        ) from None
            except ResponseTooLarge as exc:
                found = [sending.size_finding(exc, op.name, binding.label)]
                answered = Answered(binding, Exchange(request, None, source=base_url), found)
            else:
                exchange = Exchange(request, response, source=base_url)
                report.observe(request, response, op.name)
                found = rules.judge(exchange, contract, intended=(op, binding),
                                    profile=report.profile)
                answered = Answered(binding, exchange, found)
            answered.seconds = time.monotonic() - started
            report.exchanges += 1
            report.add_seconds({(op.name, binding.label): answered.seconds})
            report.extend(found)
            answers.append(answered)
    return report.finish(), answers


def result_of(answered: Answered, operation_: Operation) -> str:
    """What a binding's answer says, in a few words: its result, fault or why not."""
    from harness.contract.bindings import read_response
    from harness.traffic.redaction import for_report

    response = answered.exchange.response
    if response is None:
        return "no answer: " + (answered.findings[0].actual if answered.findings else "?")
    reading = read_response(operation_, answered.binding, for_report(response, operation_.name))
    if reading.fault_code or reading.fault_reason:
        return f"fault {reading.fault_code or ''} {reading.fault_reason or ''}".strip()
    if operation_.result is None:
        return "(empty: the operation returns nothing)" if reading.problem is None \
            else reading.problem
    if reading.result is not None:
        return reading.result
    if reading.problem:
        return reading.problem
    return "(no result)" if not response.body else "(no result element)"
