"""Wall and CPU time of a full ``harness certify`` against the embedded reference: command start
to exit, Allure results and the HTML report included (and without the HTML, to show its share).

    .venv/bin/python bench/bench_certify.py [--runs 3] [--against OTHER_CHECKOUT]

CPU is user + system time of the whole process tree (certify, and the Node renderer it waits
for), from wait4: on a busy machine wall time stretches while CPU time barely moves. With
``--against`` (another checkout with its own .venv, e.g. a worktree of main) both are run in
the same rounds, alternating which goes first, so a noisy machine weighs on both alike; the
ratio of their medians is the figure to quote. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What each setup runs: with the HTML report (the main job) and without it.
MODES = (("html", []), ("no-html", ["--no-html"]))


def one_run(python: str, extra: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process tree) of one certify run."""
    with tempfile.TemporaryDirectory(prefix="bench-certify-") as work:
        started = time.perf_counter()
        child = subprocess.Popen([python, "-m", "harness", "certify", "--quiet", "--report-dir",
                                  str(Path(work) / "reports"), "--json",
                                  str(Path(work) / "c.json"), *extra],
                                 cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert child.stderr is not None
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"bench: {python} certify exited {child.returncode}: {err.decode().strip()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout (with its .venv) run in the same rounds")
    args = parser.parse_args()
    setups = {"this": str(ROOT / ".venv" / "bin" / "python")}
    if args.against:
        setups["against"] = str(args.against.resolve() / ".venv" / "bin" / "python")
    print(f"load average at start: {load()}")
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(args.runs):
        order = list(setups.items())
        if round_ % 2:
            order.reverse()
        for name, python in order:
            for mode, extra in MODES:
                figures.setdefault((name, mode), []).append(one_run(python, extra))
    print(f"load average at end: {load()}")
    for (name, mode), runs in figures.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        label = "certify" + ("" if mode == "html" else " --no-html")
        tree = "" if name == "this" else f" [{args.against}]"
        print(f"{label}{tree}: wall median {statistics.median(walls):.2f} s (min "
              f"{min(walls):.2f}, max {max(walls):.2f}), CPU median "
              f"{statistics.median(cpus):.2f} s over {len(runs)} runs")
    if args.against:
        for mode, _ in MODES:
            this, other = figures["this", mode], figures["against", mode]
            print(f"{mode}: this/against wall {_ratio(this, other, 0):.2f}, "
                  f"CPU {_ratio(this, other, 1):.2f}")


def _ratio(this: list[tuple[float, float]], other: list[tuple[float, float]], i: int) -> float:
    return statistics.median(r[i] for r in this) / statistics.median(r[i] for r in other)


if __name__ == "__main__":
    main()
