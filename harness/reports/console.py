"""The console form of a Report, the same for every command: a table per rule, then one line
per cause (failures, then differences, then warnings, each by reach), then the verdict line.

Nothing is hidden behind "... and N more": every cause gets its line, and the details of each
finding are in the JSON (``--json``). A cause line says what happened and to what (its first
details), where (operations x bindings), how many checks on how many calls (the checks of a
heading's lines add up to its count), the rules it failed and, for recorded traffic, one
example exchange:

    HTTP GET and HTTP POST not served: 404 on every call (48 checks on 48 calls, 16
    operation x binding pairs) [DIFF-STATUS]

(one line on the console).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import IO

from harness.errors import NothingJudged
from harness.judge.findings import NOT_SENT, UNCOMPARED, Cause, Report, Verdict, with_details

#: The binding slot of an endpoint-level finding (its WSDL): the operation slot holds the
#: endpoint.
WSDL = "WSDL"
#: Statuses that say a binding or operation is not served at all, when every call gets one.
_NOT_SERVED = re.compile(r"HTTP (404|405|501)\b")
_HEADINGS = {(Verdict.FAILED, False): "FAILURES", (Verdict.FAILED, True): "DIFFERENCES",
             (Verdict.WARNING, False): "WARNINGS", (Verdict.WARNING, True): "WARNINGS"}


def print_report(report: Report, stream: IO[str]) -> None:
    """The whole console report of ``report`` onto ``stream``."""
    print_rules(report, stream)
    print_causes(report, stream)
    if report.descriptions:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.descriptions.items()))
        print(f"\nservice descriptions ({report.descriptions_note}): {kinds}", file=stream)
    if "baseline" in report.meta:
        print(f"\nbaseline {report.meta['baseline']}: {report.known} known finding(s) not "
              "shown", file=stream)
    overrides = ", ".join(f"{r}={s.value}" for r, s in report.profile.overrides)
    print(f"\nprofile {report.profile.name}" + (f", overrides {overrides}" if overrides else ""),
          file=stream)
    print(f"\n{verdict_line(report)}", file=stream)


def print_rules(report: Report, stream: IO[str]) -> None:
    """One row per rule that judged something; the rules that applied to no call are left
    out, with one line naming them."""
    shown = {rule: c for rule, c in report.by_rule.items() if applied(c)}
    idle = sorted(set(report.by_rule) - set(shown))
    width = max([len(r) for r in shown] + [4])
    print(f"{'rule':<{width}}  passed  failed  warning  n/a   title", file=stream)
    for rule, c in sorted(shown.items()):
        print(f"{rule:<{width}}  {c[Verdict.PASSED]:>6}  {c[Verdict.FAILED]:>6}  "
              f"{c[Verdict.WARNING]:>7}  {c[Verdict.NOT_APPLICABLE]:>4}  "
              f"{report.titles.get(rule, '')}", file=stream)
    if idle:
        print(f"({len(idle)} rule(s) applied to no {_singular(report.unit)} of this run, left "
              f"out: {', '.join(idle)})", file=stream)


def applied(counts) -> bool:
    """Whether a rule (or test case) judged anything: passed, failed or warned at least once."""
    return bool(counts[Verdict.PASSED] or counts[Verdict.FAILED] or counts[Verdict.WARNING])


def print_causes(report: Report, stream: IO[str]) -> None:
    """Every cause on one line, under FAILURES, DIFFERENCES and WARNINGS."""
    sections: dict[str, list[Cause]] = defaultdict(list)
    for cause in report.ordered_causes():
        sections[_HEADINGS[cause.verdict, cause.difference]].append(cause)
    for heading, causes in sections.items():
        checks = sum(c.checks for c in causes)
        print(f"\n{heading}: {_count(len(causes), 'cause')}, {_count(checks, 'check')}",
              file=stream)
        for cause in causes:
            print(f"  {cause_line(report, cause)}", file=stream)


def cause_line(report: Report, cause: Cause) -> str:
    """What happened (and to what: its details), where, how often, which rules; e.g.
    ``envelope namespace: SOAP 1.2 expected, SOAP 1.1 given -- all 8 operations x SOAP 1.2
    (24 checks on 24 calls, 8 operation x binding pairs) [DIFF-BODY]``. The checks of the
    lines under a heading add up to its count."""
    rules = ", ".join(rule for rule, _ in cause.rules.most_common())
    every = every_call(report, cause)
    status = _NOT_SERVED.match(cause.text)
    shown = _shown_details(cause)
    text = with_details(cause.named_text, shown,
                        len(cause.details) - len(shown) + cause.more_details)
    spread = by_binding(report, cause)
    if status and every and all(ops is None for _, ops in spread):
        bindings = " and ".join(b for names, _ in spread for b in names)
        text = f"{bindings} not served: {status.group(1)} on every {_singular(report.unit)}"
        return f"{text} ({_reach(report, cause)}) [{rules}]"
    where = "; ".join(f"{_ops(ops, report, names)} x {', '.join(names)}"
                      for names, ops in spread)
    if cause.calls == 1:
        reach = f" ({_reach(report, cause)})" if cause.checks > 1 else ""
        return f"{text} -- {where}{_example(cause)}{_client(cause)}{reach} [{rules}]"
    if len(cause.pairs) == 1:
        where += _example(cause, "e.g. ")
    where += _client(cause)
    if every and cause.text.startswith(("HTTP ", "no answer")):  # never once served
        where += f", every {_singular(report.unit)}"
    return f"{text} -- {where} ({_reach(report, cause)}) [{rules}]"


#: Details named on a cause's line, and the characters they may take (the first is always
#: named); the JSON has every one (up to MAX_DETAILS).
SHOWN_DETAILS = 6
DETAIL_CHARS = 160


def _shown_details(cause: Cause) -> list[str]:
    shown: list[str] = []
    for detail in list(cause.details)[:SHOWN_DETAILS]:
        if shown and sum(len(d) + 2 for d in shown) + len(detail) > DETAIL_CHARS:
            break
        shown.append(detail)
    return shown


def every_call(report: Report, cause: Cause) -> bool:
    """Whether the cause's main rule found it on every call of each pair it touches."""
    rule = cause.rule
    return all(n >= sum(report.by_case.get((rule, op, b), {}).values())
               for (op, b), n in cause.pairs.items())


def by_binding(report: Report, cause: Cause) -> list[tuple[list[str], list[str] | None]]:
    """The cause's pairs as (bindings, operations) rows, bindings with the same operations
    together; operations None when they are every operation seen on those bindings (2+)."""
    ops_of: dict[str, set[str]] = defaultdict(set)
    for op, binding in cause.pairs:
        ops_of[binding].add(op)
    rows: dict[tuple[str, ...], list[str]] = {}
    for binding, ops in sorted(ops_of.items()):
        rows.setdefault(tuple(sorted(ops)), []).append(binding)
    seen = _operations_seen(report)
    out: list[tuple[list[str], list[str] | None]] = []
    for ops, bindings in rows.items():
        everywhere = len(ops) > 1 and all(set(ops) >= seen.get(b, set()) for b in bindings)
        out.append((bindings, None if everywhere else list(ops)))
    return out


def _operations_seen(report: Report) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for _, op, binding in report.by_case:
        # an endpoint (a bare GET of it) is no operation, except where endpoints are listed
        if op != "(unclassified)" and (binding == WSDL or not op.startswith("/")):
            seen[binding].add(op)
    return seen


def _ops(ops: list[str] | None, report: Report, bindings: list[str]) -> str:
    if ops is None:
        count = len(_operations_seen(report)[bindings[0]])
        return f"all {count} {'endpoints' if bindings == [WSDL] else 'operations'}"
    return ", ".join(ops)


def _reach(report: Report, cause: Cause) -> str:
    """``8 checks on 7 calls, 7 endpoints``: the checks first (they add up to the heading's
    count), the calls they were found on, the places."""
    pairs = len(cause.pairs)
    what = "endpoint" if all(b == WSDL for _, b in cause.pairs) else "operation x binding pair"
    unit = _singular(report.unit)
    return f"{_count(cause.checks, 'check')} on {_count(cause.calls, unit)}, {_count(pairs, what)}"


def _client(cause: Cause) -> str:
    """The client that sent the request, for a cause of request-side rules only (lint: which
    app build misbehaves); a server's failure is not the client's."""
    from harness.judge.rules import RULES, Side

    client = cause.example.get("client")
    if not client or any(RULES[r].side is not Side.REQUEST if r in RULES else True
                         for r in cause.rules):
        return ""
    return f" ({'e.g. ' if cause.calls > 1 else ''}sent by {client})"


def _example(cause: Cause, lead: str = "") -> str:
    """Where to find the example in a recording (" #12 in day.jsonl"); nothing for a URL."""
    example = cause.example
    index, source = example.get("index"), example.get("source") or ""
    if (index is None or not source or "://" in source or " " in source
            or example.get("endpoint")):
        return ""  # a URL (certify, probe), a generated case's name, a WSDL: no place to look
    return f" {lead}#{index} in {source}"


def interruption(report: Report, *, counted: bool = False) -> str:
    """How far an interrupted run got, as every report says it: ``by SIGINT after 40 of 96
    calls``, certify's ``by SIGTERM after 46 of 116 scenarios``; else ``by SIGINT``, or with
    ``counted`` (where no count follows it) ``by SIGINT after 40 calls``."""
    said = f"by {report.interrupted}"
    if report.planned is not None:
        said += f" after {report.exchanges} of {_count(report.planned, _singular(report.unit))}"
    elif report.meta.get("scenarios_planned"):  # certify: Gherkin scenarios
        ran = sum(report.meta.get("scenarios", {}).values())
        said += f" after {ran} of {_count(report.meta['scenarios_planned'], 'scenario')}"
    elif counted:
        said += f" after {report.exchanges} {report.unit}"
    return said


def verdict_line(report: Report) -> str:
    """``lint: FAILED - 861 checks over 69 exchanges: 700 passed, 3 failed, ...``; a partial
    run says what it covered and left out; an interrupted one ``certify: INTERRUPTED by SIGINT
    after 40 of 96 calls - ...`` (the counts: what ran until then)."""
    c = report.counts
    head = f"{report.command}: {report.verdict.upper()}"
    if report.interrupted:
        head += f" {interruption(report)}"
    scope = report.scope
    if scope is not None and scope.partial:
        verb = "certified" if report.command == "certify" else "judged"
        head += (f" for {', '.join(scope.covered) or 'nothing'}; "
                 f"{', '.join(scope.left_out)} not {verb}")
    where = [f"environment {report.environment}"] if report.environment else []
    where += [report.target] if report.target else []
    tail = f" ({': '.join(where)})" if where else ""
    uncompared = report.meta.get(UNCOMPARED)
    unseen = (f", {_count(uncompared, 'redacted value')} not compared: no key" if uncompared
              else "")
    return (f"{head} - {_count(report.checks, 'check')} over "
            f"{_count(report.exchanges, _singular(report.unit))}{_tests(report)}"
            f"{_not_sent(report)}: "
            f"{c[Verdict.PASSED]} passed, "
            f"{c[Verdict.FAILED]} failed, {_count(c[Verdict.WARNING], 'warning')}, "
            f"{c[Verdict.NOT_APPLICABLE]} not applicable{unseen}{tail}")


def _tests(report: Report) -> str:
    """How many tests the run's Allure and JUnit show, and how many of them failed, when some
    did: `` in 40 test cases (8 failed)`` (a test case: a rule on an operation x binding, an
    Allure test and a JUnit test case). Certify's Allure tests are its scenarios, its JUnit
    test cases its rules': `` in 84 scenarios``, failing `` in 84 scenarios (12 failed) and
    300 test cases (10 failed)``, so each figure a dashboard shows is on this line."""
    judged, failed = case_counts(report)
    cases = f"{_count(judged, 'test case')} ({failed} failed)"
    if report.meta.get("scenarios"):  # certify: Gherkin scenarios
        failing = report.meta["scenarios"].get("failed", 0)
        return (_within(report, [f"{failing} failed"] if failing or failed else [])
                + (f" and {cases}" if failing or failed else ""))
    return f" in {cases}" if failed else ""


def case_counts(report: Report) -> tuple[int, int]:
    """(judged, failed) test cases: rule x operation x binding (rule x endpoint) that judged
    something, and those with a failure. JUnit's tests and failures; Allure's tests and
    Failed (``allure_results.write_cases``)."""
    judged = [c for c in report.by_case.values() if applied(c)]
    return len(judged), sum(1 for c in judged if c[Verdict.FAILED])


def _within(report: Report, notes: list[str] | None = None) -> str:
    """certify: " in 42 scenarios (42 left out by --operation/--binding)": the scenarios
    run, and apart from them ``notes`` ("3 failed") and those the selection left out (or
    skipped otherwise)."""
    scenarios = report.meta.get("scenarios", {})
    ran = scenarios.get("passed", 0) + scenarios.get("failed", 0)
    if not scenarios:
        return ""
    apart = [*(notes or []),
             *(f"{n} {why}" for why, n in (("left out by --operation/--binding",
                                            scenarios.get("left out", 0)),
                                           ("skipped", scenarios.get("skipped", 0))) if n)]
    return f" in {_count(ran, 'scenario')}" + (f" ({'; '.join(apart)})" if apart else "")


def _not_sent(report: Report) -> str:
    """" (32 recorded exchanges not sent: 8 service descriptions, 24 left out by
    --operation/--binding)", or nothing when every recorded exchange was sent."""
    total = sum(report.not_sent.values())
    return f" ({_count(total, 'recorded exchange')} not sent: {not_sent_words(report)})" \
        if total else ""


def not_sent_words(report: Report) -> str:
    """Report.not_sent in words: "8 service descriptions, 24 left out by
    --operation/--binding"."""
    return ", ".join(_count(n, NOT_SENT[key]) if key == "service_descriptions"
                     else f"{n} {NOT_SENT[key]}"
                     for key in NOT_SENT if (n := report.not_sent.get(key, 0)))


def require_judged(report: Report) -> None:
    """NothingJudged (one line, exit 2) for a run that judged nothing: an empty run is no
    pass, and nothing of it is rendered."""
    if not report.judged:
        raise NothingJudged(nothing_judged(report))


def nothing_judged(report: Report) -> str:
    """Why a run judged nothing, in one line: what it read or sent and what became of it
    ("nothing judged in day.jsonl: 0 calls (12 recorded exchanges not sent: 12 left out by
    --operation/--binding); selected: GetTokenDevice")."""
    files = ", ".join(report.meta.get("recordings", []))
    where = f" in {files}" if files else (f" of {report.target}" if report.target else "")
    line = (f"nothing judged{where}: {_count(report.exchanges, _singular(report.unit))}"
            f"{_within(report)}{_not_sent(report)}")
    if report.descriptions and not report.not_sent.get("service_descriptions"):
        line += (f", {_count(sum(report.descriptions.values()), 'service description')} "
                 f"({report.descriptions_note})")
    if broken := report.meta.get("broken_lines", 0):
        line += f", {broken} broken line(s) skipped"
    if report.scope is not None and report.scope.partial:
        line += f"; selected: {', '.join(report.scope.covered) or 'nothing'}"
    return line


def _singular(unit: str) -> str:
    return unit[:-1] if unit.endswith("s") else unit


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
