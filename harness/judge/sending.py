"""The sending rules as findings: a request that got no answer, an answer over the size cap;
and ``check_service``: is a base URL the service at all (a wrong one is a setup error, exit 2),
asked without invoking any operation.

``harness.traffic.send`` only sends and raises (TargetUnreachable, ResponseTooLarge); every
command that sends turns those into these findings, so they read the same everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from harness.contract.bindings import Binding, build_request, edit_distance
from harness.contract.model import Contract, Operation
from harness.contract.selection import Selection
from harness.errors import NotSendable, ResponseTooLarge, TargetUnreachable
from harness.judge.findings import Finding, Verdict
from harness.traffic.defaults import RESPONSE_SIZE_RULE, TRANSPORT_RULE
from harness.traffic.exchange import HttpRequest, HttpResponse
from harness.traffic.send import Sender, SendOptions, base_url, looks_wrong, retarget

#: Titles of the sending rules, for a Report's ``titles``.
RULE_TITLES = {RESPONSE_SIZE_RULE: "response body within --max-response-mb (decoded)",
               TRANSPORT_RULE: "the target answers within --timeout"}


_REQUEST_LINE = re.compile(r" (?:GET|POST|PUT|HEAD|DELETE|OPTIONS|PATCH) /\S*")


def no_answer_cause(exc: TargetUnreachable) -> str:
    """Why a request got no answer, the same for every request it happened to ("target
    did not answer within 5 s"): the request's method and path left out."""
    if isinstance(exc, NotSendable):  # nothing was sent: what is wrong with the request
        return str(exc)
    return f"no answer: {_REQUEST_LINE.sub('', str(exc))}"


def size_finding(exc: ResponseTooLarge, operation: str | None, binding: str | None,
                 **where: Any) -> Finding:
    """The finding every command reports for a response over the cap (``where``: index,
    source... as Finding takes them)."""
    limit = f"at most {exc.limit / 1024 / 1024:g} MB"
    actual = f"response larger than {exc.limit / 1024 / 1024:g} MB"
    return Finding(RESPONSE_SIZE_RULE, Verdict.FAILED, operation, binding, limit, actual,
                   str(exc), cause=actual, **where)


def transport_finding(exc: TargetUnreachable, operation: str | None, binding: str | None,
                      **where: Any) -> Finding:
    """The finding for a request that got no answer (the run goes on until RunStopped)."""
    return Finding(TRANSPORT_RULE, Verdict.FAILED, operation, binding, "a response", str(exc),
                   cause=no_answer_cause(exc), **where)


#: The operation name the service check calls: no service has it (a name in the contract gets
#: a suffix), so the call can have no effect; ASMX answers it with a Client fault.
NO_SUCH_OPERATION = "HarnessNoSuchOperation"


@dataclass(frozen=True)
class ServiceCheck:
    """What the check before a run found: ``wrong`` says in one line why the base URL is not
    the service (None: it may be); ``wsdl`` is the answer to the endpoint's ?WSDL (None when
    none came), read again for the service's namespace rather than asked twice."""

    endpoint: str
    wrong: str | None
    wsdl: HttpResponse | None
    sent: int


def check_service(base: str, contract: Contract, chosen: Selection | None = None,
                  options: SendOptions | None = None) -> ServiceCheck:
    """Whether ``base`` is a deployment of ``contract`` at all, without invoking any operation.

    Sent to the endpoint of the first selected operation, in turn, until one is answered the
    way a service answers: its ?WSDL, then over each selected binding a call of an operation
    no service has (ASMX: a Client fault; spyne, Node's soap, the reference: a fault or an
    error). A wrong base URL answers each with 404 or an HTML page; a hardened ASMX answers
    its ?WSDL with an HTML error page (no Documentation protocol) but the call with a fault.
    When every one is answered that way, the base URL is wrong (a setup error, not a product
    failure), and the line says where the service answers when its host's root serves it."""
    base = base_url(base)
    chosen = chosen or Selection()
    op = checked_operation(contract, chosen)
    requests = service_check_requests(contract, op, chosen, base)
    answers = _answers(requests, options, until=lambda a: not looks_wrong(a))
    wsdl = answers[0] if answers and answers[0][0] == 0 else None
    found = ServiceCheck(op.endpoint, None, wsdl[1] if wsdl else None, len(answers))
    if len(answers) < len(requests) or not all(looks_wrong(a) for _, a in answers):
        return found  # a service, or a target that does not answer: the run says which
    asked = _asked(_checked_bindings(contract, op, chosen))
    line = (f"{base} is not the service: {asked} at {op.endpoint} got 404 or an HTML page; "
            "give the base URL of the folder holding its .asmx endpoints (the URL "
            f"before {op.endpoint})")
    parts = urlsplit(base)
    root = f"{parts.scheme}://{parts.netloc}"
    if parts.path.strip("/") and root != base:
        at_root = _answers([retarget(r, root) for r in requests], options,
                           until=lambda a: not looks_wrong(a))
        if at_root and not looks_wrong(at_root[-1][1]):
            line += f"; {root}{op.endpoint} answers: the base URL is {root}?"
    return replace(found, wrong=line)


def checked_operation(contract: Contract, chosen: Selection) -> Operation:
    """The operation whose endpoint the check asks: the first one selected (offered over a
    selected binding, if one is)."""
    selected = [o for o in contract.operations if chosen.allows(o.name, None)]
    return next((o for o in selected if _checked_bindings(contract, o, chosen)),
                (selected or contract.operations)[0])


def service_check_requests(contract: Contract, op: Operation, chosen: Selection,
                           base: str) -> list[HttpRequest]:
    """What ``check_service`` may send, in order: ``op``'s endpoint's ?WSDL, then a call of
    an operation that does not exist over each of ``op``'s selected bindings (none of them
    can have an effect)."""
    nowhere = Operation(_no_such_name(contract), op.endpoint, ())
    return [HttpRequest("GET", f"{base}{op.endpoint}?WSDL", (("Host", urlsplit(base).netloc),)),
            *(build_request(contract, nowhere, {}, b, base)
              for b in _checked_bindings(contract, op, chosen))]


def _checked_bindings(contract: Contract, op: Operation, chosen: Selection) -> list[Binding]:
    return [b for b in map(Binding.parse, contract.bindings_of(op))
            if chosen.allows(None, b.label)]


def _no_such_name(contract: Contract) -> str:
    """NO_SUCH_OPERATION, or with a number after it when that is (nearly) an operation's name:
    a lenient stack routes a name one or two edits away from one it has."""
    names = [o.name.lower() for o in contract.operations]
    for n in range(100):
        name = NO_SUCH_OPERATION + (str(n) if n else "")
        if all(edit_distance(name.lower(), other, 2) > 2 for other in names):
            return name
    raise AssertionError("unreachable: 100 names each near an operation's")


def _asked(bindings: list[Binding]) -> str:
    """What the check sent, in words ("its ?WSDL and a call of an operation no service has
    over SOAP 1.1 and HTTP GET, 3 requests,")."""
    if not bindings:
        return "its ?WSDL"
    labels = [b.label for b in bindings]
    over = ", ".join(labels[:-1]) + f" and {labels[-1]}" if len(labels) > 1 else labels[0]
    return (f"each of {len(bindings) + 1} requests (its ?WSDL, a call of an operation no "
            f"service has over {over})")


def _answers(requests: list[HttpRequest], options: SendOptions | None,
             until: Callable[[HttpResponse], bool] = lambda answer: False
             ) -> list[tuple[int, HttpResponse]]:
    """(index, answer) of the requests answered, in order, up to the first answer ``until``
    holds for (a request without an answer is left out); TLS failures propagate."""
    options = replace(options or SendOptions(), max_failures=len(requests) + 1,
                      max_response_mb=4)
    answers = []
    with Sender(options, connections=1) as sender:
        for index, request in enumerate(requests):
            try:
                answers.append((index, sender.send(request)))
            except (TargetUnreachable, ResponseTooLarge):
                continue
            if until(answers[-1][1]):
                break
    return answers
