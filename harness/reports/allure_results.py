"""Allure result files (the ``allure-results`` folder) written by harness commands.

One ``AllureResults`` per run; ``add`` writes one test result with its labels and attachments,
so ``harness report`` (Allure 3) renders diff, replay or lint results next to certify's.
Files follow the Allure result schema through allure_commons' own model and file logger.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import html
import json
import os
import queue
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from allure_commons import hookimpl
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import (
    ATTACHMENT_PATTERN,
    Attachment,
    Label,
    Parameter,
    StatusDetails,
    TestResult,
)
from attr import asdict  # allure_commons' models are attrs classes (its logger's way)

from harness import __version__
from harness.errors import UsageError
from harness.http_messages import HttpRequest, HttpResponse
from harness.reports import ALLURE_RESULTS
from harness.reports.allure_report import WARNING_TAG
from harness.reports.console import interruption
from harness.traffic.report_text import http_text

if TYPE_CHECKING:
    from harness.judge.findings import Report

#: Allure statuses a harness verdict maps to. A warning passes: a permitted deviation is no
#: failure, and Allure 3's overview counts every failed result under Failed, in red (an
#: "accepted" one too). Its warnings are said in a colour that is not failure's: the tag
#: WARNING_TAG (the tree's Tags filter and the Warnings category reach it in one click) and the
#: description at the top of the test (rule, cause, expected, actual, where).
STATUSES = {"passed": "passed", "failed": "failed", "warning": "passed",
            "not applicable": "skipped"}
#: Labels allure-pytest adds that say nothing of the service (the machine, the thread, the
#: test framework): left out by ``tidy``.
_NOISE_LABELS = frozenset({"host", "thread", "framework", "language", "package"})


@dataclass(frozen=True)
class Attach:
    """Something to attach: a name, its content and MIME type."""

    name: str
    body: bytes | str
    mime: str = "text/plain"
    extension: str = "txt"


class AllureResults:
    """Writes Allure test results into ``directory`` (created; existing results are kept)."""

    def __init__(self, directory: str | Path = ALLURE_RESULTS, *, suite: str = "harness") -> None:
        try:
            self._logger = AllureFileLogger(str(directory), clean=False)
        except OSError as exc:
            raise UsageError(f"cannot write Allure results to {directory}: "
                             f"{exc.strerror or exc}") from None
        self.directory = Path(directory)
        self.suite = suite
        self.written = 0

    def add(self, name: str, verdict: str, *, full_name: str | None = None,
            labels: Mapping[str, str | Iterable[str]] | None = None,
            message: str | None = None, details: str | None = None,
            parameters: Mapping[str, str] | None = None,
            attachments: Iterable[Attach] = (), start: float | None = None,
            stop: float | None = None) -> None:
        """One test result. ``verdict`` is a harness verdict (passed, failed, warning, not
        applicable) or an Allure status; ``labels`` values may be lists (e.g. several tags).
        A warning passes, tagged WARNING_TAG, its message and details its description."""
        full_name = full_name or f"{self.suite}.{name}"
        if verdict == "warning":
            labels = {**(labels or {}), "tag": [*_values((labels or {}).get("tag", ())),
                                                WARNING_TAG]}
        now = int(time.time() * 1000)
        result = TestResult(
            uuid=str(uuid.uuid4()), name=name, fullName=full_name,
            historyId=_digest(full_name), testCaseId=_digest(full_name),
            status=STATUSES.get(verdict, verdict), stage="finished",
            start=int(start * 1000) if start else now, stop=int(stop * 1000) if stop else now,
            labels=[Label(name="suite", value=self.suite), *_labels(labels or {})],
            parameters=[Parameter(name=k, value=v) for k, v in (parameters or {}).items()],
            attachments=[self._attach(a) for a in attachments])
        if verdict == "warning":
            result.descriptionHtml = warnings_html(
                [message or "a permitted deviation"], details=details)
        elif message or details:
            result.statusDetails = StatusDetails(message=message, trace=details)
        self._logger.report_result(result)
        self.written += 1

    def _attach(self, attach: Attach) -> Attachment:
        source = ATTACHMENT_PATTERN.format(prefix=uuid.uuid4(), ext=attach.extension)
        self._logger.report_attached_data(attach.body, source)
        return Attachment(name=attach.name, source=source, type=attach.mime)


def _labels(labels: Mapping[str, str | Iterable[str]]) -> list[Label]:
    return [Label(name=name, value=v) for name, value in labels.items() for v in _values(value)]


def _values(value: str | Iterable[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def warnings_html(warnings: Iterable[str], *, details: str | None = None,
                  description: str | None = None) -> str:
    """A test's description saying its warnings (each a line: rule, cause, expected, actual,
    where) above ``description`` (the feature's own words): text, escaped, in the report's
    own colours, never failure's."""
    items = "".join(f"<li><code>{html.escape(w)}</code></li>" for w in warnings)
    out = (f"<p><b>Warnings</b>: permitted deviations; the test passes.</p><ul>{items}</ul>")
    if details:
        out += f"<pre>{html.escape(details)}</pre>"
    if description:
        out += "<p>" + html.escape(description).replace("\n", "<br>") + "</p>"
    return out


def _digest(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def exchange_attachments(label: str, request: HttpRequest,
                         response: HttpResponse | None) -> list[Attach]:
    """``<label> request`` and ``<label> response`` attachments of one exchange."""
    out = [Attach(f"{label} request", http_text(request))]
    if response is not None:
        out.append(Attach(f"{label} response", http_text(response)))
    return out


def tidy(directory: str | Path, *, warning_label: str = "harness.warning") -> int:
    """Allure results written by allure-pytest (certify's run) made to read as the service's
    (``tidied``); the fixtures' containers go. Returns results tidied."""
    directory = Path(directory)
    done = 0
    for path in directory.glob("*-container.json"):  # fixtures: pytest's plumbing
        with contextlib.suppress(OSError):
            path.unlink()
    for path in directory.glob("*-result.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        path.write_text(json.dumps(tidied(data, warning_label), ensure_ascii=False),
                        encoding="utf-8")
        done += 1
    return done


def tidied(data: dict[str, Any], warning_label: str) -> dict[str, Any]:
    """A result of allure-pytest's (its JSON) as the service's: pytest-bdd's
    ``_pytest_bdd_example`` parameter becomes the example's own columns, the machine and
    framework labels go, and a scenario marked with ``warning_label`` keeps its status (a
    passed one passes) and gets the tag WARNING_TAG and its warnings at the top of its
    description."""
    data["parameters"] = _parameters(data.get("parameters", []))
    labels = data.get("labels", [])
    warnings = [label["value"] for label in labels if label.get("name") == warning_label]
    data["labels"] = [label for label in labels if label.get("name") not in _NOISE_LABELS
                      and label.get("name") != warning_label]
    if warnings:
        data["labels"].append({"name": "tag", "value": WARNING_TAG})
        data["descriptionHtml"] = warnings_html(
            warnings, description=data.pop("description", None))
    return data


#: Attachments whose text a run's redaction reads (the others are binary).
_TEXT_ATTACHMENTS = (".txt", ".xml", ".json", ".html", ".csv", ".log")


def redact_results(directory: str | Path, text: Callable[[str], str]) -> int:
    """Every result, container and text attachment in ``directory`` with its words through
    ``text`` (the run's ``ReportRedaction.text``): what allure-pytest wrote of a step's
    exception shows a secret by the same pseudonym as the attachments and every other output.
    Returns the files changed."""
    changed = 0
    for path in Path(directory).iterdir():
        name = path.name
        try:
            if name.endswith(("-result.json", "-container.json")):
                raw = path.read_text(encoding="utf-8")
                done = json.dumps(_mapped(json.loads(raw), text), ensure_ascii=False)
                if done != raw:
                    path.write_text(done, encoding="utf-8")
                    changed += 1
            elif _is_text_attachment(name):
                changed += _redact_attachment(path, path.read_bytes(), text)
        except (OSError, ValueError):
            continue
    return changed


def _is_text_attachment(name: str) -> bool:
    return "-attachment" in name and Path(name).suffix in _TEXT_ATTACHMENTS


def _redact_attachment(path: Path, body: bytes, text: Callable[[str], str]) -> bool:
    """The attachment ``path`` (its content ``body``) with its words through ``text``,
    rewritten only if that changes it; whether it did."""
    raw = body.decode("utf-8", "surrogateescape")
    done = text(raw)
    if done != raw:
        path.write_bytes(done.encode("utf-8", "surrogateescape"))
    return done != raw


#: The name a previous run's results folder takes beside the new one (hidden), until deleted.
_SET_ASIDE = ".{name}-previous-"


def set_aside(directory: str | Path) -> Path | None:
    """Move a previous run's results folder out of the way, to a hidden folder beside it (a
    rename), for ``discard_set_aside`` to delete once the new results are written: None when
    there is none (or it is not a plain folder, which the caller cleans as before).

    Deleting the old files first and then creating as many new ones is slow on a file system
    that places each new file past the inodes freed in the last half minute (ext4 without a
    journal): up to a second for certify's 1,930 files. Set aside, they are deleted after."""
    directory = Path(directory)
    if directory.is_symlink() or not directory.is_dir():
        return None
    try:
        aside = Path(tempfile.mkdtemp(prefix=_SET_ASIDE.format(name=directory.name),
                                      dir=directory.parent))
        os.replace(directory, aside)  # onto the empty folder just made: the name is ours
    except OSError:
        return None
    return aside


def discard_set_aside(directory: str | Path) -> None:
    """Delete what ``set_aside`` moved beside ``directory``: this run's and any a stopped run
    left."""
    directory = Path(directory)
    prefix = _SET_ASIDE.format(name=directory.name)
    with contextlib.suppress(OSError):
        for aside in directory.parent.iterdir():
            if aside.name.startswith(prefix):
                shutil.rmtree(aside, ignore_errors=True)


#: Bytes of attachments ``HeldResults`` keeps to redact at the end (the rest is read back).
HOLD_BYTES = 64 * 1024 * 1024


class HeldResults:
    """allure_commons' file logger for a run whose results are finished when it ends
    (certify's: ``tidied``, then through the run's redaction, which learns secrets as the run
    goes): the files AllureFileLogger, ``tidy`` and ``redact_results`` leave, each written
    once. Results are held and ``write`` writes them finished (the fixtures' containers, which
    tidy deletes, not at all). Attachments are written by a thread of their own, handed
    over a test at a time (creating some 1,800 files is mostly the kernel's work, done beside
    the run rather than after it), and kept, up to ``hold_bytes``, so that at the end only
    those the run's final redaction changes are written again (past ``hold_bytes`` they are
    read back)."""

    def __init__(self, directory: str | Path, hold_bytes: int = HOLD_BYTES) -> None:
        self.directory = Path(directory).absolute()
        self.hold_bytes = hold_bytes
        self._results: list[tuple[str, dict[str, Any]]] = []
        self._attachments: dict[str, bytes] = {}  # kept to redact: name -> as written
        self._held = 0
        self._unheld: list[str] = []  # written, not kept: read back at the end
        # Attachments go to the writer a test at a time (one wake-up each, not one a file).
        self._queue: queue.SimpleQueue[list[tuple[str, bytes]] | None] = queue.SimpleQueue()
        self._batch: list[tuple[str, bytes]] = []
        self._writer: threading.Thread | None = None
        self._failed: OSError | None = None

    @hookimpl
    def report_result(self, result: TestResult) -> None:
        # As AllureFileLogger names and serialises it.
        self._results.append((result.file_pattern.format(prefix=uuid.uuid4()),
                              asdict(result, filter=lambda _, v: v or v is False)))
        self._hand_over()

    @hookimpl
    def report_container(self, container: Any) -> None:
        """pytest's fixtures: plumbing, which ``tidy`` drops."""

    @hookimpl
    def report_attached_data(self, body: bytes | str, file_name: str) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        if self._held + len(data) <= self.hold_bytes:
            self._attachments[file_name] = data
            self._held += len(data)
        else:
            self._unheld.append(file_name)
        self._batch.append((file_name, data))

    def _hand_over(self) -> None:
        """The attachments since the last hand-over, to the writer thread."""
        if not self._batch:
            return
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_attachments,
                                            name="allure-attachments", daemon=True)
            self._writer.start()
        self._queue.put(self._batch)
        self._batch = []

    @hookimpl
    def report_attached_file(self, source: str, file_name: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, self.directory / file_name)
        self._unheld.append(file_name)

    def _write_attachments(self) -> None:
        made = False
        while (batch := self._queue.get()) is not None:
            if self._failed is not None:
                continue
            try:
                if not made:
                    self.directory.mkdir(parents=True, exist_ok=True)
                    made = True
                folder = f"{self.directory}{os.sep}"
                for name, data in batch:  # plain os calls: little for the interpreter to do
                    fd = os.open(folder + name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
                    try:
                        view = memoryview(data)
                        while view:
                            view = view[os.write(fd, view):]
                    finally:
                        os.close(fd)
            except OSError as exc:
                self._failed = exc

    def write(self, text: Callable[[str], str], *, warning_label: str) -> None:
        """Every result tidied, every result and text attachment through ``text``, into the
        folder; what was held is let go. UsageError when the folder cannot be written."""
        self._hand_over()
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        try:
            if self._failed is not None:
                raise self._failed
            self.directory.mkdir(parents=True, exist_ok=True)
            for name, body in self._attachments.items():
                if _is_text_attachment(name):
                    _redact_attachment(self.directory / name, body, text)
            for name in self._unheld:
                if _is_text_attachment(name):
                    path = self.directory / name
                    _redact_attachment(path, path.read_bytes(), text)
            for name, data in self._results:
                (self.directory / name).write_text(
                    json.dumps(_mapped(tidied(data, warning_label), text), ensure_ascii=False),
                    encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write Allure results to {self.directory}: "
                             f"{exc.strerror or exc}") from None
        finally:
            self._results, self._attachments, self._held, self._unheld = [], {}, 0, []
            self._failed = None


def _mapped(data: Any, text: Callable[[str], str]) -> Any:
    if isinstance(data, str):
        return text(data)
    if isinstance(data, list):
        return [_mapped(v, text) for v in data]
    if isinstance(data, dict):
        return {k: _mapped(v, text) for k, v in data.items()}
    return data


def _parameters(parameters: list[dict]) -> list[dict]:
    """pytest-bdd's example (one parameter holding a dict's repr) as one parameter per
    column of the Examples table."""
    out = []
    for parameter in parameters:
        if parameter.get("name") != "_pytest_bdd_example":
            out.append(parameter)
            continue
        try:
            example = ast.literal_eval(parameter.get("value", "{}"))
        except (ValueError, SyntaxError):
            continue
        if isinstance(example, dict):
            out += [{"name": str(k), "value": str(v)} for k, v in example.items()]
    return out


#: Each command's overview lines in a results folder several commands write into (a nightly
#: job's certify, replay and load on one dashboard), by command.
OVERVIEW_STATE = ".harness-overview.json"


def write_overview(directory: str | Path, report: Report, **facts: str | None) -> None:
    """Allure's ``environment.properties``, which Allure 3 shows on the overview (Metadata):
    what was judged (the target and ``facts``: namespace, primary, candidate...), the verdict
    and the counts in the words every output uses, the warnings and failures with their first
    causes, and what a partial run left out. A folder other commands wrote results into too
    shows each command's lines under its name (``replay.verdict``) and the verdict of all."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write Allure results to {directory}: "
                         f"{exc.strerror or exc}") from None
    runs = _earlier_overviews(directory / OVERVIEW_STATE)
    runs[report.command] = _overview_lines(report, facts)
    _replace(directory / OVERVIEW_STATE, json.dumps(runs))
    if len(runs) == 1:
        lines = runs[report.command]
    else:
        verdicts = {run["verdict"] for run in runs.values()}
        lines = {"verdict": next((v for v in ("FAILED", "INTERRUPTED") if v in verdicts),
                                 "PASSED"),
                 **{f"{command} {key}": value for command, run in runs.items()
                    for key, value in run.items()}}
    lines["harness.version"] = __version__
    text = "".join(f"{k.replace(' ', '.')} = {_properties_escape(v)}\n"
                   for k, v in lines.items())
    _replace(directory / "environment.properties", text)


def _replace(path: Path, text: str) -> None:
    """Writes ``path`` whole or not at all (a command writing into the same folder at the
    same time reads the old file or the new one, never half of one)."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write Allure results to {path.parent}: "
                         f"{exc.strerror or exc}") from None


def _earlier_overviews(path: Path) -> dict[str, dict[str, str]]:
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return runs if isinstance(runs, dict) else {}


def _overview_lines(report: Report, facts: Mapping[str, str | None]) -> dict[str, str]:
    from harness.judge.findings import Verdict

    facts = {k: v for k, v in facts.items() if v}
    lines = {**({} if not report.target or report.target in facts.values()
                else {"target": report.target}),
             **({"environment": report.environment} if report.environment else {}),
             **facts,
             "verdict": report.verdict.upper(),
             "checks": f"{report.checks} over {report.exchanges} {report.unit}"}
    if report.not_sent:
        from harness.reports.console import not_sent_words

        lines["not sent"] = not_sent_words(report)
    for verdict, name in ((Verdict.FAILED, "failures"), (Verdict.WARNING, "warnings")):
        causes = [c for c in report.ordered_causes() if c.verdict is verdict]
        count = report.counts[verdict]
        lines[name] = str(count) + (f" ({len(causes)} cause(s): {causes[0].said()}"
                                    + ("; ..." if len(causes) > 1 else "") + ")"
                                    if causes else "")
    if report.interrupted:  # as the console's verdict line says it
        lines["interrupted"] = (f"{interruption(report, counted=True)}: the counts are those "
                                "of the part that ran")
    if report.scope is not None and report.scope.partial:
        lines["not judged"] = ", ".join(report.scope.left_out)
    return lines


def _properties_escape(value: str) -> str:
    value = " ".join(str(value).split())
    return value.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")


def findings_by_case(report: Report) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """The failures and warnings of each test case (rule x operation x binding, rule x
    endpoint x "WSDL": ``Finding.case``), as the first finding of each cause with how many
    share it (``count``), failures first; bounded: at most 50 causes a case."""
    from harness.judge.findings import case_of

    found: dict[tuple[str, str, str], dict[tuple[str, str], dict[str, Any]]] = {}
    for data in report.kept():
        case = ((data["rule"], data["endpoint"], "WSDL") if data.get("endpoint") is not None
                else case_of(data["rule"], data.get("operation"), data.get("binding")))
        causes = found.setdefault(case, {})
        key = (data["verdict"], data.get("cause", ""))
        if key in causes:
            causes[key]["count"] += 1
        elif len(causes) < 50:
            causes[key] = {**data, "count": 1}
    return {case: sorted(causes.values(), key=lambda d: d["verdict"] != "failed")
            for case, causes in found.items()}


def write_cases(report: Report, directory: str | Path, *,
                facts: Mapping[str, str | None] | None = None,
                attachments: Callable[[tuple[str, str, str]], list[Attach]] | None = None,
                started: Mapping[tuple[str, str], float] | None = None) -> int:
    """One Allure test per test case, as JUnit's (rule x operation x binding, rule x
    endpoint for a WSDL; a case that judged nothing is left out), so Allure's Failed is
    JUnit's failures and the console's failed test cases: feature = binding, story =
    operation, tag = rule; its message the first failure's cause, expected, actual and where,
    its details every cause with its count; a case with warnings only passes, tagged
    ``warning``. ``attachments`` gives a case's files (default: its first failing exchange,
    ``report.examples``); ``started`` when each (operation, binding)'s first call went out
    (its duration is its calls'). The overview (``write_overview``) says ``facts``. Returns
    the tests written."""
    from harness.judge.findings import Verdict
    from harness.reports.console import applied
    from harness.reports.junit import describe

    allure = AllureResults(directory, suite=f"harness {report.command}")
    write_overview(directory, report, **(facts or {}))
    found = findings_by_case(report)
    started = started or {}
    for case, counts in sorted(report.by_case.items()):
        if not applied(counts):
            continue  # judged nothing: not a test (the JSON and JUnit count it)
        rule, op, binding = case
        listed = found.get(case, [])
        verdict = ("failed" if counts[Verdict.FAILED]
                   else "warning" if counts[Verdict.WARNING] else "passed")
        files = (attachments(case) if attachments is not None
                 else [Attach("first failing exchange", report.examples[case])]
                 if case in report.examples else [])
        start = started.get((op, binding), report.started)
        title = report.titles.get(rule, rule)
        no_binding = binding == "-"  # diff's cross-binding check, lint's unclassified
        allure.add(f"{op} {title}" if no_binding else f"{op} [{binding}] {title}", verdict,
                   full_name=f"{report.command}.{rule}.{op}.{binding}",
                   labels={"story": op, "tag": rule,
                           **({} if no_binding else {"feature": binding})},
                   parameters={v.value: str(counts[v]) for v in Verdict if counts[v]},
                   message=describe(listed[0]) if listed else None,
                   details="\n".join(f"{d['count']} x {describe(d)}" for d in listed) or None,
                   attachments=files, start=start,
                   stop=start + report.seconds.get((op, binding), 0.0))
    return allure.written
