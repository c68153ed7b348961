"""The harness as an installed tool: certify's pytest run is its own whatever the user's
environment says, a machine without Node still certifies (only the HTML report is skipped), and
a user's own features run with the packaged steps."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.certify.engine import FEATURES


def harness(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=240, check=False)


def test_certify_ignores_the_users_pytest_settings(tmp_path):
    """A CI job that sets PYTEST_ADDOPTS/PYTEST_PLUGINS for its own tests, in a folder with its
    own pytest.ini, still certifies the same way."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    env = {**os.environ, "PYTEST_ADDOPTS": "--no-such-option -x",
           "PYTEST_PLUGINS": "no_such_plugin_module"}
    done = harness("certify", "--no-html", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "certify: PASSED" in done.stdout
    assert any((tmp_path / "reports" / "allure-results").glob("*-result.json"))


def test_certify_without_node_skips_only_the_html_report(tmp_path):
    """Allure 3 needs Node: without it the report is skipped with one line saying how to get
    it, and certify's verdict is unchanged (scripts/main must not fail for a missing Node)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    done = harness("certify", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if "no HTML report" in line]
    assert len(skipped) == 1 and "Node.js is not installed" in skipped[0]
    assert "npm install -g allure" in skipped[0]
    progress = re.compile(r"certify: \d+/\d+ scenarios, .*")  # a slow machine's progress lines
    assert [line for line in done.stderr.splitlines() if not progress.fullmatch(line)] == []
    assert not (tmp_path / "reports" / "allure-report").exists()


def test_certify_runs_the_users_own_features(tmp_path):
    """--features DIR: a folder of the user's *.feature files, run with the packaged steps."""
    mine = tmp_path / "features"
    mine.mkdir()
    shutil.copy(FEATURES / "get_token_device.feature", mine / "tokens.feature")
    done = harness("certify", "--no-html", "--features", str(mine), "--json", "out.json",
                   cwd=tmp_path, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed"
    assert 0 < data["exchanges"] < 10  # that feature's calls only, not the packaged set


@pytest.mark.parametrize(("content", "said"), [
    (None, "not a folder"), (b"", "no *.feature file"), (b"\xff\xfe bad", "codec")])
def test_certify_features_folder_errors_are_one_line(tmp_path, content, said):
    mine = tmp_path / "features"
    if content is not None:
        mine.mkdir()
        if content:
            (mine / "bad.feature").write_bytes(content)
    done = harness("certify", "--no-html", "--features", str(mine), cwd=tmp_path,
                   env=dict(os.environ))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
