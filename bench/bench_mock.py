"""Benchmark of ``harness mock``: load time, memory and requests/s for recordings of 10k, 100k
and 1M exchanges, against ``harness serve`` (the reference) driven by the same requests in the
same run.

Each recording is bench/varied.py's (no two exchanges alike: every call has its own value).
For each size, ``harness mock REC --port 0 --index-cache FILE`` runs as a real process twice:
the first start reads every exchange and keeps the index, the second reads the index. Load
time is from start to the line announcing the URL; peak memory is the process tree's largest
RSS meanwhile (the indexing workers included); memory per exchange is the mock process's RSS
once serving, above that of the mock of a 32-exchange recording, divided by the exchanges.
Then each binding is driven by wrk (or the Python client fallback of bench_reference.py) with
512 calls spread over the whole recording, answered from the file, and ``harness serve`` with
the very same requests at the same time (side by side, in the same windows): calls recorded
over that binding (answered as recorded), then calls recorded over the other bindings (the
recorded result rendered in the asking binding's form). The load generator repeats the 512
calls, as an app repeats its own: the mock answers a call asked again from its caches (the
call's classification by its request's bytes, its answer as sent), bounded; the CPU figures
say what an answer costs asked again and asked the first time. At 1M exchanges the rates are
also taken with no call asked twice (``--distinct``: 20,000 new calls a round, more than the
caches hold), every answer the mock's first-time path. ``--control`` drives serve against a
second serve in the same way: how far the ratios of two like servers swing on this machine.
Each round's ratios are printed under the medians.

    .venv/bin/python bench/bench_mock.py                 # 10k, 100k, 1M
    .venv/bin/python bench/bench_mock.py --sizes 10000 --duration 2 --rounds 1   # a quick look
    .venv/bin/python bench/bench_mock.py --dir /tmp/mockbench --control   # keep the files
    .venv/bin/python bench/bench_mock.py --dir /tmp/mockbench --rates-only   # again, rates

The machine is shared: compare the ratios measured in one run, quote the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_reference import (
    ensure_wrk,
    run_processes,
    run_wrk,
    send,
    start_server,
    stop_server,
)
from peak_rss import tree_rss_kb
from varied import varied_lines

from harness.contract.bindings import Binding, build_request
from harness.contract.model import school_mobile
from harness.mock import Mock as InProcessMock
from harness.mock import load
from harness.reference.app import accepted_call
from harness.traffic.exchange import Exchange, HttpRequest
from harness.traffic.recording import FORMAT, FORMAT_VERSION
from harness.traffic.send import retarget

HARNESS = str(Path(sys.executable).parent / "harness")
SAMPLE = 512


def write_recording(path: Path, count: int) -> None:
    if path.exists():
        return
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"format": FORMAT, "version": FORMAT_VERSION}) + "\n")
        f.writelines(varied_lines(school_mobile(), count))


class Mock:
    """``harness mock`` of ``path`` as a real process, its load measured."""

    def __init__(self, path: Path, *extra: str) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen([HARNESS, "mock", str(path), "--port", "0", "--quiet",
                                      *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.peak_kb = 0
        self.cpu = 0.0  # seconds of CPU of its start (set by the caller, which waits for it)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                self.peak_kb = max(self.peak_kb, tree_rss_kb(self.proc.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        lines = []
        assert self.proc.stderr is not None
        while line := self.proc.stderr.readline():
            lines.append(line)
            if match := re.search(r" on (http://127\.0\.0\.1:\d+)", line):
                self.url = match.group(1)
                break
        else:
            done.set()
            sys.exit(f"bench: harness mock did not start: {''.join(lines)[-2000:]}")
        self.load_seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # keep draining
        time.sleep(0.5)
        # the mock's own process: after indexing in worker processes, multiprocessing's
        # resource tracker (~14 MB, the same for any size) stays as its child
        self.steady_kb = rss_kb(self.proc.pid)
        self.tree_kb = tree_rss_kb(self.proc.pid)

    def stop(self) -> None:
        stop_server(self.proc)


def rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmRSS:")))


def sampled_requests(path: Path, count: int, binding: Binding, url: str, *,
                     recorded_over: bool, sample: int = SAMPLE, dense: bool = False
                     ) -> list[HttpRequest]:
    """``sample`` recorded calls asked over ``binding``, spread over the whole recording:
    calls recorded over that binding (``recorded_over``: answered as recorded), or over
    another one (answered by rendering the recorded result in this binding's form);
    ``dense``: the first ones found, not spread."""
    contract = school_mobile()
    step = 1 if dense else max(1, count // (sample * 4)) | 1  # odd: recordings cycle
    # through 32 kinds
    chosen: list[HttpRequest] = []
    with path.open("rb") as f:
        f.readline()
        for number, line in enumerate(f):
            if len(chosen) == sample:
                break
            if number % step:
                continue
            exchange = Exchange.from_dict(json.loads(line))
            call, _answered_over, arguments = accepted_call(contract, exchange.request)
            if (call.binding is binding) != recorded_over or (not binding.is_soap and any(
                    "<" in str(v) or "&#" in str(v) for v in arguments.values())):
                continue  # (markup in a GET/POST value: refused by request validation)
            chosen.append(build_request(contract, call.operation, arguments, binding, url))
    if not chosen:
        sys.exit(f"bench: no call of {path} to ask over {binding.label}")
    return chosen


def check(requests: list[HttpRequest], source: str) -> None:
    with httpx.Client() as client:
        for request in requests[:32]:
            answer = send(client, request)
            if answer.status_code != 200:
                sys.exit(f"bench: {source} answered {answer.status_code} to {request.target}")


def drive(wrk: str | None, binding: Binding, requests: list[HttpRequest], url: str,
          args: argparse.Namespace):
    return (run_wrk(wrk, binding, url, requests, args) if wrk
            else run_processes(binding, requests, args))


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rounds(wrk: str | None, binding: Binding,
           mock: tuple[list[list[HttpRequest]], str, int],
           serve: tuple[list[list[HttpRequest]], str, int], args: argparse.Namespace
           ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Requests/s of the mock and of serve, a round for each list of requests (the same
    list each round, or a new one), both driven side by side
    in the same window (each by its own load generator): on a shared machine the load drifts
    from one window to the next, while the two servers, one process each, get like shares
    of the cores in one window, so the ratio of their rates there is the ratio of what an
    answer costs them. And the requests each answered per second of its own CPU."""
    mocked, served, mocked_cpu, served_cpu = [], [], [], []
    for number in range(len(mock[0])):
        results: dict[int, tuple[float, float]] = {}

        def run(which: int, requests: list[HttpRequest], url: str, pid: int,
                results: dict[int, tuple[float, float]] = results) -> None:
            before = cpu_seconds(pid)
            row = drive(wrk, binding, requests, url, args)
            used = cpu_seconds(pid) - before
            results[which] = (row.rate, row.requests / used if used else 0.0)

        threads = [threading.Thread(target=run, args=(n, lists[number], url, pid))
                   for n, (lists, url, pid) in enumerate((mock, serve))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        mocked.append(results[0][0])
        served.append(results[1][0])
        mocked_cpu.append(results[0][1])
        served_cpu.append(results[1][1])
    return mocked, served, mocked_cpu, served_cpu


def distinct(args: argparse.Namespace, wrk: str | None, binding: Binding, recorded_over: bool,
             path: Path, size: int, mock: tuple[str, int], serve: tuple[str, int]) -> None:
    """The rates when no call is asked twice: each round ``args.distinct`` calls never asked
    before (more than the mock's caches hold, and more than a round asks), each wrk thread
    starting at its own share of them; so every answer is the mock's first-time path."""
    calls = sampled_requests(path, size, binding, mock[0], recorded_over=recorded_over,
                             sample=args.distinct * args.rounds, dense=True)
    lists = [calls[at:at + args.distinct] for at in range(0, len(calls), args.distinct)]
    lists = [chunk for chunk in lists if len(chunk) == args.distinct][:args.rounds]
    mocked, served, mocked_cpu, served_cpu = rounds(
        wrk, binding, (lists, *mock), ([[retarget(r, serve[0]) for r in chunk]
                                        for chunk in lists], *serve), args)
    print(f"{binding.label:<10} {'  no call asked twice':<22} "
          f"{statistics.median(mocked):>10.0f} {statistics.median(served):>11.0f} "
          f"{statistics.median(m / s for m, s in zip(mocked, served, strict=True) if s):>9.2f}x"
          f"  per CPU second {statistics.median(mocked_cpu):.0f} vs "
          f"{statistics.median(served_cpu):.0f}: {ratios(mocked_cpu, served_cpu)}; "
          f"{len(lists)} rounds of {args.distinct:,} calls (load average "
          f"{os.getloadavg()[0]:.2f})", flush=True)


def ratios(these: list[float], those: list[float]) -> str:
    """Each round's ratio, and their median."""
    each = [a / b for a, b in zip(these, those, strict=True) if b]
    return (" ".join(f"{r:.2f}x" for r in each)
            + f" (median {statistics.median(each):.2f}x)" if each else "none")


def cpu_per_answer(index, requests: list[HttpRequest]) -> tuple[float, float, float]:
    """CPU microseconds per answer in this process, the same requests (the lowest of 3 passes
    each): the mock's ``respond`` asked again (its caches hold the calls and their answers,
    as when an app repeats its calls), the mock's ``respond`` asked each call for the first
    time (a new mock per pass: every request classified and checked, every answer read from
    the file and rendered), and the reference's ``answer``. What an answer costs without the
    server, the client and the machine's other jobs."""
    from harness.reference.app import answer

    contract = school_mobile()

    def cost(respond, fresh=None) -> float:
        passes = []
        for _ in range(3):
            if fresh is not None:
                respond = fresh().respond
            started = time.process_time()
            for request in requests:
                respond(contract, request)
            passes.append((time.process_time() - started) / len(requests) * 1e6)
        return min(passes)

    warm = InProcessMock(contract, index)
    for request in requests:  # every call once: what the caches keep
        warm.respond(contract, request)
    return (cost(warm.respond), cost(None, lambda: InProcessMock(contract, index)),
            cost(answer))


def rates(args: argparse.Namespace, wrk: str | None, bindings: list[Binding], path: Path,
          size: int, cache: Path, mock: Mock) -> None:
    """Each binding's rate, the mock's against serve's, side by side; then the mock's memory.
    Stops the mock."""
    reference, ref_url = start_server()
    control = start_server() if args.control else None
    index = load(school_mobile(), [path], cache=cache)  # the same mock, in process
    try:
        print(f"{'binding':<10} {'calls':<22} {'mock req/s':>10} {'serve req/s':>11} "
              f"{'mock/serve':>10}  (median of {args.rounds} rounds, side by side); "
              "requests per second of each server's own CPU; CPU per answer in "
              "process: mock (calls asked again), mock (each call asked the first "
              "time), reference", flush=True)
        for binding in bindings:
            for recorded_over in (True, False):
                to_mock = sampled_requests(path, size, binding, mock.url,
                                           recorded_over=recorded_over)
                to_reference = [retarget(r, ref_url) for r in to_mock]
                check(to_mock, "the mock")
                check(to_reference, "the reference")
                mocked, served, mocked_cpu, served_cpu = rounds(
                    wrk, binding, ([to_mock] * args.rounds, mock.url, mock.proc.pid),
                    ([to_reference] * args.rounds, ref_url, reference.pid), args)
                how = "as recorded" if recorded_over else "recorded over others"
                ratio = statistics.median(m / s for m, s in zip(mocked, served,
                                                                 strict=True) if s)
                by_cpu = statistics.median(m / s for m, s in zip(
                    mocked_cpu, served_cpu, strict=True) if s)
                warm_us, cold_us, reference_us = cpu_per_answer(index, to_mock)
                print(f"{binding.label:<10} {how:<22} {statistics.median(mocked):>10.0f}"
                      f" {statistics.median(served):>11.0f} {ratio:>9.2f}x  per CPU "
                      f"second {statistics.median(mocked_cpu):.0f} vs "
                      f"{statistics.median(served_cpu):.0f}: {by_cpu:.2f}x; CPU per "
                      f"answer {warm_us:.0f} us, {cold_us:.0f} us first time, vs "
                      f"{reference_us:.0f} us (load average "
                      f"{os.getloadavg()[0]:.2f})", flush=True)
                print(f"           each round, side by side: {ratios(mocked, served)}; "
                      f"per CPU second: {ratios(mocked_cpu, served_cpu)}", flush=True)
                if control is not None:
                    same = [retarget(r, control[1]) for r in to_mock]
                    a, b, a_cpu, b_cpu = rounds(
                        wrk, binding, ([to_reference] * args.rounds, ref_url, reference.pid),
                        ([same] * args.rounds, control[1], control[0].pid), args)
                    print(f"           control, serve/serve: {ratios(a, b)}; per CPU second: "
                          f"{ratios(a_cpu, b_cpu)}", flush=True)
                if args.distinct and size >= args.distinct * args.rounds * 5:
                    distinct(args, wrk, binding, recorded_over, path, size,
                             (mock.url, mock.proc.pid), (ref_url, reference.pid))
        after = rss_kb(mock.proc.pid)
        print(f"the mock serving {size:,} exchanges, after every binding was driven: "
              f"{after / 1024:.0f} MB (was {mock.steady_kb / 1024:.0f} MB before; its "
              "caches and journal are bounded)", flush=True)
    finally:
        index.close()
        stop_server(reference)
        if control is not None:
            stop_server(control[0])
        mock.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000,1000000",
                   help="recorded exchanges per recording, comma-separated")
    p.add_argument("--duration", type=int, default=3,
                   help="seconds per run of the load generator (default 3)")
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of mock and serve driven side by side per binding (default "
                        "5: a loaded machine's rates swing from one 3 s window to the next)")
    p.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--processes", type=int, default=4,
                   help="client processes of the Python fallback (default 4)")
    p.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    p.add_argument("--bindings", default=",".join(b.value for b in Binding))
    p.add_argument("--dir", default=None, help="where the recordings are kept (default: a "
                   "temporary folder, removed at the end)")
    p.add_argument("--distinct", type=int, default=20000, metavar="N",
                   help="also the rates when no call is asked twice: N new calls a round "
                        "(default 20000, above the mock's 16,384 cached answers), at the sizes "
                        "that hold 5 times N calls a round (1M by default); 0: not measured")
    p.add_argument("--control", action="store_true",
                   help="also drive serve against a second serve, side by side, with the same "
                        "requests (an A/A control: how far two like servers' ratios swing on "
                        "this machine)")
    p.add_argument("--rates-only", action="store_true",
                   help="only the rates: start each mock from the index kept in --dir by an "
                        "earlier run (its first start and memory are not measured again)")
    args = p.parse_args(argv)
    wrk = ensure_wrk() if args.client != "python" else None
    bindings = [Binding.parse(b) for b in args.bindings.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-mock-") as scratch:
        folder = Path(args.dir or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"mock benchmark: {os.cpu_count()} CPUs, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, {args.duration} s per run, "
              f"{args.rounds} rounds, "
              f"client {f'wrk -t{args.threads} -c{args.connections}' if wrk else 'python'}",
              flush=True)
        base_path = folder / "mock-32.jsonl"
        write_recording(base_path, 32)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        baseline = Mock(base_path)
        baseline.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        baseline.cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        print(f"baseline: the mock of 32 exchanges starts in {baseline.load_seconds:.1f} s and "
              f"holds {baseline.steady_kb / 1024:.0f} MB once serving", flush=True)
        for size in sizes:
            path = folder / f"mock-{size}.jsonl"
            made = time.perf_counter()
            write_recording(path, size)
            megabytes = path.stat().st_size / 1e6
            print(f"\n{size:,} exchanges, {megabytes:,.0f} MB "
                  f"(written in {time.perf_counter() - made:.0f} s); load average "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            cache = folder / f"mock-{size}.index"
            if args.rates_only and cache.exists():
                mock = Mock(path, "--index-cache", str(cache))
                rates(args, wrk, bindings, path, size, cache, mock)
                continue
            cache.unlink(missing_ok=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            mock = Mock(path, "--index-cache", str(cache))
            mock.stop()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                   - baseline.cpu) / size * 1e6
            per = (mock.steady_kb - baseline.steady_kb) * 1024 / size
            print(f"load {mock.load_seconds:.1f} s ({size / mock.load_seconds:,.0f} "
                  f"exchanges/s), peak {mock.peak_kb / 1024:.0f} MB (indexing workers "
                  f"included), serving {mock.steady_kb / 1024:.0f} MB: {per:.0f} bytes per "
                  f"exchange above the baseline ({mock.tree_kb / 1024:.0f} MB with its "
                  f"children); reading took {cpu:.0f} us of CPU per exchange (all processes, "
                  "the baseline's start subtracted)", flush=True)
            mock = Mock(path, "--index-cache", str(cache))
            per = (mock.steady_kb - baseline.steady_kb) * 1024 / size
            print(f"load from --index-cache {mock.load_seconds:.1f} s, serving "
                  f"{mock.steady_kb / 1024:.0f} MB: {per:.0f} bytes per exchange above the "
                  f"baseline (load average {os.getloadavg()[0]:.2f})", flush=True)
            rates(args, wrk, bindings, path, size, cache, mock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
