"""Peak memory of certify, replay and diff against oversize targets: a 2 GB body, an endless
chunked body and a gzip bomb (~10 GB decoded), served on loopback by tests/hostile.py.

Each run is the real ``harness`` command in a child process with its default options
(--max-response-mb 16, replay --concurrency 8, diff --jobs 8), except --timeout 30; its memory
is the peak resident set of the whole process tree (the command, replay's forkserver and
workers), sampled from /proc every 50 ms as bench/bench_lint.py does. Target: <= 300 MB each
(replay used to reach 16 GB on a 2 GB body).

    .venv/bin/python bench/bench_oversize.py
    .venv/bin/python bench/bench_oversize.py --kinds gzip-bomb --commands replay
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from hostile import serve  # noqa: E402
from peak_rss import measure as measure_run  # noqa: E402
from traffic import clean_exchanges, write_recording  # noqa: E402

from harness.contract.model import school_mobile  # noqa: E402

HARNESS = str(Path(sys.executable).parent / "harness")
TARGET_MB = 300
KINDS = ("huge", "endless", "gzip-bomb")
COMMANDS = ("certify", "replay", "diff", "load")


def command_line(command: str, url: str, tmp: Path, recording: Path) -> list[str]:
    common = ["--timeout", "30", "--namespace", "http://tempuri.org/"]
    if command == "certify":
        return [HARNESS, "certify", "--target", url, "--no-html", "--report-dir",
                str(tmp / "reports"), *common]
    if command == "replay":
        return [HARNESS, "replay", str(recording), "--target", url, "--quiet", *common]
    if command == "load":  # 320 requests, 300 in flight at once
        return [HARNESS, "load", str(recording), "--target", url, "--quiet", "--loop", "10",
                "--rate", "1000", "--concurrency", "300", *common]
    return [HARNESS, "diff", "--primary", url, "--candidate", url, "--allure-dir", "", *common]


def measure(args: list[str], cwd: Path) -> tuple[float, int, int, str]:
    """(seconds, peak tree RSS KiB, exit status, last output line) of one run."""
    run = measure_run(args, cwd)
    lines = [line for line in (run.out + run.err).splitlines()
             if "FAILED" in line or "error" in line]
    return run.seconds, run.peak_kb, run.returncode, (lines or [""])[-1][:100]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=COMMANDS)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"{'command':>8}  {'target':>9}  {'seconds':>7}  {'peak RSS MB':>11}  exit  summary")
    worst = 0
    with tempfile.TemporaryDirectory(prefix="bench-oversize-") as tmp:
        folder = Path(tmp)
        recording = write_recording(folder / "r.jsonl", clean_exchanges(school_mobile()))
        for kind in args.kinds:
            with serve(kind) as url:
                for command in args.commands:
                    seconds, peak, code, summary = measure(
                        command_line(command, url, folder, recording), folder)
                    worst = max(worst, peak)
                    print(f"{command:>8}  {kind:>9}  {seconds:>7.1f}  {peak / 1024:>11.1f}  "
                          f"{code:>4}  {summary}", flush=True)
    verdict = "met" if worst / 1024 <= TARGET_MB else "NOT met"
    print(f"target: peak RSS <= {TARGET_MB} MB: {verdict} (worst {worst / 1024:.0f} MB); "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
