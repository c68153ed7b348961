"""The sending rules as findings: a request that got no answer, an answer over the size cap;
and ``not_the_service``: a base URL that is not the service at all (a setup error, exit 2).

``harness.traffic.send`` only sends and raises (TargetUnreachable, ResponseTooLarge); every
command that sends turns those into these findings, so they read the same everywhere.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments
from harness.errors import ResponseTooLarge, TargetUnreachable
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


def not_the_service(base: str, contract: Contract, options: SendOptions | None = None
                    ) -> str | None:
    """Why ``base`` is not a deployment of ``contract`` at all, in one line, or None.

    Sends the first operation over each of its bindings, and its endpoint's ?WSDL: when every
    answer is 404 or an HTML page, the base URL is wrong (a setup error, not a product
    failure), and the line says where the service does answer when its host's root serves it.
    A target that answers any of them as a service would is judged by the run itself."""
    base = base_url(base)
    op = contract.operations[0]
    requests = [build_request(contract, op, sample_arguments(op, 0, b), Binding.parse(b), base)
                for b in contract.bindings_of(op)]
    requests.append(HttpRequest("GET", f"{base}{op.endpoint}?WSDL",
                                (("Host", urlsplit(base).netloc),)))
    answers = _answers(requests, options)
    if not answers or not all(looks_wrong(a) for a in answers) or len(answers) < len(requests):
        return None
    line = (f"{base} is not the service: {len(answers)} calls of {op.name} and its ?WSDL "
            "all got 404 or an HTML page; give the base URL of the folder holding its .asmx "
            f"endpoints (the URL before {op.endpoint})")
    parts = urlsplit(base)
    root = f"{parts.scheme}://{parts.netloc}"
    if parts.path.strip("/") and root != base:
        at_root = _answers([retarget(requests[0], root)], options)
        if at_root and not looks_wrong(at_root[0]):
            line += f"; {root}{op.endpoint} answers: the base URL is {root}?"
    return line


def _answers(requests: list[HttpRequest], options: SendOptions | None) -> list[HttpResponse]:
    """The answers that came (a request without one is left out); TLS failures propagate."""
    options = replace(options or SendOptions(), max_failures=len(requests) + 1,
                      max_response_mb=1)
    answers = []
    with Sender(options, connections=1) as sender:
        for request in requests:
            try:
                answers.append(sender.send(request))
            except (TargetUnreachable, ResponseTooLarge):
                continue
    return answers
