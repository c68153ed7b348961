"""The live tally of a shadow run: calls seen, mirrored, compared, not compared (and why), and
the differences so far by cause x operation x binding with an example pair each.

The causes are the final report's (``harness.judge.findings.cause_of`` of diff's findings),
judged with the noise learned so far: the final report judges again with the noise of the
whole run, so a count here can only shrink there. What the progress line and the live view
show; updated by the worker under its lock, read as a copy (``snapshot``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.judge.findings import Finding, Verdict, cause_of, is_difference

#: Distinct causes kept apart (the final report keeps its own, with every finding).
MAX_CAUSES = 200
#: Characters of a body an example shows (the recording has it whole).
EXAMPLE_CHARS = 64 * 1024
#: Causes named on the progress line.
LINE_CAUSES = 3
#: A call's answers as the live view shows them, made only when needed.
Example = Callable[[], dict[str, Any]]


@dataclass
class LiveCause:
    verdict: Verdict
    text: str
    #: Only differences between the answers, as the reports' ``Cause.difference``: a failure
    #: that is none (the candidate did not answer) is listed under FAILURES there.
    difference: bool = True
    calls: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: The first call found with it: where, and both answers as reports show an example
    #: (``Diff.reported``).
    example: dict[str, Any] = field(default_factory=dict)
    last: int | None = None  # the call counted last (one call, several rules: one call)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "cause": self.text,
                "difference": self.difference, "calls": self.calls,
                "rules": dict(self.rules.most_common()),
                "pairs": [{"operation": op, "binding": b, "calls": n}
                          for (op, b), n in self.pairs.most_common()],
                "example": self.example}


class Tally:
    """Counts of one shadow run (not thread-safe: the worker holds its lock)."""

    def __init__(self, roles: dict[str, str]) -> None:
        self.roles = roles
        self.started = time.time()
        self.seen = 0  # exchanges with the service through the proxy
        self.mirrored = 0  # of which sent to the candidate
        self.compared = 0  # of which compared (the candidate answered)
        self.differing = 0  # of which with a difference (noise so far left out)
        self.skipped: Counter[str] = Counter()  # not mirrored by choice, by why
        self.uncompared: Counter[str] = Counter()  # not compared, by why
        self.waiting = 0  # in the queue now
        self.in_flight = 0  # being mirrored now
        self.noise_places = 0
        self.causes: dict[tuple[Verdict, str], LiveCause] = {}
        #: The progress line's words after the counts (a plain string: read without a lock).
        self.line = ""

    def compared_call(self, findings: list[Finding], example: Example) -> bool:
        """A call compared (``findings``: its findings; ``example()`` its answers, asked for
        only when it is the first call of a cause); whether it differs."""
        self.compared += 1
        differs = False
        for finding in findings:
            if finding.verdict not in (Verdict.FAILED, Verdict.WARNING):
                continue
            differs = differs or (finding.verdict is Verdict.FAILED
                                  and is_difference(finding.rule))
            self._add(finding, example)
        self.differing += differs
        self._say()
        return differs

    def not_compared(self, why: str, findings: Sequence[Finding] = (),
                     example: Example = dict) -> None:
        self.uncompared[why] += 1
        for finding in findings:
            self._add(finding, example)
        self._say()

    def skip(self, why: str) -> None:
        self.skipped[why] += 1
        self._say()

    def _add(self, finding: Finding, example: Example) -> None:
        key = (finding.verdict, cause_of(finding))
        cause = self.causes.get(key)
        if cause is None:
            if len(self.causes) >= MAX_CAUSES:
                return
            cause = self.causes[key] = LiveCause(finding.verdict, key[1],
                                                 example=_shortened(example()))
        cause.difference = cause.difference and is_difference(finding.rule)
        if cause.calls == 0 or finding.index != cause.last:
            cause.calls += 1
            cause.pairs[finding.operation or "(unclassified)", finding.binding or "-"] += 1
        cause.last = finding.index
        cause.rules[finding.rule] += 1

    def ordered(self) -> list[LiveCause]:
        """As the reports order them: failures, then differences, then warnings; each by
        calls."""
        return sorted(self.causes.values(), key=lambda c: (
            2 if c.verdict is Verdict.WARNING else int(c.difference), -c.calls))

    def _say(self) -> None:
        failed = [c for c in self.ordered() if c.verdict is Verdict.FAILED]
        parts = [f"{c.calls} x {c.text}" for c in failed[:LINE_CAUSES]]
        if len(failed) > LINE_CAUSES:
            parts.append(f"{len(failed) - LINE_CAUSES} more cause(s)")
        line = "; ".join(parts) or "no difference"
        not_compared = sum(self.uncompared.values())
        if not_compared:
            line += f"; {not_compared} not compared"
        self.line = line

    def snapshot(self) -> dict[str, Any]:
        """Everything, as JSON data (the live view's ``data.json``)."""
        return {"roles": self.roles, "started": self.started, "now": time.time(),
                "seen": self.seen, "mirrored": self.mirrored, "compared": self.compared,
                "differing": self.differing, "waiting": self.waiting,
                "in_flight": self.in_flight, "noise_places": self.noise_places,
                "skipped": dict(self.skipped.most_common()),
                "not_compared": dict(self.uncompared.most_common()),
                "causes": [c.to_dict() for c in self.ordered()]}


def _shortened(example: dict[str, Any]) -> dict[str, Any]:
    """The example with each body cut to EXAMPLE_CHARS (it lives as long as the run)."""
    out: dict[str, Any] = {}
    for key, value in example.items():
        if isinstance(value, dict):
            value = _shortened(value)
        elif isinstance(value, str) and len(value) > EXAMPLE_CHARS:
            value = value[:EXAMPLE_CHARS] + "\n[... shortened: the recording has it whole]"
        out[key] = value
    return out
