"""Causes of the differences between two answers (diff: primary and candidate; replay: the
recording and the new answer), in words a person acts on.

A result on one side and an error on the other is the one cause of a call
(``outcome_cause``), and what else differs in that call is not applicable because of it;
otherwise each difference is a cause in its own words (``words_of``: the comparison's
``Difference.summary``, "SOAP 1.2 answered with a SOAP 1.1 envelope"), shared by every call
it is found on. A cause that holds whatever the request was (``whatever_sent``) is said
without it, so that it stays one line over every kind of request. What varies between the
findings of one cause (a value, a parameter) is their ``Finding.detail``, listed beside it;
the words themselves come from ``harness.judge.words``.
"""

from __future__ import annotations

import re

from harness.judge.compare import Difference

#: Statuses that say a call is not served at all (no such path or method).
NOT_SERVED = frozenset({404, 405, 501})
_STATUS = re.compile(r"HTTP (\d{3})")


def failed_call_cause(status: int, line: str) -> str:
    """A failed call's cause (R4-STATUS): its status and what its body says first
    (``line``); a call not served is that, whatever its body says (a 404 page names the very
    path it did not find), so that every call of a binding a target does not serve is one
    cause, in the words diff and replay use too."""
    return f"HTTP {status}: the call is not served" if status in NOT_SERVED else line


_SENT_ALIKE = re.compile(r"HTTP \d{3}: the call is not served$|"
                         r"SOAP 1\.[12] answered with a SOAP 1\.[12] envelope$")


def whatever_sent(cause: str) -> bool:
    """Whether ``cause`` holds whatever the request was (a call not served, an answer in the
    other SOAP version): said without the kind of request sent (``diff --errors``'s "missing
    parameters: ..."), it is one cause, one line, over every kind."""
    return _SENT_ALIKE.match(cause) is not None


def outcome_cause(outcome: Difference) -> str:
    """The cause of a result on one side and an error on the other (or two errors of other
    kinds): the comparison's words, except that a call not served (404, 405, 501) is that,
    whatever the other side answered (``HTTP 404: the call is not served``): one cause
    however the primary (or the recording) answered each call."""
    expected, actual = (_status(v) for v in (outcome.expected, outcome.actual))
    if actual in NOT_SERVED and expected not in NOT_SERVED:
        return f"HTTP {actual}: the call is not served"
    return outcome.summary or f"HTTP status {expected} expected, {actual} given"


def _status(value: str | None) -> int | None:
    found = _STATUS.match(value or "")
    return int(found.group(1)) if found else None


def words_of(d: Difference, whose: str) -> str:
    """One difference in words: the comparison's own summary, else its kind and place
    (values stay in the finding's expected and actual: a cause is shared by many calls)."""
    summary = getattr(d, "summary", "")
    if summary:
        return summary
    if d.kind == "content-type":
        return f"Content-Type {d.actual or '(none)'} where {whose} {d.expected or '(none)'}"
    template = _WORDS.get(d.kind, "{kind} of {where} differs" if d.path else "{kind} differs")
    return template.format(where=d.path or "the body", kind=d.kind, whose=whose,
                           expected=d.expected, actual=d.actual)


#: A difference's words by its kind (content-type above: its absent values read "(none)").
_WORDS = {"element": "{where}: element {actual} where {whose} {expected}",
          "missing": "{where} missing", "extra": "{where} not expected",
          "attribute": "attributes of {where} differ", "text": "text of {where} differs"}


_LEAK_KIND = re.compile(r"(?:^|; )([A-Za-z][\w .-]*?): ['\"]")


def leak_cause(expected: str, actual: str, whose: str = "") -> str:
    """SEC-LEAK's cause: the kinds of detail an error answer shows, not their quotes (the
    same leak on every call is one cause): ``error answers leak stack frame, source path``;
    ``the primary's error answers name the platform: framework version header``."""
    kinds = ", ".join(dict.fromkeys(_LEAK_KIND.findall(actual))) or actual
    verb = "leak" if "implementation" in expected else "name the platform:"
    who = f"{whose} error answers" if whose else "error answers"
    return f"{who} {verb} {kinds}"
