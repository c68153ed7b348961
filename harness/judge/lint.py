"""Lint: judge recorded traffic against the rules catalogue without sending anything.

Each request is judged against the request-side rules (this certifies a client such as the
mobile app: SOAPAction, Content-Type, Content-Length and Host, envelope, operation element,
parameter names and order, endpoint, integers) and each recorded response against the
response-side rules. A finding names the exchange's position (index, source) and the client
(User-Agent), so a QA lead can tell which app build misbehaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.contract.model import Contract
from harness.judge.findings import Finding, Report
from harness.judge.profiles import Profile
from harness.judge.rules import SPEC, BulkTally, Side, judge_each, titles
from harness.judge.streaming import ChunkResult, Tally, default_workers, run
from harness.traffic.exchange import Exchange

#: Exchanges per chunk handed to a worker: big enough to amortise the hand-over.
CHUNK_SIZE = 2000


@dataclass(frozen=True)
class LintJob:
    """Judges both sides of each recorded exchange; sends nothing."""

    contract: Contract
    sides: tuple[Side, ...] = (Side.REQUEST, Side.RESPONSE)
    profile: Profile = SPEC
    #: Its workers are forked from the command (``streaming.Job``): it holds only the contract
    #: and the rules, which the command has imported already.
    start_method = "fork"

    def setup(self) -> None:
        pass

    def judge_all(self, exchanges: Sequence[Exchange], tally: Tally) -> list[list[Finding]]:
        bulk = BulkTally()  # counted per operation x binding where it can, then spread
        judged = judge_each(exchanges, self.contract, sides=frozenset(self.sides), tally=bulk,
                            profile=self.profile)
        tally.update(bulk.settle())
        return judged

    def close(self) -> None:
        pass


def lint(paths: Sequence[str | Path], contract: Contract, *, workers: int | None = None,
         chunk_size: int = CHUNK_SIZE, on_broken: Callable[[str], None] = lambda reason: None,
         on_progress: Callable[[ChunkResult], None] = lambda result: None,
         profile: Profile = SPEC, baseline: str | Path | None = None) -> Report:
    """Judge every exchange of every recording (native or HAR) into a finished Report.

    Broken lines are skipped, passed to ``on_broken`` and counted in the report's
    ``broken_lines``; an unclassifiable exchange is a finding (UNCLASSIFIED), not dropped.
    """
    report = Report("lint", None, titles(), profile=profile,
                    recordings=[str(p) for p in paths])
    if baseline is not None:  # read before judging: a bad baseline fails at once
        report.use_baseline(baseline)
    workers = default_workers(paths) if workers is None else workers
    job = LintJob(contract, profile=profile)
    report.meta["broken_lines"] = run(job, paths, report, workers=workers,
                                      chunk_size=chunk_size, on_broken=on_broken,
                                      on_progress=on_progress)
    return report.finish()
