"""Lint throughput and memory on generated recordings of 10k, 100k and 1M exchanges.

The recordings cycle through the 32 clean exchanges of every operation x binding with a
counter in an argument value, so no two exchanges are alike (bench/varied.py), and are written
to a temporary folder. Each lint is the real ``harness lint`` command in a child process; its
memory is the peak resident set of the whole process tree (the command, the forkserver and its
workers), sampled from /proc every 50 ms, and so is its CPU time (user + system of the tree).
Memory should be flat across sizes: lint streams.

    .venv/bin/python bench/bench_lint.py                       # 10k, 100k, 1M; auto workers
    .venv/bin/python bench/bench_lint.py --sizes 10000 100000 --workers 1 2

The machine is shared: compare figures measured in one run. ``--compare DIR`` runs another
checkout of the harness (e.g. ``git worktree add /tmp/old main``) in alternating rounds with
this one, on the same recordings (``--rounds``), and prints the medians of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peak_rss import Measured, measure
from varied import write_varied

from harness.contract.model import school_mobile

TARGET = 26_000  # exchanges/s at 100k exchanges (a quarter of the 2-core parse floor)


def lint_once(path: Path, workers: int | None, code: Path | None = None) -> Measured:
    """One ``harness lint`` of ``path`` (``code``: the checkout to run, else this one)."""
    args = [sys.executable, "-m", "harness", "lint", str(path), "--quiet"]
    if workers:
        args += ["--workers", str(workers)]
    env = dict(os.environ)
    if code is not None:  # the other checkout's package comes first on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    return measure(args, cwd=path.parent, env=env)


def _row(name: str, size: int, workers: int, megabytes: float, run: Measured) -> str:
    return (f"{name:>5}  {size:>10}  {workers or 'auto':>7}  {megabytes:>6.0f}  "
            f"{run.seconds:>8.2f}  {size / run.seconds:>8.0f}  {run.cpu_seconds:>7.2f}  "
            f"{run.cpu_seconds / size * 1e6:>8.1f}  {run.peak_kb / 1024:>11.1f}  "
            f"{run.returncode}  {os.getloadavg()[0]:>5.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[0],
                        help="worker counts to measure (0: the command's default)")
    parser.add_argument("--compare", type=Path, metavar="DIR",
                        help="another checkout of the harness to run in alternating rounds")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each (default 1)")
    args = parser.parse_args()
    codes: dict[str, Path | None] = {"this": None}
    if args.compare is not None:
        codes["other"] = args.compare.resolve()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"{'code':>5}  {'exchanges':>10}  {'workers':>7}  {'MB':>6}  {'seconds':>8}  "
          f"{'exch/s':>8}  {'CPU s':>7}  {'CPU us/x':>8}  {'peak RSS MB':>11}  exit  load")
    with tempfile.TemporaryDirectory(prefix="bench-lint-") as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"r{size}.jsonl"
            write_varied(path, school_mobile(), size)
            megabytes = path.stat().st_size / 1e6
            for workers in args.workers:
                runs: dict[str, list[Measured]] = {name: [] for name in codes}
                for round_ in range(args.rounds):
                    order = list(codes) if round_ % 2 == 0 else list(reversed(codes))
                    for name in order:  # alternating: drifts of the machine hit both
                        run = lint_once(path, workers or None, codes[name])
                        runs[name].append(run)
                        print(_row(name, size, workers, megabytes, run), flush=True)
                        if run.returncode != 0:
                            said = (run.out.strip().splitlines() or [run.err.strip()])[-1]
                            print(f"  unexpected: {said}")
                if args.rounds > 1 or len(codes) > 1:
                    for name, done in runs.items():
                        seconds = statistics.median(r.seconds for r in done)
                        cpu = statistics.median(r.cpu_seconds for r in done)
                        print(f"  median {name}: {size / seconds:,.0f} exchanges/s, "
                              f"{cpu / size * 1e6:.1f} us CPU per exchange, peak RSS "
                              f"{max(r.peak_kb for r in done) / 1024:.0f} MB")
            path.unlink()
    print(f"target: >= {TARGET} exchanges/s at 100k exchanges, with flat memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
