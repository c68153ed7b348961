"""A command's wall time, peak resident memory and CPU time (its whole process tree), for the
benches."""

from __future__ import annotations

import os
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
    #: user + system CPU seconds of the process and all its descendants, as last sampled
    #: (each process's last ~50 ms may be missed: noise well under 1% of a run of seconds)
    cpu_seconds: float = 0.0


_TICK = os.sysconf("SC_CLK_TCK")


def tree_rss_kb(pid: int, cpu: dict[int, float] | None = None) -> int:
    """Resident set of ``pid`` and all its descendants, in KiB; with ``cpu``, each one's CPU
    seconds so far noted there by process id."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines()
                              if line.startswith("VmRSS:")))
            if cpu is not None:  # utime and stime: fields 14 and 15, after "(comm)"
                fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
                cpu[current] = (int(fields[11]) + int(fields[12])) / _TICK
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError, IndexError):
            continue
    return total


def measure(args: list[str], cwd: Path | None = None,
            env: dict[str, str] | None = None) -> Measured:
    """Run ``args`` to its end, sampling its tree's RSS meanwhile."""
    started = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    peak = 0
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kb(child.pid, cpu))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    return Measured(seconds, peak, child.returncode, out, err, sum(cpu.values()))
