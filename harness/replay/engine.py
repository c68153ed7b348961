"""Replay: send recorded requests to a target, judge each new response with the response-side
rules and compare it with the recorded one (``compare.compare_responses``).

Work is spread over worker processes, each with its own httpx client and a few threads (one
httpx client slows down as its own concurrency grows); ``rate`` paces the requests overall: one
schedule (``harness.traffic.pacing.Pace``) shared by every thread of every process.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness import stopping
from harness.contract.bindings import classify, service_description
from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.errors import (
    ClassificationError,
    ResponseTooLarge,
    ServiceDescription,
    TargetUnreachable,
    UsageError,
)
from harness.judge.causes import outcome_cause, words_of
from harness.judge.compare import Difference, Sides, compare_responses
from harness.judge.compare.pseudonyms import Pseudonyms
from harness.judge.findings import UNCOMPARED, Finding, Report, Verdict, selection_scope
from harness.judge.profiles import Profile
from harness.judge.request_validation import EXPLANATION, markup_refused, not_served
from harness.judge.rules import SPEC, Side, described, judge, judge_case, read_case, titles
from harness.judge.sending import RULE_TITLES, no_answer_cause, size_finding
from harness.judge.streaming import (
    ANSWER,
    ANSWERED_IN,
    NOT_SENT,
    STOPPED,
    ChunkResult,
    Tally,
    run,
)
from harness.progress import answered
from harness.traffic.exchange import Exchange, HttpResponse
from harness.traffic.keys import KEY_BYTES, recording_keys
from harness.traffic.pacing import Pace
from harness.traffic.redaction import ReportRedaction
from harness.traffic.send import (
    DEFAULT_TIMEOUT,
    Sender,
    SendOptions,
    base_url,
    check_reachable,
    retarget,
    send,
    wrong_target_line,
)

#: Replay's own rules: the new response differs from the recorded one (IDs from
#: ``Difference.aspect``: status (a result become an error too), Content-Type, body).
REPLAY_RULES = {
    "REPLAY-STATUS": "status as recorded",
    "REPLAY-CONTENT-TYPE": "Content-Type (media type and charset) as recorded",
    "REPLAY-BODY": "body as recorded (XML structurally; a redacted value by its pseudonym)",
    "REPLAY-TRANSPORT": "the target answered the replayed request",
    "REPLAY-REDACTED": "redacted values compared by pseudonym under the recording's key",
}
_REDACTED = "REPLAY-REDACTED"
_TRANSPORT = "REPLAY-TRANSPORT"
_ASPECT_RULES = {"status": "REPLAY-STATUS", "content-type": "REPLAY-CONTENT-TYPE",
                 "body": "REPLAY-BODY"}
_COMPARED = tuple(_ASPECT_RULES.values())


def replay_rule(difference: Difference) -> str:
    """The replay rule ID of a Difference."""
    return _ASPECT_RULES[difference.aspect]


@dataclass(frozen=True)
class Layout:
    """How ``concurrency`` in-flight requests are spread: processes x threads."""

    processes: int
    threads: int

    @classmethod
    def for_concurrency(cls, concurrency: int, cores: int | None = None) -> Layout:
        processes = max(1, min(concurrency, cores or os.cpu_count() or 1))
        return cls(processes, math.ceil(concurrency / processes))


@dataclass
class ReplayJob:
    """Sends each exchange's request to ``target`` and judges what comes back.

    With ``check=False`` it only sends (the bare client the benchmark compares with).
    """

    contract: Contract
    target: str
    ignore: tuple[str, ...] = ()
    threads: int = 4
    #: --rate: the run's one schedule, shared by every thread and worker process (made in
    #: the parent, handed to the workers as they start).
    pace: Pace = field(default_factory=lambda: Pace(None))
    check: bool = True
    timeout: float = DEFAULT_TIMEOUT
    #: How to send (default: SendOptions with ``timeout``).
    options: SendOptions | None = None
    selection: Selection = field(default_factory=Selection)
    profile: Profile = SPEC
    #: Each recording's pseudonym key by its path (``harness.traffic.keys.recording_keys``).
    keys: Keys = field(default_factory=dict)
    #: How the run's reports show secrets (its workers show them alike).
    redaction: ReportRedaction | None = None
    _state: dict = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_state"} | {"_state": {}}

    def setup(self) -> None:
        options = self.options or SendOptions(timeout=self.timeout)
        self._state.update(sender=Sender(options, connections=self.threads),
                           pool=ThreadPoolExecutor(self.threads, thread_name_prefix="replay"))

    def close(self) -> None:
        if self._state:
            self._state["pool"].shutdown()
            self._state["sender"].close()
            self._state.clear()

    def judge_all(self, exchanges: Sequence[Exchange], tally: Tally) -> Iterator[list[Finding]]:
        """Send the chunk's requests (over the threads), then check the answers here, one
        after another: the checks run in one thread with warm caches, not interleaved with
        HTTP work on threads that hand the GIL back and forth (~2x cheaper per exchange)."""
        answers = (map(self.send_one, exchanges) if self.threads <= 1
                   else self._state["pool"].map(self.send_one, exchanges))
        for exchange, answer in zip(exchanges, list(answers), strict=True):
            yield judge_answer(exchange, answer, self.contract, ignore=self.ignore,
                               check=self.check, tally=tally, profile=self.profile,
                               keys=self.keys)

    def chosen(self, exchange: Exchange) -> bool:
        """--operation/--binding: streaming leaves the others out (not sent, not counted)."""
        return not self.selection or self.selection.allows(*_names(exchange, self.contract))

    def send_one(self, exchange: Exchange
                 ) -> HttpResponse | TargetUnreachable | ResponseTooLarge | str:
        """The answer, or why there is none: the kind of service description the request
        asks for (not sent: see ``skipped_description``), the transport failure or size
        overflow. RunStopped propagates: it ends the run."""
        if (kind := skipped_description(self.contract, exchange)) is not None:
            exchange.meta[NOT_SENT] = True  # counted apart from the calls sent
            return kind
        if stopping.requested() or self.pace.wait() or stopping.requested():
            exchange.meta[STOPPED] = True  # not sent: the run is stopping
            return None
        started = time.monotonic()
        try:
            answer = self._state["sender"].send(retarget(exchange.request, self.target))
        except (TargetUnreachable, ResponseTooLarge) as exc:
            return exc.with_traceback(None)  # kept until the chunk is judged: no frames
        finally:  # the test case's time in JUnit: how long the target took
            exchange.timings[ANSWERED_IN] = time.monotonic() - started
            answered()  # the run's progress, between chunks (in this process)
        exchange.meta[ANSWER] = answer  # what a failure's example shows
        return answer


Answer = HttpResponse | TargetUnreachable | ResponseTooLarge | str | None
#: Pseudonym keys by recording (an exchange's ``source``); None: its key was not found.
Keys = Mapping[str, bytes | None]


def judge_answer(exchange: Exchange, answer: Answer, contract: Contract, *,
                 ignore: Sequence[str] = (), check: bool = True,
                 tally: Tally | None = None, profile: Profile = SPEC,
                 keys: Keys | None = None) -> list[Finding]:
    """What replay (and ``harness load``) find on one answer to ``exchange``'s request, as
    ``ReplayJob.send_one`` returns it: None (not selected), a service description's kind (not
    sent, counted), the transport failure, the size overflow, or the response (judged by
    ``check_replayed`` unless ``check`` is off). ``keys``: the recordings' pseudonym keys."""
    if answer is None:
        return []
    if isinstance(answer, TargetUnreachable):
        return [transport_failure(exchange, answer, contract)]
    if isinstance(answer, ResponseTooLarge):
        operation, binding = _names(exchange, contract)
        return [size_finding(answer, operation, binding, index=exchange.index,
                             source=exchange.source or None)]
    if isinstance(answer, str):
        return described(exchange, answer, tally)
    if check:
        return check_replayed(exchange, answer, contract, ignore=ignore, tally=tally,
                              profile=profile,
                              key=(keys or {}).get(exchange.source or "")).findings
    return []


def _not_the_service(finding: dict) -> bool:
    """A replayed answer that is 404 or an HTML page where the recording had neither (the
    404 of a recorded success is R4-STATUS's failure, or REPLAY-STATUS's)."""
    actual = str(finding.get("actual", ""))
    return ((finding["rule"] in ("REPLAY-STATUS", "R4-STATUS")
             and _NOT_FOUND.match(actual) is not None)
            or (finding["rule"] == "REPLAY-CONTENT-TYPE" and actual.startswith("text/html")))


_NOT_FOUND = re.compile(r"(HTTP )?404\b")


def _names(exchange: Exchange, contract: Contract) -> tuple[str | None, str | None]:
    """Operation name and binding label of a recorded request (None when it is neither)."""
    try:
        found = classify(contract, exchange.request)
    except ClassificationError:
        return None, None
    return found.operation.name, found.binding.label


@dataclass(frozen=True)
class Replayed:
    """One recorded exchange replayed: the new response and what was found on it."""

    recorded: Exchange
    response: HttpResponse | None  # None when the target did not answer
    #: The response-side rules on the new response (and the transport failure, if any).
    judged: list[Finding]
    #: The comparison with the recorded response (empty when none was recorded).
    compared: list[Finding]

    @property
    def findings(self) -> list[Finding]:
        return self.judged + self.compared


def replay_exchange(http: httpx.Client, exchange: Exchange, contract: Contract, target: str,
                    *, ignore: Sequence[str] = (), check: bool = True,
                    tally: Tally | None = None, key: bytes | None = None) -> Replayed:
    """Send ``exchange``'s request to ``target`` (body bytes unchanged, Host set to it), judge
    the response with the response-side rules and compare it with the recorded response.

    With ``tally``, passed and not-applicable findings are only counted there (as
    ``rules.judge`` does) and the Replayed holds the failures and warnings. ``key``: the
    recording's pseudonym key (``check_replayed``).
    """
    if (kind := skipped_description(contract, exchange)) is not None:
        return Replayed(exchange, None, described(exchange, kind, tally), [])
    try:
        response = send_recorded(http, exchange, target)
    except TargetUnreachable as exc:
        return Replayed(exchange, None, [transport_failure(exchange, exc, contract)], [])
    except ResponseTooLarge as exc:
        found = size_finding(exc, *_names(exchange, contract), index=exchange.index,
                             source=exchange.source or None)
        return Replayed(exchange, None, [found], [])
    if not check:
        return Replayed(exchange, response, [], [])
    return check_replayed(exchange, response, contract, ignore=ignore, tally=tally, key=key)


def send_recorded(http: httpx.Client, exchange: Exchange, target: str) -> HttpResponse:
    """The target's answer to ``exchange``'s request moved to ``target``; TargetUnreachable
    when none comes."""
    return send(http, retarget(exchange.request, target))


def skipped_description(contract: Contract, exchange: Exchange) -> str | None:
    """The kind of service description ``exchange`` fetched (WSDL, disco, help page), which
    replay does not send: a description names its deployment (addresses, host) and is the
    contract itself rather than a call, so it is counted (``Report.descriptions``) and
    skipped. ``harness contract --check`` compares a WSDL with the contract."""
    return service_description(contract, exchange.request)


def transport_failure(exchange: Exchange, exc: TargetUnreachable,
                      contract: Contract | None = None) -> Finding:
    """REPLAY-TRANSPORT on ``exchange``, attributed to its operation x binding when
    ``contract`` classifies the request."""
    operation, binding = _names(exchange, contract) if contract else (None, None)
    return _finding(exchange, _TRANSPORT, Verdict.FAILED, operation, binding, "a response",
                    str(exc), cause=no_answer_cause(exc))


_RESPONSE_SIDE = frozenset((Side.RESPONSE,))


def check_replayed(exchange: Exchange, response: HttpResponse, contract: Contract, *,
                   ignore: Sequence[str] = (), tally: Tally | None = None,
                   profile: Profile = SPEC, key: bytes | None = None) -> Replayed:
    """The response-side rules on the new ``response`` to ``exchange``'s request, and its
    comparison with the recorded response (``tally``: as in ``replay_exchange``).

    The target is judged against the recording, not against success: a failed call the
    recording holds (a 415, a fault, a 500) given again is no failure; the rules that
    presuppose success apply only where the recorded exchange succeeded; any other answer
    than the recorded one is a REPLAY-* difference naming what differs.

    A recorded pseudonym is compared with the new value's pseudonym under ``key`` (the
    recording's: ``Pseudonyms``); without it, it is not compared and REPLAY-REDACTED warns
    how many values were not."""
    replayed = Exchange(exchange.request, response, exchange.index, exchange.source)
    document = None  # the new body as the rules parsed it: compared without a second parse
    try:
        # Judged against the recording: where it holds a failed call, the rules that
        # presuppose success do not apply and the comparison below names any difference.
        case = read_case(replayed, contract, _RESPONSE_SIDE, recorded=exchange.response)
    except ServiceDescription as exc:  # counted, not compared (see skipped_description)
        return Replayed(exchange, response, described(exchange, exc.kind, tally), [])
    except ClassificationError:  # rare: judge reports it as UNCLASSIFIED
        operation = binding = None
        judged = judge(replayed, contract, sides=_RESPONSE_SIDE, tally=tally, profile=profile)
    else:
        operation, binding = case.operation.name, case.binding.label
        judged = judge_case(case, tally=tally, profile=profile)
        document = case.reading.document if case.reading else None
    compared: list[Finding] = []
    if exchange.response is not None:
        values = Pseudonyms(key)
        diffs = compare_responses(exchange.response, response, ignore=ignore,
                                  actual_document=document, pseudonyms=values,
                                  request=exchange.request, sides=SIDES)
        if tally is not None and not diffs:  # the usual case: count, build nothing
            for rule in _COMPARED:
                tally[rule, operation, binding, Verdict.PASSED] += 1
        else:
            compared = comparison_findings(exchange, operation, binding, diffs,
                                           _failed_call(judged), _permitted(exchange, response))
        compared += redacted_findings(exchange, operation, binding, values)
    if tally is not None and compared:
        for f in compared:
            if f.verdict is Verdict.PASSED or f.verdict is Verdict.NOT_APPLICABLE:
                tally[f.rule, f.operation, f.binding, f.verdict] += 1
        compared = [f for f in compared
                    if f.verdict is Verdict.FAILED or f.verdict is Verdict.WARNING]
    return Replayed(exchange, response, judged, compared)


#: The cause of REPLAY-REDACTED's warning: the recording's pseudonyms were not compared.
NO_KEY = ("redacted values not compared: no key for the recording (capture's key store, "
          "or --key-file)")


def redacted_findings(exchange: Exchange, operation: str | None, binding: str | None,
                      values: Pseudonyms) -> list[Finding]:
    """REPLAY-REDACTED on one exchange whose recorded answer holds pseudonyms: passed when
    each was compared under the recording's key (a difference is REPLAY-BODY's), a warning
    saying how many were not when the key is missing; none when there were none."""
    if values.uncompared:
        n = values.uncompared
        return [_finding(exchange, _REDACTED, Verdict.WARNING, operation, binding,
                         "redacted values compared by pseudonym",
                         f"{n} redacted value{'' if n == 1 else 's'} not compared: no key",
                         cause=NO_KEY, **{UNCOMPARED: n})]
    if values.compared:
        return [_finding(exchange, _REDACTED, Verdict.PASSED, operation, binding,
                         "redacted values compared by pseudonym",
                         f"{values.compared} compared")]
    return []


def _failed_call(judged: Sequence[Finding]) -> Finding | None:
    """R4-STATUS's failure: a call that failed where the recording holds a success (the
    rule names its cause; the comparison does not say it again)."""
    return next((f for f in judged if f.rule == "R4-STATUS" and f.verdict is Verdict.FAILED),
                None)


#: How replay's words name the two answers compared.
SIDES = Sides("the recording", "the target")
#: How a replay cause names the recorded answer ("Content-Type text/xml where the
#: recording has ...", when the comparison gives no words of its own).
RECORDED = "the recording has"


def _permitted(exchange: Exchange, response: HttpResponse) -> str | None:
    """Why the differences of ``response`` from the recorded one are permitted, when they
    are: one of them is ASP.NET's request validation refusing markup in a value (4.10), a
    warning in every command."""
    if not_served(response) or (exchange.response is not None
                                and not_served(exchange.response)):
        return None  # a side that does not serve the call did not refuse values: not 4.10
    refused = (markup_refused(exchange.request, response)
               or markup_refused(exchange.request, exchange.response))
    return f"{EXPLANATION}: {refused}" if refused else None


def comparison_findings(exchange: Exchange, operation: str | None, binding: str | None,
                        diffs: Sequence[Difference], failed_call: Finding | None = None,
                        permitted: str | None = None) -> list[Finding]:
    """One finding per difference, each with its cause in words; a passed finding for each
    compared aspect without one.

    A result become an error (or an error become a result) is the one difference: the other
    aspects are not applicable then, and when R4-STATUS already failed the call with its
    cause (``failed_call``), the comparison is not applicable at all (one cause, one
    failure). ``permitted``: why the differences are warnings only (``_permitted``), then
    their cause."""
    outcome = next((d for d in diffs if d.kind == "outcome"), None)
    if outcome is not None:
        return _outcome_findings(exchange, operation, binding, outcome, failed_call,
                                 permitted)
    findings = []
    differing = set()
    for diff in diffs:
        differing.add(replay_rule(diff))
        findings.append(_difference_finding(
            exchange, diff, operation, binding, permitted,
            EXPLANATION if permitted else words_of(diff, RECORDED)))
    findings += [_finding(exchange, rule, Verdict.PASSED, operation, binding, "as recorded",
                          "as recorded") for rule in _COMPARED if rule not in differing]
    return findings


def _outcome_findings(exchange: Exchange, operation: str | None, binding: str | None,
                      outcome: Difference, failed_call: Finding | None,
                      permitted: str | None) -> list[Finding]:
    if failed_call is not None:
        return [_finding(exchange, rule, Verdict.NOT_APPLICABLE, operation, binding,
                         message="the call failed where the recording succeeded (see "
                                 "R4-STATUS)", cause=failed_call.cause)
                for rule in _COMPARED]
    cause = EXPLANATION if permitted else outcome_cause(outcome)
    return [_difference_finding(exchange, outcome, operation, binding, permitted, cause)] + [
        _finding(exchange, rule, Verdict.NOT_APPLICABLE, operation, binding,
                 message=f"{outcome.summary} (see REPLAY-STATUS)", cause=cause)
        for rule in _COMPARED if rule != "REPLAY-STATUS"]


def _difference_finding(exchange: Exchange, diff: Difference, operation: str | None,
                        binding: str | None, permitted: str | None = None,
                        cause: str = "") -> Finding:
    expected, actual = diff.shown()
    extra = {"difference": diff.kind, "summary": diff.summary}
    return _finding(exchange, replay_rule(diff), Verdict.WARNING if diff.warning or permitted
                    else Verdict.FAILED, operation, binding, expected, actual,
                    permitted or diff.summary, cause=cause, **extra,
                    **({"path": diff.path} if diff.path else {}))


def _finding(exchange: Exchange, rule: str, verdict: Verdict, operation: str | None,
             binding: str | None, expected: str = "", actual: str = "", message: str = "",
             cause: str = "", **extra: str | int) -> Finding:
    # no client: the response is the server's doing (lint names the client of a request)
    return Finding(rule, verdict, operation, binding, expected, actual, message,
                   exchange.index, exchange.source or None, None, extra, cause)


def replay(paths: Sequence[str | Path], contract: Contract, target: str, *,
           concurrency: int = 8, rate: float | None = None, ignore: Sequence[str] = (),
           check: bool = True, timeout: float = DEFAULT_TIMEOUT, chunk_size: int | None = None,
           options: SendOptions | None = None, selection: Selection | None = None,
           on_broken: Callable[[str], None] = lambda reason: None,
           on_progress: Callable[[ChunkResult], None] = lambda result: None,
           profile: Profile = SPEC, keys: Keys | None = None) -> Report:
    """Replay every exchange of ``paths`` against ``target`` into a finished Report.

    ``keys``: each recording's pseudonym key by its path (default: found where capture put
    them, ``harness.traffic.keys.recording_keys``). TargetUnreachable (one line) before
    anything is sent when the target is down.
    """
    target = base_url(target)
    if concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if rate is not None and rate <= 0:
        raise UsageError("--rate must be above 0")
    options = options or SendOptions(timeout=timeout)
    check_reachable(target, options=options)
    layout = Layout.for_concurrency(concurrency)
    if keys is None:
        keys = {path: found.key for path, found in recording_keys(paths).items()}
    # Reports show a secret as the recording shows it: by its pseudonym under its key.
    redaction = ReportRedaction(contract, next((k for k in keys.values() if k),
                                               None) or secrets.token_bytes(KEY_BYTES))
    job = ReplayJob(contract, target, tuple(ignore), layout.threads,
                    Pace(rate), check, options.timeout, options,
                    selection or Selection(), profile, keys, redaction)
    report = Report("replay", target, titles() | REPLAY_RULES | RULE_TITLES,
                    profile=profile, environment=options.environment,
                    recordings=[str(p) for p in paths], concurrency=concurrency, rate=rate,
                    processes=layout.processes, threads=layout.threads)
    report.redaction = redaction
    report.descriptions_note = "skipped: not sent"
    report.scope = selection_scope(contract, job.selection)
    # Big chunks: a chunk's answers are checked in one run, and a longer run keeps caches warm.
    size = chunk_size or max(16, 32 * layout.threads)
    report.meta["broken_lines"] = run(job, paths, report, workers=layout.processes,
                                      chunk_size=size, on_broken=on_broken,
                                      on_progress=on_progress)
    strange = {(f.get("source"), f.get("index")) for f in report.kept(Verdict.FAILED)
               if _not_the_service(f)}
    if line := wrong_target_line(target, len(strange), report.exchanges):
        report.meta["wrong_target"] = line
    return report.finish()
