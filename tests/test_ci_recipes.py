"""The CI recipes of docs/ci.md (``ci/``): each recipe's shell steps run, in order, in a shell
against the embedded reference, with the secret passed only the way the recipe passes it; then
the files its publishing steps look for must be there. What no runner here can run (the
publishing steps themselves, the image build: no Docker daemon) is validated statically."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "ci"
SECRET = "s3cret-from-the-ci"


def _load(name: str) -> dict:
    return yaml.safe_load((CI / name).read_text(encoding="utf-8"))


def gitlab() -> tuple[list[tuple[str, dict]], list[str]]:
    job = _load("gitlab-ci.yml")["certify-staging"]
    artifacts = job["artifacts"]
    assert artifacts["when"] == "always"
    # GitLab hands CI/CD variables to every script line by itself
    steps = [(line, {"STAGING_PASSWORD": SECRET}) for line in job["script"]]
    return steps, [*artifacts["paths"], artifacts["reports"]["junit"]]


def github() -> tuple[list[tuple[str, dict]], list[str]]:
    job = _load("github-actions.yml")["jobs"]["certify"]
    steps, published = [], []
    for step in job["steps"]:
        if "run" in step:  # a secret reaches a step only through its env mapping
            env = {k: v.replace("${{ secrets.STAGING_PASSWORD }}", SECRET)
                   for k, v in step.get("env", {}).items()}
            steps.append((step["run"], env))
        elif step["uses"].split("@")[0] in ("mikepenz/action-junit-report",
                                            "actions/upload-artifact"):
            assert step.get("if") == "always()", step
            published += [step["with"].get("report_paths") or step["with"]["path"]]
    return steps, published


def azure() -> tuple[list[tuple[str, dict]], list[str]]:
    pipeline = _load("azure-pipelines.yml")
    steps, published = [], []
    for step in pipeline["steps"]:
        if "script" in step:  # secret variables reach a script only when mapped
            env = {k: v.replace("$(STAGING_PASSWORD)", SECRET)
                   for k, v in step.get("env", {}).items()}
            steps.append((step["script"], env))
        elif "task" in step:
            assert step["condition"] == "succeededOrFailed()", step
            inputs = step["inputs"]
            published.append(inputs.get("testResultsFiles") or inputs["targetPath"])
    return steps, published


def jenkins() -> tuple[list[tuple[str, dict]], list[str]]:
    text = (CI / "Jenkinsfile").read_text(encoding="utf-8")
    assert "credentials('staging-password')" in text  # the environment block maps the secret
    steps = [(script, {"STAGING_PASSWORD": SECRET})
             for script in re.findall(r"\bsh(?:\(script:)? '([^']+)'", text)]
    always = text[text.index("post {"):]
    assert re.match(r"post \{\s+always \{", always)
    report = re.search(r"reportDir: '([^']+)',\s+reportFiles: '([^']+)'", always)
    published = [*re.findall(r"junit testResults: '([^']+)'", always),
                 f"{report[1]}/{report[2]}",
                 *re.findall(r"archiveArtifacts artifacts: '([^']+)'", always)]
    return steps, published


RECIPES = {"gitlab": gitlab, "jenkins": jenkins, "github": github, "azure": azure}
#: The job's checkout after a run of each distinct sequence of steps (with the environment each
#: step gets): recipes whose steps are the same, secrets' mapping included, are run once.
_RUNS: dict[tuple, Path] = {}


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_each_recipe_s_steps_run_and_publish_what_they_wrote(
        recipe: str, reference_url: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    steps, published = RECIPES[recipe]()
    assert len(steps) >= 2 and len(published) >= 2
    key = tuple((script, tuple(sorted(env.items()))) for script, env in steps)
    if key not in _RUNS:
        _RUNS[key] = _run(recipe, steps, reference_url, tmp_path_factory.mktemp(recipe))
    tmp_path = _RUNS[key]
    missing = [path for path in published if not (tmp_path / path).exists()]
    assert not missing, f"{recipe} publishes {missing}, which its steps did not write"
    cases = ElementTree.parse(tmp_path / "reports/certify.xml").getroot().iter("testcase")
    assert len(list(cases)) >= 1
    report = json.loads((tmp_path / "reports/certify.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "passed" and report["environment"] == "staging"
    assert (tmp_path / "reports/allure-report/index.html").stat().st_size > 10_000
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in
                p.read_bytes()]


def _run(recipe: str, steps: list[tuple[str, dict]], reference_url: str, tmp_path: Path) -> Path:
    """``steps`` run in order, each in a shell of its own, in a checkout at ``tmp_path``."""
    # the job's checkout: harness.toml as docs/ci.md writes it, narrowed to one call for speed
    (tmp_path / "harness.toml").write_text(
        f'[env.staging]\ntarget = "{reference_url}"\nuser = "qa-robot:${{STAGING_PASSWORD}}"\n'
        'timeout = 20\noperations = ["GetTokenDevice"]\nbindings = ["soap11"]\n',
        encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if k != "STAGING_PASSWORD"}
    # the image's harness: this checkout's, with Node and Allure as scripts/setup installs them
    base["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{base['PATH']}"
    for script, env in steps:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env={**base, **env},
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{recipe}: {script}\n{done.stdout}\n{done.stderr}"
        assert SECRET not in done.stdout + done.stderr
    return tmp_path


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of ci/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (CI / "Dockerfile").read_text(encoding="utf-8"))
    return [tuple(line.split(None, 1)) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_ci_image_recipe_is_consistent_with_the_repository() -> None:
    """Validated, not built (no Docker daemon where the tests run): the bases, Allure's
    version, the files it copies, what .dockerignore lets through, how CIs start it."""
    instructions = _dockerfile()
    names = [name for name, _ in instructions]
    assert "ENTRYPOINT" not in names and "USER" not in names and "CMD" not in names
    bases = [args.split()[0] for name, args in instructions if name == "FROM"]
    python = next(b for b in bases if b.startswith("python:"))
    node = next(b for b in bases if b.startswith("node:"))
    assert tuple(map(int, re.match(r"python:(\d+)\.(\d+)", python).groups())) >= (3, 12)
    assert int(re.match(r"node:(\d+)", node)[1]) >= 20
    pinned = json.loads((ROOT / "tools/package.json").read_text())["dependencies"]["allure"]
    assert f"allure@{pinned}" in " ".join(args for _, args in instructions)
    run = " ".join(args for name, args in instructions if name == "RUN")
    assert "--require-hashes -r requirements.lock" in run and "--no-deps ." in run
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    for name, args in instructions:
        if name == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert (ROOT / source).exists(), source
                assert source.rstrip("/") in allowed, f".dockerignore leaves out {source}"
    # the package's own sources: everything the build maps (setup.py) is copied
    for folder in ("harness", "features", "steps"):
        assert folder in allowed
    # every recipe runs in that image
    for recipe in ("gitlab-ci.yml", "github-actions.yml", "azure-pipelines.yml", "Jenkinsfile"):
        assert re.search(r"harness-ci:\S+.*from ci/Dockerfile",
                         (CI / recipe).read_text(encoding="utf-8")), recipe
