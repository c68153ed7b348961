"""Send every case to primary, candidate (and secondary), compare the answers, judge at the end.

Answers are compared with harness.judge.compare (THE one comparison); differences are kept on disk
until the whole run is in, because noise learned late (primary vs secondary) still hides a
candidate difference seen early.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import IO, Any

from harness import stopping
from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.contract.xmlsafe import root_tag
from harness.diff.cases import Case
from harness.diff.consistency import RULE as CROSS_BINDING
from harness.diff.consistency import Consistency, outcome
from harness.diff.noise import Noise, noise_key
from harness.errors import ResponseTooLarge, TargetUnreachable
from harness.judge import asmx_matrix, odd_requests
from harness.judge.causes import leak_cause, outcome_cause, whatever_sent, words_of
from harness.judge.compare import WSDL_NS, Difference, Sides, compare_responses, ignored_path
from harness.judge.findings import DETAILS, Finding, Report, Verdict, selection_scope
from harness.judge.profiles import Profile
from harness.judge.request_validation import EXPLANATION, markup_refused, not_served
from harness.judge.security import judge_leaks
from harness.judge.sending import RULE_TITLES, size_finding, transport_finding
from harness.judge.wsdl_rules import NOT_PUBLISHED, unpublished
from harness.progress import Progress
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.keys import KEY_BYTES
from harness.traffic.redaction import ReportRedaction
from harness.traffic.send import (
    Sender,
    SendOptions,
    base_url,
    check_reachable,
    looks_wrong,
    retarget,
    wrong_target_line,
)

PRIMARY, SECONDARY, CANDIDATE = "primary", "secondary", "candidate"
#: How a diff cause names the primary's answer ("Content-Type text/xml where the primary
#: answers ...", when the comparison gives no words of its own).
PRIMARY_ANSWERS = "the primary answers"
WSDL_ROOT = f"{{{WSDL_NS}}}definitions"
TITLES = {
    "DIFF-STATUS": "candidate answers with the primary's HTTP status",
    "DIFF-CONTENT-TYPE": "candidate answers with the primary's Content-Type (media type, charset)",
    "DIFF-BODY": "candidate's body equals the primary's (XML structurally, fault code included)",
    "DIFF-FAULT-REASON": "fault reason / error text equal (prose: a warning only)",
    CROSS_BINDING: "one implementation gives the same result over all four bindings",
    "SEC-LEAK": "an error answer leaks no implementation detail (passive: a warning)",
}
#: The rules every case is judged on (DIFF-FAULT-REASON only ever warns).
CASE_RULES = ("DIFF-STATUS", "DIFF-CONTENT-TYPE", "DIFF-BODY")
#: Distinct places (operation x binding x rule x path) an example is kept for.
MAX_EXAMPLE_PLACES = 500


def rule_of(difference: Difference) -> str:
    if difference.prose:
        return "DIFF-FAULT-REASON"
    return {"status": "DIFF-STATUS", "content-type": "DIFF-CONTENT-TYPE"}.get(
        difference.aspect, "DIFF-BODY")


@dataclass(frozen=True)
class Targets:
    primary: str
    candidate: str
    secondary: str | None = None

    def roles(self) -> dict[str, str]:
        roles = {PRIMARY: base_url(self.primary), CANDIDATE: base_url(self.candidate)}
        if self.secondary:
            roles[SECONDARY] = base_url(self.secondary)
        return roles


@dataclass
class Answered:
    """One case as every implementation answered it."""

    case: Case
    requests: dict[str, HttpRequest]
    responses: dict[str, HttpResponse]
    differences: list[Difference]  # primary vs candidate
    noise: list[Difference]  # primary vs secondary
    #: Findings of answers that never came or outgrew the cap (nothing compared then).
    unanswered: list[Finding] = field(default_factory=list)
    #: When sending began (epoch seconds) and how long the answers took.
    started: float = 0.0
    seconds: float = 0.0
    #: Why the answers were not compared (a WSDL case the primary publishes none for).
    uncompared: str | None = None
    #: The passive findings ``Diff.take`` added for it (SEC-LEAK): the shadow's live tally
    #: counts them as the final report does.
    passive: list[Finding] = field(default_factory=list)


@dataclass
class Place:
    """Counts for one operation x binding."""

    cases: int = 0
    differing: int = 0
    suppressed: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    #: When its first case was sent (epoch seconds) and how long its answers took in all:
    #: its own duration in Allure and JUnit.
    started: float = 0.0
    seconds: float = 0.0


@dataclass
class DiffResult:
    report: Report
    noise: Noise
    places: dict[tuple[str, str], Place]
    examples: list[dict[str, Any]]
    targets: dict[str, str]
    consistent: dict[str, list[str]]


class Diff:
    """A comparison of a candidate with a primary (and its second instance, for noise)."""

    def __init__(self, contract: Contract, targets: Targets, *, ignore: Iterable[str] = (),
                 ignore_values: Iterable[str] = (),
                 jobs: int = 8, timeout: float = 30.0, options: SendOptions | None = None,
                 role_options: Mapping[str, SendOptions] | None = None,
                 selection: Selection | None = None,
                 profile: Profile | None = None, command: str = "diff",
                 key: bytes | None = None) -> None:
        self.contract = contract
        self.roles = targets.roles()
        self.ignore = tuple(ignore)
        #: Paths whose text is not compared (their structure is).
        self.ignore_values = tuple(ignore_values)
        self.jobs = max(1, jobs)
        self.options = options or SendOptions(timeout=timeout)
        #: Roles sent with settings of their own (``--candidate env:NAME``: that environment's
        #: credentials, headers, TLS); the others with ``options``.
        self.role_options = dict(role_options or {})
        self.selection = selection or Selection()
        self.report = Report(command, self.roles[CANDIDATE], TITLES | RULE_TITLES,
                             profile=profile, environment=self.options.environment,
                             **self._meta())
        self.report.scope = selection_scope(contract, self.selection)
        self.report.descriptions_note = "sent to each, compared as contracts"
        #: Every output shows a secret by its pseudonym under a key of this run, never
        #: written (--key-file's when given: a recording's pseudonyms).
        self.redaction = ReportRedaction(contract, key or secrets.token_bytes(KEY_BYTES))
        self.report.redaction = self.redaction
        #: Per role: answers, and those that were 404/HTML (a wrong target's signs).
        self._answered: Counter[str] = Counter()
        self._strange: Counter[str] = Counter()
        self.noise = Noise()
        self.consistency = Consistency()
        self.places: dict[tuple[str, str], Place] = {}
        #: Implementation -> operations it answered alike over every binding.
        self.consistent: dict[str, list[str]] = {}
        self._examples: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        self._spill: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115

    def _selected(self, case: Case) -> bool:
        """Whether ``--operation``/``--binding`` keep ``case``: a bare GET of an endpoint
        when one of its operations is kept; its WSDL when one of its operations is (over any
        binding: the WSDL describes every one, as certify's WSDL checks)."""
        if case.odd is not None and case.odd.endpoint is not None:
            return any(self.selection.allows(op.name, case.binding_label)
                       for op in self.contract.endpoints.get(case.odd.endpoint, ()))
        if case.described:
            return any(self.selection.allows(op.name, None)
                       for op in self.contract.endpoints.get(case.described, ()))
        return self.selection.allows(case.operation_name, case.binding_label)

    def _chosen(self, cases: Iterable[Case]) -> Iterator[Case]:
        """The cases ``--operation``/``--binding`` keep; a recorded one left out is counted
        (``Report.not_sent``)."""
        for case in cases:
            if self._selected(case):
                yield case
            elif case.recorded:
                self.report.not_sent["not_selected"] += 1

    def _meta(self) -> dict[str, Any]:
        meta = {"primary": self.roles[PRIMARY], "secondary": self.roles.get(SECONDARY),
                "candidate": self.roles[CANDIDATE]}
        if self.role_options:  # each role's environment, where it has one
            meta["environments"] = {role: self.options_of(role).environment
                                    for role in self.roles}
        return meta

    def options_of(self, role: str) -> SendOptions:
        return self.role_options.get(role, self.options)

    def senders(self, stack: contextlib.ExitStack, **changes: Any) -> dict[str, Sender]:
        """A Sender per role, entered on ``stack``: one shared by the roles sent with the run's
        options, one each for a role with its own (``changes`` apply to every one)."""
        shared = stack.enter_context(Sender(replace(self.options, **changes),
                                            connections=self.jobs * len(self.roles)))
        return {role: stack.enter_context(Sender(replace(self.role_options[role], **changes),
                                                 connections=self.jobs))
                if role in self.role_options else shared for role in self.roles}

    def run(self, cases: Iterable[Case], progress: Progress | None = None) -> DiffResult:
        """Send every case to every target and compare; ``progress`` hears of each case."""
        for role, url in self.roles.items():
            check_reachable(url, options=self.options_of(role))
        cases = self._chosen(cases)
        with contextlib.ExitStack() as stack, stopping.cooperative():
            # a signal: the cases in flight finish, no more start
            sender = self.senders(stack)
            for answered in _ordered_map(lambda case: self.answer(sender, case), cases,
                                         self.jobs):
                self.take(answered)
                if progress is not None:
                    progress.update(failing=int(bool(answered.differences
                                                     or answered.unanswered)))
        if stopping.requested():
            self.report.interrupt()
        return self.finish()

    def finish(self) -> DiffResult:
        """Judge every case taken, with the noise learned over the whole run: the result."""
        self._judge()
        self.report.meta["wrong_target"] = [
            line for role, url in self.roles.items()
            if (line := wrong_target_line(f"the {role} {url}", self._strange[role],
                                          self._answered[role]))]
        self._spill.close()
        return DiffResult(self.report.finish(), self.noise, self.places, self._chosen_examples(),
                          self.roles, self.consistent)

    # -------------------------------------------------------------------- sending (threads)

    def answer(self, sender: Sender | Mapping[str, Sender], case: Case,
               given: dict[str, HttpResponse] | None = None) -> Answered:
        """``case`` sent to every implementation (but those whose answer is ``given``: shadow
        has the primary's) and compared, through ``sender`` (or each role's: ``senders``);
        thread-safe."""
        requests = {role: retarget(case.request, url) for role, url in self.roles.items()}
        started, clock = time.time(), time.monotonic()
        responses: dict[str, HttpResponse] = dict(given or {})
        unanswered: list[Finding] = []
        where = {"index": case.index, "source": case.source}
        for role, request in requests.items():
            if role in responses:
                continue
            try:
                responses[role] = (sender[role] if isinstance(sender, Mapping)
                                   else sender).send(request)
            except ResponseTooLarge as exc:
                unanswered.append(size_finding(exc, case.operation_name, case.binding_label,
                                               extra={"implementation": role}, **where))
            except TargetUnreachable as exc:
                unanswered.append(transport_finding(exc, case.operation_name,
                                                    case.binding_label,
                                                    extra={"implementation": role}, **where))
        seconds = time.monotonic() - clock
        if unanswered:
            return Answered(case, requests, responses, [], [], unanswered, started, seconds)
        own = {role: _without_own_url(responses[role], url) for role, url in self.roles.items()}
        if case.described and (why := _no_wsdl(own[PRIMARY])):
            # a deployment that hides its WSDL (the Documentation protocol removed): nothing
            # to hold the candidate's against
            return Answered(case, requests, responses, [], [], [], started, seconds,
                            f"the primary publishes no WSDL at {case.described} ({why})")
        if case.described and (why := unpublished(own[CANDIDATE])):
            # publishing a WSDL is optional (issue 21): the one verdict certify gives it,
            # WSDL-PUBLISHED's warning, in place of "HTTP 500 instead of a result"
            unpublished_wsdl = Difference(
                "outcome", "", "a WSDL", why, True,
                f"the candidate publishes no WSDL ({why}): {NOT_PUBLISHED.split(': ', 1)[1]}")
            return Answered(case, requests, responses, [unpublished_wsdl], [], [], started,
                            seconds)
        if case.odd is not None:  # compared by what each answer is (odd_requests.compare)
            return Answered(case, requests, responses,
                            odd_requests.compare(case.odd, own[PRIMARY], own[CANDIDATE]), [],
                            [], started, seconds)
        if case.matrix is not None:  # by shape: status, type, form, version, value
            found = [d for d in asmx_matrix.compare(case.matrix, own[PRIMARY], own[CANDIDATE])
                     if not (d.path and ignored_path(d.path, (*self.ignore,
                                                              *self.ignore_values)))]
            return Answered(case, requests, responses, found, [], [], started, seconds)
        differences = self._compare(own[PRIMARY], own[CANDIDATE], case.request, CANDIDATE)
        noise = (self._compare(own[PRIMARY], own[SECONDARY], case.request, SECONDARY)
                 if SECONDARY in own else [])
        return Answered(case, requests, responses, differences, noise, [], started, seconds)

    def _compare(self, expected: HttpResponse, actual: HttpResponse, request: HttpRequest,
                 role: str) -> list[Difference]:
        # Both sides are live: a pseudonym in an answer is a value like any other.
        found = compare_responses(expected, actual, ignore=self.ignore, request=request,
                                  sides=Sides(f"the {PRIMARY}", f"the {role}"))
        if not self.ignore_values:
            return found
        return [d for d in found if not (_value_difference(d)
                                         and ignored_path(d.path, self.ignore_values))]

    # --------------------------------------------------------------- collecting (main thread)

    def take(self, answered: Answered) -> dict[str, Any] | None:
        """Count and keep ``answered`` for the judgement at the end (not thread-safe: one
        thread takes); the record kept (see ``case_findings``), None for a case unanswered."""
        case = answered.case
        where = (case.operation_name, case.binding_label)
        for role, response in answered.responses.items():  # its secrets, before any finding
            self.redaction.observe(answered.requests.get(role), response, case.operation_name)
        if case.described:  # a WSDL compared: a service description, not a call
            self.report.descriptions["WSDL"] += 1
        else:
            self.report.exchanges += 1
        self.report.add_seconds({where: answered.seconds})
        for role, response in answered.responses.items():
            self._answered[role] += 1
            self._strange[role] += looks_wrong(response)
        if answered.unanswered:
            self.report.extend(answered.unanswered)
            return None
        place = self.places.setdefault(where, Place(started=answered.started))
        place.cases += 1
        place.seconds += answered.seconds
        self.noise.learn(*where, answered.noise)
        shown = self.redaction.text  # the spill is a file: no secret in clear
        record = {"op": where[0], "binding": where[1], "index": case.index,
                  "source": case.source, "request": shown(f"{case.request.method} "
                                                          f"{answered.requests[PRIMARY].target}"),
                  "uncompared": answered.uncompared,
                  "diffs": [[d.kind, d.path, _shown(d.expected, shown), _shown(d.actual, shown),
                             d.warning, shown(d.summary)] for d in answered.differences],
                  "permitted": _permitted(answered) if answered.differences else None}
        self._spill.write(json.dumps(record, ensure_ascii=False) + "\n")
        for difference in answered.differences:
            self._keep_example(answered, difference)
        for role in self.roles:  # SEC-LEAK, passive: a warning on either side's error answers
            judged = judge_leaks(answered.responses[role])
            if judged is not None:
                verdict, expected, actual = judged
                leak = Finding(
                    "SEC-LEAK", Verdict.WARNING if verdict is Verdict.FAILED else verdict,
                    *where, expected=expected, actual=f"{role}: {actual}", index=case.index,
                    source=case.source, extra={"implementation": role},
                    cause=leak_cause(expected, actual, f"the {role}'s"))
                self.report.add(leak)
                answered.passive.append(leak)
        if case.operation and case.binding and case.arguments is not None \
                and not _markup_refused(answered):
            for role in (PRIMARY, CANDIDATE):
                self.consistency.record(role, case.operation, case.arguments, case.binding,
                                        outcome(case.operation, case.binding,
                                                answered.responses[role]))
        return record

    def _keep_example(self, answered: Answered, difference: Difference) -> None:
        case = answered.case
        place = (case.operation_name, case.binding_label, rule_of(difference),
                 *noise_key("", "", difference)[2:])
        if place in self._examples or len(self._examples) >= MAX_EXAMPLE_PLACES:
            return
        self._examples[place] = {
            "rule": place[2], "operation": place[0], "binding": place[1],
            "path": difference.path, "kind": difference.kind,
            "difference": self.redaction.text(difference.describe()), "index": case.index,
            "source": case.source,
            **{role: _reported(self.redaction, answered.requests[role],
                               answered.responses[role], case.operation_name)
               for role in (PRIMARY, CANDIDATE)},
        }

    def reported(self, answered: Answered, role: str) -> dict[str, Any]:
        """``role``'s request and answer in ``answered`` as the reports show an example
        (shadow's live view shows its example pairs so)."""
        return _reported(self.redaction, answered.requests[role], answered.responses[role],
                         answered.case.operation_name)

    # ------------------------------------------------------------------------------ judging

    def _judge(self) -> None:
        self._spill.flush()
        self._spill.seek(0)
        for line in self._spill:
            self._judge_case(json.loads(line))
        noisy_result = {op.name: self._result_is_noise(op.name, op.result_element, op.result)
                        for op in self.contract.operations}
        noisy = {op.name: self.noise.noisy_paths(op.name) for op in self.contract.operations}

        def negligible(operation: str, path: str) -> bool:
            return path in noisy.get(operation, ()) or ignored_path(path, self.ignore)

        for finding in self.consistency.findings(
                CANDIDATE, PRIMARY, lambda op: noisy_result.get(op.name, False), negligible):
            finding = self._explained(finding)
            self.report.add(finding)
            if finding.verdict is Verdict.PASSED:
                self.consistent.setdefault(finding.extra["implementation"], []).append(
                    finding.operation or "")
        self.report.meta["noise"] = self.noise.summary()

    def _judge_case(self, record: dict[str, Any]) -> None:
        where = (record["op"], record["binding"])
        place = self.places[where]
        findings, suppressed = self.case_findings(record, self.noise.covers)
        place.suppressed += suppressed
        differing = False
        for finding in findings:
            if finding.verdict in (Verdict.FAILED, Verdict.WARNING):
                place.rules[finding.rule] += 1
                differing = differing or finding.rule != "DIFF-FAULT-REASON"
            self.report.add(finding)
        place.differing += differing

    def case_findings(self, record: dict[str, Any],
                      covers: Callable[[str, str, Difference], bool]
                      ) -> tuple[list[Finding], int]:
        """The findings of one case (a record ``take`` kept), and how many of its differences
        ``covers`` (the noise) suppressed: its differences that are not noise, each with its
        cause in words; a result on one side and an error on the other is the one difference
        (the rest is not applicable because of it); an erroneous request (``--errors``) is
        named in its cause."""
        where = (record["op"], record["binding"])
        at = {"index": record["index"], "source": record["source"]}
        if record.get("uncompared"):
            return [Finding(rule, Verdict.NOT_APPLICABLE, *where, message=record["uncompared"],
                            cause=record["uncompared"], **at) for rule in CASE_RULES], 0
        kept: list[Difference] = []
        suppressed = 0
        for fields in record["diffs"]:
            difference = Difference(*fields)
            if covers(*where, difference):
                suppressed += 1
            else:
                kept.append(difference)
        permitted = record.get("permitted")  # differences the spec leaves open: warnings
        outcome = next((d for d in kept if d.kind == "outcome"), None)
        sent = str(record["source"] or "")
        kind, value = _error_kind(sent)
        what = f"{kind}: " if kind else ""
        if outcome is not None:  # compared with an error, nothing else means anything
            kept = [outcome]
        def cause_of(difference: Difference) -> str:  # each difference its own cause
            if permitted == BOTH_REFUSE:  # no behaviour differs: the words do
                return f"{what}{words_of(difference, PRIMARY_ANSWERS)} ({BOTH_REFUSE})"
            if permitted:
                return EXPLANATION
            said = (outcome_cause(difference) if difference is outcome
                    and not difference.warning else words_of(difference, PRIMARY_ANSWERS))
            return said if whatever_sent(said) else what + said

        findings: list[Finding] = []
        failed: set[str] = set()
        for difference in kept:
            rule = rule_of(difference)
            failed.add(rule)
            shown_expected, shown_actual = difference.shown()
            cause = cause_of(difference)  # a value sent is its detail where its kind is said
            findings.append(Finding(
                rule, Verdict.WARNING if difference.warning or permitted else Verdict.FAILED,
                *where, expected=shown_expected, actual=shown_actual,
                detail=value if cause.startswith(what) and what else None,
                message=permitted or difference.summary,
                extra={"primary": difference.expected, "candidate": difference.actual,
                       "path": difference.path, "kind": difference.kind,
                       "summary": difference.summary, "request": record["request"]},
                cause=cause, **at))
        for rule in CASE_RULES:
            if rule in failed:
                continue
            if outcome is not None:
                findings.append(Finding(rule, Verdict.NOT_APPLICABLE, *where,
                                        message=f"{outcome.summary} (see DIFF-STATUS)",
                                        cause=cause_of(outcome), **at))
            else:
                findings.append(Finding(rule, Verdict.PASSED, *where, **at))
        return findings, suppressed

    def _explained(self, finding: Finding) -> Finding:
        """A candidate answering an operation differently over some bindings, where each of
        those bindings already differs from the primary: the same cause, said once (by the
        DIFF-* findings); the cross-binding check is not applicable because of it."""
        if finding.verdict is not Verdict.FAILED or not finding.operation:
            return finding
        bindings = (finding.binding or "").split(", ")
        if not all(self.places.get((finding.operation, b), Place()).differing
                   for b in bindings):
            return finding
        why = (f"not applicable: {finding.binding} already differ from the primary "
               "(see DIFF-*)")
        return replace(finding, verdict=Verdict.NOT_APPLICABLE, message=why, cause=why)

    def _result_is_noise(self, op_name: str, *result_names: str | None) -> bool:
        names = {name for name in result_names if name}
        return any(path.rsplit("/", 1)[-1] in names for path in self.noise.noisy_paths(op_name))

    def _chosen_examples(self) -> list[dict[str, Any]]:
        """One example per operation x binding x rule, at a place that is not noise."""
        chosen: dict[tuple[str, str, str], dict[str, Any]] = {}
        for (op, binding, rule, family, path), example in self._examples.items():
            if (op, binding, family, path) in self.noise.seen:
                continue
            chosen.setdefault((op, binding, rule), example)
        examples = list(chosen.values())
        self.report.meta["examples"] = examples
        return examples


_VALUED = re.compile(r"^error: (?P<kind>.+?) \((?P<value>[^()]+)\)$")


def _error_kind(source: str) -> tuple[str, str | None]:
    """An erroneous case's kind and the value it sent, from its source ("error: non-integer
    int parameter (x)" -> "non-integer int parameter (<details>)", "x"): the cases of one
    kind share a cause, their values its details."""
    if not source.startswith("error: "):
        return "", None
    if (found := _VALUED.match(source)) is not None:
        return f"{found['kind']} ({DETAILS})", found["value"]
    return source.removeprefix("error: "), None


def _markup_refused(answered: Answered) -> bool:
    """Whether a side refused markup in a GET/POST value (ASP.NET's request validation): a
    recorded call with such values is left out of the cross-binding check, as a generated one
    is (an error there by design, not over SOAP)."""
    return any(markup_refused(answered.requests[role], answered.responses[role])
               for role in (PRIMARY, CANDIDATE))


def _permitted(answered: Answered) -> str | None:
    """Why the case's differences are warnings only, when they are: one side's answer is
    ASP.NET's request validation refusing markup in a value, which the spec leaves open
    (4.10): the same verdict as certify's, lint's and replay's."""
    if any(not_served(answered.responses[role]) for role in (PRIMARY, CANDIDATE)):
        return None  # a side that does not serve the call did not refuse values: not 4.10
    refused = [found for role in (PRIMARY, CANDIDATE)
               if (found := markup_refused(answered.requests[role], answered.responses[role]))]
    if len(refused) == 2:  # the same behaviour: what differs is how each says it
        return BOTH_REFUSE
    return f"{EXPLANATION}: {refused[0]}" if refused else None


#: Why the differences of two refusals of markup are warnings: both sides did the same.
BOTH_REFUSE = "both refuse the markup: ASP.NET's request validation, 4.10"


def _no_wsdl(response: HttpResponse) -> str | None:
    """Why the answer to a ``?WSDL`` request holds no WSDL (WSDL-PUBLISHED's words)."""
    if (why := unpublished(response)) is not None:
        return why
    return None if root_tag(response.body) == WSDL_ROOT else "not a WSDL"


def _reported(redaction: ReportRedaction, request: HttpRequest, response: HttpResponse,
              operation: str | None) -> dict[str, Any]:
    """An example exchange as reports show it: every secret by its pseudonym."""
    return Exchange(redaction.message(request), redaction.message(response, operation)
                    ).to_dict()


def _shown(value: str | None, shown: Callable[[str], str]) -> str | None:
    return None if value is None else shown(value)


def _without_own_url(response: HttpResponse, url: str) -> HttpResponse:
    """The response with its own base URL (e.g. a WSDL's soap:address) made neutral, so that
    each implementation naming itself is no difference."""
    own = url.encode("utf-8")
    if own not in response.body:
        return response
    return HttpResponse(response.status, response.headers,
                        response.body.replace(own, b"{base_url}"), response.reason,
                        response.http_version)


_NIL = re.compile(r"\{http://www\.w3\.org/2001/XMLSchema-instance\}nil='[^']*'")


def _value_difference(d: Difference) -> bool:
    """A difference of value, not of structure: text, or xsi:nil (a nil value) alone."""
    if d.kind == "text":
        return True
    return d.kind == "attribute" and _NIL.sub("", d.expected or "").strip() == _NIL.sub(
        "", d.actual or "").strip()


def _ordered_map[T, R](fn: Callable[[T], R], items: Iterable[T], jobs: int) -> Iterator[R]:
    """``map(fn, items)`` over ``jobs`` threads, in order, with a bounded number in flight
    (a recording of any length is streamed, never read whole)."""
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="diff")
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            if stopping.requested():  # harness.stopping: finish what runs, start nothing more
                break
            pending.append(pool.submit(fn, item))
            if len(pending) >= jobs * 2:
                yield pending.popleft().result()
        while pending:
            future = pending.popleft()
            if not (stopping.requested() and future.cancel()):
                yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
