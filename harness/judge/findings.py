"""The one model of what a run found: Findings, the causes they share, and the Report.

Every command that judges (certify, lint, replay, diff, load, probe) feeds Findings into a
Report. A finding says what its check found (rule, operation, binding, expected, actual) and
*why*: its ``cause``, in words, which the judges give ("HTTP 404 where the primary answers
200"; a rule without one is explained by its expected and actual). Findings that share a cause
are grouped under one ``Cause``: how many checks and calls, which rules, which operation x
binding pairs, one example. A check that a cause makes meaningless is not applicable because
of it, not one more failure.

A Report keeps counts per rule and verdict and one ``Cause`` per distinct cause in memory
(bounded: ``MAX_CAUSES``) and spills the failures and warnings to a temporary file, so a
recording of a million exchanges is judged in flat memory and the JSON still lists every
failure and warning. ``harness.reports`` renders it (console, JSON, JUnit, Allure): this
module is plain data and imports no renderer.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from harness.errors import UsageError
from harness.judge.profiles import Profile, Severity

if TYPE_CHECKING:
    from harness.contract.model import Contract
    from harness.contract.selection import Selection
    from harness.http_messages import HttpRequest, HttpResponse
    from harness.traffic.redaction import ReportRedaction

#: Not a rule: the pseudo-rule under which service description requests (WSDL, disco, help
#: page) reach a Report, which counts them by kind (the finding's ``actual``; in a tally key,
#: the operation slot) apart from the findings.
DESCRIPTION = "SERVICE-DESCRIPTION"
#: Why a recorded exchange was not sent (``Report.not_sent``'s keys), in the words every
#: output uses: a service description (replay and load do not send them), or an exchange of
#: an operation x binding that ``--operation``/``--binding`` leave out.
NOT_SENT = {"service_descriptions": "service description",
            "not_selected": "left out by --operation/--binding"}
#: The ``extra`` of a finding counting recorded values it could not compare (pseudonyms
#: without the recording's key): a Report sums them into ``meta["uncompared"]``, which every
#: verdict line says.
UNCOMPARED = "uncompared"
#: Distinct causes a Report keeps apart; beyond them, a rule's further causes share one group
#: (each finding keeps its own cause in the JSON).
MAX_CAUSES = 1000
#: Characters of a cause's text.
CAUSE_CHARS = 200
#: Distinct details a Cause keeps (``Finding.detail``); beyond them, only how many more.
MAX_DETAILS = 50
#: The token ``cause_of`` puts where the finding's operation was named.
OPERATION = "<operation>"
#: Where a cause's text takes its details ("non-integer int parameter (<details>): ..."); a
#: cause without it has them after its text ("...: a, b").
DETAILS = "<details>"


def with_details(text: str, details: list[str], more: int = 0) -> str:
    """``text`` with ``details`` (and "and N more") in its DETAILS slot, or after it."""
    joint = "; " if any(", " in d for d in details) else ", "  # a list of lists reads so
    listed = joint.join(details) + (f" and {more} more" if more else "")
    if DETAILS in text:
        return text.replace(DETAILS, listed) if listed else text.replace(f" ({DETAILS})", "")
    return f"{text}: {listed}" if listed else text


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    WARNING = "warning"  # a permitted deviation
    NOT_APPLICABLE = "not applicable"


@dataclass(frozen=True)
class Finding:
    """One rule judged on one exchange (or one comparison)."""

    rule: str
    verdict: Verdict
    operation: str | None
    binding: str | None  # the binding's label, e.g. "SOAP 1.1"
    expected: str = ""
    actual: str = ""
    message: str = ""
    #: Position of the exchange in its recording (1-based), or the call's number in a run.
    index: int | None = None
    source: str | None = None
    #: The client as it names itself (User-Agent), for lint.
    client: str | None = None
    #: Command-specific values, e.g. diff's ``primary`` and ``candidate``.
    extra: dict[str, Any] = field(default_factory=dict)
    #: What happened, in words, shared by the findings it explains ("HTTP 404 where the
    #: primary answers 200"): reports group findings by it. Empty: ``cause_of`` makes one
    #: from expected and actual. A not-applicable finding's cause is what made it so.
    cause: str = ""
    #: The endpoint an endpoint-level finding is about (its WSDL, e.g. "/Auth.asmx"): such
    #: a finding is reported per endpoint, not per operation x binding.
    endpoint: str | None = None
    #: What this finding is about among the findings that share its cause, when a reader
    #: needs it named: the value accepted ("2147483648"), the parameter ("PhoneNumber"). The
    #: cause stays shared; reports list its details beside it ("...: a NUL character,
    #: 2147483648").
    detail: str | None = None

    @property
    def case(self) -> tuple[str, str, str]:
        """The test case it belongs to: rule x operation x binding, or rule x endpoint for an
        endpoint-level finding ("WSDL" in the binding's place)."""
        if self.endpoint is not None:
            return self.rule, self.endpoint, "WSDL"
        return case_of(self.rule, self.operation, self.binding)

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON data; ``operation`` and ``binding`` always present (null when
        truly unknown), other empty fields left out; ``cause`` always (``cause_of``)."""
        data = asdict(self)
        data["verdict"] = self.verdict.value
        extra = data.pop("extra")
        data.update(extra)
        data["cause"] = with_details(cause_of(self), [self.detail] if self.detail else [])
        return {k: v for k, v in data.items()
                if v is not None or k in ("operation", "binding")}

    @property
    def where(self) -> str:
        parts = [self.operation or "(unclassified)", self.binding or "-"]
        if self.index is not None:
            parts.append(f"#{self.index}" + (f" in {self.source}" if self.source else ""))
        return " x ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")


def cause_of(finding: Finding) -> str:
    """The finding's cause as reports group it: its own, or "expected .., actual .." (and the
    message) with the operation's name as ``<operation>``; on one line, quoted values
    ('...') masked so that one cause over many operations and values stays one cause, at
    most CAUSE_CHARS long."""
    text = finding.cause
    if not text:
        text = f"expected {finding.expected}, actual {finding.actual}"
        if finding.message and "expected " not in finding.message:
            text += f" ({finding.message})"
    if finding.operation and len(finding.operation) > 2:  # one cause over operations
        text = text.replace(finding.operation, OPERATION)
    return cause_text(text)


_QUOTED = re.compile(r"'[^'\n]{2,}'")


def cause_text(text: str) -> str:
    """``text`` as a cause: one line, values in single quotes masked ('…'), shortened at a
    word (a value a reader needs belongs in ``Finding.detail``, not quoted in the cause)."""
    from harness.judge.words import shortened

    return shortened(_QUOTED.sub("'…'", " ".join(text.split())), CAUSE_CHARS)


#: Rules whose findings are differences between two answers (diff, replay), not a rule of
#: the spec broken: reports list them apart (failures first, then differences).
def is_difference(rule: str) -> bool:
    return rule.startswith(("DIFF-", "REPLAY-")) and rule not in _NOT_DIFFERENCES


_NOT_DIFFERENCES = frozenset({"REPLAY-TRANSPORT", "DIFF-CROSS-BINDING"})


@dataclass
class Cause:
    """Findings of one verdict that share a cause: what a report shows on one line."""

    verdict: Verdict
    text: str
    #: Only differences between two answers (diff, replay): no rule of the spec failed (a
    #: cause both a rule and a comparison find is a failure).
    difference: bool = False
    #: Findings (checks) under it, and the calls (exchanges) they were found on.
    checks: int = 0
    calls: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    #: Calls per (operation, binding label) ("(unclassified)", "-" when unknown), or per
    #: (endpoint, "WSDL") for endpoint-level findings.
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: The first finding under it, as JSON data (``Finding.to_dict``).
    example: dict[str, Any] = field(default_factory=dict)
    #: The distinct details of its findings (``Finding.detail``), in the order seen (at most
    #: MAX_DETAILS), and how many more there were.
    details: dict[str, None] = field(default_factory=dict)
    more_details: int = 0
    _beyond: set[str] = field(default_factory=set)
    #: The operations its text stands for where it says ``<operation>`` (two at most: one is
    #: named in the text, two or more stay ``<operation>``).
    operations: set[str] = field(default_factory=set)
    _last: tuple[Any, ...] | None = None

    @property
    def rule(self) -> str:
        """The rule most of its findings come from (the first seen on a tie)."""
        return self.rules.most_common(1)[0][0]

    def add(self, finding: Finding, data: dict[str, Any]) -> None:
        self.checks += 1
        self.rules[finding.rule] += 1
        call = (finding.source, finding.index, finding.extra.get("implementation"))
        if finding.index is None or call != self._last:
            self.calls += 1
            self.pairs[finding.case[1:]] += 1
            self._last = call
        if not self.example:
            self.example = data
        if finding.detail and finding.detail not in self.details:
            if len(self.details) < MAX_DETAILS:
                self.details[finding.detail] = None
            elif finding.detail not in self._beyond and len(self._beyond) < 100 * MAX_DETAILS:
                self._beyond.add(finding.detail)
                self.more_details = len(self._beyond)
        if finding.operation and len(self.operations) < 2 and OPERATION in self.text:
            self.operations.add(finding.operation)

    @property
    def named_text(self) -> str:
        """Its text with the one operation it stands for named (``<operation>`` kept when it
        stands for several)."""
        if len(self.operations) == 1:
            return self.text.replace(OPERATION, next(iter(self.operations)))
        return self.text

    def said(self, details: int = 6) -> str:
        """Its words as a report shows them: its operation named when it stands for one, its
        first ``details`` in their slot or after it."""
        shown = list(self.details)[:details]
        return with_details(self.named_text, shown,
                            len(self.details) - len(shown) + self.more_details)

    def to_dict(self) -> dict[str, Any]:
        text = self.text  # its details in their slot ("non-integer int parameter (x, 2147...)")
        if DETAILS in text:
            text = with_details(text, list(self.details), self.more_details)
        return {"verdict": self.verdict.value, "cause": text,
                "difference": self.difference, "checks": self.checks, "calls": self.calls,
                "rules": dict(self.rules.most_common()),
                "pairs": [{"operation": op, "binding": b, "calls": n}
                          for (op, b), n in sorted(self.pairs.items())],
                **({"details": list(self.details), "more_details": self.more_details}
                   if self.details else {}),
                "example": self.example}


@dataclass(frozen=True)
class Scope:
    """What a run covered, when it covered less than the whole contract: the parts judged
    and the parts left out, by the user's choice (``--binding``, ``--operation``, ``--rule``).

    Set ``Report.scope`` to one; every output says it: the console's verdict line ("PASSED
    for SOAP 1.1, SOAP 1.2; HTTP GET, HTTP POST not certified"), the JSON's ``selection``,
    JUnit ``properties`` and the Allure overview. ``covered`` and ``left_out`` are words a
    person reads (binding labels, "WSDL", operation names); ``chosen`` is how (the flags)."""

    covered: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    chosen: str = ""

    @property
    def partial(self) -> bool:
        return bool(self.left_out)

    def to_dict(self) -> dict[str, Any]:
        return {"covered": list(self.covered), "left_out": list(self.left_out),
                "chosen": self.chosen, "partial": self.partial}


#: Names of left-out operations listed in a Scope; beyond them, "N other operations".
SCOPE_NAMES = 3


def selection_scope(contract: Contract, selection: Selection, rules: Iterable[str] = (),
                    catalogue: int = 0) -> Scope | None:
    """What a run chosen with ``--binding``/``--operation``/``--rule`` covered and left out
    (None when it covers the whole contract): binding labels, operation names ("4 other
    operations" past SCOPE_NAMES), "rule R1-SOAPACTION" and "the N other rules" (``catalogue``:
    how many rules the command has)."""
    from harness.contract.bindings import Binding

    covered: list[str] = []
    left_out: list[str] = []
    chosen: list[str] = []
    if selection.bindings:
        labels = [Binding(b).label for b in contract.bindings]
        covered += [label for label in labels if label in selection.bindings]
        left_out += [label for label in labels if label not in selection.bindings]
        chosen += [f"--binding {Binding.parse(label).value}" for label in labels
                   if label in selection.bindings]
    if selection.operations:
        names = [op.name for op in contract.operations]
        covered += [name for name in names if name in selection.operations]
        others = [name for name in names if name not in selection.operations]
        left_out += others if len(others) <= SCOPE_NAMES else [f"{len(others)} other operations"]
        chosen += [f"--operation {name}" for name in names if name in selection.operations]
    rules = sorted(set(rules))
    if rules:
        covered += [f"rule {rule}" for rule in rules]
        others = max(catalogue - len(rules), 0)
        if others:
            left_out.append(f"the {others} other rule" + ("" if others == 1 else "s"))
        chosen += [f"--rule {rule}" for rule in rules]
    if not left_out:
        return None
    return Scope(tuple(covered), tuple(left_out), " ".join(chosen))


class Report:
    """What a run found. ``add`` findings, then render it: ``harness.reports`` (console,
    JSON, JUnit, Allure) reads it; it knows nothing of them."""

    def __init__(self, command: str, target: str | None = None,
                 titles: dict[str, str] | None = None, *, profile: Profile | None = None,
                 environment: str | None = None, **meta: Any) -> None:
        self.command = command
        #: The config file's named environment the run was sent with (``--env``), or None:
        #: every output names it.
        self.environment = environment
        #: How verdicts are weighed; its per-rule overrides are applied here, to every finding.
        self.profile = profile or Profile()
        self._overrides = dict(self.profile.overrides)
        #: Findings already known (``use_baseline``): not reported again, only counted.
        self._known: frozenset[tuple[Any, ...]] = frozenset()
        self.known = 0
        #: Seconds the exchanges of each (operation, binding label) took (JUnit ``time``).
        self.seconds: Counter[tuple[str, str]] = Counter()
        #: (rule, operation, binding) -> its first failing exchange as text (JUnit system-out).
        self.examples: dict[tuple[str, str, str], str] = {}
        self.target = target
        self.meta = meta
        self.titles = titles or {}
        self.counts: Counter[Verdict] = Counter()
        self.by_rule: dict[str, Counter[Verdict]] = {}
        self.by_case: dict[tuple[str, str, str], Counter[Verdict]] = {}
        #: Exchanges judged: calls the run made, or recorded exchanges read (``unit``).
        self.exchanges = 0
        #: What ``exchanges`` counts, in the words every output uses: "calls" (the run sent
        #: them) or "exchanges" (read from recordings, nothing sent: lint).
        self.unit = "exchanges" if command == "lint" else "calls"
        #: Failures and warnings by (verdict, cause) (see ``Cause``), in the order first seen.
        self.causes: dict[tuple[Verdict, str], Cause] = {}
        #: What the run covered when it covered less than the whole contract (see ``Scope``).
        self.scope: Scope | None = None
        #: Service description requests by kind ("WSDL": 7): traffic counted, not judged.
        self.descriptions: Counter[str] = Counter()
        #: Recorded exchanges the run did not send, by why (``NOT_SENT``): counted apart
        #: from ``exchanges`` (the calls sent), in every output.
        self.not_sent: Counter[str] = Counter()
        #: What became of them, said beside their count (replay: not sent).
        self.descriptions_note = "counted, not judged"
        #: The signal that stopped the run before its end ("SIGINT", "SIGTERM"), or None: every
        #: output says the run was interrupted and what it judged until then.
        self.interrupted: str | None = None
        #: How many ``unit`` the whole run would have made, when known (``after N of M``).
        self.planned: int | None = None
        #: The run's one face for every secret (``harness.traffic.redaction.ReportRedaction``):
        #: every failure and warning kept, and every example, is shown through it. None: as
        #: given (a library caller's own Report).
        self.redaction: ReportRedaction | None = None
        self.started = time.time()
        self.finished: float | None = None
        self._kept = 0
        self._spill: IO[str] | None = None

    def add(self, finding: Finding) -> None:
        if finding.rule == DESCRIPTION:
            self.descriptions[finding.actual] += 1
            return
        if self._overrides and finding.rule in self._overrides:
            finding = self._overridden(finding)
            if finding is None:
                return
        if (self._known and finding.verdict in (Verdict.FAILED, Verdict.WARNING)
                and _baseline_key(finding.to_dict()) in self._known):
            self.known += 1
            return
        self.counts[finding.verdict] += 1
        if uncompared := finding.extra.get(UNCOMPARED):
            self.meta[UNCOMPARED] = self.meta.get(UNCOMPARED, 0) + uncompared
        self.by_rule.setdefault(finding.rule, Counter())[finding.verdict] += 1
        self.by_case.setdefault(finding.case, Counter())[finding.verdict] += 1
        if finding.verdict in (Verdict.FAILED, Verdict.WARNING):
            if self.redaction is not None:  # before it is kept (the spill is a file)
                finding = redacted(finding, self.redaction)
            if self._spill is None:
                self._spill = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (lives as long as the report)
            data = finding.to_dict()
            self._spill.write(json.dumps(data, ensure_ascii=False) + "\n")
            self._kept += 1
            self._group(finding, data)

    def _group(self, finding: Finding, data: dict[str, Any]) -> None:
        """Count ``finding`` under its cause (bounded: past MAX_CAUSES distinct causes, a
        rule's further ones share one group)."""
        difference = is_difference(finding.rule)
        key = (finding.verdict, cause_of(finding))
        cause = self.causes.get(key)
        if cause is None:
            if len(self.causes) >= MAX_CAUSES:
                key = (finding.verdict,
                       f"{finding.rule}: other causes (more than {MAX_CAUSES} distinct causes "
                       "in this run; each finding is in the JSON with its own)")
                cause = self.causes.get(key)
            if cause is None:
                cause = self.causes[key] = Cause(finding.verdict, key[1], difference)
        cause.difference = cause.difference and difference  # a rule it fails: a failure
        cause.add(finding, data)

    def _overridden(self, finding: Finding) -> Finding | None:
        """``finding`` under its rule's override: None when the rule is off; a failure or
        warning takes the override's level (passed and not applicable stay)."""
        severity = self._overrides[finding.rule]
        if severity is Severity.OFF:
            return None
        if finding.verdict not in (Verdict.FAILED, Verdict.WARNING):
            return finding
        verdict = Verdict.WARNING if severity is Severity.WARNING else Verdict.FAILED
        if verdict is finding.verdict:
            return finding
        return replace(finding, verdict=verdict,
                       message=(f"{finding.message}; " if finding.message else "")
                       + f"{verdict.value} by override ({finding.rule}={severity.value})")

    def add_seconds(self, seconds: Mapping[tuple[str | None, str | None], float]) -> None:
        """Time taken by exchanges of (operation, binding label) pairs: a test case's
        ``time`` in JUnit is that of the calls it judged."""
        for (operation, binding), value in seconds.items():
            self.seconds[operation or "(unclassified)", binding or "-"] += value

    def add_example(self, finding: Finding, text: str) -> None:
        """``text`` (``example_text``) shows the first failure of ``finding``'s test case."""
        if finding.case not in self.examples:
            self.examples[finding.case] = (self.redaction.text(text) if self.redaction
                                           else text)

    def observe(self, request: HttpRequest | None, response: HttpResponse | None,
                operation: str | None = None) -> None:
        """Note the secrets of an exchange whose findings are about to be added: the
        contract's sensitive values in it are then shown by their pseudonyms wherever a
        finding quotes them (``ReportRedaction.observe``)."""
        if self.redaction is not None:
            self.redaction.observe(request, response, operation)

    def use_baseline(self, path: str | Path) -> None:
        """Report only findings that are not in the JSON report at ``path`` (an earlier run):
        a failure or warning with the same rule, operation, binding, verdict, expected and
        actual is known, counted in ``known`` and left out."""
        self._known = load_baseline(path)
        self.meta["baseline"] = str(path)

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    def add_counts(self, counts: Mapping[tuple[str, str | None, str | None, Verdict], int]
                   ) -> None:
        """Count findings judged elsewhere (a worker process) as ``(rule, operation, binding,
        verdict) -> n``, without keeping them: for passed and not-applicable findings only;
        failures and warnings go through ``add`` so that they are kept."""
        totals, by_rule, by_case = self.counts, self.by_rule, self.by_case
        overrides = self._overrides
        for (rule, operation, binding, verdict), n in counts.items():
            if rule == DESCRIPTION:
                self.descriptions[operation or "?"] += n
                continue
            if overrides.get(rule) is Severity.OFF:
                continue
            totals[verdict] += n
            # a Counter made only when missing (a chunk of lint brings ~2,000 keys)
            if (per_rule := by_rule.get(rule)) is None:
                per_rule = by_rule[rule] = Counter()
            per_rule[verdict] += n
            case = (rule, operation or "(unclassified)", binding or "-")
            if (per_case := by_case.get(case)) is None:
                per_case = by_case[case] = Counter()
            per_case[verdict] += n

    def finish(self) -> Report:
        self.finished = time.time()
        return self

    def interrupt(self, signal_name: str | None = None) -> Report:
        """Mark the run as stopped by a signal (default: the one ``harness.stopping`` got)."""
        from harness import stopping

        self.interrupted = signal_name or stopping.signal_name() or "SIGINT"
        return self

    @property
    def passed(self) -> bool:
        return self.counts[Verdict.FAILED] == 0

    @property
    def verdict(self) -> str:
        """passed, failed, or interrupted (the counts say what the part that ran found)."""
        if self.interrupted:
            return "interrupted"
        return "passed" if self.passed else "failed"

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed, 130 interrupted by SIGINT, 143 by SIGTERM."""
        if self.interrupted:
            from harness import stopping

            return stopping.exit_code(self.interrupted)
        return 0 if self.passed else 1

    @property
    def checks(self) -> int:
        """Every check judged (every finding counted, whatever its verdict)."""
        return sum(self.counts.values())

    @property
    def judged(self) -> bool:
        """Whether the run judged anything: a check passed, failed or warned. A run of none
        (no usable exchange, a selection that matched nothing, every check not applicable)
        is no pass; an interrupted run says what it did."""
        c = self.counts
        return bool(c[Verdict.PASSED] or c[Verdict.FAILED] or c[Verdict.WARNING]
                    or self.interrupted)

    def kept(self, verdict: Verdict | None = None) -> Iterator[dict[str, Any]]:
        """The failures and warnings, in the order found, as dicts."""
        if self._spill is None:
            return
        self._spill.flush()
        self._spill.seek(0)
        for line in self._spill:
            data = json.loads(line)
            if verdict is None or data["verdict"] == verdict.value:
                yield data
        self._spill.seek(0, 2)

    def ordered_causes(self) -> list[Cause]:
        """Failures first, then differences, then warnings; each by reach (calls, checks)."""
        def order(cause: Cause) -> tuple[int, int, int]:
            section = 2 if cause.verdict is Verdict.WARNING else int(cause.difference)
            return section, -cause.calls, -cause.checks
        return sorted(self.causes.values(), key=order)


def redacted(finding: Finding, redaction: ReportRedaction) -> Finding:
    """``finding`` with every secret its words hold shown by its pseudonym."""
    text = redaction.text
    extra = {k: text(v) if isinstance(v, str) else v for k, v in finding.extra.items()}
    return replace(finding, expected=text(finding.expected), actual=text(finding.actual),
                   message=text(finding.message), cause=text(finding.cause), extra=extra)


def case_of(rule: str, operation: str | None, binding: str | None) -> tuple[str, str, str]:
    """The test case a finding belongs to: rule x operation x binding."""
    return rule, operation or "(unclassified)", binding or "-"


_BASELINE_FIELDS = ("rule", "operation", "binding", "verdict", "expected", "actual")


def _baseline_key(data: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two findings the same one across runs: not where (index) nor who (client)."""
    return tuple(data.get(name) for name in _BASELINE_FIELDS)


def load_baseline(path: str | Path) -> frozenset[tuple[Any, ...]]:
    """The failures and warnings of an earlier JSON report, as baseline keys."""
    from harness.files import BASELINE_LIMIT, read_limited

    raw = read_limited(path, BASELINE_LIMIT, "baseline")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise UsageError(f"baseline {path} is not a JSON report (--json of an earlier run)"
                         ) from None
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        raise UsageError(f"baseline {path} has no findings list (use the --json of an "
                         "earlier run)")
    return frozenset(_baseline_key(f) for f in findings
                     if f.get("verdict") in (Verdict.FAILED.value, Verdict.WARNING.value))
