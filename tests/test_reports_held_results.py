"""certify's Allure results written once (issue 35): ``HeldResults`` holds what allure-pytest
reports and writes each result and attachment once, finished, the very files AllureFileLogger
followed by ``tidy`` and ``redact_results`` leave (without the fixtures' containers, the
temporary files and the second and third pass over some 2,000 files); past its budget it
writes attachments as they come and redacts them on disk at the end."""

from __future__ import annotations

import json
from pathlib import Path

from allure_commons import model2  # by the module: pytest would try to collect its Test*
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import Attachment, Label, Parameter, StatusDetails

from harness.reports.allure_results import HeldResults, redact_results, tidy

WARNING_LABEL = "harness.warning"


def redact(text: str) -> str:
    """A run's redaction, as certify's knows two secrets by the end."""
    return text.replace("0501234567", "redacted-1f2e").replace("tok-9", "redacted-77aa")


def report_run(logger) -> None:
    """What allure-pytest reports of two scenarios: results (one with pytest-bdd's example
    parameter, one with warnings), fixture containers, text attachments."""
    first = model2.TestResult(
        uuid="u1", name="AuthCode with phone 0501234567", fullName="steps#test_auth",
        status="failed", statusDetails=StatusDetails(message="expected 200, actual 500 "
                                                             "for 0501234567"),
        labels=[Label(name="host", value="box"), Label(name="feature", value="SOAP 1.1")],
        parameters=[Parameter(name="_pytest_bdd_example",
                              value="{'binding': 'SOAP 1.1', 'values': 'plain'}")],
        attachments=[Attachment(name="AuthCode request", source="a1-attachment.txt",
                                type="text/plain")])
    second = model2.TestResult(
        uuid="u2", name="GetTokenDevice", fullName="steps#test_token", status="passed",
        description="the token", labels=[Label(name=WARNING_LABEL, value="WARNING [GAP] x"),
                                         Label(name="thread", value="1")],
        attachments=[Attachment(name="GetTokenDevice response", source="a2-attachment.txt",
                                type="text/plain")])
    logger.report_attached_data(body="POST /Auth.asmx\n\nphone=0501234567",
                                file_name="a1-attachment.txt")
    logger.report_container(model2.TestResultContainer(uuid="c1", name="service"))
    logger.report_result(first)
    logger.report_attached_data(body=b"HTTP/1.1 200 OK\n\n<r>tok-9</r>",
                                file_name="a2-attachment.txt")
    logger.report_attached_data(body=b"\x89PNG\x00tok-9", file_name="a3-attachment.png")
    logger.report_container(model2.TestResultContainer(uuid="c2", name="calls"))
    logger.report_result(second)


def files(folder: Path) -> dict[str, object]:
    """Each file's content, results by their test's uuid (the file names are random)."""
    out: dict[str, object] = {}
    for path in folder.iterdir():
        if path.name.endswith("-result.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            out[f"result {data['uuid']}"] = path.read_text(encoding="utf-8")
        else:
            out[path.name] = path.read_bytes()
    return out


def test_held_results_are_the_files_tidy_and_redact_leave(tmp_path: Path) -> None:
    report_run(AllureFileLogger(str(tmp_path / "before")))
    tidy(tmp_path / "before", warning_label=WARNING_LABEL)
    redact_results(tmp_path / "before", redact)
    held = HeldResults(tmp_path / "after")
    report_run(held)
    assert not (tmp_path / "after").exists()  # nothing written while the run goes on
    held.write(redact, warning_label=WARNING_LABEL)
    before, after = files(tmp_path / "before"), files(tmp_path / "after")
    assert after == before
    assert sorted(after) == ["a1-attachment.txt", "a2-attachment.txt", "a3-attachment.png",
                             "result u1", "result u2"]
    assert b"0501234567" not in after["a1-attachment.txt"]  # type: ignore[operator]
    assert "0501234567" not in after["result u1"]  # type: ignore[operator]
    assert after["a3-attachment.png"] == b"\x89PNG\x00tok-9"  # binary: as it came


def test_past_its_budget_attachments_are_written_as_they_come_and_redacted_at_the_end(
        tmp_path: Path) -> None:
    held = HeldResults(tmp_path / "results", hold_bytes=40)
    report_run(held)
    on_disk = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert on_disk == ["a2-attachment.txt", "a3-attachment.png"]  # the first one fits
    assert b"tok-9" in (tmp_path / "results" / "a2-attachment.txt").read_bytes()
    held.write(redact, warning_label=WARNING_LABEL)
    assert (tmp_path / "results" / "a2-attachment.txt").read_bytes() == \
        b"HTTP/1.1 200 OK\n\n<r>redacted-77aa</r>"
    assert b"0501234567" not in (tmp_path / "results" / "a1-attachment.txt").read_bytes()
