"""harness load throughput against harness replay, and 1 worker against 2 workers, in one run.

The recording cycles through the 32 clean exchanges of every operation x binding with a
counter in an argument value, so no two exchanges are alike (bench/varied.py); the reference
runs as a real ``harness serve`` process on loopback. Every run judges every answer.

- replay: ``harness.replay.replay`` with ``--concurrency`` (processes x threads);
- load, one process: ``harness load --users C`` (closed model, C requests in flight);
- load, master + 1 worker and master + 2 workers: the same, distributed on loopback;
- load, master + 2 workers against a target whose every answer is a 500 (an in-process
  loopback server): each exchange fails several rules, the master's worst case.

The load runs say their request rate (requests / span from first to last sent) and the CPU
time of each worker and of the master: the per-worker figures docs/load.md works out N machines
from.

    .venv/bin/python bench/bench_load.py                      # 3,200 exchanges, 8 in flight
    .venv/bin/python bench/bench_load.py --exchanges 6400 --rounds 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_replay import start_server
from faulty import serve_fault, where
from varied import write_varied

from harness.contract.model import school_mobile
from harness.replay import replay
from harness.traffic.exchange import HttpResponse

HARNESS = str(Path(sys.executable).parent / "harness")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _all_500(contract, op, binding, response: HttpResponse) -> HttpResponse:
    """Every answer a 500: each exchange fails several rules (the master's worst case: every
    failure crosses from a worker to the master and into the report)."""
    return replace(response, status=500, reason="Internal Server Error")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def own_cpu() -> float:
    """CPU seconds of this process and every process under it: replay's worker processes are
    children of multiprocessing's forkserver (a child of ours), which adds them to its own
    cutime/cstime when they end."""
    total = sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
                for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def run_replay(path: Path, url: str, concurrency: int, exchanges: int) -> dict:
    started, cpu = time.perf_counter(), own_cpu()
    report = replay([path], school_mobile(), url, concurrency=concurrency)
    seconds = time.perf_counter() - started
    return {"rate": exchanges / seconds, "failed": report.counts["failed"],
            "cpu": f"replay CPU ms/request {1000 * (own_cpu() - cpu) / exchanges:.2f}"}


def run_load(path: Path, url: str, users: int, workers: int, out: Path) -> dict:
    """One ``harness load`` run (workers = 0: one process), its report's figures."""
    args = [HARNESS, "load", str(path), "--target", url, "--users", str(users), "--quiet",
            "--json", str(out)]
    helpers = []
    if workers:
        port = str(free_port())
        helpers = [subprocess.Popen([HARNESS, "load", "--worker", "--master-port", port,
                                     str(path)]) for _ in range(workers)]
        args += ["--master", "--expect-workers", str(workers), "--master-port", port]
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=1800)
    for helper in helpers:
        helper.wait(timeout=60)
    if done.returncode not in (0, 1) or not out.exists():
        raise SystemExit(f"harness load failed: {done.stderr.strip()}")
    data = json.loads(out.read_text(encoding="utf-8"))
    span = data["sent_span_s"] or 1e-9
    cpu = data["worker_cpu_s"]
    per_request_ms = [1000 * c / max(s, 1) for c, s in zip(cpu, data["sent_by_worker"],
                                                          strict=True)]
    figures = {"rate": data["sent"] / span, "failed": data["counts"]["failed"],
               "cpu": "worker CPU ms/request " + ", ".join(f"{ms:.2f}" for ms in per_request_ms)}
    if "master_cpu_s" in data:
        figures["cpu"] += f"; master CPU ms/request {1000 * data['master_cpu_s'] /
                                                      max(data['sent'], 1):.3f}"
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=3200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    server, url = start_server()
    rates: dict[str, list[float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
            path = write_varied(Path(tmp) / "r.jsonl", school_mobile(), args.exchanges)
            replay([path], school_mobile(), url, concurrency=args.concurrency)  # warm-up
            print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; "
                  f"{args.exchanges} exchanges, {args.concurrency} in flight; server {url}")
            print(f"{'round':>5}  {'run':<22}  {'req/s':>7}  failed  cost")
            runs = [("replay", lambda: run_replay(path, url, args.concurrency, args.exchanges))]
            runs += [(name, lambda w=w: run_load(path, url, args.concurrency, w,
                                                 Path(tmp) / "load.json"))
                     for name, w in (("load, one process", 0), ("load, master + 1 worker", 1),
                                     ("load, master + 2 workers", 2))]
            failing = contextlib.ExitStack()
            bad_url = failing.enter_context(serve_fault(where(change=_all_500)))
            runs.append(("load, 2 workers, all fail", lambda: run_load(
                path, bad_url, args.concurrency, 2, Path(tmp) / "load.json")))
            for n in range(1, args.rounds + 1):
                for name, run in runs:
                    before = cpu_seconds(server.pid)
                    figures = run()
                    server_ms = 1000 * (cpu_seconds(server.pid) - before) / args.exchanges
                    figures["cpu"] = "; ".join(filter(None, [
                        f"server CPU ms/request {server_ms:.2f}", figures["cpu"]]))
                    rates.setdefault(name, []).append(figures["rate"])
                    print(f"{n:>5}  {name:<22}  {figures['rate']:>7.0f}  {figures['failed']:>6}"
                          f"  {figures['cpu']}", flush=True)
        failing.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    best = {name: max(values) for name, values in rates.items()}
    print(f"best: load (one process) / replay = "
          f"{best['load, one process'] / best['replay']:.2f}; "
          f"2 workers / 1 worker = "
          f"{best['load, master + 2 workers'] / best['load, master + 1 worker']:.2f}; "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
