"""Every process a command starts dies with it, kill -9 included (issue 35 item 5): after a
kill -9 of lint, replay or mock while their workers were busy, 3-4 workers (~110 MB each)
stayed for minutes; Allure's Node renderer finished its report for no one.

Each command is a real child process, killed with SIGKILL once its workers are up; every
process below it at that moment must be gone within a generous bound (not a timing claim:
without harness.lifeline they stayed for minutes).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from traffic import repeated_recording

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"
#: Generous bounds: a command that never gets its workers up, processes that never end.
START_TIMEOUT = 120
GONE_TIMEOUT = 30


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~22 MB of recorded exchanges: lint and replay judge it in worker processes (over
    2 MB), the mock indexes it in two (over 16 MB)."""
    return repeated_recording(SAMPLE, tmp_path_factory.mktemp("lifeline") / "big.jsonl", 600)


def processes_at_least(count: int) -> Callable[[list[psutil.Process]], bool]:
    return lambda below: len(below) >= count


def killed_mid_way(args: list[str], ready: Callable[[list[psutil.Process]], bool]
                   ) -> list[psutil.Process]:
    """Run ``harness ARGS`` until ``ready`` (given the processes below it), kill -9 it; the
    processes that were below it then."""
    child = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    command = psutil.Process(child.pid)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(below := _below(command)):
            assert child.poll() is None, f"harness {args[0]} ended before its workers were up"
            assert time.monotonic() < deadline, f"harness {args[0]}: no workers"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=GONE_TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return below


def _below(command: psutil.Process) -> list[psutil.Process]:
    try:
        return command.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def assert_all_gone(below: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(below, timeout=GONE_TIMEOUT)
    left = [p for p in alive if _status(p) != psutil.STATUS_ZOMBIE]
    for process in left:  # not to leave them to the next test
        process.kill()
    assert not left, f"left running after kill -9: {[_cmdline(p) for p in left]}"


def _status(process: psutil.Process) -> str:
    try:
        return process.status()
    except psutil.NoSuchProcess:
        return psutil.STATUS_ZOMBIE


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())[:100]
    except psutil.Error:
        return str(process.pid)


def test_lint_workers_die_with_lint(big: Path) -> None:
    # its 2 workers, forked from it (harness.judge.lint.LintJob.start_method)
    assert_all_gone(killed_mid_way(["lint", str(big), "--workers", "2", "--quiet"],
                                   processes_at_least(2)))


def test_lint_forks_its_workers_from_itself(big: Path) -> None:
    """lint's workers are copies of the command (fork): every module is imported already
    and there is no forkserver to start, ~0.5 s of CPU less per run than a forkserver's
    workers, each of which imported the harness again (bench/bench_lint.py)."""
    seen: dict[int, tuple[int, list[str]]] = {}

    def workers_seen(below: list[psutil.Process]) -> bool:
        for process in below:
            try:
                seen[process.pid] = (process.ppid(), process.cmdline())
            except psutil.Error:
                continue
        return len(below) >= 2

    args = ["lint", str(big), "--workers", "2", "--quiet"]
    assert_all_gone(killed_mid_way(args, workers_seen))
    command = [sys.executable, "-m", "harness", *args]
    assert len(seen) == 2, seen
    assert len({ppid for ppid, _ in seen.values()}) == 1, "workers of another process"
    assert [cmdline for _, cmdline in seen.values()] == [command, command], seen


def test_replay_workers_die_with_replay(big: Path, reference_url: str) -> None:
    if (psutil.cpu_count() or 1) < 2:
        pytest.skip("replay starts one worker process per core: one core, none")
    assert_all_gone(killed_mid_way(["replay", str(big), "--target", reference_url,
                                    "--quiet", "--allure-dir", ""], processes_at_least(4)))


def test_mock_indexers_die_with_the_mock(big: Path) -> None:
    if (psutil.cpu_count() or 1) < 2:
        pytest.skip("the mock indexes in one worker per core: one core, none")
    # the resource tracker and 2 indexers (spawned)
    assert_all_gone(killed_mid_way(["mock", str(big), "--port", "0", "--quiet"],
                                   processes_at_least(3)))


def test_allure_renderer_dies_with_the_command(tmp_path: Path) -> None:
    """Left alone, Node finished the report and appended the run to the history file: a run
    the killed command never reported showed in the next night's trend."""
    results = tmp_path / "results"
    results.mkdir()
    name = str(uuid.uuid4())
    (results / f"{name}-result.json").write_text(json.dumps({
        "uuid": name, "historyId": "one", "name": "one", "fullName": "one",
        "status": "passed", "stage": "finished", "start": 1_700_000_000_000,
        "stop": 1_700_000_000_100}), encoding="utf-8")
    history = tmp_path / "history.jsonl"
    below = killed_mid_way(["report", "--results", str(results), "--history", str(history),
                            "-o", str(tmp_path / "report.html")],
                           lambda below: any("allure" in _cmdline(p) for p in below))
    assert_all_gone(below)
    assert not history.exists()
