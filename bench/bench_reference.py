"""Load benchmark of the embedded reference: ``harness serve`` as a real process on loopback,
driven binding by binding with a real load generator, every operation in turn.

Load generator: ``wrk`` (installed with apt-get when missing and running as root) with a Lua
script carrying the exact requests of ``build_request``; otherwise a multi-process Python
client (each process its own httpx.Client in a loop: one httpx client's own CPU caps it long
before the server does).

    .venv/bin/python bench/bench_reference.py                 # 5 s per binding
    .venv/bin/python bench/bench_reference.py --duration 10 --connections 64 --client python

Prints one row per binding: requests/s, p50/p99 latency, non-200 answers, socket errors.
The machine is shared: compare figures measured in one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import httpx

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments, school_mobile
from harness.traffic.exchange import HttpRequest

HARNESS = str(Path(sys.executable).parent / "harness")


@dataclass
class Row:
    binding: Binding
    client: str
    requests: int
    seconds: float
    p50_ms: float | None
    p99_ms: float | None
    non_200: int
    socket_errors: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


# ------------------------------------------------------------------------------ the server


def start_server() -> tuple[subprocess.Popen, str]:
    """``harness serve --port 0``; its first stderr line names the bound URL."""
    proc = subprocess.Popen([HARNESS, "serve", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline() if proc.stderr else ""
    match = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not match:
        proc.kill()
        sys.exit(f"bench: harness serve did not start: {line.strip()!r}")
    url = match.group(0)
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(url + "/", timeout=1)
            return proc, url
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                sys.exit("bench: harness serve did not answer")
            time.sleep(0.05)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def requests_for(contract: Contract, binding: Binding, url: str) -> list[HttpRequest]:
    """One request per operation (non-ASCII and XML-special arguments), all checked to 200."""
    built = [build_request(contract, op, sample_arguments(op, 1), binding, url)
             for op in contract.operations]
    with httpx.Client() as client:
        for request in built:
            status = send(client, request).status_code
            if status != 200:
                sys.exit(f"bench: {request.method} {request.target} answered {status}")
    return built


def send(client: httpx.Client, request: HttpRequest) -> httpx.Response:
    return client.request(request.method, request.url, headers=list(request.headers),
                          content=request.body or None)


# ----------------------------------------------------------------------------------- wrk


def ensure_wrk() -> str | None:
    """Path of wrk; installs the Debian package when missing and allowed (root, apt-get)."""
    found = shutil.which("wrk")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("bench: installing wrk with apt-get ...", file=sys.stderr)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if subprocess.run(["apt-get", "install", "-y", "wrk"], **quiet).returncode != 0:
        subprocess.run(["apt-get", "update"], **quiet)
        subprocess.run(["apt-get", "install", "-y", "wrk"], **quiet)
    return shutil.which("wrk")


def lua_string(data: bytes) -> str:
    """A Lua string literal of ``data``, byte-exact (decimal escapes for anything unsafe)."""
    safe = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;/=-_+*()")
    return '"' + "".join(chr(b) if b in safe else f"\\{b:03d}" for b in data) + '"'


WRK_SCRIPT = """\
local built = {}
local i = 0
local made = 0
function setup(thread)
  thread:set("number", made)
  made = made + 1
end
function init(args)
  built = { %s }
  -- each thread starts at its own share of the list: a list longer than a run asks no call
  -- twice; a short one, like the same calls in another order
  i = math.floor((number or 0) * #built / tonumber(args[1] or 1))
end
function request()
  i = i %% #built + 1
  return built[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests": %%d, "duration_us": %%d, "non_200": %%d, "socket_errors": %%d,'
    .. ' "p50_us": %%d, "p99_us": %%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_script(requests: list[HttpRequest]) -> str:
    """Lua building each request once per thread with wrk.format (which adds Host and
    Content-Length itself, from the URL and the body)."""
    calls = []
    for r in requests:
        headers = ", ".join(f"[{lua_string(k.encode())}] = {lua_string(v.encode('latin-1'))}"
                            for k, v in r.headers if k.lower() not in ("host", "content-length"))
        body = lua_string(r.body) if r.body else "nil"
        calls.append(f"wrk.format({lua_string(r.method.encode())}, "
                     f"{lua_string(r.target.encode())}, {{{headers}}}, {body})")
    return WRK_SCRIPT % ",\n    ".join(calls)


def run_wrk(wrk: str, binding: Binding, url: str, requests: list[HttpRequest],
            args: argparse.Namespace) -> Row:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(wrk_script(requests))
    try:
        out = subprocess.run(
            [wrk, "-t", str(args.threads), "-c", str(args.connections),
             "-d", f"{args.duration}s", "--timeout", "5s", "-s", script.name, url + "/",
             "--", str(args.threads)],
            capture_output=True, text=True, timeout=args.duration + 60)
    finally:
        os.unlink(script.name)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None:
        sys.exit(f"bench: wrk gave no summary: {out.stdout} {out.stderr}")
    data = json.loads(line.removeprefix("BENCH "))
    return Row(binding, "wrk", data["requests"], data["duration_us"] / 1e6,
               data["p50_us"] / 1000, data["p99_us"] / 1000, data["non_200"],
               data["socket_errors"])


# ------------------------------------------------------------------ multi-process fallback


def _client_loop(job: tuple[list[HttpRequest], float]) -> tuple[list[float], int, int]:
    requests, seconds = job
    latencies, non_200, errors = [], 0, 0
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=5) as client:
        i = 0
        while time.monotonic() < deadline:
            request = requests[i % len(requests)]
            i += 1
            started = time.perf_counter()
            try:
                status = send(client, request).status_code
            except httpx.TransportError:
                errors += 1
                continue
            latencies.append(time.perf_counter() - started)
            non_200 += status != 200
    return latencies, non_200, errors


def run_processes(binding: Binding, requests: list[HttpRequest],
                  args: argparse.Namespace) -> Row:
    with get_context("spawn").Pool(args.processes) as pool:
        started = time.perf_counter()
        results = pool.map(_client_loop, [(requests, args.duration)] * args.processes)
        elapsed = time.perf_counter() - started
    latencies = sorted(x for lat, _, _ in results for x in lat)

    def pct(q: float) -> float | None:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 \
            if latencies else None

    # Requests over the load duration (process start-up excluded from the rate).
    return Row(binding, f"python x{args.processes}", len(latencies),
               min(elapsed, args.duration), pct(0.50), pct(0.99),
               sum(n for _, n, _ in results), sum(e for _, _, e in results))


# ------------------------------------------------------------------------------------ main


def print_header() -> None:
    print(f"{'binding':<10} {'client':<10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'non-200':>8} {'sock err':>8} {'requests':>9}", flush=True)


def print_row(r: Row) -> None:
    def ms(value: float | None) -> str:
        return f"{value:.2f}" if value is not None else "-"

    print(f"{r.binding.label:<10} {r.client:<10} {r.rate:>11.0f} {ms(r.p50_ms):>8} "
          f"{ms(r.p99_ms):>8} {r.non_200:>8} {r.socket_errors:>8} {r.requests:>9}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=int, default=5, help="seconds per binding (default 5)")
    p.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--processes", type=int, default=4,
                   help="client processes of the Python fallback (default 4)")
    p.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    p.add_argument("--bindings", default=",".join(b.value for b in Binding),
                   help="comma-separated bindings (default all four)")
    args = p.parse_args(argv)

    wrk = ensure_wrk() if args.client != "python" else None
    if args.client == "wrk" and wrk is None:
        sys.exit("bench: wrk is not installed and cannot be installed here")
    contract = school_mobile()
    bindings = [Binding.parse(b) for b in args.bindings.split(",")]
    print(f"reference load benchmark: {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {args.duration} s per binding, one server process, "
          f"client "
          f"{f'wrk -t{args.threads} -c{args.connections}' if wrk else 'python'}"
          f"{'' if wrk else f' x{args.processes} processes'}", flush=True)
    proc, url = start_server()
    print_header()
    try:
        for binding in bindings:
            requests = requests_for(contract, binding, url)
            print_row(run_wrk(wrk, binding, url, requests, args) if wrk
                      else run_processes(binding, requests, args))
    finally:
        stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
