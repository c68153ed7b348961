"""A command's wall time and peak resident memory (its whole process tree), for the benches."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_kb: int  # peak RSS of the process and all its descendants, sampled every 50 ms
    returncode: int
    out: str
    err: str


def tree_rss_kb(pid: int) -> int:
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


def measure(args: list[str], cwd: Path | None = None) -> Measured:
    """Run ``args`` to its end, sampling its tree's RSS meanwhile."""
    started = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kb(child.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    return Measured(seconds, peak, child.returncode, out, err)
