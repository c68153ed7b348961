"""SEC-LEAK: does a response leak implementation detail?

The detail looked for, in the fault string and detail or in a text or HTML error page: .NET
(and Java, Python, Node) stack frames, source paths, SQL error text, connection strings and
internal host names (private addresses, ``*.internal``, ``*.local``, UNC paths); and what only
names the platform: an exception type (``System.InvalidOperationException``, chains such as
``---> System.FormatException`` included), a class (Python's ``<class 'spyne.model.X'>``)
and a framework version, in a header
(``X-AspNet-Version``) or an error page's "Version Information" line. Only error answers
(status 400 and over) are read: a result is not a leak, and lint reads a million exchanges.

A SOAP fault code is never a leak, dotted or not: SOAP 1.1 section 4.4.1 lets a service extend
``Client`` as ``Client.Authentication`` (spyne's ``Client.ValidationError``), and a code is
the protocol's, not the implementation's. The code elements are left out of what is read.

What only names the platform is ``minor``: a warning even in ``harness probe`` (stock ASP.NET
sends its version header with custom errors on; it is turned off in web.config, not by the
mode). The rest tells an attacker where and how the service runs, which custom errors hide:
it fails the probe (and is a warning in the other commands, SEC-LEAK being passive there).
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
    minor: bool = False  # names the platform only: a warning everywhere


_CONNECTION_KEY = (r"(?:data source|server|address|addr|initial catalog|database|dbname|"
                   r"user id|uid|password|pwd|integrated security|trusted_connection|"
                   r"persist security info|provider|host|port|sslmode)")
_PRIVATE_IPV4 = (r"(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|"
                 r"172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2})")
# Patterns are anchored on shapes a message written for a client does not have: a frame is a
# line starting with "at Namespace.Type.Method (" ; a connection string two "key=value;" pairs
# of a driver's keys; a host name is internal by its address or its suffix, lower case (a
# .NET namespace such as System.Internal is not one).
_BODY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("stack frame", re.compile(r"(?m)^[ \t]*at [\w`$<>\[\],.]+\.[\w`$<>\[\]]+ ?\(.*$")),
    ("Python traceback", re.compile(r"Traceback \(most recent call last\)|"
                                    r"File \"[^\"\n]+\", line \d+.*")),
    ("source path", re.compile(r"(?:\b[A-Za-z]:\\|/)(?:[\w .-]+[\\/])+[\w.-]+(?:\."
                               r"(?:cs|vb|java|py)\b(?::line \d+)?|"
                               r"\.(?:m?js|cjs|ts)(?::\d+){1,2})")),
    ("SQL error text", re.compile(
        r"(?i)(?:SqlException|Incorrect syntax near|Unclosed quotation mark|ORA-\d{5}|"
        r"SQLSTATE\[\w+\]|syntax error at or near|You have an error in your SQL syntax)"
        r".{0,60}")),
    ("connection string", re.compile(
        rf"(?i)\b{_CONNECTION_KEY}\s*=[^;\n<>]{{0,100}};\s*{_CONNECTION_KEY}\s*=[^;\n<>]{{0,60}}|"
        r"\b(?:jdbc:[a-z0-9]+:|(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|"
        r"amqps?|mssql|sqlserver|oracle)://)[^\s\"'<>]+")),
    ("internal host name", re.compile(
        rf"(?<![\w.]){_PRIVATE_IPV4}(?![\w.]*\d)|"
        r"\b[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9-]+)*"
        r"\.(?:internal|intranet|corp|lan|local|localdomain|home\.arpa)\b(?!\.\w)|"
        r"\\\\[\w.-]+\\[\w$.-]+")),
)
#: What only names the platform: a dotted type name ending in Exception or Error, and what
#: follows it on its line (the message a client is meant to read anyway), but not a SOAP 1.1
#: fault code extended with dots (``Client.ValidationError``, which spyne also writes as the
#: first line of a text/plain error); a Python class named in its repr.
_EXCEPTION_TYPE = re.compile(r"\b(?!(?:Client|Server|VersionMismatch|MustUnderstand)\.)"
                             r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:Exception|Error)\b"
                             r"(?:: ?[^<\n]{0,60})?")
_CLASS_REPR = re.compile(r"<class '[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+'>")
#: SOAP 1.1 faultcode and SOAP 1.2 Code elements (with their Subcodes): the protocol's words.
_FAULT_CODES = re.compile(r"(?s)<(?:[\w.-]+:)?(faultcode|Code)\b[^>]*>.*?</(?:[\w.-]+:)?\1\s*>")
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
    implementation detail, warning for what only names the platform (a framework version, an
    exception type), passed for none; None for a success answer (not judged)."""
    if response.status < 400:
        return None
    leaks = find_leaks(response)
    serious = [leak for leak in leaks if not leak.minor]
    if serious:  # the evidence, most telling first, with what names the platform after it
        return Verdict.FAILED, "no implementation detail", describe(leaks)
    if leaks:
        return Verdict.WARNING, "nothing naming the platform", describe(leaks)
    return Verdict.PASSED, "no implementation detail", "none found"


def _text(body: bytes) -> str:
    text = body[:SCANNED_BYTES].decode("utf-8", errors="replace")
    if "ode" in text:  # faultcode, Code: before unescaping, which could make tags of text
        text = _FAULT_CODES.sub(" ", text)
    # Faults and pages escape markup (&lt;hash&gt;): read the text as a client's screen shows it.
    return html.unescape(text) if "&" in text else text


def _body_leaks(text: str) -> list[Leak]:
    found = []
    for kind, pattern in _BODY_PATTERNS:
        match = pattern.search(text)
        if match:
            found.append(Leak(kind, shorten(_masked(match.group(0)))))
    match = _EXCEPTION_TYPE.search(text)
    if match:
        found.append(Leak("exception type", shorten(match.group(0)), True))
    match = _CLASS_REPR.search(text)
    if match:
        found.append(Leak("type name", shorten(match.group(0)), True))
    match = _VERSION_PATTERN.search(text)
    if match:
        found.append(Leak("framework version", shorten(_strip_tags(match.group(0))), True))
    return found


_SECRET = re.compile(r"(?i)\b(password|pwd)(\s*=\s*)[^;\s]*|(://[^:/@\s]+:)[^@\s]+@")


def _masked(evidence: str) -> str:
    """``evidence`` without the password a connection string may hold: the report says that
    one leaked, it does not leak it again."""
    return _SECRET.sub(lambda m: f"{m[1]}{m[2]}***" if m[1] else f"{m[3]}***@", evidence)


def _strip_tags(text: str) -> str:
    return re.sub(r"<[^>]*>?", " ", text)


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit - 1] + "…"


def describe(leaks: list[Leak]) -> str:
    """The evidence of ``leaks`` as a finding's ``actual``: kind and quote of each."""
    return "; ".join(f"{leak.kind}: {leak.evidence!r}" for leak in leaks)
