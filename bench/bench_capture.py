"""Throughput and latency of capture: direct to the reference, through stock mitmdump, through
mitmdump with the harness addon, and through ``harness capture``, in one run.

    .venv/bin/python bench/bench_capture.py [--requests 3000] [--clients 200] [--procs 4] \
        [--rounds 3]

Every setup gets the same load: ``--clients`` concurrent keep-alive connections spread over
``--procs`` client processes (httpx, asyncio), sending their share of requests over all 32
operation x binding pairs (sensitive values included, so redaction works). The reference runs in
its own process (``harness serve``). The mitmdump setups are the same command, with and without
``-s addon.py``, run back to back with ``harness capture`` in every round.

Besides throughput, it reads the CPU time the proxy process spent per exchange (from /proc), and
that of the recording writer (the proxy's child process that classifies, redacts and writes):
mitmproxy runs on one event-loop thread, so the proxy's CPU per exchange is what bounds its
throughput, and it is far less noisy than req/s on a shared machine. ``lost`` counts exchanges
answered but not in the recording. Compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.capture.process import CaptureProcess  # noqa: E402
from harness.contract.bindings import Binding, build_request  # noqa: E402
from harness.contract.model import sample_arguments, school_mobile  # noqa: E402

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def _client(args: tuple[str, int, int, int]) -> list[tuple[float, bool]]:
    """One client process: ``count`` requests over ``conns`` concurrent keep-alive connections
    (one asyncio task each); returns each latency in seconds, and whether it was a 200."""
    base, count, offset, conns = args
    contract = school_mobile()
    pairs = [(op, b) for op in contract.operations for b in Binding]
    requests = []
    for i in range(count):
        op, binding = pairs[(offset + i) % len(pairs)]
        r = build_request(contract, op, sample_arguments(op, i % 3), binding, base)
        headers = [(k, v) for k, v in r.headers if k.lower() not in ("host", "content-length")]
        requests.append((r.method, r.url, headers, r.body))
    return asyncio.run(_send_all(requests, conns))


async def _send_all(requests: list, conns: int) -> list[tuple[float, bool]]:
    latencies: list[tuple[float, bool]] = []
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)
    async with httpx.AsyncClient(trust_env=False, timeout=120, limits=limits) as client:
        async def worker(mine: list) -> None:
            for method, url, headers, body in mine:
                start = time.perf_counter()
                response = await client.request(method, url, headers=headers, content=body)
                latencies.append((time.perf_counter() - start, response.status_code == 200))

        await asyncio.gather(*(worker(requests[n::conns]) for n in range(conns)))
    return latencies


#: req/s, p50 ms, p95 ms, proxy and writer CPU us per exchange, answered (200), failed (not 200)
Figures = tuple[float, float, float, float, float, int, int]


def measure(base: str, total: int, clients: int, procs: int, proxy: int | None = None) -> Figures:
    """``Figures`` for ``total`` requests from ``clients`` concurrent clients
    spread over ``procs`` processes; CPU figures are 0 without a ``proxy`` pid (the writer: the
    proxy's child processes)."""
    share, conns = total // procs, max(1, clients // procs)
    with multiprocessing.Pool(procs) as pool:
        warm = pool.map(_client, [(base, conns, n, conns) for n in range(procs)])
        pids = [proxy, *_children(proxy)] if proxy else []  # the proxy, then its writer
        before = [_cpu(pid) for pid in pids]
        start = time.perf_counter()
        results = pool.map(_client, [(base, share, n * 7, conns) for n in range(procs)])
        elapsed = time.perf_counter() - start
        cpu = [_cpu(pid) - then for pid, then in zip(pids, before, strict=True)]
    latencies = sorted(x for r in results for x, _ok in r)
    p95 = latencies[int(len(latencies) * 0.95)]
    per = 1e6 / len(latencies)
    answered = sum(ok for r in [*warm, *results] for _x, ok in r)
    failed = sum(not ok for r in results for _x, ok in r)
    return (len(latencies) / elapsed, statistics.median(latencies) * 1000, p95 * 1000,
            cpu[0] * per if cpu else 0.0, sum(cpu[1:]) * per, answered, failed)


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(int(stat.parent.name))
        except (OSError, IndexError):
            continue
    return found


class Proc:
    def __init__(self, args: list[str], port: int) -> None:
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = port
        _wait_port(port)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=200,
                        help="concurrent clients (keep-alive connections) in all")
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternate the setups this many times; best round (req/s) and "
                             "median round (CPU) count")
    opts = parser.parse_args()

    ref_port = _free_port()
    reference = Proc([str(BIN / "harness"), "serve", "--port", str(ref_port)], ref_port)
    upstream = f"http://127.0.0.1:{ref_port}"
    tmp = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    addon = ROOT / "harness" / "capture" / "addon.py"
    results: dict[str, list[Figures]] = {}
    lost: dict[str, int] = {}
    load = (opts.requests, opts.clients, opts.procs)
    try:
        for round_ in range(opts.rounds):
            setups = {
                "direct to the reference": None,
                "stock mitmdump": [],
                "mitmdump + harness addon": ["-s", str(addon), "--set",
                                             f"recording={tmp}/addon-{round_}.jsonl"],
                "harness capture": "capture",
            }
            for name, extra in setups.items():
                if extra is None:
                    figures = measure(upstream, *load)
                elif extra == "capture":
                    out = tmp / f"capture-{round_}.jsonl"
                    with CaptureProcess(upstream, out) as cap:
                        assert cap.proc is not None
                        figures = measure(cap.url, *load, cap.proc.pid)
                        cap.stop()
                    lost[name] = lost.get(name, 0) + figures[5] - _recorded(out)
                else:
                    port = _free_port()
                    proxy = Proc([str(BIN / "mitmdump"), "-q", "--mode", f"reverse:{upstream}",
                                  "--listen-host", "127.0.0.1", "--listen-port", str(port),
                                  *extra], port)
                    try:
                        figures = measure(f"http://127.0.0.1:{port}", *load, proxy.proc.pid)
                    finally:
                        proxy.stop()
                    if extra:
                        lost[name] = (lost.get(name, 0) + figures[5]
                                      - _recorded(tmp / f"addon-{round_}.jsonl"))
                results.setdefault(name, []).append(figures)
    finally:
        reference.stop()
    report(results, lost, opts)


def _recorded(path: Path) -> int:
    """Exchanges recorded with a 200 answer (what ``measure`` counts as answered)."""
    with path.open("rb") as lines:
        return sum(b'"response":{"status":200,' in line for line in lines)


def report(results: dict[str, list[Figures]], lost: dict[str, int], opts) -> None:
    print(f"capture benchmark: {opts.requests} requests x {opts.rounds} rounds, "
          f"{opts.clients} concurrent clients in {opts.procs} processes, redaction on, "
          f"{os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.1f} "
          f"(req/s, p50, p95: best round; CPU: median round)")
    print(f"{'setup':<26} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'proxy CPU us/exch':>18} "
          f"{'writer CPU us/exch':>19} {'not 200':>7} {'lost':>5}")
    best = {name: max(rounds) for name, rounds in results.items()}
    cpu = {name: (statistics.median(r[3] for r in rounds), statistics.median(r[4] for r in rounds))
           for name, rounds in results.items()}
    for name, (rps, p50, p95, *_) in best.items():
        proxy_cpu, writer_cpu = cpu[name]
        failed = sum(r[6] for r in results[name])
        print(f"{name:<26} {rps:>7.0f} {p50:>8.2f} {p95:>8.2f} "
              f"{proxy_cpu or float('nan'):>18.0f} {writer_cpu or float('nan'):>19.0f} "
              f"{failed:>7} {lost.get(name, ''):>5}")
    stock, capture = best["stock mitmdump"][0], best["harness capture"][0]
    print(f"harness capture / stock mitmdump, req/s in this run: {capture / stock:.2f} "
          f"(goal: at least 2)")
    print(f"harness capture, writer CPU per exchange: {cpu['harness capture'][1]:.0f} us "
          f"(goal: at most 150); proxy CPU per exchange: {cpu['harness capture'][0]:.0f} us "
          f"vs stock mitmdump's {cpu['stock mitmdump'][0]:.0f} us "
          f"({cpu['stock mitmdump'][0] / cpu['harness capture'][0]:.2f}x less)")
    print(f"mitmdump + harness addon / stock mitmdump: "
          f"{best['mitmdump + harness addon'][0] / stock:.2f}; stock mitmdump / direct: "
          f"{stock / best['direct to the reference'][0]:.2f}")


if __name__ == "__main__":
    main()
