"""Allure results from every judging command: lint, replay and load write them like certify,
diff and probe (``--allure-dir``), one test per JUnit test case, so Allure's Failed is the
console's failed test cases and JUnit's failures; and a nightly job's certify, replay and load
land on one dashboard whose overview says each command's verdict."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from faulty import FAULTS as TARGET_FAULTS
from faulty import serve_fault
from lxml import etree
from test_lint import FAULTS as RECORDED_FAULTS
from traffic import clean_exchanges, exchange, write_recording

from harness.contract.model import Contract
from harness.reports.allure_report import ALLURE

HARNESS = [sys.executable, "-m", "harness"]


def _harness(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=cwd)


def _results(folder: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*-result.json")]


def _agree(done: subprocess.CompletedProcess[str], allure: Path, junit: Path) -> int:
    """Allure's tests and failures are JUnit's, and its failures the console's failed test
    cases (``in 40 test cases (1 failed)``): how many failed."""
    statuses = Counter(r["status"] for r in _results(allure))
    suites = etree.fromstring(junit.read_bytes())
    assert sum(statuses.values()) == int(suites.get("tests"))
    assert statuses["failed"] == int(suites.get("failures"))
    console = re.search(r" in (\d+) test cases \((\d+) failed\)", done.stdout)
    assert console, done.stdout
    assert (int(console[1]), int(console[2])) == (sum(statuses.values()), statuses["failed"])
    assert not statuses["broken"]
    return statuses["failed"]


def test_lint_writes_allure_results_counted_as_junit_and_console(contract: Contract,
                                                                 tmp_path: Path) -> None:
    _, build, rule, _, _, _ = RECORDED_FAULTS[0]  # a request without its SOAPAction
    recording = write_recording(tmp_path / "day.jsonl", [
        *clean_exchanges(contract), exchange(contract, build(contract))])
    done = _harness("lint", recording, "--junit", "lint.xml", "--allure-dir", "allure",
                    cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _agree(done, tmp_path / "allure", tmp_path / "lint.xml") == 1
    failed = next(r for r in _results(tmp_path / "allure") if r["status"] == "failed")
    assert {"name": "tag", "value": rule} in failed["labels"]
    assert failed["statusDetails"]["message"].startswith(f"[{rule}] ")
    assert "lint: Allure results in allure" in done.stdout


def test_replay_writes_allure_results_counted_as_junit_and_console(contract: Contract,
                                                                   tmp_path: Path) -> None:
    recording = write_recording(tmp_path / "day.jsonl", clean_exchanges(contract))
    with serve_fault(TARGET_FAULTS["get-not-served"]) as target:
        done = _harness("replay", recording, "--target", target, "--quiet", "--junit",
                        "replay.xml", "--allure-dir", "allure", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _agree(done, tmp_path / "allure", tmp_path / "replay.xml") > 0


def test_nightly_certify_replay_and_load_share_one_dashboard(contract: Contract,
                                                             tmp_path: Path) -> None:
    """certify (which starts the folder afresh), then replay and load with the default
    ``--allure-dir``: one results folder, each command's tests in its own suite, and an
    overview naming each command's verdict and the verdict of all."""
    recording = write_recording(tmp_path / "day.jsonl", clean_exchanges(contract)[:8])
    with serve_fault(TARGET_FAULTS["get-not-served"]) as target:
        certify = _harness("certify", "--target", target, "--operation", "GetTokenDevice",
                           "--binding", "soap11", "--no-html", cwd=tmp_path)
        replay = _harness("replay", recording, "--target", target, "--quiet", cwd=tmp_path)
        load = _harness("load", recording, "--target", target, "--rate", "50", "--quiet",
                        cwd=tmp_path)
    assert (certify.returncode, replay.returncode, load.returncode) == (0, 1, 1), \
        certify.stdout + replay.stdout + load.stdout + load.stderr
    folder = tmp_path / "reports" / "allure-results"
    suites = Counter(label["value"] for r in _results(folder) for label in r["labels"]
                     if label["name"] == "suite" and label["value"].startswith("harness "))
    assert set(suites) == {"harness replay", "harness load"}  # certify's: per feature
    assert any(label == {"name": "parentSuite", "value": "conformance features"}
               for r in _results(folder) for label in r["labels"])
    overview = (folder / "environment.properties").read_text(encoding="utf-8")
    for line in ("verdict = FAILED", "certify.verdict = PASSED", "replay.verdict = FAILED",
                 "load.verdict = FAILED"):
        assert line in overview.splitlines(), overview
    if ALLURE.exists():  # and Allure 3 renders the folder (the browser tests read such pages)
        rendered = _harness("report", "--results", folder, "--out", "nightly.html",
                            cwd=tmp_path)
        assert rendered.returncode == 0, rendered.stdout + rendered.stderr
