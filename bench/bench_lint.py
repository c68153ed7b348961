"""Lint throughput and memory on generated recordings of 10k, 100k and 1M exchanges.

The recordings cycle through the 32 clean exchanges of every operation x binding with a
counter in an argument value, so no two exchanges are alike (bench/varied.py), and are written
to a temporary folder. Each lint is the real ``harness lint`` command in a child process; its
memory is the peak resident set of the whole process tree (the command, the forkserver and its
workers), sampled from /proc every 50 ms. Memory should be flat across sizes: lint streams.

    .venv/bin/python bench/bench_lint.py                       # 10k, 100k, 1M; auto workers
    .venv/bin/python bench/bench_lint.py --sizes 10000 100000 --workers 1 2

The machine is shared: compare figures measured in one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peak_rss import measure
from varied import write_varied

from harness.contract.model import school_mobile

HARNESS = str(Path(sys.executable).parent / "harness")
TARGET = 20_000  # exchanges/s


def lint_once(path: Path, workers: int | None) -> tuple[float, int, int, str]:
    """(seconds, peak tree RSS KiB, exit status, summary line) of one ``harness lint``."""
    args = [HARNESS, "lint", str(path), "--quiet"]
    if workers:
        args += ["--workers", str(workers)]
    run = measure(args)
    summary = (run.out.strip().splitlines() or [run.err.strip()])[-1]
    return run.seconds, run.peak_kb, run.returncode, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[0],
                        help="worker counts to measure (0: the command's default)")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"{'exchanges':>10}  {'workers':>7}  {'MB':>6}  {'seconds':>8}  {'exch/s':>8}  "
          f"{'peak RSS MB':>11}  exit")
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"r{size}.jsonl"
            write_varied(path, school_mobile(), size)
            megabytes = path.stat().st_size / 1e6
            for workers in args.workers:
                seconds, peak, code, summary = lint_once(path, workers or None)
                print(f"{size:>10}  {workers or 'auto':>7}  {megabytes:>6.0f}  {seconds:>8.2f}  "
                      f"{size / seconds:>8.0f}  {peak / 1024:>11.1f}  {code}", flush=True)
                if code != 0:
                    print(f"  unexpected: {summary}")
            path.unlink()
    print(f"target: >= {TARGET} exchanges/s with flat memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
