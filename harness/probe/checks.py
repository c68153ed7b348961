"""The probe's rules: each a plain named function over one case and its answer, with a stable
rule ID (``PROBE_RULES``, printed by ``harness probe --list-rules``).

SEC-LEAK is the catalogue's passive rule (``harness.judge.security``): a warning in certify,
replay, lint and diff, a failure here, where the probe asked for error answers on purpose.
ROB-NO-CRASH is also judged by the runner's plain call after each hostile case.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from harness.contract.bindings import Binding, code_words, in_its_version, read_response
from harness.judge import asmx_matrix
from harness.judge.causes import leak_cause
from harness.judge.compare import NO_CONTENT_TYPE
from harness.judge.findings import Verdict
from harness.judge.rules import Outcome, failed, not_applicable, passed
from harness.judge.security import judge_leaks, shorten
from harness.probe.cases import CANARY, Expect, Family, ProbeCase
from harness.traffic.exchange import HttpResponse, media_type

#: Fault codes each SOAP version defines (SOAP 1.1 section 4.4.1, SOAP 1.2 part 1 5.4.6); a
#: SOAP 1.1 code may be extended with dots (``Client.Authentication``).
FAULT_CODES = {Binding.SOAP11: {"Client", "Server", "VersionMismatch", "MustUnderstand"},
               Binding.SOAP12: {"Sender", "Receiver", "VersionMismatch", "MustUnderstand",
                                "DataEncodingUnknown"}}


@dataclass(frozen=True)
class Answer:
    """What came back for one case: a response, or why none did, and how long it took."""

    response: HttpResponse | None
    seconds: float
    error: str | None = None  # no response: the reason
    timed_out: bool = False


Check = Callable[[ProbeCase, Answer, float], Outcome]


def sec_entity(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """No entity is expanded (the canary never comes back) and no DTD is processed (a document
    with one is never answered as a success)."""
    if not case.entity:
        return not_applicable("no DTD or XInclude in the case")
    response = answer.response
    if response is None:
        return not_applicable("no answer")
    seen = _text(response)
    if CANARY in seen:
        at = seen.index(CANARY)
        return failed("no entity expanded", "the canary came back expanded: "
                      f"{shorten(seen[max(0, at - 40):at + 60])!r}")
    if response.status < 400:
        return failed("the document refused (an error answer)",
                      f"HTTP {response.status}: a document with a DTD or XInclude was "
                      "accepted (SOAP messages carry none)")
    return passed("no entity expanded", f"HTTP {response.status}, no canary")


def _text(response: HttpResponse) -> str:
    head = " ".join(f"{k}: {v}" for k, v in response.headers)
    body = response.body[:1024 * 1024].decode("utf-8", errors="replace")
    return f"{head}\n{html.unescape(body) if '&' in body else body}"


def sec_leak(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """No answer leaks implementation detail (security.judge_leaks); what only names the
    platform (a framework version, an exception type) is a warning."""
    if answer.response is None:
        return not_applicable("no answer")
    judged = judge_leaks(answer.response)
    if judged is None:
        return not_applicable("not an error answer")
    verdict, expected, actual = judged
    return Outcome(verdict, expected, actual, "", False, leak_cause(expected, actual))


def no_crash(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """The connection is not reset or closed where an answer is due (the runner's plain call
    after the case judges the rest of ROB-NO-CRASH)."""
    if answer.error is not None and not answer.timed_out:
        return failed("an answer", f"no answer: {answer.error}")
    return passed("an answer", "answered" if answer.response else "timed out (ROB-TIME)")


def in_time(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """Every hostile request is answered within ``bound`` seconds."""
    expected = f"an answer within {bound:g} s"
    if answer.timed_out:
        return failed(expected, f"no answer in {answer.seconds:.1f} s")
    if answer.response is None:
        return not_applicable(f"no answer ({answer.error})")
    if answer.seconds > bound:
        return failed(expected, f"answered in {answer.seconds:.1f} s")
    return passed(expected, f"{answer.seconds:.2f} s")


def fault_shape(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """An invalid request gets an error of its own binding: over SOAP a fault of the request's
    version (its Content-Type, a code of that version) or an HTTP error without a body (ASMX
    answers malformed XML with 400); over GET/POST an error status. Never a success hiding the
    error, never a fault of the other SOAP version."""
    response = answer.response
    if response is None:
        return not_applicable("no answer")
    if response.status < 400:
        if case.expect is Expect.REFUSAL and case.family is not Family.VALUE:
            return failed(f"an error answer of {case.binding.label}",
                          f"HTTP {response.status}: the invalid request was answered as a "
                          "success")
        return not_applicable("not an error answer")
    if not case.binding.is_soap:
        return passed("an error status", f"HTTP {response.status}")
    return _soap_error_shape(case, response)


def _soap_error_shape(case: ProbeCase, response: HttpResponse) -> Outcome:
    reading = read_response(case.operation, case.binding, response)
    version = reading.envelope_binding
    if reading.fault_code is None or version is None:
        if reading.document is not None and version is not None:
            return failed("a SOAP fault", f"HTTP {response.status} with a {version.label} "
                          "envelope that holds no Fault")
        return _http_error(case, response, reading.document is not None)
    actual = (f"{version.label} fault with code {reading.fault_code or '(empty)'}, "
              f"{response.content_type or NO_CONTENT_TYPE}")
    # an envelope of no SOAP version: either version is the request's
    if not (case.name.startswith("envelope/version-mismatch")
            or in_its_version(case.binding, version, reading.fault_code)):
        return failed(f"a {case.binding.label} fault", actual)
    if media_type(response.content_type) != media_type(version.soap_content_type):
        return failed(f"a {version.label} fault as {version.soap_content_type}", actual)
    head = code_words(reading.fault_code)[:1] if version is Binding.SOAP11 else (
        reading.fault_code,)  # SOAP 1.1 refines a code with dots, SOAP 1.2 with Subcodes
    if not head or head[0] not in FAULT_CODES[version]:
        return failed(f"a {version.label} fault code ({', '.join(sorted(FAULT_CODES[version]))})",
                      actual)
    return passed(f"a {version.label} fault", actual)


def _http_error(case: ProbeCase, response: HttpResponse, xml: bool) -> Outcome:
    """An error answer to a SOAP call without an envelope. ASMX's have an empty body (400
    for malformed XML, 415) or are an HTML error page (405, 411, customErrors); any other
    body (text/plain, XML that is no envelope, text that is not even XML under a SOAP type)
    is an error no SOAP client can read as one."""
    media = media_type(response.content_type)
    if not response.body.strip():
        return passed("a SOAP fault or an HTTP error", f"HTTP {response.status}, empty body")
    if media == "text/html":
        return passed("a SOAP fault or an HTTP error", f"HTTP {response.status}, an HTML page")
    what = ("XML that is no SOAP envelope" if xml else
            f"a {media or 'untyped'} body that is not XML" if media and "xml" in media else
            f"a {media or 'untyped'} body")
    return failed(f"a {case.binding.label} fault, or an HTTP error with an empty body or an "
                  "HTML page", f"HTTP {response.status}, {response.content_type or 'no '
                                                        'Content-Type'}: {what}")


def rejects_invalid(case: ProbeCase, answer: Answer, bound: float) -> Outcome:
    """Invalid values (a non-integer or out-of-range ``int``, a value XML cannot carry, a
    missing GET/POST parameter) are refused, not silently accepted."""
    if case.family is not Family.VALUE or case.expect is not Expect.REFUSAL:
        return not_applicable("not an invalid value")
    if answer.response is None:
        return not_applicable("no answer")
    status = answer.response.status
    if status >= 400:
        return passed("refused", f"HTTP {status}")
    return failed("refused (an error answer)", f"HTTP {status}: accepted",
                  cause=f"invalid values accepted (HTTP {status}) where ASMX refuses them")


@dataclass(frozen=True)
class ProbeRule:
    id: str
    title: str
    check: Check


PROBE_RULES: tuple[ProbeRule, ...] = (
    ProbeRule("SEC-ENTITY", "no entity is expanded (canary) and no DTD is processed",
              sec_entity),
    ProbeRule("SEC-LEAK", "no answer leaks implementation detail (stack frames, source paths, "
              "SQL text, connection strings, internal host names; a framework version or an "
              "exception type only names the platform: a warning)", sec_leak),
    ProbeRule("ROB-NO-CRASH", "the target answers a plain call after each hostile one and "
              "never resets a connection where an answer is due", no_crash),
    ProbeRule("ROB-TIME", "every hostile request is answered within the bound (--timeout, "
              "default 5 s)", in_time),
    ProbeRule("ROB-FAULT-SHAPE", "an invalid request gets an error of its own binding (SOAP: a "
              "fault of its version, Content-Type and codes; GET/POST: an error status)",
              fault_shape),
    ProbeRule("ROB-REJECT", "invalid values (e.g. a non-integer id_row_central) are refused",
              rejects_invalid),
)
RULE_IDS = tuple(rule.id for rule in PROBE_RULES)


def judge(case: ProbeCase, answer: Answer, bound: float) -> list[tuple[str, Outcome]]:
    """Every probe rule over one case and its answer."""
    return [(rule.id, rule.check(case, answer, bound)) for rule in PROBE_RULES]


def failing(outcomes: list[tuple[str, Outcome]]) -> list[str]:
    return [rule for rule, outcome in outcomes if outcome.verdict is Verdict.FAILED]


def titles() -> dict[str, str]:
    """The probe's rules and the rules of the ASMX matrix rows it sends."""
    return {**{rule.id: rule.title for rule in PROBE_RULES}, **asmx_matrix.titles()}


def rules_table() -> str:
    """The probe's rules as a Markdown table (``harness probe --list-rules``)."""
    lines = ["| rule | level | title |", "|---|---|---|"]
    lines += [f"| `{r.id}` | mandatory | {r.title} |" for r in PROBE_RULES]
    lines += [f"| `{rule}` | ASMX matrix: failure where the spec speaks or a value is lost, "
              f"else warning | {title} |" for rule, title in asmx_matrix.titles().items()]
    return "\n".join(lines)
