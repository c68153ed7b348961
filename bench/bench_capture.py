"""Throughput and latency of capture: direct to the reference, through plain mitmproxy, through
mitmproxy with the harness addon, and through ``harness capture``, in one run.

    .venv/bin/python bench/bench_capture.py [--requests 3000] [--clients 4] [--rounds 3]

Every setup gets the same load: ``--clients`` processes, each a keep-alive httpx client sending
its share of requests over all 32 operation x binding pairs (sensitive values included, so
redaction works). The reference runs in its own process (``harness serve``). The two mitmdump
setups are the same command, with and without ``-s addon.py``, run back to back in every round.

Besides throughput, it reads the CPU time the proxy process spent per exchange (from /proc), and
that of the recording writer (the proxy's child process that classifies, redacts and writes):
mitmproxy runs on one event-loop thread, so the proxy's CPU per exchange is what bounds its
throughput, and it is far less noisy than req/s on a shared machine. Compare ratios measured in
the same run.
"""

from __future__ import annotations

import argparse
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


def _client(args: tuple[str, int, int]) -> list[float]:
    """One client process: ``count`` requests, returns each latency in seconds."""
    base, count, offset = args
    contract = school_mobile()
    pairs = [(op, b) for op in contract.operations for b in Binding]
    requests = []
    for i in range(count):
        op, binding = pairs[(offset + i) % len(pairs)]
        requests.append(build_request(contract, op, sample_arguments(op, i % 3), binding, base))
    latencies = []
    with httpx.Client(trust_env=False, timeout=30) as client:
        for r in requests:
            headers = [(k, v) for k, v in r.headers if k.lower() not in ("host",
                                                                          "content-length")]
            start = time.perf_counter()
            response = client.request(r.method, r.url, headers=headers, content=r.body)
            latencies.append(time.perf_counter() - start)
            if response.status_code != 200:
                raise RuntimeError(f"{r.method} {r.url}: {response.status_code}")
    return latencies


Figures = tuple[float, float, float, float, float]


def measure(base: str, total: int, clients: int, proxy: int | None = None) -> Figures:
    """(requests per second, p50 ms, p95 ms, proxy CPU us per exchange, writer CPU us per
    exchange) for ``total`` requests over ``clients`` processes; CPU figures are 0 without a
    ``proxy`` pid (the writer: the proxy's child processes)."""
    share = total // clients
    with multiprocessing.Pool(clients) as pool:
        pool.map(_client, [(base, 8, n) for n in range(clients)])  # warm-up, connections
        pids = [proxy, *_children(proxy)] if proxy else []  # the proxy, then its writer
        before = [_cpu(pid) for pid in pids]
        start = time.perf_counter()
        results = pool.map(_client, [(base, share, n * 7) for n in range(clients)])
        elapsed = time.perf_counter() - start
        cpu = [_cpu(pid) - then for pid, then in zip(pids, before, strict=True)]
    latencies = sorted(x for r in results for x in r)
    p95 = latencies[int(len(latencies) * 0.95)]
    per = 1e6 / len(latencies)
    return (len(latencies) / elapsed, statistics.median(latencies) * 1000, p95 * 1000,
            cpu[0] * per if cpu else 0.0, sum(cpu[1:]) * per)


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
    parser.add_argument("--clients", type=int, default=4)
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
    try:
        for round_ in range(opts.rounds):
            setups = {
                "direct to the reference": None,
                "mitmdump (no addon)": [],
                "mitmdump + harness addon": ["-s", str(addon), "--set",
                                             f"recording={tmp}/addon-{round_}.jsonl"],
                "harness capture": "capture",
            }
            for name, extra in setups.items():
                if extra is None:
                    figures = measure(upstream, opts.requests, opts.clients)
                elif extra == "capture":
                    with CaptureProcess(upstream, tmp / f"capture-{round_}.jsonl") as cap:
                        assert cap.proc is not None
                        figures = measure(cap.url, opts.requests, opts.clients, cap.proc.pid)
                else:
                    port = _free_port()
                    proxy = Proc([str(BIN / "mitmdump"), "-q", "--mode", f"reverse:{upstream}",
                                  "--listen-host", "127.0.0.1", "--listen-port", str(port),
                                  *extra], port)
                    try:
                        figures = measure(f"http://127.0.0.1:{port}", opts.requests,
                                          opts.clients, proxy.proc.pid)
                    finally:
                        proxy.stop()
                results.setdefault(name, []).append(figures)
    finally:
        reference.stop()

    print(f"capture benchmark: {opts.requests} requests x {opts.rounds} rounds, "
          f"{opts.clients} client processes, {os.cpu_count()} CPUs, load average at the end "
          f"{os.getloadavg()[0]:.1f} (req/s, p50, p95: best round; CPU: median round)")
    print(f"{'setup':<28} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'proxy CPU us/exch':>18} "
          f"{'writer CPU us/exch':>19}")
    best = {name: max(rounds) for name, rounds in results.items()}
    cpu = {name: (statistics.median(r[3] for r in rounds), statistics.median(r[4] for r in rounds))
           for name, rounds in results.items()}
    for name, (rps, p50, p95, *_) in best.items():
        proxy_cpu, writer_cpu = cpu[name]
        print(f"{name:<28} {rps:>8.0f} {p50:>8.2f} {p95:>8.2f} "
              f"{proxy_cpu or float('nan'):>18.0f} {writer_cpu or float('nan'):>19.0f}")
    plain = best["mitmdump (no addon)"][0]
    with_addon = best["mitmdump + harness addon"][0]
    print(f"addon throughput / mitmproxy's own: {with_addon / plain:.2f} "
          f"(cost {100 * (1 - with_addon / plain):.1f}%; target: at most 10%)")
    plain_cpu, addon_cpu = cpu["mitmdump (no addon)"][0], cpu["mitmdump + harness addon"][0]
    print(f"addon CPU on mitmproxy's process: +{addon_cpu - plain_cpu:.0f} us per exchange = "
          f"{100 * (addon_cpu / plain_cpu - 1):.1f}% of mitmproxy's own "
          f"(throughput bound {plain_cpu / addon_cpu:.2f}); the writer process adds "
          f"{cpu['mitmdump + harness addon'][1]:.0f} us on another core")
    print(f"harness capture / mitmproxy's own: {best['harness capture'][0] / plain:.2f}")
    print(f"mitmproxy's own / direct: {plain / best['direct to the reference'][0]:.2f}")
    recorded = sum(1 for _ in (tmp / f"addon-{opts.rounds - 1}.jsonl").open()) - 1
    print(f"exchanges recorded by the addon in the last round: {recorded} "
          f"(sent {opts.requests // opts.clients * opts.clients + 8 * opts.clients})")


if __name__ == "__main__":
    main()
