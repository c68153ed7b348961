"""The shadow worker: the child process the proxy hands every finished exchange to (in place of
capture's recording writer, over the same pipes), which mirrors, compares, records and reports.

Threads, one lock (``Shadow.lock``) over the shared state (the diff's counts, the tally, the
recording):

- the main thread reads the pipe, classifies each exchange (capture's ``Transcriber``) and
  queues it for the mirror, or records it at once when it is not mirrored (by choice, nothing
  to compare, or the queue full: counted and named, never dropped unsaid);
- ``jobs`` mirror threads send each queued call to the candidate (and secondary) and compare
  the answers with diff's engine (``Diff.answer``: outside the lock), then, under the lock,
  hand it to the judgement (``Diff.take``), the live tally, and write its recording line with
  both answers;
- the progress line and the live view (``live.py``) read the tally.

When the proxy stops, its pipe ends: the calls still queued are not mirrored, the calls in
flight get up to ``stop_grace`` seconds, then the report is written (console on stdout, JSON,
JUnit, Allure) and the worker exits 0 (no difference), 1 (differences) or 2 (nothing was
compared). Anything that goes wrong is said on the status pipe (exit 3): the proxy says it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import marshal
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from harness.capture.writer import (
    Console,
    Taken,
    Transcriber,
    acknowledge,
    exchange_from,
    frames,
    summary,
)
from harness.contract.selection import Selection
from harness.diff import Diff, Targets, print_places, write_allure
from harness.diff.cases import Case, case_of
from harness.diff.engine import CANDIDATE, PRIMARY, SECONDARY, Answered
from harness.errors import ResponseTooLarge, RunStopped, TargetUnreachable
from harness.judge.findings import Finding, Verdict, selection_scope
from harness.judge.sending import transport_finding
from harness.progress import Progress
from harness.reports.console import print_report
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit
from harness.shadow.choice import SKIPPED, Choice
from harness.shadow.setup import HURRY, MirrorOptions, ShadowSetup
from harness.shadow.tally import Tally
from harness.traffic.exchange import HttpResponse, response_dict
from harness.traffic.redaction import take_given_secrets
from harness.traffic.send import as_received

#: The rule of a call through the shadow that was not compared with the candidate's answer
#: for a reason of the shadow's own (its queue full, stopped): a warning, counted and named.
COMPARED_RULE = "SHADOW-COMPARED"
COMPARED_TITLE = ("every call through the shadow is mirrored and compared (a warning when the "
                  "queue was full or shadow stopped first)")
#: The worker's niceness: on a machine short of CPU the proxy, which the clients wait on,
#: gets it first; the mirror (and the recording lines, written after it) wait instead.
NICE = 10
#: The bytes the calls waiting for the mirror may hold in all (bodies up to --max-body-mb
#: each): past it the queue is full whatever its count.
QUEUE_BYTES = 256 << 20
#: Exit statuses: no difference, differences, nothing compared, the worker failed.
PASSED, DIFFERING, NOTHING, FAILED = 0, 1, 2, 3


@dataclass(eq=False)
class Item:
    """One call waiting for the mirror, or in flight."""

    taken: Taken  # classified, not yet recorded
    case: Case
    primary: HttpResponse  # as the client got it, decoded as the sending path decodes

    @property
    def size(self) -> int:
        """The bytes it holds (its request's body and the primary's answer's)."""
        return len(self.case.request.body) + len(self.primary.body)


class Shadow:
    def __init__(self, setup: ShadowSetup, out: IO[str]) -> None:
        options = self.options = setup.mirror
        self.out = out
        self.path = setup.writer.path
        self.contract = setup.writer.contract
        self.offset = _exchanges_in(self.path)  # an appended recording: its lines come first
        self.transcriber = Transcriber(setup.writer, Counting(io.StringIO()))
        # one face for every secret: the run's -H values and passwords (given in the proxy's
        # process) and what the calls carry, by their pseudonyms under the recording's key
        take_given_secrets(options.given)
        self.choice = Choice(self.contract, options.mirror_operations, options.skip_operations)
        self.diff = Diff(self.contract, Targets(options.primary, options.candidate,
                                                options.secondary),
                         ignore=options.ignore, ignore_values=options.ignore_values,
                         jobs=options.jobs, options=options.send,
                         role_options=options.role_send, profile=options.profile,
                         command="shadow", key=setup.writer.key)
        self.diff.report.titles[COMPARED_RULE] = COMPARED_TITLE
        self.diff.report.scope = _scope(self.contract, options)
        # a dead candidate must not stop the shadow (the Sender stops a run after a few
        # requests in a row without an answer): every call is counted instead
        self._senders = contextlib.ExitStack()
        self.sender = self.diff.senders(self._senders, max_failures=sys.maxsize)
        self.lock = threading.Condition()
        self.waiting: deque[Item] = deque()
        self.waiting_bytes = 0  # held by the calls waiting (QUEUE_BYTES at most)
        self.in_flight: set[Item] = set()
        self.stopping = False
        #: Once stopping: no call starts after this (monotonic seconds), and, set by a second
        #: Ctrl-C (the proxy's SIGUSR1), none is waited for any more.
        self.drain_until = float("inf")
        self.hurry = False
        self.tally = Tally(self.diff.roles)
        self.progress = Progress("shadow", unit="calls mirrored", failing="differing",
                                 detail=self._line, quiet=options.quiet)
        self.live = None
        if options.live_port is not None:
            from harness.shadow.live import LiveView

            self.live = LiveView(options.live_port, options.live_token, self.snapshot)
            print(f"harness shadow: live view on {self.live.url}", file=sys.stderr, flush=True)
        for number in range(options.jobs):
            threading.Thread(target=self._mirror, name=f"mirror-{number}", daemon=True).start()

    def _line(self) -> str:
        """The progress line's words after its counts: the causes so far, then the calls
        waiting for the mirror (a candidate falling behind shows before its calls time out).
        Read without the lock: a string and an int."""
        waiting = self.tally.waiting
        return "; ".join(filter(None, (self.tally.line,
                                       f"{waiting} waiting" if waiting else "")))

    # -- the main thread: taking each exchange ------------------------------------------------

    def take_safely(self, snapshot: Any) -> None:
        """``take``, but an exchange the harness cannot represent is said on stderr and
        skipped, as capture's writer does: hostile traffic must not stop the shadow."""
        try:
            self.take(snapshot)
        except OSError:
            raise  # the recording itself cannot be written: stop visibly
        except Exception as exc:
            print(f"harness shadow: exchange {snapshot[0]} {snapshot[1]!r} not recorded: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)

    def take(self, snapshot: Any) -> None:
        with self.lock:
            taken = self.transcriber.take(exchange_from(snapshot))
            if taken is None:
                return  # foreign traffic, left out as capture leaves it out
            self.tally.seen += 1
            why = self.choice.why_not(taken.exchange, snapshot[1])
            if why is not None:
                kind, reason = why
                if kind == SKIPPED:
                    self.tally.skip(reason)
                else:
                    self.tally.not_compared(reason)
                self._write(taken, {"mirrored": False, "reason": reason})
                return
            request = taken.exchange.request
            case = case_of(self.contract, request, 0, self.path)
            try:
                primary = as_received(taken.exchange.response, request,  # type: ignore[arg-type]
                                      self.options.send.max_response_bytes)
            except ResponseTooLarge:
                reason = "the primary's answer is over --max-response-mb"
                self.tally.not_compared(reason)
                self._write(taken, {"mirrored": False, "reason": reason})
                return
            item = Item(taken, case, primary)
            if len(self.waiting) >= self.options.queue or (
                    self.waiting and self.waiting_bytes + item.size > QUEUE_BYTES):
                self._not_compared(item, queue_full(self.options.queue))
                return
            self.waiting.append(item)
            self.waiting_bytes += item.size
            self.tally.waiting = len(self.waiting)
            self.lock.notify()

    # -- the mirror threads ------------------------------------------------------------------

    def _mirror(self) -> None:
        while True:
            with self.lock:
                while not (self.waiting and not self._late()):
                    if self.stopping:
                        return  # nothing left, or too late to start another
                    self.lock.wait()
                item = self.waiting.popleft()
                self.waiting_bytes -= item.size
                self.in_flight.add(item)
                self.tally.waiting, self.tally.in_flight = len(self.waiting), len(self.in_flight)
                self.tally.mirrored += 1
            answered = self._answer(item)
            with self.lock:
                if item in self.in_flight:  # else given up on when shadow stopped
                    self.in_flight.discard(item)
                    self.tally.in_flight = len(self.in_flight)
                    lines = self.transcriber.writer.count
                    try:
                        self._judged(item, answered)
                    except Exception as exc:  # one call: said, recorded, the mirror goes on
                        self._unjudged(item, exc, self.transcriber.writer.count > lines)
                    self.lock.notify_all()

    def _answer(self, item: Item) -> Answered:
        """The candidate's (and secondary's) answers to ``item``, compared with the
        primary's; a call that cannot be compared at all (TLS refused, a bug in comparing one
        pair) is an unanswered one, with the reason: the mirror goes on."""
        try:
            return self.diff.answer(self.sender, item.case, {PRIMARY: item.primary})
        except RunStopped as exc:
            reason = TargetUnreachable(str(exc))
        except Exception as exc:  # one pair the comparison cannot take must not stop it
            reason = TargetUnreachable(f"not compared: {type(exc).__name__}: {exc}")
        case = item.case
        finding = transport_finding(reason, case.operation_name, case.binding_label,
                                    extra={"implementation": CANDIDATE}, index=case.index,
                                    source=case.source)
        return Answered(case, {PRIMARY: case.request}, {PRIMARY: item.primary}, [], [],
                        [finding])

    # -- under the lock: judging and recording -----------------------------------------------

    def _judged(self, item: Item, answered: Answered) -> None:
        index = self._next_index()
        case = answered.case = replace(item.case, index=index)
        answered.unanswered = [replace(f, index=index) for f in answered.unanswered]
        record = self.diff.take(answered)

        def example() -> dict[str, Any]:
            return {"index": index, "operation": case.operation_name,
                    "binding": case.binding_label,
                    **{role: self.diff.reported(answered, role)
                       for role in (PRIMARY, CANDIDATE) if role in answered.responses}}

        if record is None:  # no answer: the findings say why
            findings = answered.unanswered
            self.tally.not_compared(findings[0].cause or "no answer", findings, example)
            differs = False  # not compared: counted so, as the live view and report count it
        else:
            findings = self.diff.case_findings(record, self.diff.noise.known)[0]
            differs = self.tally.compared_call(findings + answered.passive, example)
        self.tally.noise_places = len(self.diff.noise.seen)
        self._write(item.taken, self._mirrored(answered, findings))
        self.progress.update(1, failing=int(differs))

    def _unjudged(self, item: Item, exc: Exception, recorded: bool) -> None:
        why = f"not compared: {type(exc).__name__}: {exc}"
        print(f"harness shadow: {item.case.request.method} {item.case.request.url}: {why}",
              file=sys.stderr, flush=True)
        if recorded:
            return
        with contextlib.suppress(Exception):  # a recording that cannot be written: the main
            self.tally.not_compared(why)      # thread stops on it at its next line
            self._write(item.taken, {"mirrored": True, "reason": why})

    def _not_compared(self, item: Item, why: str, mirrored: bool = False) -> None:
        """A call the shadow did not compare for a reason of its own: a warning, named."""
        finding = not_compared(item.case, why, self._next_index(), self.path)
        self.diff.report.add(finding)
        self.tally.not_compared(why, [finding])
        self._write(item.taken, {"mirrored": mirrored, "reason": why})

    def _next_index(self) -> int:
        """The index the next line written has in the recording (as readers count)."""
        return self.offset + self.transcriber.writer.count + 1

    def _mirrored(self, answered: Answered, findings: list[Finding]) -> dict[str, Any]:
        """``meta.shadow`` of a mirrored call: the other implementations' answers (redacted as
        the primary's is), how long they took and the differences found so far."""
        errors = {f.extra.get("implementation", CANDIDATE): f.actual
                  for f in answered.unanswered}
        operation = answered.case.operation.name if answered.case.operation else None
        data: dict[str, Any] = {"mirrored": True, "seconds": round(answered.seconds, 6)}
        notes: list[str] = []
        for role in (CANDIDATE, SECONDARY):
            if role in answered.responses:
                data[role] = {"response": response_dict(
                    self._redacted(answered.responses[role], operation, notes))}
            elif role in errors:
                data[role] = {"error": errors[role]}
        if notes:
            data["redaction_dropped"] = notes
        data["differences"] = [
            {"rule": f.rule, "verdict": f.verdict.value, "cause": f.cause,
             "path": f.extra.get("path", "")}
            for f in findings if f.verdict in (Verdict.FAILED, Verdict.WARNING)]
        return data

    def _redacted(self, response: HttpResponse, operation: str | None,
                  notes: list[str]) -> HttpResponse:
        redactor = self.transcriber.redactor
        if redactor is None:
            return response
        try:
            # then every secret of the run wherever it shows (an answer that echoes a -H
            # value or the request's personal values), by the recording's pseudonyms
            return self.diff.redaction.message(
                redactor.response(response, notes=notes, operation=operation), operation)
        except Exception as exc:  # never write what could not be redacted
            notes.append(f"redaction failed: {type(exc).__name__}")
            return HttpResponse(response.status, (), b"", response.reason,
                                response.http_version)

    def _write(self, taken: Taken, shadow: dict[str, Any]) -> None:
        taken.exchange.meta["shadow"] = shadow
        self.transcriber.write(taken, flush=True)

    def _late(self) -> bool:
        """Too late to start mirroring another call (shadow stopped a while ago)."""
        return self.stopping and (self.hurry or time.monotonic() > self.drain_until)

    def snapshot(self) -> dict[str, Any]:
        """The tally as JSON data (the live view's), taken under the lock."""
        with self.lock:
            return self.tally.snapshot()

    # -- the end -----------------------------------------------------------------------------

    def close(self) -> int:
        """Stop: the calls still queued are mirrored for ``stop_grace`` seconds more, the
        calls in flight get their own --timeout (a dead candidate's are thus failures, as in
        diff), unless a second Ctrl-C hurries (``hurry``); what is left is counted as not
        compared. Then judge with the whole run's noise, write every report; the exit
        status."""
        options = self.options
        with self.lock:
            self.stopping = True
            self.drain_until = time.monotonic() + options.stop_grace
            self.lock.notify_all()
            if self.waiting or self.in_flight:
                print(f"harness shadow: stopping: mirroring the {len(self.waiting)} call(s) "
                      f"still queued (for at most {options.stop_grace:g} s) and waiting for "
                      f"the {len(self.in_flight)} in flight (at most --timeout "
                      f"{options.send.timeout:g} s); again to stop at once",
                      file=sys.stderr, flush=True)
            while not self.hurry and (self.in_flight or (self.waiting and not self._late())):
                self.lock.wait(0.2)  # short: a second Ctrl-C only sets ``hurry``
            for item in list(self.waiting):
                self._not_compared(item, "not mirrored: shadow stopped before the call's turn")
            self.waiting.clear()
            for item in list(self.in_flight):
                self.in_flight.discard(item)
                self._not_compared(item, "not compared: shadow stopped before the "
                                         "candidate answered", mirrored=True)
            result = self.diff.finish()
            self.tally.waiting = self.tally.in_flight = 0
        self.progress.close()
        if self.live is not None:
            self.live.close()
        self.diff.report.meta["shadow"] = self._counts()
        self._report(result)
        self.transcriber.close()
        self._senders.close()
        return self._status()

    def _counts(self) -> dict[str, Any]:
        tally = self.tally
        return {"recording": self.path, "seen": tally.seen, "mirrored": tally.mirrored,
                "compared": tally.compared, "differing": tally.differing,
                "not_mirrored_by_choice": dict(tally.skipped.most_common()),
                "not_compared": dict(tally.uncompared.most_common())}

    def _report(self, result) -> None:
        out, report, options = self.out, result.report, self.options
        print_places(result, out)
        print_counts(self._counts(), out)
        print_report(report, out)
        for line in report.meta.get("wrong_target", []):
            print(f"shadow: {line}", file=out)
        written = self.transcriber.writer.count
        print(f"\nshadow: recorded {written} exchange(s) to {self.path} with the primary's and "
              f"the candidate's answers" + (" (redacted)" if self.transcriber.redactor else
                                            " (NOT redacted)"), file=out)
        print(summary(self.transcriber.console.counts), file=out, flush=True)
        if options.json:
            write_json(report, options.json)
        if options.junit:
            write_junit(report, options.junit)
        if options.allure_dir:
            write_allure(result, options.allure_dir)

    def _status(self) -> int:
        report = self.diff.report
        if not report.passed:
            return DIFFERING
        if self.tally.compared == 0:
            print(f"harness shadow: no call was compared ({_said(self._counts())})",
                  file=sys.stderr, flush=True)
            return NOTHING
        return PASSED


def not_compared(case: Case, why: str, index: int, source: str) -> Finding:
    """SHADOW-COMPARED's finding: a call through the shadow not compared for a reason of the
    shadow's own (``why``), a warning."""
    return Finding(COMPARED_RULE, Verdict.WARNING, case.operation_name, case.binding_label,
                   expected="mirrored and compared", actual=why, cause=why, index=index,
                   source=source)


def queue_full(size: int) -> str:
    return (f"not mirrored: the mirror queue was full ({size} calls or "
            f"{QUEUE_BYTES >> 20} MB waiting)")


class Counting(Console):
    """Capture's console counts (its summary at the end), without a line per exchange: the
    progress line and the live view say what goes on."""

    def recorded(self, index: int, line: str, counted: list[str]) -> None:
        for key in counted:
            self.counts[key] += 1


def print_counts(counts: dict[str, Any], out: IO[str]) -> None:
    """The MIRROR section: what went through, what was mirrored and compared, what was not
    and why (one line each)."""
    print(f"MIRROR: {_said(counts)}", file=out)
    for why, n in counts["not_mirrored_by_choice"].items():
        print(f"  not mirrored by choice: {why}: {n}", file=out)
    for why, n in counts["not_compared"].items():
        print(f"  not compared: {why}: {n}", file=out)
    print(file=out)


def _said(counts: dict[str, Any]) -> str:
    skipped = sum(counts["not_mirrored_by_choice"].values())
    uncompared = sum(counts["not_compared"].values())
    return (f"{counts['seen']} call(s) through the proxy: {counts['mirrored']} mirrored, "
            f"{counts['compared']} compared ({counts['differing']} differing), {skipped} not "
            f"mirrored by choice, {uncompared} not compared")


def _scope(contract, options: MirrorOptions):
    """What the run judged when operations are left off the mirror (the verdict line says
    "for ...; AuthCode not judged")."""
    names = [op.name for op in contract.operations
             if op.name not in options.skip_operations
             and (not options.mirror_operations or op.name in options.mirror_operations)]
    if len(names) == len(contract.operations):
        return None
    return selection_scope(contract, Selection(frozenset(names)))


def _exchanges_in(path: str) -> int:
    """Exchange lines already in the recording (an append: the new ones are numbered after
    them, as readers number them)."""
    count = 0
    with contextlib.suppress(OSError), Path(path).open("rb") as f:
        for line in itertools.islice(f, 1, None):
            count += bool(line.strip())
    return count


def main() -> None:
    """Entry point of the worker process (``WriterProcess(..., entry=__name__)``)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # the proxy decides; it ends our input
    with contextlib.suppress(OSError):
        os.nice(NICE)  # where CPU is short, the proxy (the clients) comes first
    status = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")
    acks = int(sys.argv[2])
    batches = frames(sys.stdin.buffer.fileno())
    first = next(batches, [b""])
    setup: ShadowSetup = pickle.loads(first[0])
    code = FAILED
    try:
        shadow = Shadow(setup, sys.stdout)

        def hurry(signum: int, frame: Any) -> None:
            shadow.hurry = True

        signal.signal(HURRY, hurry)
        done = 0
        try:
            for batch in itertools.chain([first[1:]], batches):
                for frame in batch:
                    shadow.take_safely(marshal.loads(frame))
                if batch:
                    done += len(batch)
                    acks = acknowledge(acks, done)
        finally:
            code = shadow.close()
    except OSError as exc:
        print(f"cannot write recording {setup.writer.path}: {exc.strerror or exc}",
              file=status, flush=True)
        code = FAILED
    except Exception as exc:
        print(f"the shadow worker failed: {type(exc).__name__}: {exc}", file=status, flush=True)
        code = FAILED
    sys.exit(code)
