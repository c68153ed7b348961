"""Throughput and client latency through ``harness shadow`` vs ``harness capture`` vs the
primary directly, in one run, with a candidate that is fast, slow (trickles its answers) and
dead (accepts, never answers).

    .venv/bin/python bench/bench_shadow.py [--requests 2000] [--clients 32] \
        [--latency-requests 1000] [--latency-clients 4] [--slice 50] [--rounds 1]

The primary is bench_capture's canned server (its own process: the reference's answers,
byte for byte, none of its CPU), so what is measured is the proxy. The candidates:

- fast: a second canned server (each call compared, as with a healthy candidate);
- slow: the same answers trickled, one piece every 0.1 s over about 2 s per answer;
- dead: tests/hostile.py's ``silent`` (accepts, reads the request, never answers).

Each setup runs in its own process (shadow: ``--quiet --allure-dir ''``, redaction on, its
defaults otherwise: 8 calls mirrored at once, a queue of 1000, a 30 s timeout), driven by
bench_capture's raw keep-alive clients, in two phases:

- latency (``--latency-requests`` over ``--latency-clients`` connections: p50/p99 of what a
  client waits): every setup is started at once and the requests go to them in turns of
  ``--slice`` requests each, the order rotating, so that on a shared machine whatever else
  runs weighs on every setup alike (measured one after the other, a p99 says more about the
  neighbours' minute than about the proxy);
- throughput (``--requests`` over ``--clients``: req/s), each setup a fresh process, one after
  the other (rounds alternate the order).

It prints per setup the median round's figures (also the p99 a client waits in the
throughput phase, "loaded": the proxy at full speed, its worker behind), the CPU per exchange
of the proxy and of its worker (capture's writer, shadow's worker), what shadow compared and
counted as not compared (throughput phase), and the ratios the issue asks for: p99 through
shadow / p99 through capture, latency phase (goal: at most 1.1 with the trickling
candidate). The machine's load average and the CPU other processes took are printed with
them: compare ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE.parent / "tests")]

from bench_capture import (  # noqa: E402
    Load,
    _children,
    _free_port,
    _machine_cpu,
    _our_cpu,
    _wait_port,
    bench_requests,
    canned_answers,
    measure,
    serve_canned,
    wire,
)
from hostile import serve as hostile  # noqa: E402

from harness.capture.process import CaptureProcess  # noqa: E402
from harness.shadow.process import ShadowProcess  # noqa: E402

DIRECT, CAPTURE = "direct", "capture"
SHADOWS = {"shadow, fast candidate": "fast", "shadow, slow candidate": "slow",
           "shadow, dead candidate": "dead"}
#: The slow candidate: pieces per answer and seconds between them.
PIECES, PAUSE = 20, 0.1


@dataclass
class Result:
    latency: Load
    throughput: Load
    proxy_us: float  # CPU per exchange of the proxy process (throughput phase)
    worker_us: float  # of its child: capture's writer, shadow's worker
    shadow: dict | None = None  # shadow's counts (its JSON report)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1e3


def _process(name: str, primary: str, candidates: dict[str, str], tmp: Path, tag: str):
    """The setup's proxy process, not started (None for direct)."""
    out = tmp / f"{tag}.jsonl"
    if name == DIRECT:
        return None
    if name == CAPTURE:
        return CaptureProcess(primary, out)
    return ShadowProcess(primary, candidates[SHADOWS[name]], out, "--quiet", "--allure-dir", "",
                         "--json", str(tmp / f"{tag}.json"), timeout=120)


def _port(process, primary: str) -> int:
    return int((process.url if process else primary).rsplit(":", 1)[1])


def _stopped(name: str, process) -> None:
    code, _out, err = process.stop()
    if code not in (0, 1):
        raise RuntimeError(f"{name} exited {code}: {err.strip()[-800:]}")


def latencies(names: list[str], primary: str, candidates: dict[str, str], tmp: Path,
              tag: str, opts, wires) -> dict[str, Load]:
    """The latency phase, every setup running at once and measured in turns of opts.slice
    requests (the order rotating each turn)."""
    processes = {name: _process(name, primary, candidates, tmp, f"lat-{tag}-{n}")
                 for n, name in enumerate(names)}
    loads = {name: Load() for name in names}
    try:
        for process in processes.values():
            if process is not None:
                process.start()
        requests = wires["latency"]
        for turn, at in enumerate(range(0, len(requests), opts.slice)):
            shift = turn % len(names)
            for name in names[shift:] + names[:shift]:
                load, _ = measure(_port(processes[name], primary),
                                  requests[at:at + opts.slice], opts.latency_clients, 1, [])
                loads[name].add(load)
    finally:
        for name, process in processes.items():
            if process is not None and process.proc is not None:
                _stopped(name, process)
    return loads


def throughput(name: str, primary: str, candidates: dict[str, str], tmp: Path, tag: str, opts,
               wires, latency: Load) -> Result:
    """The throughput phase in a fresh process of the setup."""
    process = _process(name, primary, candidates, tmp, tag)
    if process is None:
        load, _ = measure(_port(None, primary), wires["throughput"], opts.clients, opts.procs,
                          [])
        return Result(latency, load, 0.0, 0.0)
    with process:
        assert process.proc is not None
        pids = [process.proc.pid, *_children(process.proc.pid)]
        load, cpu = measure(_port(process, primary), wires["throughput"], opts.clients,
                            opts.procs, pids)
        _stopped(name, process)
    per = 1e6 / max(1, len(load.latencies))
    result = Result(latency, load, cpu[0] * per, sum(cpu[1:]) * per)
    if name != CAPTURE:
        result.shadow = json.loads((tmp / f"{tag}.json").read_text(encoding="utf-8"))["shadow"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000,
                        help="requests of the throughput phase (default 2000)")
    parser.add_argument("--clients", type=int, default=32,
                        help="keep-alive connections of the throughput phase (default 32)")
    parser.add_argument("--latency-requests", type=int, default=1000)
    parser.add_argument("--latency-clients", type=int, default=4)
    parser.add_argument("--slice", type=int, default=50,
                        help="latency requests sent to one setup per turn (default 50)")
    parser.add_argument("--procs", type=int, default=2, help="client processes (default 2)")
    parser.add_argument("--rounds", type=int, default=1)
    opts = parser.parse_args()

    requests = bench_requests()
    answers = canned_answers(requests)
    spawn = multiprocessing.get_context("spawn")
    ports = {role: _free_port() for role in ("primary", "fast", "slow")}
    servers = [spawn.Process(target=serve_canned, args=(port, answers),
                             kwargs={"pieces": PIECES, "pause": PAUSE} if role == "slow" else {},
                             daemon=True)
               for role, port in ports.items()]
    for server in servers:
        server.start()
    for port in ports.values():
        _wait_port(port)
    urls = {role: f"http://127.0.0.1:{port}" for role, port in ports.items()}
    expected = {k: int(v.split(b" ", 2)[1]) for k, v in answers.items()}
    ordered = []
    for i in range(max(opts.requests, opts.latency_requests)):
        method, target, _headers, body = requests[i % len(requests)]
        ordered.append((wire(requests[i % len(requests)], "127.0.0.1"),
                        expected[(method, target, body)]))
    wires = {"throughput": ordered[:opts.requests], "latency": ordered[:opts.latency_requests]}
    tmp = Path(tempfile.mkdtemp(prefix="bench-shadow-"))
    loads = [os.getloadavg()[0]]
    machine, ours, started = _machine_cpu(), _our_cpu(), time.monotonic()
    results: dict[str, list[Result]] = {}
    names = [DIRECT, CAPTURE, *SHADOWS]
    try:
        with hostile("silent") as dead:
            candidates = {"fast": urls["fast"], "slow": urls["slow"], "dead": dead}
            for round_ in range(opts.rounds):
                order = names if round_ % 2 == 0 else names[::-1]
                waited = latencies(order, urls["primary"], candidates, tmp, str(round_), opts,
                                   wires)
                loads.append(os.getloadavg()[0])
                for name in order:
                    tag = f"{name.split(',')[0]}-{SHADOWS.get(name, '')}-{round_}"
                    results.setdefault(name, []).append(
                        throughput(name, urls["primary"], candidates, tmp, tag, opts, wires,
                                   waited[name]))
                    loads.append(os.getloadavg()[0])
    finally:
        for server in servers:
            server.terminate()
            server.join()
    others = ((_machine_cpu() - machine) - (_our_cpu() - ours)) / (time.monotonic() - started)
    report(results, loads, others, opts)


def report(results: dict[str, list[Result]], loads: list[float], others: float, opts) -> None:
    print(f"shadow benchmark: {opts.rounds} round(s); latency: {opts.latency_requests} requests "
          f"over {opts.latency_clients} keep-alive connections, every setup running, in turns "
          f"of {opts.slice}; throughput: {opts.requests} "
          f"over {opts.clients} ({opts.procs} client processes); primary and fast candidate: "
          f"canned answers of the reference; slow candidate: each answer in {PIECES} pieces "
          f"{PAUSE:g} s apart; dead: accepts, never answers; {os.cpu_count()} CPUs; other "
          f"processes used {others:.2f} CPUs during the run; load average (1 min, the bench's "
          f"own processes included) {' -> '.join(f'{x:.1f}' for x in loads)}")
    print(f"{'setup':<24} {'p50 ms':>7} {'p99 ms':>7} {'req/s':>7} {'p99 ms':>7} "
          f"{'proxy CPU':>10} {'worker CPU':>10} {'failed':>7}  mirrored calls")
    print(f"{'':<24} {'':>7} {'':>7} {'':>7} {'loaded':>7} {'us/exch':>10} {'us/exch':>10}")
    p99: dict[str, float] = {}
    for name, rounds in results.items():
        mid = sorted(rounds, key=lambda r: r.throughput.rate)[len(rounds) // 2]
        p99[name] = statistics.median(_percentile(r.latency.latencies, 0.99) for r in rounds)
        failed = sum(r.latency.failed + r.throughput.failed for r in rounds)
        counts = mid.shadow
        said = ""
        if counts:
            not_compared = sum(counts["not_compared"].values())
            said = (f"{counts['compared']} of {counts['seen']} compared, {not_compared} not "
                    f"compared")
        print(f"{name:<24} "
              f"{statistics.median(_percentile(r.latency.latencies, 0.5) for r in rounds):>7.2f}"
              f" {p99[name]:>7.2f} {mid.throughput.rate:>7.0f} "
              f"{_percentile(mid.throughput.latencies, 0.99):>7.1f} {mid.proxy_us:>10.0f} "
              f"{mid.worker_us:>10.0f} {failed:>7}  {said}")
    for name in SHADOWS:
        print(f"p99 {name} / capture: {p99[name] / p99[CAPTURE]:.2f}"
              + (" (goal: at most 1.10)" if "slow" in name else ""))
    if others > 0.25 or loads[0] > 2:
        print(f"SUSPECT: other processes used {others:.2f} CPUs; load average {loads[0]:.1f} "
              "at the start (trustworthy: others under 0.25 CPUs, load at the start <= 2)")


if __name__ == "__main__":
    main()
