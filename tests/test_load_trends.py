"""harness load's shapes and run-over-run trends (issue 24): a ramp the user count follows
(Locust's LoadTestShape), and --baseline failing on a slowdown planted in a real loopback
server, passing when nothing changed, refusing a file that is not a load run."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from faulty import serve_fault
from traffic import clean_exchanges, write_recording

from harness.contract.model import Contract
from harness.errors import UsageError
from harness.judge.findings import Verdict
from harness.load.shape import parse_shape
from harness.load.trend import Limits, compare, stats_line
from harness.reference.app import Delayed, answer
from harness.traffic.exchange import HttpRequest, HttpResponse

HARNESS = [sys.executable, "-m", "harness"]
TIMEOUT = 240


@pytest.fixture
def recording(contract: Contract, tmp_path: Path) -> Path:
    exchanges = [replace(ex, timings={"started": 1_800_000_000.0 + i * 0.02})
                 for i, ex in enumerate(clean_exchanges(contract))]
    return write_recording(tmp_path / "clean.jsonl", exchanges)


def load(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "load", *map(str, args), "--quiet"], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def slowed(seconds: float):
    def respond(contract: Contract, request: HttpRequest) -> HttpResponse | Delayed:
        return Delayed(answer(contract, request), seconds)  # holds no thread
    return respond


def test_the_user_count_follows_a_ramp_then_holds(recording: Path, tmp_path: Path) -> None:
    with serve_fault(slowed(0.02)) as url:
        done = load(recording, "--target", url, "--shape", "ramp:0..4/4s,hold:2s",
                    "--json", tmp_path / "r.json")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["mode"] == "shape" and data["shape"] == "ramp:0..4/4s,hold:2s"
    assert data["verdict"] == "passed" and data["sent"] > 32  # sent over and over
    timeline = data["users_over_time"]  # [seconds, users the shape asks, users running]
    asked = [users for _, users, _ in timeline]
    assert asked[:5] == [0, 1, 2, 3, 4] and asked[-1] is None  # one tick a second, then ends
    assert set(asked[5:-1]) == {4}
    # Locust starts each tick's count before the next tick: the runner had what was asked.
    running = [users for _, _, users in timeline]
    assert running[1:] == asked[:-1], timeline


def test_a_shape_on_a_master_and_two_workers(recording: Path, tmp_path: Path) -> None:
    """The master's shape deals the users to the workers; each worker reports its end when
    the shape ends and exits 0; every request Locust counted is judged."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    workers = [subprocess.Popen([*HARNESS, "load", "--worker", "--master-port", port,
                                 str(recording)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    try:
        with serve_fault(slowed(0.02)) as url:
            done = load(recording, "--target", url, "--master", "--expect-workers", "2",
                        "--master-port", port, "--shape", "step:2/2s,step:4/2s",
                        "--json", tmp_path / "m.json")
        outs = [w.communicate(timeout=90)[0] for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    assert done.returncode == 0, done.stdout + done.stderr
    assert [w.returncode for w in workers] == [0, 0], outs
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed" and data["workers"] == 2
    assert data["sent"] == data["requests"] > 32 and all(n > 0 for n in data["sent_by_worker"])
    timeline = data["users_over_time"]  # the master's count comes from the workers' reports
    asked = [users for _, users, _ in timeline]
    assert asked[0] == 2 and 4 in asked and asked[-1] is None
    assert max(users for _, _, users in timeline) == 4


def test_a_shape_and_its_dry_run(recording: Path) -> None:
    done = load(recording, "--target", "http://127.0.0.1:9", "--dry-run",
                "--shape", "steps:2..6+2/10s")
    assert done.returncode == 0, done.stderr
    assert "shape steps:2..6+2/10s: 30 s, at most 6 user(s)" in done.stdout


@pytest.mark.parametrize("shape", ["hold:3s", "ramp:0..5", "ramp:0..5/0s", "step:0/3s",
                                   "walk:3/3s", "ramp:0..99999/3s"])
def test_a_bad_shape_is_one_line_exit_2(recording: Path, shape: str) -> None:
    done = load(recording, "--target", "http://127.0.0.1:9", "--shape", shape)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--shape" in done.stderr and "Traceback" not in done.stderr


def test_shape_stages() -> None:
    shape = parse_shape("ramp:0..50/60s,hold:2m,step:10/30,steps:20..40+10/1m")
    assert shape.duration == 60 + 120 + 30 + 180 and shape.peak == 50
    assert [shape.users_at(t) for t in (0, 30, 59.9, 61, 185, 211, 271, 331, 390)] == \
        [0, 25, 50, 50, 10, 20, 30, 40, None]
    with pytest.raises(UsageError):
        parse_shape("step:0/3s")


def test_baseline_fails_on_a_planted_slowdown(recording: Path, tmp_path: Path) -> None:
    flags = ["--users", "8", "--loop", "10"]
    with serve_fault(answer) as url:
        first = load(recording, "--target", url, *flags, "--json", tmp_path / "before.json")
        assert first.returncode == 0, first.stdout + first.stderr
        # Nothing changed: within generous limits the run passes, every pair compared.
        same = load(recording, "--target", url, *flags, "--json", tmp_path / "same.json",
                    "--baseline", tmp_path / "before.json", "--min-regression-ms", "1000",
                    "--max-rps-regression", "99%")
    assert same.returncode == 0, same.stdout + same.stderr
    unchanged = json.loads((tmp_path / "same.json").read_text(encoding="utf-8"))
    assert unchanged["rules"]["LOAD-TREND-P95"] == {"passed": 33}  # 32 pairs and in all
    with serve_fault(slowed(0.25)) as slow:
        after = load(recording, "--target", slow, *flags, "--json", tmp_path / "after.json",
                     "--junit", tmp_path / "after.xml",
                     "--baseline", tmp_path / "before.json", "--max-p95-regression", "20%")
    assert after.returncode == 1, after.stdout + after.stderr
    assert "p95 regressed beyond the limit" in after.stdout
    data = json.loads((tmp_path / "after.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "failed" and data["baseline_run"].endswith("before.json")
    failed = {(f["operation"], f["binding"]) for f in data["findings"]
              if f["rule"] == "LOAD-TREND-P95" and f["verdict"] == "failed"}
    assert ("(all)", "(all)") in failed and ("AuthCode", "SOAP 1.1") in failed
    example = next(f for f in data["findings"] if f["rule"] == "LOAD-TREND-P95")
    assert example["expected"].startswith("p95 at most") and "ms" in example["actual"]
    assert data["rules"]["LOAD-TREND-FAILURES"] == {"passed": 33}  # slower, not failing
    assert "LOAD-TREND-P95" in (tmp_path / "after.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize("content", ['{"command": "lint", "verdict": "passed"}', "not json"])
def test_a_baseline_that_is_not_a_load_run_is_one_line_exit_2(recording: Path, tmp_path: Path,
                                                               content: str) -> None:
    (tmp_path / "other.json").write_text(content, encoding="utf-8")
    done = load(recording, "--target", "http://127.0.0.1:9", "--baseline",
                tmp_path / "other.json")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--baseline" in done.stderr


def test_comparison_limits() -> None:
    def line(p95: float, rps: float, failures: int = 0, n: int = 100) -> dict:
        return stats_line("AuthCode", "SOAP 1.1", n, failures, n / rps, p95, p95, p95)

    baseline = {"path": "b.json", "stats": [line(100, 50)], "timing": {"mode": "users"}}

    def verdicts(now: dict, **limits: float) -> dict[str, Verdict]:
        return {f.rule: f.verdict for f in compare(baseline, [now], {"mode": "users"},
                                                   Limits(**limits))}

    assert set(verdicts(line(119, 41)).values()) == {Verdict.PASSED}
    assert verdicts(line(121, 50))["LOAD-TREND-P95"] is Verdict.FAILED
    assert verdicts(line(121, 50), min_ms=30)["LOAD-TREND-P95"] is Verdict.PASSED
    assert verdicts(line(100, 39))["LOAD-TREND-RPS"] is Verdict.FAILED
    assert verdicts(line(100, 50, failures=2))["LOAD-TREND-FAILURES"] is Verdict.FAILED
    assert set(verdicts(line(999, 1, n=5)).values()) == {Verdict.NOT_APPLICABLE}
    other = compare(baseline, [line(100, 10)], {"mode": "rate"}, Limits())
    assert {f.rule: f.verdict for f in other}["LOAD-TREND-RPS"] is Verdict.NOT_APPLICABLE
