"""Replay throughput with checks against a bare client sending the same requests, in one run.

The recording cycles through the 32 clean exchanges of every operation x binding with a
counter in an argument value, so no two exchanges are alike (bench/varied.py). The reference
runs as a real ``harness serve`` process on loopback. Both sides use the same
engine, process count and threads (``--concurrency`` spread over one process per core, each
with its own httpx client): the bare client only sends and reads each response; replay also
judges it with the response-side rules and compares it with the recorded one. Runs alternate
(bare, checked, bare, checked, ...) so that load from elsewhere hits both alike.

    .venv/bin/python bench/bench_replay.py                     # 3,200 exchanges, concurrency 8
    .venv/bin/python bench/bench_replay.py --exchanges 6400 --concurrency 16 --rounds 3

Target: replay with checks >= 90% of the bare client's rate.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from varied import write_varied

from harness.contract.model import school_mobile
from harness.errors import TargetUnreachable
from harness.replay import Layout, replay
from harness.traffic.send import check_reachable

HARNESS = str(Path(sys.executable).parent / "harness")
TARGET_RATIO = 0.90


def start_server() -> tuple[subprocess.Popen, str]:
    """``harness serve --port 0``; its first stderr line names the bound URL."""
    server = subprocess.Popen([HARNESS, "serve", "--port", "0"], stderr=subprocess.PIPE,
                              text=True)
    line = server.stderr.readline() if server.stderr else ""
    found = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not found:
        server.kill()
        raise SystemExit(f"harness serve did not start: {line.strip()}")
    for _ in range(100):  # the line may come before the socket accepts
        try:
            check_reachable(found.group(0), timeout=0.5)
            break
        except TargetUnreachable:
            time.sleep(0.1)
    return server, found.group(0)


def timed(path: Path, url: str, concurrency: int, check: bool) -> tuple[float, int]:
    """(seconds, failed findings) of one replay of ``path``."""
    started = time.perf_counter()
    report = replay([path], school_mobile(), url, concurrency=concurrency, check=check)
    return time.perf_counter() - started, report.counts["failed"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=3200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    layout = Layout.for_concurrency(args.concurrency)
    server, url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
            path = write_varied(Path(tmp) / "r.jsonl", school_mobile(), args.exchanges)
            timed(path, url, args.concurrency, check=False)  # warm-up: connections, imports
            print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; "
                  f"{args.exchanges} exchanges, concurrency {args.concurrency} = "
                  f"{layout.processes} processes x {layout.threads} threads; server {url}")
            print(f"{'round':>5}  {'client':<14}  {'seconds':>8}  {'exch/s':>8}  failed")
            rates: dict[str, list[float]] = {"bare": [], "replay+checks": []}
            for n in range(1, args.rounds + 1):
                for name, check in (("bare", False), ("replay+checks", True)):
                    seconds, failed = timed(path, url, args.concurrency, check)
                    rates[name].append(args.exchanges / seconds)
                    print(f"{n:>5}  {name:<14}  {seconds:>8.2f}  {rates[name][-1]:>8.0f}  "
                          f"{failed}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    bare, checked = max(rates["bare"]), max(rates["replay+checks"])
    ratio = checked / bare
    print(f"best: bare {bare:.0f}/s, replay+checks {checked:.0f}/s, ratio {ratio:.2f} "
          f"(target >= {TARGET_RATIO:.2f}: {'met' if ratio >= TARGET_RATIO else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
