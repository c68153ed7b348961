"""scripts/setup on a copy of the clone: a dependency added to pyproject.toml without
`scripts/lock` is said in one line and still installed (from the ranges, the lock's versions as
constraints); the lock files stay untouched; a second run has nothing to do. The install
compiles bytecode (as pip does), so where nothing may write it at run time
(PYTHONDONTWRITEBYTECODE=1, as in many CI images) commands do not compile their imports afresh."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
#: A small package that is not in the lock (the check below makes sure).
ADDED = "tomli-w"


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip("not a git clone")
    return [f for f in done.stdout.split("\0") if f and (ROOT / f).is_file()]


def setup(clone: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing is compiled but what setup compiles
    return subprocess.run(["bash", "scripts/setup"], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


#: Prints the modules certify imports whose bytecode is not cached (from site-packages and the
#: harness's own).
UNCOMPILED = """
import importlib.util, sys
import harness.cli, harness.certify.engine, pytest_bdd.plugin, allure_pytest.plugin, httpx
for module in list(sys.modules.values()):
    source = getattr(module, "__file__", None) or ""
    if source.endswith(".py") and ("site-packages" in source or "/harness/" in source):
        try:
            open(importlib.util.cache_from_source(source), "rb").close()
        except OSError:
            print(module.__name__)
"""


def not_compiled(clone: Path) -> list[str]:
    done = subprocess.run([clone / ".venv" / "bin" / "python", "-c", UNCOMPILED],
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_setup_with_a_stale_lock_says_so_and_installs(tmp_path):
    clone = tmp_path / "clone"
    for name in tracked_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    if (ROOT / "tools" / "node_modules").is_dir():  # npm ci is not what this test is about
        shutil.copytree(ROOT / "tools" / "node_modules", clone / "tools" / "node_modules",
                        symlinks=True)
    lock = (clone / "requirements.lock").read_text(encoding="utf-8")
    assert f"\n{ADDED}==" not in lock
    pyproject = clone / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('dependencies = [\n', f'dependencies = [\n    "{ADDED}",\n',
                                      1), encoding="utf-8")

    done = setup(clone)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "do not match" in line]
    assert len(said) == 1 and "run scripts/lock" in said[0], done.stderr
    imported = subprocess.run([clone / ".venv" / "bin" / "python", "-c",
                               "import tomli_w, harness, mitmproxy"], capture_output=True,
                              text=True, check=False)
    assert imported.returncode == 0, imported.stderr
    assert (clone / "requirements.lock").read_text(encoding="utf-8") == lock
    assert not_compiled(clone) == []
    assert (clone / "uv.lock").read_bytes() == (ROOT / "uv.lock").read_bytes()

    again = setup(clone)
    assert (again.returncode, again.stderr) == (0, "")
