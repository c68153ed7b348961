"""Fault injection: what a mock does wrong on purpose, for any call (``--fault``) or a stub's.

A fault is written ``KIND[=ARGUMENT][:PROBABILITY]`` (``--fault reset:10%``,
``--fault delay=0.5s-2s``, ``inject = "trickle=5s"`` in a stubs file):

- ``delay=1.5s`` (or ``200ms``, or a range ``0.5s-2s``: a uniformly random delay): the answer
  comes that much later;
- ``reset``: the connection is reset (TCP RST), no answer at all;
- ``empty``: the connection is closed with no answer (curl: "Empty reply from server");
- ``malformed``: the answer's body cut in half (XML that does not parse), its headers true;
- ``trickle`` (``trickle=5s``; default 3 s): the body sent in small pieces over that long;
- ``500``, ``503`` (``status=N``): that HTTP status and HTTP.sys's error page, on every binding;
- ``fault`` (``fault=Client``): a SOAP fault of the asking version (500 text/plain over
  GET/POST, as ASMX gives its errors).

PROBABILITY is a share of calls, ``0.1`` or ``10%`` (default: every call).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from harness.contract.bindings import Binding, FaultCode, build_fault, did_you_mean
from harness.errors import UsageError
from harness.reference.app import (  # noqa: F401 (trickle_pieces: used where it is sent)
    TRICKLE_PIECES,
    Delayed,
    Disrupted,
    trickle_pieces,
)
from harness.traffic.exchange import HttpResponse

KINDS = ("delay", "reset", "empty", "malformed", "trickle", "status", "fault")
#: Longest delay or trickle a fault may ask for (a typo of "15s" as "15000s" is an error).
MAX_SECONDS = 3600.0
TRICKLE_SECONDS = 3.0
#: The text of an injected SOAP fault: what ASMX says of an unexpected error.
FAULT_TEXT = "Server was unable to process request."
FAULT_CODES = {"client": FaultCode.CLIENT, "sender": FaultCode.CLIENT,
               "server": FaultCode.SERVER, "receiver": FaultCode.SERVER,
               "versionmismatch": FaultCode.VERSION_MISMATCH}
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|)\s*")
_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            408: "Request Timeout", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


def seconds(text: str | float | int) -> tuple[float, float]:
    """A duration (``1.5s``, ``200ms``, ``2``: seconds) or a range of them (``0.5s-2s``):
    (low, high); ValueError saying what is wrong."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(f"a duration is text such as \"1.5s\" or \"200ms\", not {text!r}")
    if isinstance(text, (int, float)):
        low = high = float(text)
    else:
        low_text, _, high_text = text.partition("-")
        low = _one_duration(low_text, text)
        high = _one_duration(high_text, text) if high_text else low
    if not 0 <= low <= high <= MAX_SECONDS:
        raise ValueError(f"duration {text!r} must be from 0 to {MAX_SECONDS:g}s, the lower "
                         "bound first")
    return low, high


def _one_duration(part: str, whole: str) -> float:
    match = _DURATION.fullmatch(part)
    if match is None:
        raise ValueError(f"{whole!r} is no duration (such as \"1.5s\", \"200ms\" or a range "
                         "\"0.5s-2s\")")
    value = float(match.group(1))
    return value / 1000 if match.group(2) == "ms" else value


def probability(value: str | float | int) -> float:
    """``0.1``, ``"0.1"`` or ``"10%"`` as a share of calls in (0, 1]."""
    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, str) and value.strip().endswith("%"):
            share = float(value.strip()[:-1]) / 100
        else:
            share = float(value)
    except ValueError:
        raise ValueError(f"probability {value!r} is no number (0.1, or 10%)") from None
    if not 0 < share <= 1:
        raise ValueError(f"probability {value!r} must be above 0 and at most 1 (100%)")
    return share


@dataclass(frozen=True)
class Fault:
    """One fault to inject, with the share of calls it hits."""

    kind: str
    low: float = 0.0  # delay (a range) or trickle seconds
    high: float = 0.0
    status: int = 0
    code: FaultCode = FaultCode.SERVER
    reason: str = FAULT_TEXT
    probability: float = 1.0

    @property
    def label(self) -> str:
        """How the summary and the journal name it: ``delay 1.5s``, ``reset``, ``HTTP 503``."""
        if self.kind in ("delay", "trickle"):
            span = f"{self.low:g}s" if self.low == self.high else f"{self.low:g}s-{self.high:g}s"
            return f"{self.kind} {span}"
        if self.kind == "status":
            return f"HTTP {self.status}"
        if self.kind == "fault":
            return f"SOAP fault {self.code.value}"
        return self.kind

    def hits(self, rng: random.Random) -> bool:
        return self.probability >= 1 or rng.random() < self.probability

    def applied(self, answer: HttpResponse | Delayed | Disrupted, binding: Binding,
                rng: random.Random) -> HttpResponse | Delayed | Disrupted:
        """``answer`` with this fault done to it."""
        if self.kind == "delay":
            wait = self.low if self.low == self.high else rng.uniform(self.low, self.high)
            if isinstance(answer, Delayed):  # delays add up
                return Delayed(answer.response, answer.seconds + wait)
            return Delayed(answer, wait) if wait > 0 else answer
        if self.kind in ("reset", "empty"):
            return Disrupted(self.kind)
        if self.kind == "status":
            return _replaced(answer, status_page(self.status))
        if self.kind == "fault":
            return _replaced(answer, build_fault(binding, self.code, self.reason))
        return _transformed(answer, self)


def _replaced(answer: HttpResponse | Delayed | Disrupted, response: HttpResponse
              ) -> HttpResponse | Delayed | Disrupted:
    """``response`` delivered as ``answer`` was (after its delay)."""
    if isinstance(answer, Delayed):
        return Delayed(_replaced(answer.response, response), answer.seconds)
    if isinstance(answer, Disrupted):
        return answer if answer.response is None else Disrupted(answer.how, response,
                                                                  answer.seconds)
    return response


def _transformed(answer: HttpResponse | Delayed | Disrupted, fault: Fault
                 ) -> HttpResponse | Delayed | Disrupted:
    """``malformed`` or ``trickle`` done to the response inside ``answer``."""
    if isinstance(answer, Delayed):
        return Delayed(_transformed(answer.response, fault), answer.seconds)
    if isinstance(answer, Disrupted):
        if answer.response is None:
            return answer
        inner = _transformed(answer.response, fault)
        return inner if isinstance(inner, Disrupted) else Disrupted(answer.how, inner,
                                                                    answer.seconds)
    if fault.kind == "malformed":
        return malformed(answer)
    return Disrupted("trickle", answer, fault.low)


def malformed(response: HttpResponse) -> HttpResponse:
    """``response`` with its body cut in half (an empty one: an unclosed tag), so it no longer
    parses; Content-Length stays true."""
    body = response.body[:len(response.body) // 2] if len(response.body) > 1 else b"<"
    return HttpResponse(response.status, response.headers, body, response.reason)


def status_page(status: int, reason: str | None = None) -> HttpResponse:
    """HTTP.sys's own error page for ``status`` (what IIS sends when the application pool is
    down: 503 "The service is unavailable"), the same on every binding."""
    words = reason or _REASONS.get(status, "Error")
    detail = "The service is unavailable." if status == 503 else f"{words}."
    body = ('<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN""http://www.w3.org/TR/html4/'
            f'strict.dtd">\r\n<HTML><HEAD><TITLE>{words}</TITLE>\r\n<META HTTP-EQUIV='
            '"Content-Type" Content="text/html; charset=us-ascii"></HEAD>\r\n<BODY><h2>'
            f"{words}</h2>\r\n<hr><p>HTTP Error {status}. {detail}</p>\r\n</BODY></HTML>\r\n")
    return HttpResponse(status, (("Content-Type", "text/html; charset=us-ascii"),),
                        body.encode("ascii", "replace"), words)


def parse(text: str) -> Fault:
    """A fault as ``--fault`` and a stub's ``inject`` write it; ValueError saying what is
    wrong."""
    spec, share = text.strip(), 1.0
    head, colon, tail = spec.rpartition(":")
    if colon and re.fullmatch(r"\s*[0-9.]+\s*%?\s*", tail):
        spec, share = head.strip(), probability(tail)
    kind, _, argument = spec.partition("=")
    kind, argument = kind.strip().lower(), argument.strip()
    if kind.isdigit() and not argument:
        kind, argument = "status", kind
    if kind not in KINDS:
        raise ValueError(f"{kind or text!r} is no fault{did_you_mean(kind, KINDS)}; faults: "
                         "delay=1.5s, reset, empty, malformed, trickle, 500, 503, fault")
    if kind == "delay":
        if not argument:
            raise ValueError("delay needs a duration: delay=1.5s, or a range delay=0.5s-2s")
        low, high = seconds(argument)
        return Fault(kind, low, high, probability=share)
    if kind == "trickle":
        low, high = seconds(argument) if argument else (TRICKLE_SECONDS, TRICKLE_SECONDS)
        return Fault(kind, low, high, probability=share)
    if kind == "status":
        if not argument.isdigit() or not 100 <= int(argument) <= 599:
            raise ValueError(f"status needs an HTTP status from 100 to 599, not {argument!r}")
        return Fault(kind, status=int(argument), probability=share)
    if kind == "fault":
        code = FAULT_CODES.get((argument or "server").lower())
        if code is None:
            raise ValueError(f"fault code {argument!r} is none of Client, Server, "
                             "VersionMismatch (SOAP 1.2: Sender, Receiver)")
        return Fault(kind, code=code, probability=share)
    if argument:
        raise ValueError(f"{kind} takes no argument (given {argument!r})")
    return Fault(kind, probability=share)


def parse_option(text: str) -> Fault:
    """``--fault``'s value: a UsageError naming the flag when it is no fault."""
    try:
        return parse(text)
    except ValueError as exc:
        raise UsageError(f"--fault {text}: {exc}") from None
