"""Allure result files (the ``allure-results`` folder) written by harness commands.

One ``AllureResults`` per run; ``add`` writes one test result with its labels and attachments,
so ``harness report`` (Allure 3) renders diff, replay or lint results next to certify's.
Files follow the Allure result schema through allure_commons' own model and file logger.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import (
    ATTACHMENT_PATTERN,
    Attachment,
    Label,
    Parameter,
    StatusDetails,
    TestResult,
)

from harness import __version__
from harness.errors import UsageError
from harness.http_messages import HttpRequest, HttpResponse
from harness.traffic.report_text import http_text

if TYPE_CHECKING:
    from harness.judge.findings import Report

DEFAULT_DIR = "reports/allure-results"
#: Allure statuses a harness verdict maps to. A warning is a failed result marked known,
#: which Allure 3 shows as "accepted" (its Resolutions tab, an icon), out of the success
#: rate and the quality gates: see ``AllureResults.add``.
STATUSES = {"passed": "passed", "failed": "failed", "warning": "failed",
            "not applicable": "skipped"}
#: How a warning's message starts (render's category of warnings matches it).
WARNING_PREFIX = "WARNING"
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

    def __init__(self, directory: str | Path = DEFAULT_DIR, *, suite: str = "harness") -> None:
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
        A warning is written failed and known, its message led by WARNING_PREFIX."""
        full_name = full_name or f"{self.suite}.{name}"
        now = int(time.time() * 1000)
        result = TestResult(
            uuid=str(uuid.uuid4()), name=name, fullName=full_name,
            historyId=_digest(full_name), testCaseId=_digest(full_name),
            status=STATUSES.get(verdict, verdict), stage="finished",
            start=int(start * 1000) if start else now, stop=int(stop * 1000) if stop else now,
            labels=[Label(name="suite", value=self.suite), *_labels(labels or {})],
            parameters=[Parameter(name=k, value=v) for k, v in (parameters or {}).items()],
            attachments=[self._attach(a) for a in attachments])
        if verdict == "warning":  # accepted: shown, not counted as a failure
            message = message if (message or "").startswith(WARNING_PREFIX) else \
                f"{WARNING_PREFIX}: {message or 'a permitted deviation'}"
            result.statusDetails = StatusDetails(message=message, trace=details, known=True)
        elif message or details:
            result.statusDetails = StatusDetails(message=message, trace=details)
        self._logger.report_result(result)
        self.written += 1

    def _attach(self, attach: Attach) -> Attachment:
        source = ATTACHMENT_PATTERN.format(prefix=uuid.uuid4(), ext=attach.extension)
        self._logger.report_attached_data(attach.body, source)
        return Attachment(name=attach.name, source=source, type=attach.mime)


def _labels(labels: Mapping[str, str | Iterable[str]]) -> list[Label]:
    out = []
    for name, value in labels.items():
        values = [value] if isinstance(value, str) else list(value)
        out += [Label(name=name, value=v) for v in values]
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
    """Allure results written by allure-pytest (certify's run) made to read as the service's:
    pytest-bdd's ``_pytest_bdd_example`` parameter becomes the example's own columns, the
    machine and framework labels go, fixture set-up and teardown (``<lambda>`` steps) go, and
    a passed scenario marked with ``warning_label`` becomes a failed result marked known (an
    accepted finding in Allure 3) whose message lists its warnings. Returns results tidied."""
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
        data["parameters"] = _parameters(data.get("parameters", []))
        labels = data.get("labels", [])
        warnings = [label["value"] for label in labels if label.get("name") == warning_label]
        data["labels"] = [label for label in labels if label.get("name") not in _NOISE_LABELS
                          and label.get("name") != warning_label]
        if warnings and data.get("status") == "passed":
            data["status"] = "failed"
            data["statusDetails"] = {"message": "\n".join(warnings), "known": True}
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        done += 1
    return done


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
            elif "-attachment" in name and path.suffix in _TEXT_ATTACHMENTS:
                raw = path.read_bytes().decode("utf-8", "surrogateescape")
                done = text(raw)
                if done != raw:
                    path.write_bytes(done.encode("utf-8", "surrogateescape"))
                    changed += 1
        except (OSError, ValueError):
            continue
    return changed


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


def write_overview(directory: str | Path, report: Report, **facts: str | None) -> None:
    """Allure's ``environment.properties``, which Allure 3 shows on the overview (Metadata):
    what was judged (the target and ``facts``: namespace, primary, candidate...), the verdict
    and the counts in the words every output uses, the warnings and failures with their first
    causes, and what a partial run left out."""
    from harness.judge.findings import Verdict

    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write Allure results to {directory}: "
                         f"{exc.strerror or exc}") from None
    facts = {k: v for k, v in facts.items() if v}
    lines = {**({} if report.target in facts.values() else {"target": report.target or ""}),
             **({"environment": report.environment} if report.environment else {}),
             **facts,
             "verdict": report.verdict.upper(),
             "checks": f"{report.checks} over {report.exchanges} {report.unit}"}
    for verdict, name in ((Verdict.FAILED, "failures"), (Verdict.WARNING, "warnings")):
        causes = [c for c in report.ordered_causes() if c.verdict is verdict]
        count = report.counts[verdict]
        lines[name] = str(count) + (f" ({len(causes)} cause(s): {causes[0].said()}"
                                    + ("; ..." if len(causes) > 1 else "") + ")"
                                    if causes else "")
    if report.interrupted:
        of = f" of {report.planned}" if report.planned is not None else ""
        lines["interrupted"] = (f"by {report.interrupted} after {report.exchanges}{of} "
                                f"{report.unit}: the counts are those of the part that ran")
    if report.scope is not None and report.scope.partial:
        lines["not judged"] = ", ".join(report.scope.left_out)
    lines["harness.version"] = __version__
    text = "".join(f"{k.replace(' ', '.')} = {_properties_escape(v)}\n"
                   for k, v in lines.items())
    (directory / "environment.properties").write_text(text, encoding="utf-8")


def _properties_escape(value: str) -> str:
    value = " ".join(str(value).split())
    return value.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")


def findings_by_place(report: Report, *, by_rule: bool = False
                      ) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The failures and warnings of each operation x binding (or rule x operation x binding),
    as the first finding of each cause with how many share it (``count``), failures first;
    bounded: at most 50 causes a place."""
    found: dict[tuple[str, ...], dict[tuple[str, str], dict[str, Any]]] = {}
    for data in report.kept():
        where = (data.get("operation") or "(unclassified)", data.get("binding") or "-")
        place = found.setdefault((data["rule"], *where) if by_rule else where, {})
        key = (data["verdict"], data.get("cause", ""))
        if key in place:
            place[key]["count"] += 1
        elif len(place) < 50:
            place[key] = {**data, "count": 1}
    return {where: sorted(causes.values(), key=lambda d: d["verdict"] != "failed")
            for where, causes in found.items()}
