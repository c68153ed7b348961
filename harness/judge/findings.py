"""Findings and the one report path: console summary, JSON, JUnit XML.

Every command that judges traffic (certify, lint, replay, diff) feeds Findings into a Report.
A Report keeps counts per rule and verdict in memory and spills the failures and warnings to a
temporary file, so a recording of a million exchanges is judged in flat memory and the JSON
still lists every failure and warning.
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
from typing import IO, Any

from lxml import etree

from harness import __version__
from harness.errors import UsageError
from harness.judge.profiles import Profile, Severity
from harness.traffic.exchange import HttpRequest, HttpResponse

#: Not a rule: the pseudo-rule under which service description requests (WSDL, disco, help
#: page) reach a Report, which counts them by kind (the finding's ``actual``; in a tally key,
#: the operation slot) apart from the findings.
DESCRIPTION = "SERVICE-DESCRIPTION"


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
    #: Position of the exchange in its recording (1-based), when it came from one.
    index: int | None = None
    source: str | None = None
    #: The client as it names itself (User-Agent), for lint.
    client: str | None = None
    #: Command-specific values, e.g. diff's ``primary`` and ``candidate``.
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON data; ``operation`` and ``binding`` always present (null when
        truly unknown), other empty fields left out."""
        data = asdict(self)
        data["verdict"] = self.verdict.value
        extra = data.pop("extra")
        data.update(extra)
        return {k: v for k, v in data.items()
                if v is not None or k in ("operation", "binding")}

    @property
    def where(self) -> str:
        parts = [self.operation or "(unclassified)", self.binding or "-"]
        if self.index is not None:
            parts.append(f"#{self.index}" + (f" in {self.source}" if self.source else ""))
        return " x ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")


class Report:
    """What a run found. ``add`` findings, then write it out."""

    def __init__(self, command: str, target: str | None = None,
                 titles: dict[str, str] | None = None, *, profile: Profile | None = None,
                 **meta: Any) -> None:
        self.command = command
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
        self.exchanges = 0
        #: Service description requests by kind ("WSDL": 7): traffic counted, not judged.
        self.descriptions: Counter[str] = Counter()
        #: What became of them, said beside their count (replay: not sent).
        self.descriptions_note = "counted, not judged"
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
        self.by_rule.setdefault(finding.rule, Counter())[finding.verdict] += 1
        case = (finding.rule, finding.operation or "(unclassified)", finding.binding or "-")
        self.by_case.setdefault(case, Counter())[finding.verdict] += 1
        if finding.verdict in (Verdict.FAILED, Verdict.WARNING):
            if self._spill is None:
                self._spill = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (lives as long as the report)
            self._spill.write(json.dumps(finding.to_dict(), ensure_ascii=False) + "\n")
            self._kept += 1

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
        self.examples.setdefault(case_of(finding.rule, finding.operation, finding.binding), text)

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
        for (rule, operation, binding, verdict), n in counts.items():
            if rule == DESCRIPTION:
                self.descriptions[operation or "?"] += n
                continue
            if self._overrides.get(rule) is Severity.OFF:
                continue
            self.counts[verdict] += n
            self.by_rule.setdefault(rule, Counter())[verdict] += n
            case = (rule, operation or "(unclassified)", binding or "-")
            self.by_case.setdefault(case, Counter())[verdict] += n

    def finish(self) -> Report:
        self.finished = time.time()
        return self

    @property
    def passed(self) -> bool:
        return self.counts[Verdict.FAILED] == 0

    @property
    def verdict(self) -> str:
        return "passed" if self.passed else "failed"

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

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

    # ------------------------------------------------------------------------------- outputs

    def summary(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "command": self.command,
            "target": self.target,
            "harness_version": __version__,
            "exchanges": self.exchanges,
            "duration_s": round((self.finished or time.time()) - self.started, 3),
            "profile": self.profile.name,
            "overrides": {rule: s.value for rule, s in self.profile.overrides},
            "counts": {v.value: self.counts[v] for v in Verdict},
            **({"known_from_baseline": self.known} if "baseline" in self.meta else {}),
            "service_descriptions": dict(sorted(self.descriptions.items())),
            "rules": {rule: {v.value: c[v] for v in Verdict if c[v]}
                      for rule, c in sorted(self.by_rule.items())},
            **self.meta,
        }

    def write_json(self, path: str | Path) -> None:
        """``{"verdict", "target", "counts", ..., "findings": [...]}``, streamed to disk."""
        with _open_output(path) as out:
            head = json.dumps(self.summary(), ensure_ascii=False, indent=1)
            out.write(head[:-2] + ',\n "findings": [')
            for i, data in enumerate(self.kept()):
                out.write(("," if i else "") + "\n  " + json.dumps(data, ensure_ascii=False))
            out.write("\n ]\n}\n")

    def write_junit(self, path: str | Path) -> None:
        """JUnit XML: a suite per rule, a test case per rule x operation x binding, each with
        the ``time`` its calls took; a failure's message holds the first failure's expected
        and actual, its text up to 20 of them, and ``system-out`` the first failing exchange
        (request and response, credential headers redacted)."""
        duration = (self.finished or time.time()) - self.started
        suites = etree.Element("testsuites", name=f"harness {self.command}",
                               time=f"{duration:.3f}")
        examples: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for data in self.kept(Verdict.FAILED):
            bucket = examples.setdefault(
                case_of(data["rule"], data.get("operation"), data.get("binding")), [])
            if len(bucket) < 20:
                bucket.append(data)
        totals = Counter[str]()
        for rule in sorted(self.by_rule):
            cases = sorted(c for c in self.by_case if c[0] == rule)
            suite = etree.SubElement(suites, "testsuite", name=rule, tests=str(len(cases)))
            counted = Counter[str]()
            for case in cases:
                counted.update(self._junit_case(suite, case, examples.get(case, [])))
            suite.set("failures", str(counted["failures"]))
            suite.set("skipped", str(counted["skipped"]))
            suite.set("time", f"{counted['time'] / 1000:.3f}")
            totals.update(counted, tests=len(cases))
        suites.set("tests", str(totals["tests"]))
        suites.set("failures", str(totals["failures"]))
        with _open_output(path, binary=True) as out:
            out.write(etree.tostring(suites, xml_declaration=True, encoding="utf-8",
                                     pretty_print=True))

    def _junit_case(self, suite: etree._Element, case: tuple[str, str, str],
                    failed: list[dict[str, Any]]) -> Counter[str]:
        """One test case into ``suite``; what it counts (failures, skipped, time in ms)."""
        rule, operation, binding = case
        counts, title = self.by_case[case], self.titles.get(rule, "")
        seconds = self.seconds.get((operation, binding), 0.0)
        testcase = etree.SubElement(suite, "testcase", classname=f"{self.command}.{rule}",
                                    name=f"{operation} [{binding}]" + (f" {title}" if title
                                                                       else ""),
                                    time=f"{seconds:.3f}")
        counted = Counter(time=round(seconds * 1000))
        out: list[str] = []
        if counts[Verdict.FAILED]:
            counted["failures"] += 1
            first = failed[0] if failed else {}
            lines = [_describe(d) for d in failed]
            if (more := counts[Verdict.FAILED] - len(lines)) > 0:
                lines.append(f"... and {more} more")
            message = (f"{counts[Verdict.FAILED]} failed: expected {first.get('expected', '')}, "
                       f"actual {first.get('actual', '')}")
            failure = etree.SubElement(testcase, "failure", type=rule,
                                       message=_xml_safe(message[:500]))
            failure.text = _xml_safe("\n".join(lines))
            if case in self.examples:
                out.append(f"first failing exchange:\n{self.examples[case]}")
        elif not counts[Verdict.PASSED] and not counts[Verdict.WARNING]:
            counted["skipped"] += 1
            etree.SubElement(testcase, "skipped", message="not applicable")
        if counts[Verdict.WARNING]:
            out.insert(0, f"{counts[Verdict.WARNING]} warning(s): permitted deviation")
        if out:
            etree.SubElement(testcase, "system-out").text = _xml_safe("\n\n".join(out))
        return counted

    def print_console(self, stream: IO[str], *, limit: int = 40) -> None:
        """A summary per rule ID, then failures as operation x binding, expected and actual."""
        width = max([len(r) for r in self.by_rule] + [4])
        print(f"{'rule':<{width}}  passed  failed  warning  n/a   title", file=stream)
        for rule, c in sorted(self.by_rule.items()):
            print(f"{rule:<{width}}  {c[Verdict.PASSED]:>6}  {c[Verdict.FAILED]:>6}  "
                  f"{c[Verdict.WARNING]:>7}  {c[Verdict.NOT_APPLICABLE]:>4}  "
                  f"{self.titles.get(rule, '')}", file=stream)
        for verdict, heading in ((Verdict.WARNING, "WARNINGS"), (Verdict.FAILED, "FAILURES")):
            total = self.counts[verdict]
            if not total:
                continue
            print(f"\n{heading} ({total}):", file=stream)
            for i, data in enumerate(self.kept(verdict)):
                if i == limit:
                    print(f"  ... and {total - limit} more (see --json)", file=stream)
                    break
                print(f"  {_describe(data)}", file=stream)
        if self.descriptions:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.descriptions.items()))
            print(f"\nservice descriptions ({self.descriptions_note}): {kinds}", file=stream)
        if "baseline" in self.meta:
            print(f"\nbaseline {self.meta['baseline']}: {self.known} known finding(s) not "
                  "shown", file=stream)
        overrides = ", ".join(f"{r}={s.value}" for r, s in self.profile.overrides)
        print(f"\nprofile {self.profile.name}" + (f", overrides {overrides}" if overrides else ""),
              file=stream)
        c = self.counts
        print(f"\n{self.command}: {self.verdict.upper()} - {c[Verdict.PASSED]} passed, "
              f"{c[Verdict.FAILED]} failed, {c[Verdict.WARNING]} warnings, "
              f"{c[Verdict.NOT_APPLICABLE]} not applicable"
              + (f" over {self.exchanges} exchanges" if self.exchanges else "")
              + (f" ({self.target})" if self.target else ""), file=stream)


_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (a recorded body may have any)."""
    return _XML_UNSAFE.sub("\ufffd", text)


def case_of(rule: str, operation: str | None, binding: str | None) -> tuple[str, str, str]:
    """The test case a finding belongs to: rule x operation x binding."""
    return rule, operation or "(unclassified)", binding or "-"


#: Characters of a body shown in a JUnit example (the JSON has every finding).
EXAMPLE_BODY = 4000


def example_text(request: HttpRequest, response: HttpResponse | None) -> str:
    """An exchange as CI shows it: request and response as on the wire, credential headers
    redacted, bodies shortened to EXAMPLE_BODY characters."""
    from harness.reports.allure_results import http_text

    def short(message: HttpRequest | HttpResponse) -> str:
        text = http_text(message)
        return text if len(text) <= EXAMPLE_BODY else text[:EXAMPLE_BODY] + "\n[...]"
    return short(request) + "\n\n" + (short(response) if response is not None
                                      else "(no response)")


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


def _describe(data: dict[str, Any]) -> str:
    where = f"{data.get('operation') or '(unclassified)'} x {data.get('binding') or '-'}"
    if "index" in data:
        where += f" #{data['index']}" + (f" in {data['source']}" if "source" in data else "")
    text = f"[{data['rule']}] {where}: expected {data.get('expected', '')!s}, " \
           f"actual {data.get('actual', '')!s}"
    message = data.get("message")
    if message and "expected " not in message:  # diff/replay messages restate expected/actual
        text += f" ({message})"
    if data.get("client"):
        text += f" (client {data['client']})"
    return text


class _open_output:
    """Open an output file, creating its folder; a bad path is a UsageError, not a traceback."""

    def __init__(self, path: str | Path, binary: bool = False) -> None:
        self.path, self.binary = Path(path), binary

    def __enter__(self) -> IO[Any]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = self.path.open("wb" if self.binary else "w",
                                         **({} if self.binary else {"encoding": "utf-8"}))
        except OSError as exc:
            raise UsageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self.handle

    def __exit__(self, *exc: object) -> None:
        self.handle.close()
