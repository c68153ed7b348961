"""Wall time of a full ``harness certify`` against the embedded reference: command start to
exit, Allure results and the HTML report included (and without the HTML, to show its share).

    .venv/bin/python bench/bench_certify.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(extra: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-certify-") as work:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "harness", "certify", "--report-dir",
                               str(Path(work) / "reports"), "--json",
                               str(Path(work) / "c.json"), *extra],
                              cwd=work, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"bench: certify exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for label, extra in (("certify (features + JSON + Allure results + HTML)", []),
                         ("certify --no-html (features + JSON + Allure results)", ["--no-html"])):
        times = [one_run(extra) for _ in range(args.runs)]
        print(f"{label}: median {statistics.median(times):.2f} s, "
              f"min {min(times):.2f} s, max {max(times):.2f} s over {args.runs} runs")


if __name__ == "__main__":
    main()
