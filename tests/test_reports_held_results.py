"""certify's Allure results written once (issue 35): ``HeldResults`` writes what allure-pytest
reports as the very files AllureFileLogger followed by ``tidy`` and ``redact_results`` leave
(without the fixtures' containers, the temporary files and the second and third pass over some
2,000 files): attachments a test at a time (a thread of their own), rewritten at the end only where
the run's final redaction changes them, whatever part of them it keeps in memory."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import pytest
from allure_commons import model2  # by the module: pytest would try to collect its Test*
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import Attachment, Label, Parameter, StatusDetails

from harness.errors import UsageError
from harness.reports.allure_results import (
    HOLD_BYTES,
    HeldResults,
    discard_set_aside,
    redact_results,
    set_aside,
    tidy,
)

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
                                type="text/plain"),
                     Attachment(name="AuthCode request again", source="a4-attachment.txt",
                                type="text/plain")])
    logger.report_attached_data(body="POST /Auth.asmx\n\nphone=0501234567",
                                file_name="a1-attachment.txt")
    logger.report_container(model2.TestResultContainer(uuid="c1", name="service"))
    logger.report_result(first)
    logger.report_attached_data(body=b"HTTP/1.1 200 OK\n\n<r>tok-9</r>",
                                file_name="a2-attachment.txt")
    logger.report_attached_data(body=b"\x89PNG\x00tok-9", file_name="a3-attachment.png")
    logger.report_attached_data(body="POST /Auth.asmx\n\nphone=redacted-1f2e",
                                file_name="a4-attachment.txt")
    logger.report_container(model2.TestResultContainer(uuid="c2", name="calls"))
    logger.report_result(second)


def shown(folder: Path) -> dict[str, object]:
    """Each result as a report shows it: its JSON with each attachment's ``source`` replaced
    by the file's content (the names are random); the other files by name."""
    def resolved(data: object) -> object:
        if isinstance(data, list):
            return [resolved(v) for v in data]
        if isinstance(data, dict):
            return {k: (folder / v).read_bytes() if k == "source" else resolved(v)
                    for k, v in data.items()}
        return data

    out: dict[str, object] = {}
    for path in folder.iterdir():
        if path.name.endswith("-result.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            out[f"result {data['uuid']}"] = resolved(data)
        elif "-attachment" not in path.name:
            out[path.name] = path.read_bytes()
    return out


@pytest.mark.parametrize("hold_bytes", [HOLD_BYTES, 40, 0])
def test_held_results_are_the_files_tidy_and_redact_leave(tmp_path: Path,
                                                          hold_bytes: int) -> None:
    """Whatever it keeps in memory (all, the first attachment, none: read back at the end)."""
    report_run(AllureFileLogger(str(tmp_path / "before")))
    tidy(tmp_path / "before", warning_label=WARNING_LABEL)
    redact_results(tmp_path / "before", redact)
    held = HeldResults(tmp_path / "after", hold_bytes=hold_bytes)
    report_run(held)
    held.write(redact, warning_label=WARNING_LABEL)
    before, after = shown(tmp_path / "before"), shown(tmp_path / "after")
    assert after == before
    assert sorted(after) == ["result u1", "result u2"]
    assert "0501234567" not in json.dumps(after, default=repr)
    assert (tmp_path / "after" / "a3-attachment.png").read_bytes() == b"\x89PNG\x00tok-9"
    assert sorted(p.name for p in (tmp_path / "after").iterdir() if "-attachment" in p.name
                  ) == ["a1-attachment.txt", "a2-attachment.txt", "a3-attachment.png",
                        "a4-attachment.txt"]
    assert (tmp_path / "after" / "a2-attachment.txt").read_bytes() == \
        b"HTTP/1.1 200 OK\n\n<r>redacted-77aa</r>"


def test_a_folder_that_cannot_be_written_is_one_usage_error(tmp_path: Path) -> None:
    (tmp_path / "results").write_text("a file where the folder goes", encoding="utf-8")
    held = HeldResults(tmp_path / "results")
    report_run(held)
    with pytest.raises(UsageError, match="cannot write Allure results to"):
        held.write(redact, warning_label=WARNING_LABEL)


def test_attachments_go_to_the_writer_a_test_at_a_time(tmp_path: Path) -> None:
    """The writer thread is woken once a test (with that test's attachments), not once an
    attachment: fewer hand-overs of the interpreter between it and the run. Every file is
    still written whole."""
    handed: list[object] = []

    class Counting(queue.SimpleQueue):
        def put(self, item, *args, **kwargs):
            handed.append(item)
            super().put(item, *args, **kwargs)

    held = HeldResults(tmp_path / "results")
    held._queue = Counting()
    report_run(held)  # two tests: 1 attachment, then 3
    held.write(redact, warning_label=WARNING_LABEL)
    assert [len(batch) for batch in handed if batch is not None] == [1, 3]
    assert (tmp_path / "results" / "a3-attachment.png").read_bytes() == b"\x89PNG\x00tok-9"
    assert (tmp_path / "results" / "a1-attachment.txt").read_text(encoding="utf-8") == (
        "POST /Auth.asmx\n\nphone=redacted-1f2e")


def test_a_previous_runs_results_are_set_aside_then_deleted(tmp_path: Path) -> None:
    """certify moves the previous run's results beside the folder (hidden) before writing its
    own, and deletes them after: creating files right after deleting as many is slow where the
    file system places new files past the inodes freed in the last half minute."""
    results = tmp_path / "reports" / "allure-results"
    results.mkdir(parents=True)
    (results / "old-result.json").write_text("{}", encoding="utf-8")
    stale = tmp_path / "reports" / ".allure-results-previous-stopped"  # a stopped run's
    stale.mkdir()
    aside = set_aside(results)
    assert aside is not None and aside.parent == results.parent
    assert aside.name.startswith(".allure-results-previous-")
    assert not results.exists() and (aside / "old-result.json").is_file()
    results.mkdir()
    (results / "new-result.json").write_text("{}", encoding="utf-8")
    discard_set_aside(results)
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["allure-results"]
    assert [p.name for p in results.iterdir()] == ["new-result.json"]


def test_nothing_to_set_aside_is_none(tmp_path: Path) -> None:
    assert set_aside(tmp_path / "none") is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    assert set_aside(tmp_path / "link") is None  # a link is cleaned as before, not moved
    assert (tmp_path / "link").is_symlink() and elsewhere.is_dir()
    discard_set_aside(tmp_path / "none")  # nothing beside it: nothing done
