"""Allure result files (the ``allure-results`` folder) written by harness commands.

One ``AllureResults`` per run; ``add`` writes one test result with its labels and attachments,
so ``harness report`` (Allure 3) renders diff, replay or lint results next to certify's.
Files follow the Allure result schema through allure_commons' own model and file logger.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import (
    ATTACHMENT_PATTERN,
    Attachment,
    Label,
    Parameter,
    StatusDetails,
    TestResult,
)

from harness.errors import UsageError
from harness.traffic.exchange import HttpRequest, HttpResponse
from harness.traffic.redaction import redact_credentials

DEFAULT_DIR = "reports/allure-results"
#: Allure statuses a harness verdict maps to.
STATUSES = {"passed": "passed", "failed": "failed", "warning": "passed",
            "not applicable": "skipped"}


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
        applicable) or an Allure status; ``labels`` values may be lists (e.g. several tags)."""
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
        if message or details:
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


def http_text(message: HttpRequest | HttpResponse) -> str:
    """A request or response as it would appear on the wire (body decoded as UTF-8)."""
    if isinstance(message, HttpRequest):
        first = f"{message.method} {message.url} {message.http_version}"
    else:
        first = f"{message.http_version} {message.status} {message.reason}".rstrip()
    head = "\n".join([first, *(f"{k}: {v}" for k, v in redact_credentials(message.headers))])
    return f"{head}\n\n{message.body.decode('utf-8', 'replace')}"


def exchange_attachments(label: str, request: HttpRequest,
                         response: HttpResponse | None) -> list[Attach]:
    """``<label> request`` and ``<label> response`` attachments of one exchange."""
    out = [Attach(f"{label} request", http_text(request))]
    if response is not None:
        out.append(Attach(f"{label} response", http_text(response)))
    return out
