"""Throughput of ``harness capture`` against stock ``mitmdump`` in reverse mode, in one run,
exchanges lost at 200 concurrent clients, and the latency of 1,000 clients through capture
against the same clients straight to the upstream.

    .venv/bin/python bench/bench_capture.py [--requests 3000] [--clients 32] \
        [--crowd 200 --crowd-requests 2000] [--rounds 3] [--addon] \
        [--thousand 1000 --thousand-requests 5000 --thousand-rate 500 --service-ms 20]

What is measured is the PROXY, so the rest is made cheap and robust:

- the upstream is a canned server (its own process, raw asyncio + uvloop, keep-alive forever, a
  deep listen backlog) answering every request with the bytes the embedded reference answered
  to it when the bench started: same status, headers and bodies the reference sends (the writer
  classifies and redacts real answers), none of the reference's CPU, and no keep-alive timeout
  closing the connections mitmproxy opened (which turned into 502s and made the old figures
  untrustworthy);
- the clients are raw asyncio + uvloop keep-alive connections (``--procs`` processes), with the
  exact bytes of ``build_request`` for all 32 operation x binding pairs, sensitive values
  included (so redaction works), responses parsed with httptools.

Every round runs stock mitmdump (``mitmdump -q``, mitmproxy's default options) and ``harness
capture`` (redaction on) back to back, alternating which goes first (A/B, B/A, ...), each a fresh
process: ``--requests`` over ``--clients`` connections (throughput: the proxy is the
bottleneck), then ``--crowd-requests`` over ``--crowd`` connections (200 concurrent clients).
``failed`` counts requests without an answer or answered with another status than the
reference's (a 502 of the proxy), ``lost`` exchanges answered but missing from the recording.
It prints per setup the median round's req/s and the CPU time per exchange of the proxy process
and of its recording writer (from /proc, throughput phase), then the median of the per-round
ratios, and how much CPU other processes of the machine took meanwhile (/proc/stat minus the
bench's own processes: the load average counts the bench's own). A run with any failure, other
processes above a quarter of a CPU, or a load average above 2 at the start says its figures are
suspect. Compare ratios measured in one run.

The many-clients phase (``--thousand`` connections, 0 to skip) is about latency, not
throughput: each connection sends one request every ``thousand/thousand-rate`` seconds (500
requests per second in all, about a third of what capture passes at 32 clients), to an upstream
of its own that answers each request after ``--service-ms`` (a deployment's service time; the
other phases' upstream answers at once), straight to it and through a fresh ``harness capture``,
alternating which goes first, ``--rounds`` rounds. Every connection is opened and sends a
first request, all at once, before the paced requests start (once every client process is
ready): that first exchange is not in the latencies, for either side; its time (connecting
included) is printed apart, as ``connect``. It prints p50/p99/max of the paced requests, the
median of the per-round p99 ratios (capture / direct), exchanges lost, and the CPU time per
exchange of capture's proxy and of its writer (median of the rounds). The open-files limit
is raised to the hard limit first (the clients, the proxy and the upstream inherit it).

``--against CHECKOUT`` also runs the ``harness capture`` of another checkout (its own
``.venv``, e.g. a worktree of main) in the same rounds of both phases, the setups taking turns
at going first; ``--thousand-only`` runs only the many-clients phase; ``--relay`` adds to it a
raw TCP relay (a Python process with uvloop passing bytes on, no HTTP, nothing recorded): the
floor of any proxy process in the path.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.capture.process import CaptureProcess  # noqa: E402
from harness.contract.bindings import Binding, build_request  # noqa: E402
from harness.contract.model import sample_arguments, school_mobile  # noqa: E402

BIN = Path(sys.executable).parent
STOCK, CAPTURE, ADDON = "stock mitmdump", "harness capture", "mitmdump + harness addon"
RELAY = "raw TCP relay"
AGAINST = "capture of --against"
#: The Python (and so the checkout: its editable install) each capture setup runs with.
PYTHONS = {CAPTURE: sys.executable}

#: A request as the clients send it: method, target (path and query), headers, body.
Request = tuple[str, str, list[tuple[str, str]], bytes]


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


# -- the load ------------------------------------------------------------------------------------


def bench_requests() -> list[Request]:
    """All 32 operation x binding pairs, three argument sets each (sensitive values included)."""
    contract = school_mobile()
    built = []
    for variant in range(3):
        for op in contract.operations:
            for binding in Binding:
                r = build_request(contract, op, sample_arguments(op, variant), binding,
                                  "http://upstream.invalid")
                headers = [(k, v) for k, v in r.headers
                           if k.lower() not in ("host", "content-length")]
                built.append((r.method, r.target, headers, r.body or b""))
    return built


def wire(request: Request, host: str) -> bytes:
    method, target, headers, body = request
    head = [f"{method} {target} HTTP/1.1", f"Host: {host}",
            *(f"{k}: {v}" for k, v in headers)]
    if body or method == "POST":
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


# -- the canned upstream -------------------------------------------------------------------------


def canned_answers(requests: list[Request]) -> dict[tuple[str, str, bytes], bytes]:
    """The embedded reference's answer to each request, as raw HTTP/1.1 response bytes."""
    import httpx

    from harness.reference.server import running

    answers = {}
    with running() as url, httpx.Client(base_url=url, trust_env=False) as client:
        for method, target, headers, body in requests:
            got = client.request(method, target, headers=headers, content=body or None)
            head = [f"HTTP/1.1 {got.status_code} {got.reason_phrase}"]
            head += [f"{k}: {v}" for k, v in got.headers.multi_items()
                     if k.lower() not in ("content-length", "connection", "transfer-encoding")]
            head.append(f"Content-Length: {len(got.content)}")
            answers[(method, target, body)] = (
                ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + got.content)
    return answers


def _serve_forever(protocol: Callable[[], asyncio.Protocol], port: int) -> None:
    """Serve ``protocol`` on loopback ``port`` with uvloop until the process is stopped (the
    bench terminates it; SIGINT, a Ctrl-C of the bench, is its to handle)."""
    import uvloop

    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(
            protocol, "127.0.0.1", port, backlog=4096)
        await server.serve_forever()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    uvloop.run(run())


def serve_canned(port: int, answers: dict[tuple[str, str, bytes], bytes], pieces: int = 1,
                 pause: float = 0.0, delay: float = 0.0) -> None:
    """The upstream process: answers each known request with its canned bytes (404 else); with
    ``pieces`` > 1, trickled: in that many pieces, ``pause`` seconds apart (bench_shadow's slow
    candidate); with ``delay``, each answer that many seconds after its request (a service
    time, as a deployment's: the timer costs no CPU)."""
    import httptools

    missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    running: set[asyncio.Future] = set()

    class Upstream(asyncio.Protocol):
        def connection_made(self, transport) -> None:
            self.transport = transport
            self.parser = httptools.HttpRequestParser(self)
            self.body: list[bytes] = []
            self.url = b""

        def on_url(self, url: bytes) -> None:
            self.url += url

        def on_body(self, body: bytes) -> None:
            self.body.append(body)

        def on_message_complete(self) -> None:
            key = (self.parser.get_method().decode(), self.url.decode("latin-1"),
                   b"".join(self.body))
            self.url, self.body = b"", []
            if delay:
                asyncio.get_running_loop().call_later(delay, self.write,
                                                      answers.get(key, missing))
                return
            if pieces <= 1:
                self.transport.write(answers.get(key, missing))
                return
            task = asyncio.ensure_future(self.trickle(answers.get(key, missing)))
            running.add(task)  # held until done: the loop keeps only weak references
            task.add_done_callback(running.discard)

        def write(self, data: bytes) -> None:
            if not self.transport.is_closing():
                self.transport.write(data)

        async def trickle(self, data: bytes) -> None:
            step = max(1, -(-len(data) // pieces))
            for at in range(0, len(data), step):
                if self.transport.is_closing():
                    return
                self.transport.write(data[at:at + step])
                await asyncio.sleep(pause)

        def data_received(self, data: bytes) -> None:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                self.transport.close()

    _serve_forever(Upstream, port)


def serve_relay(port: int, upstream_port: int) -> None:
    """A raw TCP relay (``--relay``): each connection accepted gets one to the upstream, and
    bytes go each way as they come; no HTTP, no recording. What any proxy process in the
    path costs by itself (its wake-ups, its copies), for the many-clients phase's figures."""

    class Up(asyncio.Protocol):
        def __init__(self, down: asyncio.Transport) -> None:
            self.down = down

        def data_received(self, data: bytes) -> None:
            self.down.write(data)

        def connection_lost(self, exc) -> None:
            self.down.close()

    class Down(asyncio.Protocol):
        def connection_made(self, transport) -> None:
            self.transport, self.early, self.up = transport, [], None
            self.opening = asyncio.ensure_future(self.open())

        async def open(self) -> None:
            try:
                self.up, _ = await asyncio.get_running_loop().create_connection(
                    lambda: Up(self.transport), "127.0.0.1", upstream_port)
            except OSError:
                self.transport.close()
                return
            for data in self.early:
                self.up.write(data)

        def data_received(self, data: bytes) -> None:
            if self.up is None:
                self.early.append(data)
            else:
                self.up.write(data)

        def connection_lost(self, exc) -> None:
            if self.up is not None:
                self.up.close()

    _serve_forever(Down, port)


# -- the clients ---------------------------------------------------------------------------------


@dataclass
class Load:
    """What the clients saw: latencies (s), status counts, requests without an answer, and the
    span from the first request sent to the last answer."""

    latencies: list[float] = field(default_factory=list)
    #: the warm-up request of each connection (not in ``latencies``): connecting and a first
    #: exchange, all connections at once
    connects: list[float] = field(default_factory=list)
    answered: int = 0  # with the status the reference gives that request (incl. warm-up)
    unexpected: Counter = field(default_factory=Counter)  # other statuses (incl. warm-up)
    errors: int = 0
    started: float = 0.0
    ended: float = 0.0

    def add(self, other: Load) -> None:
        self.latencies += other.latencies
        self.connects += other.connects
        self.answered += other.answered
        self.unexpected.update(other.unexpected)
        self.errors += other.errors
        self.started = min(self.started or other.started, other.started)
        self.ended = max(self.ended, other.ended)

    @property
    def rate(self) -> float:
        return len(self.latencies) / (self.ended - self.started)

    @property
    def failed(self) -> int:
        return self.unexpected.total() + self.errors


#: Raw request bytes, and the status the reference answers them with.
Wire = tuple[bytes, int]


def _client_process(port: int, wires: list[Wire], conns: int, ready, results,
                    every: float = 0.0) -> None:
    import uvloop

    results.put(uvloop.run(_connections(port, wires, conns, ready, every)))


async def _connections(port: int, wires: list[Wire], conns: int, ready,
                       every: float = 0.0) -> Load:
    """``conns`` keep-alive connections: each sends one warm-up request, then (once every
    client process is warm: ``ready``, a barrier) its share of ``wires`` one after another;
    with ``every``, one request every that many seconds (as a crowd of apps calling now and
    then: the load is the same whatever the latency), from a random start within the first
    period."""
    load = Load()
    clients = [Connection(port, load) for _ in range(conns)]
    await asyncio.gather(*(c.send(wires[n % len(wires)], count=False)
                           for n, c in enumerate(clients)))
    await asyncio.get_running_loop().run_in_executor(None, ready.wait)
    load.started = time.time()
    starts = random.Random(conns).sample(range(max(conns, 1)), conns)
    await asyncio.gather(*(c.send_all(wires[n::conns], every, every * starts[n] / conns)
                           for n, c in enumerate(clients)))
    load.ended = time.time()
    for c in clients:
        c.close()
    return load


class Connection(asyncio.Protocol):
    """One client connection: one request at a time, its answer parsed with httptools."""

    def __init__(self, port: int, load: Load) -> None:
        import httptools

        self.port, self.load = port, load
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.answered: asyncio.Future[int] | None = None

    async def send_all(self, wires: list[Wire], every: float = 0.0, start: float = 0.0
                       ) -> None:
        due = time.perf_counter() + start
        for wire_ in wires:
            if every:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                due += every
            await self.send(wire_)

    async def send(self, wire_: Wire, count: bool = True) -> None:
        import httptools

        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            if self.transport is None or self.transport.is_closing():
                self.parser = httptools.HttpResponseParser(self)
                await loop.create_connection(lambda: self, "127.0.0.1", self.port)
            self.answered = loop.create_future()
            self.transport.write(wire_[0])
            status = await asyncio.wait_for(self.answered, 120)
        except (TimeoutError, OSError, ConnectionError):
            self.load.errors += 1
            self.close()
            return
        (self.load.latencies if count else self.load.connects).append(
            time.perf_counter() - started)
        if status == wire_[1]:
            self.load.answered += 1
        else:
            self.load.unexpected[status] += 1

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except Exception as exc:
            self._settle(exc)

    def on_message_complete(self) -> None:
        self._settle(self.parser.get_status_code())

    def connection_lost(self, exc) -> None:
        self._settle(ConnectionError("closed"))

    def _settle(self, outcome) -> None:
        if self.answered is not None and not self.answered.done():
            if isinstance(outcome, BaseException):
                self.answered.set_exception(outcome)
            else:
                self.answered.set_result(outcome)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def measure(port: int, wires: list[Wire], clients: int, procs: int,
            pids: list[int], every: float = 0.0) -> tuple[Load, list[float]]:
    """Send ``wires`` over ``clients`` connections in ``procs`` processes (each connection one
    request ``every`` so many seconds, if given); what they saw, and the CPU seconds each of
    ``pids`` spent from the first request to the last answer."""
    ctx = multiprocessing.get_context("fork")
    ready, results = ctx.Barrier(procs + 1), ctx.Queue()
    share = max(1, clients // procs)
    workers = [ctx.Process(target=_client_process,
                           args=(port, wires[n::procs], share, ready, results, every))
               for n in range(procs)]
    for w in workers:
        w.start()
    ready.wait(timeout=300)
    before = [_cpu(pid) for pid in pids]
    load = Load()
    for _ in workers:
        load.add(results.get(timeout=600))
    cpu = [_cpu(pid) - then for pid, then in zip(pids, before, strict=True)]
    for w in workers:
        w.join()
    return load, cpu


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


# -- the setups ----------------------------------------------------------------------------------


@dataclass
class Result:
    """One setup in one round: the throughput phase, the crowd phase, CPU us per exchange of the
    proxy and of its writer (throughput phase), and exchanges answered but not recorded."""

    fast: Load
    crowd: Load
    proxy_us: float
    writer_us: float
    lost: int | None


def run_setup(name: str, upstream: str, tmp: Path, tag: str, opts,
              wires: dict[str, list[Wire]]) -> Result:
    out = tmp / f"{tag}.jsonl"
    if name in PYTHONS:
        with capture_process(name, upstream, out, tmp / f"{tag}.key") as cap:
            assert cap.proc is not None
            port = int(cap.url.rsplit(":", 1)[1])
            result = _phases(port, cap.proc.pid, opts, wires)
            code, _out, err = cap.stop()
        if code != 0:
            raise RuntimeError(f"harness capture exited {code}: {err.strip()[-500:]}")
    else:
        extra = ["-s", str(ROOT / "harness/capture/addon.py"), "--set",
                 f"recording={out}"] if name == ADDON else []
        port = _free_port()
        proc = subprocess.Popen([str(BIN / "mitmdump"), "-q", "--mode", f"reverse:{upstream}",
                                 "--listen-host", "127.0.0.1", "--listen-port", str(port),
                                 *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_port(port)
            deadline = time.monotonic() + 20  # mitmdump may load the script once listening
            while extra and not _children(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            result = _phases(port, proc.pid, opts, wires)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    if name != STOCK:
        result.lost = result.fast.answered + result.crowd.answered - _recorded(out)
    return result


def capture_process(name: str, upstream: str, out: Path, key: Path) -> CaptureProcess:
    """``harness capture`` of setup ``name``: this checkout's, or the ``--against`` one's."""
    cap = CaptureProcess(upstream, out, "--key-file", str(key))
    cap.args[0] = PYTHONS[name]
    return cap


def _phases(port: int, pid: int, opts, wires: dict[str, list[Wire]]) -> Result:
    pids = [pid, *_children(pid)]  # the proxy, then its writer (if any)
    fast, cpu = measure(port, wires["fast"], opts.clients, opts.procs, pids)
    crowd, _ = measure(port, wires["crowd"], opts.crowd, opts.procs, pids)
    per = 1e6 / len(fast.latencies)
    return Result(fast, crowd, cpu[0] * per, sum(cpu[1:]) * per, None)


def _recorded(path: Path) -> int:
    """Exchanges recorded with the upstream's answer (what the clients count as answered)."""
    with path.open("rb") as lines:
        return sum(b'"response":{"status":' in line for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000,
                        help="requests of the throughput phase (default 3000)")
    parser.add_argument("--clients", type=int, default=32,
                        help="concurrent keep-alive connections of the throughput phase")
    parser.add_argument("--crowd", type=int, default=200,
                        help="concurrent connections of the lost/errors phase (default 200)")
    parser.add_argument("--crowd-requests", type=int, default=2000)
    parser.add_argument("--procs", type=int, default=2, help="client processes (default 2)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--addon", action="store_true",
                        help="also run mitmdump -s harness/capture/addon.py")
    parser.add_argument("--thousand", type=int, default=1000,
                        help="connections of the many-clients phase, direct and through "
                             "capture (default 1000; 0: no such phase)")
    parser.add_argument("--thousand-requests", type=int, default=5000,
                        help="requests of the many-clients phase (default 5000)")
    parser.add_argument("--thousand-rate", type=float, default=500.0,
                        help="requests per second all its clients send together (default 500)")
    parser.add_argument("--relay", action="store_true",
                        help="also run the many-clients phase through a raw TCP relay (one "
                             "Python process, no HTTP): what a process in the path costs alone")
    parser.add_argument("--thousand-only", action="store_true",
                        help="only the many-clients phase (no stock mitmdump, 32/200 clients)")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="also run the harness capture of another checkout with its own "
                             ".venv (e.g. a worktree of main), in the same rounds")
    parser.add_argument("--service-ms", type=float, default=20.0,
                        help="the many-clients phase's upstream answers each request after "
                             "this many ms (default 20)")
    opts = parser.parse_args()
    if opts.against:
        PYTHONS[AGAINST] = str(opts.against.resolve() / ".venv" / "bin" / "python")
    raise_fd_limit()

    requests = bench_requests()
    answers = canned_answers(requests)
    up_port = _free_port()
    upstream_proc = multiprocessing.get_context("spawn").Process(
        target=serve_canned, args=(up_port, answers), daemon=True)
    upstream_proc.start()
    _wait_port(up_port)
    upstream = f"http://127.0.0.1:{up_port}"
    host = "127.0.0.1"
    expected = {k: int(v.split(b" ", 2)[1]) for k, v in answers.items()}
    ordered = []
    for i in range(max(opts.requests, opts.crowd_requests)):
        method, target, _headers, body = requests[i % len(requests)]
        ordered.append((wire(requests[i % len(requests)], host),
                        expected[(method, target, body)]))
    wires = {"fast": ordered[:opts.requests], "crowd": ordered[:opts.crowd_requests],
             "many": [ordered[i % len(ordered)] for i in range(opts.thousand_requests)]}
    tmp = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    loads = [os.getloadavg()[0]]
    machine, ours, started = _machine_cpu(), _our_cpu(), time.monotonic()
    results: dict[str, list[Result]] = {}
    many: list[Many] = []
    try:
        direct, _ = (Load(), None) if opts.thousand_only else measure(
            up_port, wires["fast"], opts.clients, opts.procs, [])
        for round_ in range(0 if opts.thousand_only else opts.rounds):
            setups = [STOCK, *PYTHONS]
            setups = setups[round_ % len(setups):] + setups[:round_ % len(setups)]
            if opts.addon:
                setups.append(ADDON)
            for name in setups:
                results.setdefault(name, []).append(
                    run_setup(name, upstream, tmp, f"{name.split()[-1]}-{round_}", opts, wires))
            loads.append(os.getloadavg()[0])
        if opts.thousand:
            many = many_clients(answers, wires["many"], tmp, opts)
            loads.append(os.getloadavg()[0])
    finally:
        upstream_proc.terminate()
        upstream_proc.join()
    others = ((_machine_cpu() - machine) - (_our_cpu() - ours)) / (time.monotonic() - started)
    if results:
        report(results, direct, loads, others, opts)
    else:
        print(f"load average (1 min) {' -> '.join(f'{x:.1f}' for x in loads)}; other "
              f"processes used {others:.2f} CPUs during the run")
    if many:
        report_many(many, opts)


def raise_fd_limit() -> None:
    """The soft limit of open files up to the hard limit, for this process and the ones it
    starts (they inherit it): 1,000 clients take 1,000 sockets in the clients, 2,000 in the
    proxy (each client's and its upstream connection) and 1,000 in the upstream."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@dataclass
class Many:
    """One round of the many-clients phase: what the clients saw straight to the upstream and
    through each capture setup, the exchanges each setup lost, and the CPU us per exchange of
    each setup's proxy and of its writer (a steadier figure than a p99 on a shared machine)."""

    seen: dict[str, Load]
    lost: dict[str, int]
    cpu: dict[str, tuple[float, float]] = field(default_factory=dict)


def many_clients(answers: dict[tuple[str, str, bytes], bytes], wires: list[Wire], tmp: Path,
                 opts) -> list[Many]:
    """``opts.thousand`` connections, each sending its share of ``wires`` at a steady pace
    (``opts.thousand_rate`` requests per second in all), to an upstream that answers after
    ``opts.service_ms``: straight to it and through ``harness capture``, alternating which goes
    first, ``opts.rounds`` rounds."""
    port = _free_port()
    server = multiprocessing.get_context("spawn").Process(
        target=serve_canned, args=(port, answers),
        kwargs={"delay": opts.service_ms / 1000}, daemon=True)
    server.start()
    _wait_port(port)
    every = opts.thousand / opts.thousand_rate
    rounds = []
    try:
        for round_ in range(opts.rounds):
            seen: dict[str, Load] = {}
            lost: dict[str, int] = {}
            cpu: dict[str, tuple[float, float]] = {}
            setups = ["direct", *PYTHONS, *([RELAY] if opts.relay else [])]
            for name in setups[round_ % len(setups):] + setups[:round_ % len(setups)]:
                if name == "direct":
                    seen[name], _ = measure(port, wires, opts.thousand, opts.procs, [], every)
                    continue
                if name == RELAY:
                    seen[name] = _through_relay(port, wires, every, opts)
                    continue
                tag = f"many-{name.split()[-1]}-{round_}"
                out = tmp / f"{tag}.jsonl"
                with capture_process(name, f"http://127.0.0.1:{port}", out,
                                     tmp / f"{tag}.key") as cap:
                    assert cap.proc is not None
                    pids = [cap.proc.pid, *_children(cap.proc.pid)]  # the proxy, its writer
                    seen[name], used = measure(int(cap.url.rsplit(":", 1)[1]), wires,
                                               opts.thousand, opts.procs, pids, every)
                    per = 1e6 / max(1, len(seen[name].latencies))
                    cpu[name] = (used[0] * per, sum(used[1:]) * per)
                    code, _out, err = cap.stop()
                if code != 0:
                    raise RuntimeError(f"harness capture exited {code}: {err.strip()[-500:]}")
                lost[name] = seen[name].answered - _recorded(out)
            rounds.append(Many(seen, lost, cpu))
    finally:
        server.terminate()
        server.join()
    return rounds


def _through_relay(upstream_port: int, wires: list[Wire], every: float, opts) -> Load:
    port = _free_port()
    relay = multiprocessing.get_context("spawn").Process(
        target=serve_relay, args=(port, upstream_port), daemon=True)
    relay.start()
    try:
        _wait_port(port)
        return measure(port, wires, opts.thousand, opts.procs, [], every)[0]
    finally:
        relay.terminate()
        relay.join()


def _p99(load: Load) -> float:
    lat = sorted(load.latencies)
    return lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")


def report_many(rounds: list[Many], opts) -> None:
    print(f"{opts.thousand} clients: {opts.thousand_requests} requests, "
          f"{opts.thousand_rate:.0f} req/s offered in all (each connection one request every "
          f"{opts.thousand / opts.thousand_rate:.1f} s), upstream answering after "
          f"{opts.service_ms:.0f} ms; {opts.rounds} rounds, direct and capture alternating")
    print(f"{'setup':<26} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'req/s':>7} {'failed':>8} "
          f"{'lost':>5} {'connect p50/p99/max ms':>24}")
    for name in rounds[0].seen:
        loads = [r.seen[name] for r in rounds]
        mid = sorted(loads, key=_p99)[len(loads) // 2]
        lat = sorted(mid.latencies)
        lost = str(sum(r.lost[name] for r in rounds)) if name in PYTHONS else ""
        con = sorted(mid.connects) or [float("nan")]
        connect = "/".join(f"{x * 1e3:.0f}" for x in (con[len(con) // 2], _p99(Load(con)),
                                                      con[-1]))
        print(f"{name:<26} {lat[len(lat) // 2] * 1e3:>7.2f} {_p99(mid) * 1e3:>7.2f} "
              f"{lat[-1] * 1e3:>7.2f} {mid.rate:>7.0f} {sum(x.failed for x in loads):>8} "
              f"{lost:>5} {connect:>24}")
    if RELAY in rounds[0].seen:
        ratios = [_p99(r.seen[RELAY]) / _p99(r.seen["direct"]) for r in rounds]
        print(f"{RELAY} / direct, p99 at {opts.thousand} clients: "
              f"{statistics.median(ratios):.2f} (median of rounds "
              f"{', '.join(f'{r:.2f}' for r in ratios)}): a process in the path, by itself")
    for name in PYTHONS:
        ratios = [_p99(r.seen[name]) / _p99(r.seen["direct"]) for r in rounds]
        proxy, writer = (statistics.median(r.cpu[name][i] for r in rounds) for i in (0, 1))
        print(f"{name} / direct, p99 at {opts.thousand} clients: "
              f"{statistics.median(ratios):.2f} (median of rounds "
              f"{', '.join(f'{r:.2f}' for r in ratios)}; goal: at most 1.10); lost: "
              f"{sum(r.lost[name] for r in rounds)} (goal: 0); CPU per exchange: proxy "
              f"{proxy:.0f} us, writer {writer:.0f} us (median of rounds)")


def _machine_cpu() -> float:
    """CPU seconds all processes of the machine have spent so far (user, nice, system, irq)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _our_cpu() -> float:
    """CPU seconds of this process and of every child it has reaped (the proxies with their
    writers, the clients, the upstream)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def report(results: dict[str, list[Result]], direct: Load, loads: list[float], others: float,
           opts) -> None:
    print(f"capture benchmark: {opts.rounds} rounds (stock mitmdump and harness capture "
          f"alternating), throughput: {opts.requests} requests over {opts.clients} keep-alive "
          f"connections; crowd: {opts.crowd_requests} requests over {opts.crowd}; "
          f"{opts.procs} client processes; redaction on; mitmproxy default options for both "
          f"(connection_strategy eager); upstream: canned answers of the reference "
          f"({direct.rate:.0f} req/s direct); {os.cpu_count()} CPUs; other processes used "
          f"{others:.2f} CPUs during the run; load average (1 min, the bench's own processes "
          f"included) {' -> '.join(f'{x:.1f}' for x in loads)}")
    print(f"{'setup':<26} {'req/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'proxy CPU':>10} "
          f"{'writer CPU':>10} {'req/s @' + str(opts.crowd):>10} {'failed':>8} {'lost':>5}")
    print(f"{'':<26} {'':>7} {'':>7} {'':>7} {'us/exch':>10} {'us/exch':>10}")
    suspect = 0
    for name, rounds in results.items():
        mid = sorted(rounds, key=lambda r: r.fast.rate)[len(rounds) // 2]
        lat = sorted(mid.fast.latencies)
        failed = sum(r.fast.failed + r.crowd.failed for r in rounds)
        suspect += failed
        lost = "" if rounds[0].lost is None else str(sum(r.lost for r in rounds))
        writer = statistics.median(r.writer_us for r in rounds)
        print(f"{name:<26} {mid.fast.rate:>7.0f} {lat[len(lat) // 2] * 1e3:>7.2f} "
              f"{lat[int(len(lat) * 0.95)] * 1e3:>7.2f} "
              f"{statistics.median(r.proxy_us for r in rounds):>10.0f} "
              f"{writer if writer else float('nan'):>10.0f} "
              f"{statistics.median(r.crowd.rate for r in rounds):>10.0f} {failed:>8} {lost:>5}")
    ratios = [c.fast.rate / s.fast.rate for s, c in zip(results[STOCK], results[CAPTURE],
                                                        strict=True)]
    crowd = [c.crowd.rate / s.crowd.rate for s, c in zip(results[STOCK], results[CAPTURE],
                                                         strict=True)]
    cap = results[CAPTURE]
    print(f"harness capture / stock mitmdump, req/s: {statistics.median(ratios):.2f} "
          f"(median of rounds {', '.join(f'{r:.2f}' for r in ratios)}; goal: at least 3); "
          f"at {opts.crowd} clients: {statistics.median(crowd):.2f} (rounds "
          f"{', '.join(f'{r:.2f}' for r in crowd)}; goal: at least 3)")
    print(f"harness capture, writer CPU per exchange: "
          f"{statistics.median(r.writer_us for r in cap):.0f} us (goal: at most 150); proxy CPU "
          f"per exchange: {statistics.median(r.proxy_us for r in cap):.0f} us vs stock "
          f"mitmdump's {statistics.median(r.proxy_us for r in results[STOCK]):.0f} us; "
          f"lost: {sum(r.lost for r in cap)}")
    if AGAINST in results:
        other = results[AGAINST]
        this_vs = [c.fast.rate / a.fast.rate for c, a in zip(cap, other, strict=True)]
        pairs = list(zip(results[STOCK], other, strict=True))
        print(f"{AGAINST} / stock mitmdump, req/s: "
              f"{statistics.median(a.fast.rate / s.fast.rate for s, a in pairs):.2f}, at "
              f"{opts.crowd} clients: "
              f"{statistics.median(a.crowd.rate / s.crowd.rate for s, a in pairs):.2f}"
              f"; harness capture / {AGAINST}, req/s: {statistics.median(this_vs):.2f} (rounds "
              f"{', '.join(f'{r:.2f}' for r in this_vs)}), proxy CPU per exchange "
              f"{statistics.median(r.proxy_us for r in cap):.0f} vs "
              f"{statistics.median(r.proxy_us for r in other):.0f} us")
    if suspect or others > 0.25 or loads[0] > 2:
        print(f"SUSPECT: {suspect} requests failed (no answer, or not the reference's status); "
              f"other processes used {others:.2f} CPUs; load average {loads[0]:.1f} at the start "
              f"(trustworthy: no failures, others under 0.25 CPUs, load at the start <= 2)")


if __name__ == "__main__":
    main()
