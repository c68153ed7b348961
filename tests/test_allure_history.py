"""Allure's own history between runs (issue 24): ``harness report --history`` and
``certify --history`` keep a JSON Lines history file that Allure 3 reads (the report shows the
earlier runs: trends, each test's history) and appends each run to; relative paths work."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.reports import allure_report
from harness.reports.allure_results import AllureResults

pytestmark = pytest.mark.skipif(not allure_report.ALLURE.exists(),
                                reason="Allure 3 not installed (scripts/setup installs it)")


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, check=False)


def embedded(html: Path) -> dict[str, str]:
    """The data files Allure's single-file report embeds (name -> decoded text)."""
    text = html.read_text(encoding="utf-8")
    return {name: base64.b64decode(data).decode("utf-8")
            for name, data in re.findall(r'd\("([^"]+)","([A-Za-z0-9+/=]*)"\)', text)}


def runs(history: Path) -> list[dict]:
    return [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]


def test_report_keeps_allure_history_between_runs(tmp_path: Path) -> None:
    for run, second in ((1, "failed"), (2, "passed")):
        results = AllureResults(tmp_path / f"results{run}", suite="probe")
        results.add("AuthCode x SOAP 1.1", "passed")
        results.add("AuthCode x HTTP GET", second, message="expected 200, actual 500")
    first = harness("report", "--results", "results1", "--out", "one/index.html",
                    "--history", "history", cwd=tmp_path)  # a folder: its history file
    assert first.returncode == 0, first.stderr
    history = tmp_path / "history" / "allure-history.jsonl"
    assert len(runs(history)) == 1
    assert not [n for n in embedded(tmp_path / "one/index.html") if n.startswith("data/history/")]
    second_run = harness("report", "--results", "results2", "--out", "two/index.html",
                         "--history", "history/allure-history.jsonl", cwd=tmp_path)
    assert second_run.returncode == 0, second_run.stderr
    earlier, latest = runs(history)
    assert earlier["uuid"] != latest["uuid"]
    statuses = {r["name"]: r["status"] for r in earlier["testResults"].values()}
    assert statuses == {"AuthCode x SOAP 1.1": "passed", "AuthCode x HTTP GET": "failed"}
    # The second report shows the first run (its trend and each test's history).
    shown = embedded(tmp_path / "two/index.html")
    assert f"data/history/{earlier['uuid']}.json" in shown
    assert "AuthCode x HTTP GET" in shown[f"data/history/{earlier['uuid']}.json"]
    # Without --history nothing is kept.
    alone = harness("report", "--results", "results2", "--out", "three/index.html",
                    cwd=tmp_path)
    assert alone.returncode == 0 and len(runs(history)) == 2
    assert not [n for n in embedded(tmp_path / "three/index.html")
                if n.startswith("data/history/")]


def test_certify_keeps_allure_history_between_runs(tmp_path: Path) -> None:
    flags = ["certify", "--operation", "AuthCode", "--binding", "soap11", "--report-dir",
             "reports", "--history", "nightly/allure-history.jsonl"]
    for _ in range(2):
        done = harness(*flags, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    earlier, _ = runs(tmp_path / "nightly" / "allure-history.jsonl")
    shown = embedded(tmp_path / "reports" / "allure-report" / "index.html")
    assert f"data/history/{earlier['uuid']}.json" in shown
