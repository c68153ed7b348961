"""Running the probe: the budget, sending each case, the plain call after each hostile one, the
report (certify's: console, JSON, JUnit, Allure) and the file of failing cases.

Order: XML attacks, malformed envelopes, HTTP-level cases, generated values with two thirds of
what is left of the budget, then the ASMX matrix's rows. The run stops early, with what it
found, when the budget is spent or the target stops answering.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from harness import stopping
from harness.contract.bindings import Binding
from harness.contract.model import Contract, ParamType
from harness.contract.selection import Selection
from harness.errors import ResponseTooLarge, TargetUnreachable, UsageError
from harness.judge import asmx_matrix
from harness.judge.findings import Finding, Report, Verdict, selection_scope
from harness.judge.rules import Outcome, failed, not_applicable, passed
from harness.probe import checks, values
from harness.probe.attacks import attacked_operations, malformed_envelopes, xml_attacks
from harness.probe.casefile import CaseFile, read_cases
from harness.probe.cases import ProbeCase, plain_request
from harness.probe.checks import Answer
from harness.probe.http_level import http_cases
from harness.probe.matrix import matrix_cases
from harness.progress import Progress
from harness.reference.server import target_or_reference
from harness.reports.allure_results import http_text, redact_results
from harness.reports.console import print_report, require_judged
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit
from harness.traffic import send
from harness.traffic.exchange import HttpRequest
from harness.traffic.keys import KEY_BYTES
from harness.traffic.pacing import Pace
from harness.traffic.redaction import ReportRedaction, redacting_reports


@dataclass(frozen=True)
class Budget:
    max_requests: int = 1500
    max_time: float = 60.0
    rate: float = 0.0  # requests per second; 0: as fast as the target answers


@dataclass(frozen=True)
class Outputs:
    json: Path | None = None
    junit: Path | None = None
    allure_dir: Path | None = None
    failures: Path = Path("reports/probe-failures.jsonl")


#: Plain calls after a failed one, a second apart, before the target is declared down.
RETRIES = 3
#: Characters of a body kept to show a test's exchange (the JSON has every finding).
SHOWN_BODY = 4000


@dataclass(frozen=True)
class Sent:
    """One case as sent: when, how long its answer took, and its exchange as text (bodies
    shortened: a test shows it; the run never holds whole answers)."""

    at: float
    seconds: float
    texts: tuple[str, str]

    @classmethod
    def of(cls, case: ProbeCase, answer: Answer) -> Sent:
        response = (http_text(answer.response) if answer.response is not None
                    else f"(no answer: {answer.error})")
        return cls(time.time() - answer.seconds, answer.seconds,
                   (_short(http_text(case.request)), _short(response)))


def _short(text: str) -> str:
    return text if len(text) <= SHOWN_BODY else text[:SHOWN_BODY] + "\n[...]"


class Prober:
    """Sends cases to one target within a budget and judges them into a Report."""

    def __init__(self, contract: Contract, base: str, budget: Budget, report: Report,
                 cases_out: CaseFile | None, options: send.SendOptions | None = None,
                 chosen: Selection | None = None) -> None:
        self.contract, self.base, self.budget, self.report = contract, base, budget, report
        self.chosen = chosen or Selection()
        self.cases_out = cases_out
        #: The shared sending options; their total timeout is ROB-TIME's bound.
        self.options = options or send.SendOptions(timeout=5.0)
        self.bound = self.options.timeout
        self.http = send.client(self.options)
        self.sent = 0
        self.started = time.monotonic()
        self.pace = Pace(budget.rate)  # --rate: the schedule replay uses too
        self.stopped: str | None = None  # why the run ended early
        self._warned: set[tuple[str, str]] = set()
        #: The ASMX matrix's spec calls, each sent once (rows share them).
        self._spec_calls = asmx_matrix.Sent(lambda request: self.exchange(request).response)
        #: Per (rule, operation, binding): the request and response a test shows (as text,
        #: bodies shortened), and whether it is a failing or warned one.
        self.exchanges: dict[tuple[str, str, str], tuple[str, str]] = {}
        self.telling: set[tuple[str, str, str]] = set()
        #: When the first call of each (operation, binding) was sent (epoch seconds).
        self.first_sent: dict[tuple[str, str], float] = {}
        #: The run's progress (``probe`` sets it): cases judged, failing ones.
        self.progress: Progress | None = None
        self.plain = self._find_plain_call()

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------------------------ budget

    def left(self, requests: int = 1) -> bool:
        if self.stopped is None:
            if stopping.requested():  # SIGINT/SIGTERM: the call in flight ends, no more
                self.stopped = f"interrupted by {stopping.signal_name()}"
                self.report.interrupt()
            elif self.sent + requests > self.budget.max_requests:
                self.stopped = f"--max-requests {self.budget.max_requests} reached"
            elif time.monotonic() - self.started > self.budget.max_time:
                self.stopped = f"--max-time {self.budget.max_time:g} s reached"
        return self.stopped is None

    def exchange(self, request: HttpRequest) -> Answer:
        """Send ``request`` (rate-limited, counted, timed) and say what came back."""
        self.pace.wait()
        start = time.monotonic()
        self.sent += 1
        try:
            response = send.send(self.http, request, self.options)
        except TargetUnreachable as exc:
            seconds = time.monotonic() - start
            return Answer(None, seconds, str(exc), seconds >= self.bound * 0.95)
        except ResponseTooLarge as exc:  # an answer, over the cap: judged as no answer
            return Answer(None, time.monotonic() - start, str(exc))
        return Answer(response, time.monotonic() - start)

    # ------------------------------------------------------------------------------ cases

    def try_case(self, case: ProbeCase) -> tuple[Answer, list[tuple[str, Outcome]]]:
        answer = self.exchange(case.request)
        return answer, checks.judge(case, answer, self.bound)

    def run(self, case: ProbeCase, *, health: bool = True) -> bool:
        """Send and judge ``case`` into the report, then the plain call; whether it failed."""
        answer, outcomes = self.try_case(case)
        if case.matrix is not None:
            outcomes.append(self.as_asmx(case, answer))
            health = False  # a client's request, not a hostile one
        if health or answer.response is None:
            outcomes.append(("ROB-NO-CRASH", self.still_answers(case)))
        self.report.observe(case.request, answer.response, case.operation.name)
        return self.record(case, outcomes, Sent.of(case, answer))

    def as_asmx(self, case: ProbeCase, answer: Answer) -> tuple[str, Outcome]:
        """The ASMX matrix row's verdict on a matrix case: its rule, and the outcome judged
        against the target's answer to the row's spec call (sent once per run)."""
        row = next(r for r in asmx_matrix.matrix().rows if r.id == case.matrix)
        mreq = asmx_matrix.build(self.contract, case.operation, row, self.base)
        if mreq is None or answer.response is None:
            return row.rule, not_applicable("no answer" if mreq else "the row does not apply")
        answers = self._spec_calls.answers(replace(mreq, request=case.request), answer.response)
        judged = asmx_matrix.verdict(replace(mreq, request=case.request), answers)
        return row.rule, Outcome(judged.verdict, judged.expected, judged.actual, "", False,
                                 judged.cause, judged.detail or "")

    def record(self, case: ProbeCase, outcomes: list[tuple[str, Outcome]],
               sent: Sent | None = None) -> bool:
        self.report.exchanges += 1
        pair = (case.operation.name, case.binding.label)
        if sent is not None:  # a test's time (Allure, JUnit) is that of its own calls
            self.report.add_seconds({pair: sent.seconds})
            self.first_sent.setdefault(pair, sent.at)
        for rule, outcome in outcomes:
            outcome = self._once(outcome)
            self.report.add(Finding(
                rule, outcome.verdict, case.operation.name, case.binding.label,
                expected=outcome.expected,
                actual=f"{case.name}: {outcome.actual}" if outcome.actual else case.name,
                message=case.what, source=self.base, extra={"case": case.name},
                index=self.report.exchanges, cause=_cause(outcome),
                detail=(outcome.detail or case.what) if outcome.verdict in _TOLD else None))
            if sent is not None:
                self._keep_exchange((rule, *pair), outcome.verdict, sent)
        failing = checks.failing(outcomes)
        if failing and self.cases_out is not None:
            self.cases_out.save(case, failing)
        if self.progress is not None:
            self.progress.update(failing=int(bool(failing)))
        return bool(failing)

    def _keep_exchange(self, key: tuple[str, str, str], verdict: Verdict, sent: Sent) -> None:
        """The exchange a test shows: its first failing or warned one, else its first."""
        telling = verdict in (Verdict.FAILED, Verdict.WARNING)
        if key not in self.exchanges or (telling and key not in self.telling):
            self.exchanges[key] = sent.texts
            if telling:
                self.telling.add(key)

    def _once(self, outcome: Outcome) -> Outcome:
        """A warning repeated word for word (the same version header on every error answer)
        is reported the first time; later ones count as passed, saying so."""
        if outcome.verdict is not Verdict.WARNING:
            return outcome
        key = (outcome.expected, outcome.actual)
        if key not in self._warned:
            self._warned.add(key)
            return outcome
        return passed(outcome.expected, f"{outcome.actual} (warned once already)")

    def still_answers(self, after: ProbeCase | str) -> Outcome:
        """ROB-NO-CRASH: the plain call answers 200 after ``after``; retried a few times, and
        the run stops when it never does."""
        what = after.label if isinstance(after, ProbeCase) else after
        expected = "the plain call answered with 200 after the case"
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(1.0)
            answer = self.exchange(self.plain)
            if answer.response is not None and answer.response.status == 200:
                if attempt == 0:
                    return passed(expected, "200")
                return failed(expected, f"no answer for {attempt} s after {what}, then 200")
            last = answer.error or f"HTTP {answer.response.status}"  # type: ignore[union-attr]
        self.stopped = f"the target stopped answering after {what}"
        return failed(expected, f"{last} ({RETRIES + 1} tries over {RETRIES} s)")

    def record_alive(self, target: values.Target) -> None:
        """ROB-NO-CRASH after the generated values of one target."""
        outcome = self.still_answers(f"the {target.parameter.name} values of "
                                     f"{target.operation.name} x {target.binding.label}")
        self.report.add(Finding("ROB-NO-CRASH", outcome.verdict, target.operation.name,
                                target.binding.label, outcome.expected, outcome.actual,
                                source=self.base))

    def _find_plain_call(self) -> HttpRequest:
        """The first of the attacked operation's selected bindings the target answers with
        200."""
        op = attacked_operations(self.contract, self.chosen)[0]
        seen = []
        for binding in Binding:
            if not self.chosen.allows(op.name, binding.label) or \
                    binding.value not in self.contract.bindings_of(op):
                continue
            request = plain_request(self.contract, op, binding, self.base)
            answer = self.exchange(request)
            if answer.response is not None and answer.response.status == 200:
                return request
            seen.append(f"{binding.label}: {answer.error or answer.response.status}")
        raise TargetUnreachable(f"{self.base} does not answer a plain {op.name} call with 200 "
                                f"({'; '.join(seen)})")


#: Verdicts whose findings name their case (``Finding.detail``): which value was accepted,
#: which request answered as a success.
_TOLD = (Verdict.FAILED, Verdict.WARNING)


def _cause(outcome: Outcome) -> str:
    """A probe finding's cause: what the check found, without the case's name (many cases
    share one cause: "expected the plain call answered with 200 ..., actual no answer")."""
    return outcome.cause or f"expected {outcome.expected}, actual {outcome.actual}"


# ---------------------------------------------------------------------------------- phases


def run_fixed(prober: Prober, cases: Iterable[ProbeCase]) -> None:
    for case in cases:
        if not prober.left(2):
            return
        prober.run(case)


def run_values(prober: Prober, seed: int | None = None, chosen: Selection | None = None
               ) -> None:
    """Generated values with what is left of the budget, shared among the targets."""
    found = [t for t in values.targets(prober.contract)  # typed parameters first
             if chosen is None or chosen.allows(t.operation.name, t.binding.label)]
    spare = prober.budget.max_requests - prober.sent
    per_target = max(2, min(40, spare * 2 // (3 * max(1, len(found)))))
    for target in found:
        if not prober.left(2):
            return
        # a typed parameter gets at least a few inputs even on a small budget: its refusals
        # (ROB-REJECT) are what a small run must not miss
        typed = target.parameter.type is not ParamType.STRING
        examples = max(per_target, 8) if typed else per_target
        _search(prober, target, examples, seed)
        if prober.left():
            prober.record_alive(target)


def _search(prober: Prober, target: values.Target, examples: int, seed: int | None) -> None:
    results: dict[values.Generated, tuple[ProbeCase, list[tuple[str, Outcome]], Sent]] = {}
    allowance = examples * 2  # generation plus shrinking, in requests

    def try_case(given: values.Generated) -> bool:
        if len(results) >= allowance or not prober.left():
            return False
        case = values.value_case(prober.contract, target.operation, target.binding,
                                 target.parameter, given, prober.base)
        answer, outcomes = prober.try_case(case)
        if answer.response is None:  # a reset or a timeout: is the target still there?
            outcomes.append(("ROB-NO-CRASH", prober.still_answers(case)))
        results[given] = (case, outcomes, Sent.of(case, answer))
        return bool(checks.failing(outcomes))

    minimal = values.search(target, try_case, examples, seed)
    for given, (case, outcomes, sent) in results.items():
        if given == minimal:
            prober.record(case, outcomes, sent)
        elif not checks.failing(outcomes):
            prober.record(case, outcomes, sent)  # the passes count; failures other than the
            # minimal one are the shrinker's steps towards it



# ------------------------------------------------------------------------------------ run


def probe(target: str | None, contract: Contract, budget: Budget, outputs: Outputs, *,
          options: send.SendOptions | None = None, chosen: Selection | None = None,
          replay: Path | None = None, seed: int | None = None, stream: IO[str] | None = None,
          quiet: bool = False) -> int:
    """Probe ``target`` (the embedded reference when None), or replay saved cases; exit status."""
    stream = stream or sys.stdout
    _check_budget(budget)
    saved = list(read_cases(replay, contract)) if replay else None
    with target_or_reference(target, contract, options) as url:
        shown = url if target else f"embedded reference at {url}"
        report = Report("probe", shown, titles=checks.titles(), namespace=contract.namespace,
                        environment=options.environment if options else None)
        # every output shows a secret by its pseudonym under a key of this run, never written
        report.redaction = ReportRedaction(contract, secrets.token_bytes(KEY_BYTES))
        cases_out = None if replay else CaseFile(outputs.failures)
        print(f"probe: {shown}, at most {budget.max_requests} requests in "
              f"{budget.max_time:g} s" + (f" at {budget.rate:g}/s" if budget.rate else ""),
              file=stream, flush=True)
        chosen = chosen or Selection()
        prober = Prober(contract, url, budget, report, cases_out, options, chosen)
        report.scope = selection_scope(contract, chosen)

        def picked(cases: Iterable[ProbeCase]) -> Iterator[ProbeCase]:
            return (c for c in cases if chosen.allows(c.operation.name, c.binding.label))

        saved_to = None
        prober.progress = Progress("probe", total=len(saved) if saved is not None else None,
                                   unit="cases", quiet=quiet)
        try:
            with stopping.cooperative(), redacting_reports(report.redaction):
                # a signal: Prober.left() ends the run
                if saved is not None:
                    run_fixed(prober, picked(_retargeted(case, url) for case in saved))
                else:
                    run_fixed(prober, picked(xml_attacks(contract, url, chosen)))
                    run_fixed(prober, picked(malformed_envelopes(contract, url, chosen)))
                    run_fixed(prober, picked(http_cases(contract, url, chosen)))
                    run_values(prober, seed, chosen)  # two thirds of what is left
                    run_fixed(prober, picked(matrix_cases(contract, url, chosen)))
        finally:
            prober.progress.close()
            prober.close()
            if cases_out is not None:
                saved_to = cases_out.close(complete=not stopping.requested())
        if stopping.requested():
            report.interrupt()
    report.meta.update(requests=prober.sent, stopped=prober.stopped,
                       failing_cases=str(saved_to) if cases_out and cases_out.written
                       else None)
    report.finish()
    return _write(report, prober, cases_out, outputs, stream)


def _check_budget(budget: Budget) -> None:
    if budget.max_requests < 10:
        raise UsageError("--max-requests must be at least 10")
    if budget.max_time <= 0 or budget.rate < 0:
        raise UsageError("--max-time must be positive, --rate not negative")


def _retargeted(case: ProbeCase, base: str) -> ProbeCase:
    return replace(case, request=send.retarget(case.request, base))


def _write(report: Report, prober: Prober, cases_out: CaseFile | None, outputs: Outputs,
           stream: IO[str]) -> int:
    require_judged(report)
    print(file=stream)
    print_report(report, stream)
    ending = prober.stopped or "every case sent"
    print(f"probe: {prober.sent} requests; {ending}", file=stream)
    if cases_out is not None and cases_out.written:
        saved = report.meta["failing_cases"]
        print(f"probe: {cases_out.written} failing case(s) saved to {saved} "
              f"(send them again: harness probe --replay {saved})"
              + (f"; {outputs.failures} is left as the last complete run wrote it"
                 if report.interrupted else ""), file=stream)
    if outputs.json:
        write_json(report, outputs.json)
        print(f"probe: JSON findings in {outputs.json}", file=stream)
    if outputs.junit:
        write_junit(report, outputs.junit)
        print(f"probe: JUnit XML in {outputs.junit}", file=stream)
    if outputs.allure_dir:
        from harness.probe.allure import write_allure

        write_allure(report, outputs.allure_dir, prober.exchanges, prober.first_sent)
        if report.redaction is not None:  # exchanges shown before a secret was met
            redact_results(outputs.allure_dir, report.redaction.text)
        print(f"probe: Allure results in {outputs.allure_dir}", file=stream)
    return report.exit_code
