"""SEC-LEAK: does a response leak implementation detail?

The detail looked for: .NET (and Java, Python) stack frames, source paths, exception types and
their chains (``---> System.FormatException``), SQL error text, in the fault string and detail or
in a text or HTML error page; and a framework version, in a header (``X-AspNet-Version``) or an
error page's "Version Information" line. Only error answers (status 400 and over) are read: a
result is not a leak, and lint reads a million exchanges.

A framework version is ``minor``: stock ASP.NET sends it with custom errors on too (it is turned
off in web.config, not by the mode), so it is a warning even in ``harness probe``; the rest is
what custom errors hide, and fails the probe.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

from harness.judge.findings import Verdict
from harness.traffic.exchange import HttpResponse

#: How much of a body is read: error pages are small; a huge one is not read whole.
SCANNED_BYTES = 256 * 1024
#: Length of the quoted evidence.
QUOTE_CHARS = 120


class Leak(NamedTuple):
    kind: str
    evidence: str  # the matching text, shortened, on one line
    minor: bool = False  # a version only: a warning everywhere


# Patterns are anchored on shapes a message written for a client does not have: a frame is a
# line starting with "at Namespace.Type.Method (" ; a type is dotted and ends in Exception.
_BODY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("stack frame", re.compile(r"(?m)^[ \t]*at [\w`$<>\[\],.]+\.[\w`$<>\[\]]+ ?\(.*$")),
    ("exception type", re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:Exception|Error)\b"
                                  r"(?:: ?.{0,60})?")),
    ("Python traceback", re.compile(r"Traceback \(most recent call last\)|"
                                    r"File \"[^\"\n]+\", line \d+.*")),
    ("source path", re.compile(r"(?:\b[A-Za-z]:\\|/)(?:[\w .-]+[\\/])+[\w.-]+\."
                               r"(?:cs|vb|java|py)\b(?::line \d+)?")),
    ("SQL error text", re.compile(
        r"(?i)(?:SqlException|Incorrect syntax near|Unclosed quotation mark|ORA-\d{5}|"
        r"SQLSTATE\[\w+\]|syntax error at or near|You have an error in your SQL syntax)"
        r".{0,60}")),
)
_VERSION_PATTERN = re.compile(r"(?i)Version Information:.{0,100}|ASP\.NET Version:\s*[\d.]+")
#: Headers that name the framework and its version (X-Powered-By only with a version in it).
_VERSION_HEADERS = ("x-aspnet-version", "x-aspnetmvc-version", "x-powered-by",
                    "x-sourcefiles")


def find_leaks(response: HttpResponse) -> list[Leak]:
    """What ``response`` leaks, most telling first; empty for a success or a clean error."""
    if response.status < 400:
        return []
    found = _body_leaks(_text(response.body))
    found += [Leak("framework version header", shorten(f"{name}: {value}"), True)
              for name, value in response.headers
              if name.lower() in _VERSION_HEADERS and any(c.isdigit() for c in value)]
    return found


def judge_leaks(response: HttpResponse) -> tuple[Verdict, str, str] | None:
    """SEC-LEAK's verdict on ``response`` as (verdict, expected, actual): failed for
    implementation detail, warning for a framework version only, passed for none; None for a
    success answer (not judged)."""
    if response.status < 400:
        return None
    leaks = find_leaks(response)
    serious = [leak for leak in leaks if not leak.minor]
    if serious:
        return Verdict.FAILED, "no implementation detail", describe(serious)
    if leaks:
        return Verdict.WARNING, "no framework version", describe(leaks)
    return Verdict.PASSED, "no implementation detail", "none found"


def _text(body: bytes) -> str:
    text = body[:SCANNED_BYTES].decode("utf-8", errors="replace")
    # Faults and pages escape markup (&lt;hash&gt;): read the text as a client's screen shows it.
    return html.unescape(text) if "&" in text else text


def _body_leaks(text: str) -> list[Leak]:
    found = []
    for kind, pattern in _BODY_PATTERNS:
        match = pattern.search(text)
        if match:
            found.append(Leak(kind, shorten(match.group(0))))
    match = _VERSION_PATTERN.search(text)
    if match:
        found.append(Leak("framework version", shorten(_strip_tags(match.group(0))), True))
    return found


def _strip_tags(text: str) -> str:
    return re.sub(r"<[^>]*>?", " ", text)


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit - 1] + "…"


def describe(leaks: list[Leak]) -> str:
    """The evidence of ``leaks`` as a finding's ``actual``: kind and quote of each."""
    return "; ".join(f"{leak.kind}: {leak.evidence!r}" for leak in leaks)
