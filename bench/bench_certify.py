"""Wall and CPU time of a full ``harness certify`` against the embedded reference: command start
to exit, Allure results and the HTML report included (and without the HTML, to show its share).

    .venv/bin/python bench/bench_certify.py [--runs 3] [--against OTHER_CHECKOUT] [--phases]

CPU is user + system time of the whole process tree (certify, and the Node renderer it waits
for), from wait4: on a busy machine wall time stretches while CPU time barely moves. With
``--against`` (another checkout with its own .venv, e.g. a worktree of main) both are run in
the same rounds, alternating which goes first, so a noisy machine weighs on both alike; the
ratio of their medians is the figure to quote. The load average is printed before and after.

Each run writes into a folder of its own (its reports, as certify's ``reports/`` is written
into the project it runs in), in ``--scratch`` (default: a hidden folder in this checkout, not
/tmp), and all of them are deleted only when the bench ends. On ext4 without a journal, as on
the machines these figures come from, creating a file scans past every inode of its block
group freed in the last half minute or so: deleting a run's 1,930 files before the next run
made that run up to a second slower, and so does /tmp right after the test suite or another
bench emptied its folders there (1,900 files: 0.06 s in a quiet folder of the same disk,
1.5 s in /tmp then). Both are costs of the machine's churn, not of certify; ``--scratch
/tmp`` measures them.

``--phases`` adds runs (with the HTML report) through bench/certify_phases.py, which times
each phase inside the command (wall and CPU from one edge to the next, medians): where the
time goes.
"""

from __future__ import annotations

import argparse
import json
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


PHASES = ROOT / "bench" / "certify_phases.py"


def one_run(python: str, extra: list[str], scratch: Path, phases: bool = False
            ) -> tuple[float, float, list | None]:
    """(wall seconds, CPU seconds of the process tree, the phases' marks or None) of one
    certify run, in a new folder in ``scratch`` (deleted with it, at the bench's end)."""
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    started = time.perf_counter()
    how = [str(PHASES)] if phases else ["-m", "harness"]
    child = subprocess.Popen([python, *how, "certify", "--quiet", "--report-dir",
                              str(work / "reports"), "--json", str(work / "c.json"), *extra],
                             cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"bench: {python} certify exited {child.returncode}: {err.decode().strip()}")
    marks = json.loads(err.decode().strip().splitlines()[-1]) if phases else None
    return elapsed, usage.ru_utime + usage.ru_stime, marks


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout (with its .venv) run in the same rounds")
    parser.add_argument("--scratch", type=Path, default=ROOT, metavar="DIR",
                        help="where the runs' folders are made (default: this checkout)")
    parser.add_argument("--phases", action="store_true",
                        help="also time each phase inside the command (bench/certify_phases.py)")
    args = parser.parse_args()
    setups = {"this": str(ROOT / ".venv" / "bin" / "python")}
    if args.against:
        setups["against"] = str(args.against.resolve() / ".venv" / "bin" / "python")
    print(f"load average at start: {load()}")
    figures: dict[tuple[str, str], list[tuple[float, float, list | None]]] = {}
    modes = [*MODES, *([("phases", [])] if args.phases else [])]
    print(f"runs' folders in: {args.scratch.resolve()}")
    with tempfile.TemporaryDirectory(prefix=".bench-certify-", dir=args.scratch) as scratch:
        run_rounds(args.runs, setups, modes, figures, Path(scratch))
    print(f"load average at end: {load()}")
    for (name, mode), runs in figures.items():
        if mode == "phases":
            continue
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
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
    if args.phases:
        print_phases({name: figures[name, "phases"] for name in setups})


def run_rounds(runs: int, setups: dict[str, str], modes: list, figures: dict,
               scratch: Path) -> None:
    """Each round runs every setup in every mode, the setups' order alternating."""
    for round_ in range(runs):
        order = list(setups.items())
        if round_ % 2:
            order.reverse()
        for name, python in order:
            for mode, extra in modes:
                figures.setdefault((name, mode), []).append(
                    one_run(python, extra, scratch, phases=mode == "phases"))


def _ratio(this: list, other: list, i: int) -> float:
    return statistics.median(r[i] for r in this) / statistics.median(r[i] for r in other)


def print_phases(runs: dict[str, list]) -> None:
    """Where the time goes: each phase (from one mark to the next) as wall / CPU seconds,
    medians over the runs, one column per checkout. "interpreter" is the wall time before
    the first mark and after the last (Python starting, exiting)."""
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for name, rounds in runs.items():
        phases: dict[str, list[tuple[float, float]]] = {}
        for wall, _cpu, marks in rounds:
            previous = marks[0]
            for mark in marks[1:]:
                label = f"{previous[0]} -> {mark[0]}"
                spent = (mark[1] - previous[1], mark[2] + mark[3] - previous[2] - previous[3])
                phases.setdefault(label, []).append(spent)
                previous = mark
            phases.setdefault("interpreter", []).append((wall - marks[-1][1], 0.0))
        for label, spent in phases.items():
            table.setdefault(label, {})[name] = (statistics.median(w for w, _ in spent),
                                                 statistics.median(c for _, c in spent))
    names = list(runs)
    print("phase".ljust(44) + "".join(f"{n + ' wall / CPU s':>26}" for n in names))
    for label, by_name in table.items():
        cells = "".join(f"{by_name[n][0]:>15.2f} / {by_name[n][1]:<8.2f}" if n in by_name
                        else f"{'-':>26}" for n in names)
        print(label.ljust(44) + cells)


if __name__ == "__main__":
    main()
