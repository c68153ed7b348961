"""The harness as users install it: the wheel built from the sdist, installed into a fresh venv
outside the repository, run from a user's own project folder (whose pytest settings must not
matter). Nothing here may read the clone: everything comes from site-packages.

uv builds and installs (the lock's versions as constraints, uv's cache), so the whole module
takes well under a minute on a warm cache. Commands other helpers add (``probe``, ``load``) are
picked up from ``harness --help``.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.contract.bindings import Binding, build_request
from harness.contract.model import sample_arguments, school_mobile

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
#: Options that keep a new command short and quiet, used when its --help offers them.
BOUNDED = {"--max-wait": "0", "--max-requests": "200", "--max-time": "60", "--quiet": None}


@dataclass
class Install:
    base: Path  # outside the repository
    project: Path  # a user's project folder: the commands run here
    bin: Path  # the venv's bin/
    dist: Path
    env: dict[str, str]


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (scripts/setup installs it into .venv)")
    return found


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout, check=False)


def checked(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = run(*args, cwd=cwd, env=env)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def user_env(**extra: str) -> dict[str, str]:
    """The environment without anything that points into the clone or its venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "UV_PYTHON_DOWNLOADS": "never", **extra}


def lock_constraints(path: Path) -> Path:
    """requirements.lock without hashes: the tested install uses the locked versions."""
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    pins = [line.rstrip(" \\") for line in lines if line[:1].isalnum()]
    path.write_text("\n".join(pins) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    base = tmp_path_factory.mktemp("installed")
    assert ROOT not in base.parents
    dist = base / "dist"
    # uv build makes the sdist and then the wheel from the sdist: both must carry everything.
    # Built from a copy of the tracked files, as in a fresh clone: setuptools would reuse an
    # egg-info's list of files left in the working tree by an editable install.
    checked(uv(), "build", "--quiet", "-p", sys.executable, "--out-dir", dist,
            copy_of_clone(base / "src"), cwd=base, env=user_env())
    project = base / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "qa-team"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\naddopts = "--no-such-option"\n', encoding="utf-8")
    checked(uv(), "venv", "--quiet", "-p", sys.executable, project / ".venv", cwd=base,
            env=user_env())
    bin_dir = project / ".venv" / "bin"
    wheel = next(dist.glob("*.whl"))
    checked(uv(), "pip", "install", "--quiet", "-p", bin_dir / "python",
            "-c", lock_constraints(base / "constraints.txt"), wheel, cwd=base, env=user_env())
    env = user_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return Install(base, project, bin_dir, dist, env)


def harness(inst: Install, *args: str | Path, timeout: float = 300):
    return run(inst.bin / "harness", *args, cwd=inst.project, env=inst.env, timeout=timeout)


def tracked_files(*under: str) -> list[str]:
    """The files git tracks (as they are in the working tree, deleted ones left out)."""
    done = run("git", "ls-files", "-z", "--", *under, cwd=ROOT)
    if done.returncode != 0:
        pytest.skip("not a git clone")
    return [f for f in done.stdout.split("\0") if f and (ROOT / f).is_file()]


def copy_of_clone(to: Path) -> Path:
    for name in tracked_files():
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, to / name)
    return to


#: Folders at the top of the repository that the build maps into the package (setup.py).
MAPPED = {"features": "harness/certify/features", "steps": "harness/certify/steps"}


def test_wheel_and_sdist_carry_every_file_of_the_package(installed):
    """pytest.ini, the contract data, whatever harness/ holds; and the features and step glue,
    kept at the top of the repository, in the wheel inside the package where certify finds
    them (the sdist carries them where they are in the clone)."""
    package = set(tracked_files("harness"))
    mapped = {f: MAPPED[top] + f[len(top):] for top in MAPPED for f in tracked_files(top)}
    assert {"features/soap11.feature", "steps/conftest.py", "steps/test_conformance.py"} <= set(
        mapped)
    assert "harness/certify/pytest.ini" in package
    with zipfile.ZipFile(next(installed.dist.glob("*.whl"))) as wheel:
        in_wheel = set(wheel.namelist())
    assert (package | set(mapped.values())) - in_wheel == set()
    assert not any(name.split("/", 1)[0] in MAPPED for name in in_wheel)  # no top-level steps
    with tarfile.open(next(installed.dist.glob("*.tar.gz"))) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert (package | set(mapped)) - in_sdist == set()


def test_imported_from_site_packages_and_versioned(installed):
    where = checked(installed.bin / "python", "-c", "import harness; print(harness.__file__)",
                    cwd=installed.project, env=installed.env)
    assert "site-packages" in where and str(ROOT) not in where
    done = harness(installed, "--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"harness {VERSION}")


def test_certify_the_embedded_reference(installed):
    done = harness(installed, "certify", "--no-html", "--json", "certify.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "certify: PASSED" in done.stdout
    assert str(ROOT) not in done.stdout + done.stderr
    assert any((installed.project / "reports" / "allure-results").glob("*-result.json"))


def started(installed: Install, *args: str | Path) -> tuple[subprocess.Popen[str], str]:
    """A long-running command of the installed wheel and the first URL it prints."""
    proc = subprocess.Popen([installed.bin / "harness", *args], cwd=installed.project,
                            env=installed.env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=120)
    found = re.search(r"http://127\.0\.0\.1:\d+", first[0] if first else "")
    if not found:
        stop(proc)
        pytest.fail(f"harness {args[0]} printed {first!r}")
    return proc, found.group(0)


def stop(proc: subprocess.Popen[str]) -> str:
    """Ctrl-C, as a user stops it; what it printed after its first line."""
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


@pytest.fixture(scope="module")
def served(installed):
    """``harness serve`` of the installed wheel on a free loopback port: its base URL."""
    proc, url = started(installed, "serve", "--port", "0")
    yield url
    stop(proc)


def capture_every_call(installed: Install, upstream: str, out: Path) -> None:
    """Every operation x binding of the contract through ``harness capture`` to ``upstream``."""
    proc, proxy = started(installed, "capture", "--upstream", upstream, "--listen",
                          "127.0.0.1:0", "--out", out, "--confdir", installed.base / "mitm")
    try:
        contract = school_mobile()
        with httpx.Client(timeout=60) as client:
            for op, binding in itertools.product(contract.operations, Binding):
                request = build_request(contract, op, sample_arguments(op), binding, proxy)
                client.request(request.method, request.url, content=request.body,
                               headers=[h for h in request.headers if h[0] != "Host"])
    finally:
        said = stop(proc)
    assert f"captured {len(contract.operations) * len(Binding)} exchange(s)" in said, said


@pytest.fixture(scope="module")
def recording(installed, served) -> Path:
    """A recording made by the installed ``harness capture`` in front of ``harness serve``."""
    path = installed.project / "captured.jsonl"
    capture_every_call(installed, served, path)
    return path


def test_serve_capture_then_lint_and_replay_the_recording(installed, served, recording):
    done = harness(installed, "lint", "--quiet", recording)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout.lower()
    done = harness(installed, "replay", "--quiet", recording, "--target", served)
    assert done.returncode == 0, done.stdout + done.stderr


def test_recorded_traffic_becomes_features_the_installed_wheel_runs(installed, served,
                                                                    recording):
    """harness scenarios writes features from the recording, and certify --features runs them
    (and a team's own feature of the vocabulary) with the packaged steps, from the user's
    folder: the recorded deployment passes."""
    done = harness(installed, "scenarios", recording, "-o", "recorded")
    assert done.returncode == 0, done.stdout + done.stderr
    mine = installed.project / "recorded" / "mine.feature"
    mine.write_text("""Feature: mine
  Scenario: a chained token
    Given the service under test
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result matches "[0-9a-f]{64}"
    And the result is saved as token
    When the client calls GetTokenDevice over all four bindings with:
      | parameter | value    |
      | id        | ${token} |
    Then the calls over all four bindings give the same result
""", encoding="utf-8")
    done = harness(installed, "certify", "--no-html", "--features", "recorded", "--target",
                   served, "--junit", "scenarios.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    junit = (installed.project / "scenarios.xml").read_text(encoding="utf-8")
    assert 'name="a chained token [mine.feature]' in junit
    assert junit.count('classname="certify.SCENARIO"') == len(Binding) * 8 + 1


def commands(installed: Install) -> set[str]:
    """The subcommands ``harness --help`` lists (one per line, indented by four)."""
    listed = set(re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", harness(installed, "--help").stdout,
                            re.M))
    assert {"serve", "certify", "lint"} <= listed
    return listed


@pytest.mark.parametrize("command", ["probe", "load"])
def test_newer_commands_run_from_the_wheel(installed, served, recording, command):
    if command not in commands(installed):
        pytest.skip(f"harness {command} does not exist yet")
    help_text = harness(installed, command, "--help").stdout
    args: list[str | Path] = []
    if "RECORDING" in help_text.split("\n\n", 1)[0]:
        args.append(recording)
    if "--target" in help_text:
        args += ["--target", served]
    for option, value in BOUNDED.items():
        if option in help_text:
            args += [option] if value is None else [option, value]
    done = harness(installed, command, *args, timeout=400)
    assert done.returncode == 0, f"harness {command} {args}:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def test_uv_tool_install_from_the_sdist(installed):
    """What a QA team's CI image does: `uv tool install` (pipx alike), here from the sdist,
    through scripts/install-tool on a machine whose `python3` is older than 3.12 and whose
    newer Python is none of the PATH's (pyenv's versions): plain `uv tool install` would try
    to download a CPython there, and fail offline."""
    tools, bin_dir = installed.base / "uv-tools", installed.base / "uv-bin"
    old_bin, pyenv = installed.base / "old-python", installed.base / "pyenv"
    old_bin.mkdir()
    (old_bin / "python3").write_text("#!/bin/sh\necho 'Python 3.11.2' >&2; exit 1\n")
    (old_bin / "python3").chmod(0o755)
    (pyenv / "versions" / "3.13" / "bin").mkdir(parents=True)
    (pyenv / "versions" / "3.13" / "bin" / "python3").symlink_to(
        Path(sys._base_executable).resolve())
    env = {k: v for k, v in user_env(UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bin_dir),
                                     PYENV_ROOT=str(pyenv),
                                     PATH=f"{old_bin}:{Path(uv()).parent}:/usr/bin:/bin"
                                     ).items() if k != "HARNESS_PYTHON"}
    sdist = next(installed.dist.glob("*.tar.gz"))
    checked(ROOT / "scripts" / "install-tool", sdist, "--quiet",
            "-c", lock_constraints(installed.base / "constraints.txt"),
            cwd=installed.base, env=env)
    done = run(bin_dir / "harness", "--version", cwd=installed.project, env=env)
    assert (done.returncode, done.stdout.strip()) == (0, f"harness {VERSION}")
