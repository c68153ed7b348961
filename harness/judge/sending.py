"""The sending rules as findings: a request that got no answer, an answer over the size cap.

``harness.traffic.send`` only sends and raises (TargetUnreachable, ResponseTooLarge); every
command that sends turns those into these findings, so they read the same everywhere.
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import ResponseTooLarge, TargetUnreachable
from harness.judge.findings import Finding, Verdict
from harness.traffic.defaults import RESPONSE_SIZE_RULE, TRANSPORT_RULE

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
