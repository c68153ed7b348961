"""The harness's verdict of a load run, gathered where the answers are judged (each worker)
and merged where the report is written (the master), through Locust's custom messages.

Judging is ``harness.replay.check_replayed``: the same response-side rules and the
same comparison as ``harness replay``, so a load run and a replay of one recording agree.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.contract.model import Contract
from harness.judge.findings import Finding, Report, Verdict, redacted
from harness.judge.rules import titles
from harness.judge.sending import RULE_TITLES
from harness.judge.streaming import Tally
from harness.replay.engine import REPLAY_RULES, Answer, Keys, judge_answer
from harness.traffic.exchange import Exchange, HttpResponse
from harness.traffic.redaction import ReportRedaction

#: An answer this much later than due counts as late.
LATE_S = 0.1
#: Failures and warnings per custom message (a message stays small, whatever the recording).
BATCH = 200
_GOLDEN = 0.6180339887498949


def sampled(position: int, ratio: float) -> bool:
    """Whether ``--check-ratio`` judges the exchange at ``position``: an even, deterministic
    spread (the same sample whatever the worker count)."""
    return ratio >= 1.0 or (position * _GOLDEN) % 1.0 < ratio


@dataclass
class Gathered:
    """What one process sent and found."""

    tally: Tally = field(default_factory=Counter)
    kept: list[Finding] = field(default_factory=list)
    sent: int = 0
    #: Exchanges of this slice that --operation/--binding leave out (never sent).
    not_selected: int = 0
    judged: int = 0
    failing: int = 0  # exchanges with at least one failed finding
    lag_max: float = 0.0
    lag_sum: float = 0.0
    late: int = 0
    first_sent: float | None = None  # time.time() of the first request sent
    last_sent: float | None = None
    cpu_s: float = 0.0  # this process's CPU time from the start to the end of its slice
    #: How the run's reports show secrets: findings are kept (and sent to the master) so.
    redaction: ReportRedaction | None = None

    def judge(self, exchange: Exchange, answer: Answer, contract: Contract, *, check: bool,
              ignore: Sequence[str], keys: Keys | None = None) -> list[Finding]:
        """The failures and warnings on one answer, as replay finds them (``judge_answer``:
        the answer, or the transport failure, the size overflow, a service description's
        kind); passed and not-applicable findings are only counted. ``keys``: the
        recordings' pseudonym keys."""
        self.sent += not isinstance(answer, str)  # a service description is not sent
        self.judged += isinstance(answer, HttpResponse) and check
        found = judge_answer(exchange, answer, contract, ignore=ignore, check=check,
                             tally=self.tally, keys=keys)
        if any(f.verdict is Verdict.FAILED for f in found):
            self.failing += 1
        if found and self.redaction is not None:  # its secrets, before a finding quotes them
            operation = next((f.operation for f in found if f.operation),
                             exchange.meta.get("operation"))
            self.redaction.observe(exchange.request, answer if isinstance(
                answer, HttpResponse) else None, operation)
            found = [redacted(f, self.redaction) for f in found]
        self.kept += found
        return found

    def sending(self) -> None:
        """A request goes out now."""
        now = time.time()
        self.first_sent = self.first_sent or now
        self.last_sent = now

    def lag(self, seconds: float) -> None:
        self.lag_max = max(self.lag_max, seconds)
        self.lag_sum += max(seconds, 0.0)
        self.late += seconds > LATE_S

    def take_kept(self) -> list[dict[str, Any]]:
        """Up to BATCH failures and warnings as message data, removed from here."""
        batch, self.kept = self.kept[:BATCH], self.kept[BATCH:]
        return [_finding_data(f) for f in batch]

    def figures(self) -> dict[str, Any]:
        """Everything but the kept findings, as message data."""
        return {"tally": [[*key[:3], key[3].value, n] for key, n in self.tally.items()],
                "sent": self.sent, "not_selected": self.not_selected,
                "judged": self.judged, "failing": self.failing,
                "lag_max": self.lag_max, "lag_sum": self.lag_sum, "late": self.late,
                "first_sent": self.first_sent, "last_sent": self.last_sent,
                "cpu_s": self.cpu_s}


class Merged:
    """The master's side: findings and figures of every worker, into one Report."""

    def __init__(self, target: str, **meta: Any) -> None:
        self.report = Report("load", target, titles() | REPLAY_RULES | RULE_TITLES, **meta)
        self.figures = Gathered()
        self.slices: list[int] = []  # requests sent by each worker
        self.cpu: list[float] = []  # CPU seconds of each worker

    def add_kept(self, batch: Sequence[dict[str, Any]]) -> None:
        for data in batch:
            self.report.add(Finding(**{**data, "verdict": Verdict(data["verdict"])}))

    def add_figures(self, data: dict[str, Any]) -> None:
        f = self.figures
        self.report.add_counts({(r, o, b, Verdict(v)): n for r, o, b, v, n in data["tally"]})
        f.sent += data["sent"]
        f.not_selected += data.get("not_selected", 0)
        f.judged += data["judged"]
        f.failing += data["failing"]
        f.lag_max = max(f.lag_max, data["lag_max"])
        f.lag_sum += data["lag_sum"]
        f.late += data["late"]
        self.slices.append(data["sent"])
        self.cpu.append(round(data["cpu_s"], 3))
        if data["first_sent"] is not None:
            f.first_sent = min(f.first_sent or data["first_sent"], data["first_sent"])
            f.last_sent = max(f.last_sent or data["last_sent"], data["last_sent"])

    def finish(self) -> Report:
        f = self.figures
        self.report.exchanges = f.sent
        if f.not_selected:
            self.report.not_sent["not_selected"] = f.not_selected
        if self.report.descriptions:  # counted as each came due (each loop): not sent
            self.report.not_sent["service_descriptions"] = sum(
                self.report.descriptions.values())
        self.report.meta.update(
            sent=f.sent, judged=f.judged, failing_exchanges=f.failing,
            lag_max_s=round(f.lag_max, 3),
            lag_mean_s=round(f.lag_sum / f.sent, 4) if f.sent else 0.0, late=f.late,
            sent_span_s=round(f.last_sent - f.first_sent, 3) if f.first_sent else 0.0,
            sent_by_worker=self.slices, worker_cpu_s=self.cpu)
        return self.report.finish()


def _finding_data(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "verdict": f.verdict.value, "operation": f.operation,
            "binding": f.binding, "expected": f.expected, "actual": f.actual,
            "message": f.message, "index": f.index, "source": f.source, "client": f.client,
            "extra": f.extra, "cause": f.cause, "endpoint": f.endpoint}
