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
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from varied import write_varied

from harness.contract.model import school_mobile

HARNESS = str(Path(sys.executable).parent / "harness")
TARGET = 20_000  # exchanges/s


def _tree_rss_kb(pid: int) -> int:
    """Resident set of ``pid`` and all its descendants, in KiB."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines()
                              if line.startswith("VmRSS:")))
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def lint_once(path: Path, workers: int | None) -> tuple[float, int, int, str]:
    """(seconds, peak tree RSS KiB, exit status, summary line) of one ``harness lint``."""
    args = [HARNESS, "lint", str(path), "--quiet"]
    if workers:
        args += ["--workers", str(workers)]
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(child.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    summary = (out.strip().splitlines() or [err.strip()])[-1]
    return seconds, peak, child.returncode, summary


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
