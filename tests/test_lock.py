"""The lock files pin what pyproject.toml asks for: a dependency added without `scripts/lock`
fails here (CI), not on a contributor's fresh clone."""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
fingerprint = runpy.run_path(str(ROOT / "scripts" / "lock_fingerprint.py"))["fingerprint"]

FIX = "run scripts/lock and commit uv.lock and requirements.lock"


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (scripts/setup installs it into .venv)")
    return found


def run_uv(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    return subprocess.run([uv(), *args], cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=300, check=False)


def test_requirements_lock_was_made_from_this_pyproject():
    """The fingerprint scripts/setup compares (offline) to tell a stale lock."""
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# pyproject fingerprint: {fingerprint(str(ROOT / 'pyproject.toml'))}", FIX


def test_uv_lock_satisfies_pyproject():
    done = run_uv("lock", "--check")
    assert done.returncode == 0, f"{FIX}: {done.stderr.strip()}"


def test_requirements_lock_holds_the_pins_of_uv_lock():
    """pip's fallback installs exactly what uv would."""
    done = run_uv("export", "--frozen", "--extra", "dev", "--no-emit-project", "--no-header",
                  "--quiet", "--format", "requirements-txt")
    assert done.returncode == 0, done.stderr
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines(keepends=True)
    assert "".join(lines[2:]) == done.stdout, FIX


def test_every_dependency_is_pinned_with_hashes():
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins = [line for line in text.splitlines() if line and line[0].isalnum()]
    assert len(pins) > 20 and all("==" in line for line in pins)
    assert text.count("--hash=sha256:") >= len(pins)
    for name in ("mitmproxy", "lxml", "pytest-bdd", "allure-pytest", "uv"):
        assert any(line.startswith(f"{name}==") for line in pins), name
