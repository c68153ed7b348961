"""The ``harness`` program ends certify without the interpreter's teardown (harness.cli.program,
QUICK_EXIT): its console report, exit status and report files are all there, the exit functions
ran, and no object was freed one by one after them; other commands exit as Python does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from traffic import repeated_recording

ROOT = Path(__file__).resolve().parents[1]

#: The harness program, with an object whose finaliser says when the interpreter is torn down.
PROGRAM = """
import os, sys, atexit
import harness.cli

class Witness:
    def __del__(self):
        os.write(2, b"torn down\\n")

witness = Witness()
atexit.register(lambda: os.write(2, b"exit functions ran\\n"))
sys.argv = ["harness", *sys.argv[1:]]
harness.cli.program()
"""


def program(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, check=False)


def test_certify_ends_without_teardown_and_keeps_every_output(tmp_path: Path) -> None:
    done = program("certify", "--operation", "AuthCode", "--binding", "soap11", "--no-html",
                   "--report-dir", "r", "--json", "c.json", "--junit", "j.xml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exit functions ran" in done.stderr
    assert "torn down" not in done.stderr
    # The console report to its last line (flushed into the pipe), and every file complete.
    assert done.stdout.rstrip().endswith(f"Allure results in {Path('r') / 'allure-results'}")
    assert "certify: PASSED" in done.stdout
    assert json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["verdict"] == "passed"
    assert (tmp_path / "j.xml").read_text(encoding="utf-8").rstrip().endswith("</testsuites>")
    assert any((tmp_path / "r" / "allure-results").glob("*-result.json"))


def test_lint_ends_without_teardown_and_keeps_every_output(tmp_path: Path) -> None:
    recording = repeated_recording(ROOT / "recordings" / "sample-all-bindings.jsonl",
                                   tmp_path / "big.jsonl", 100)  # over 2 MB: 2 workers
    done = program("lint", str(recording), "--workers", "2", "--quiet", "--json", "l.json",
                   "--junit", "j.xml", "--allure-dir", "a", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert "exit functions ran" in done.stderr
    assert "torn down" not in done.stderr
    assert done.stdout.rstrip().endswith("lint: Allure results in a")
    assert json.loads((tmp_path / "l.json").read_text(encoding="utf-8"))["exchanges"] == 3200
    assert (tmp_path / "j.xml").read_text(encoding="utf-8").rstrip().endswith("</testsuites>")
    assert any((tmp_path / "a").glob("*-result.json"))


def test_other_commands_exit_as_python_does(tmp_path: Path) -> None:
    # one line, exit 2
    done = program("replay", "nowhere.jsonl", "--target", "http://127.0.0.1:9", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "exit functions ran" in done.stderr
    assert "torn down" in done.stderr
