"""How long ``harness serve`` and ``harness mock`` take to stop after SIGTERM or SIGINT, whatever
their clients do (issue 35: a CI runner that cancels a job sends SIGTERM and gives a few
seconds; the target is 2 s).

Each round starts the real command in a child process (default signal dispositions), sets up
the clients, waits until the server has answered a normal call, sends the signal and times
until the process has ended. The clients:

- idle: none;
- half body: a SOAP call whose headers promise 1,000 bytes of body, 5 of them sent;
- not reading: WSDL requests sent back to back on one connection, no answer read;
- both: the two at once;
- latency 1e12 (mock only): ``--latency recorded`` of a recording whose every exchange took
  1e12 s, one call waiting for its answer.

With ``--kill9``, first: lint, replay and mock killed with SIGKILL once two of their worker
processes are at work (BUSY_CPU seconds each), on a recording of ~55 MB (lint and replay judge
it in workers, the mock indexes it in two); printed: the processes below the command then,
their resident memory, and the seconds until the last of them was gone (given up after
KILL9_WAIT).

Printed per case: median and worst seconds from the signal to the end, and the command's own
CPU seconds (user+sys) over its whole run (start included) in the worst round. With
``--against DIR`` the harness of another checkout runs the same rounds, alternating with this
one. Quote the load average printed with them.

    .venv/bin/python bench/bench_stop.py [--rounds 3] [--signals SIGTERM SIGINT]
        [--against /tmp/old]   # a checkout of an older commit, timed in the same run
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from traffic import repeated_recording, with_recorded_duration  # noqa: E402

SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"
CALL = "/GetTeacherGroups.asmx/GetTeacherGrpupsByID?Tid=A10"  # recorded in SAMPLE
TARGET = 2.0
#: Seconds the kill -9 part waits for the processes left below a killed command.
KILL9_WAIT = 60.0
#: CPU seconds after which a worker process counts as at work (its start is behind it).
BUSY_CPU = 0.7


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(args: list[str], tree: Path) -> tuple[subprocess.Popen[str], tuple[str, int]]:
    child = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_signals)
    assert child.stderr is not None
    for line in child.stderr:
        if found := re.search(r"http://(127\.0\.0\.1):(\d+)", line):
            # drained from now on: a full pipe must not hold the stop
            threading.Thread(target=child.stderr.read, daemon=True).start()
            return child, (found.group(1), int(found.group(2)))
    raise SystemExit(f"harness {args[0]} did not start")


def half_body(where: tuple[str, int]) -> list[socket.socket]:
    s = socket.create_connection(where)
    s.sendall(b"POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\n"
              b"Content-Type: text/xml; charset=utf-8\r\n"
              b'SOAPAction: "http://tempuri.org/GetTokenDevice"\r\n'
              b"Content-Length: 1000\r\n\r\n<soap")
    return [s]


def not_reading(where: tuple[str, int]) -> list[socket.socket]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(where)
    s.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        for _ in range(20_000):
            s.send(b"GET /PushNotificationMobile.asmx?WSDL HTTP/1.1\r\nHost: x\r\n\r\n")
    return [s]


def waiting_call(where: tuple[str, int]) -> list[socket.socket]:
    s = socket.create_connection(where)
    s.sendall(b"GET " + CALL.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    return [s]


def both(where: tuple[str, int]) -> list[socket.socket]:
    return half_body(where) + not_reading(where)


def one_stop(args: list[str], clients: Callable[[tuple[str, int]], list[socket.socket]],
             sig: int, normal_call: bool, tree: Path) -> tuple[float, float]:
    """(seconds from ``sig`` to the end, the command's CPU seconds) of one round of the
    harness in ``tree``."""
    child, where = start(args, tree)
    opened: list[socket.socket] = []
    try:
        opened = clients(where)
        if normal_call:  # the server has read what the clients sent before it
            httpx.get(f"http://{where[0]}:{where[1]}{CALL}", trust_env=False, timeout=30)
        else:
            time.sleep(1.0)
        started = time.monotonic()
        child.send_signal(sig)
        _, _status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - started
        child.returncode = 0
        return seconds, usage.ru_utime + usage.ru_stime
    finally:
        for s in opened:
            s.close()
        if child.returncode is None:
            child.kill()
            child.wait()


def kill9(args: list[str], tree: Path, workers: int) -> tuple[int, float, float]:
    """(processes below the command, their MB, seconds until they were all gone) when
    ``harness ARGS`` of ``tree`` is killed with SIGKILL once ``workers`` processes below it
    are at work."""
    import psutil

    child = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        command = psutil.Process(child.pid)
        deadline = time.monotonic() + 120
        while _busy(below := command.children(recursive=True)) < workers:
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"harness {args[0]}: its workers never came up")
            time.sleep(0.05)
        megabytes = 0.0
        for process in below:
            with contextlib.suppress(psutil.Error):
                megabytes += process.memory_info().rss / 1e6
        child.kill()
        child.wait()
        started = time.monotonic()
        _, alive = psutil.wait_procs(below, timeout=KILL9_WAIT)
        alive = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
        for process in alive:
            process.kill()
        return len(below), megabytes, (math.inf if alive else time.monotonic() - started)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _busy(processes: list) -> int:
    """How many of ``processes`` have worked BUSY_CPU seconds (past their start: at work)."""
    import psutil

    busy = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            busy += times.user + times.system >= BUSY_CPU
    return busy


def kill9_part(trees: dict[str, Path], rounds: int, work: Path) -> None:
    big = repeated_recording(SAMPLE, work / "big.jsonl", 1500)
    target, where = start(["serve", "--port", "0"], ROOT)
    try:
        url = f"http://{where[0]}:{where[1]}"
        cases = [("lint --workers 2", ["lint", str(big), "--workers", "2", "--quiet"], 2),
                 ("replay", ["replay", str(big), "--target", url, "--quiet",
                             "--allure-dir", ""], 2),
                 ("mock", ["mock", str(big), "--port", "0", "--quiet"], 2)]
        print(f"\nkill -9 once the workers are up; load average {os.getloadavg()[0]:.2f}")
        print(f"{'command':24} {'tree':8} {'processes':>9} {'MB':>6} {'gone after s':>13}")
        for name, args, workers in cases:
            for _ in range(rounds):
                for label, tree in trees.items():
                    count, megabytes, seconds = kill9(args, tree, workers)
                    gone = f"{seconds:13.2f}" if seconds != math.inf else \
                        f"{'> ' + format(KILL9_WAIT, 'g'):>13}"
                    print(f"{name:24} {label:8} {count:9} {megabytes:6.0f} {gone}", flush=True)
    finally:
        target.terminate()
        target.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--signals", nargs="+", default=["SIGTERM", "SIGINT"],
                        choices=["SIGTERM", "SIGINT"])
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also time the harness of this checkout (another commit: `git "
                        "worktree add --detach DIR REV`), in rounds alternating with this one")
    parser.add_argument("--kill9", action="store_true",
                        help="then kill -9 lint, replay and mock mid-work: what stays below")
    parser.add_argument("--no-signals", dest="signals_part", action="store_false",
                        help="skip the SIGTERM/SIGINT part")
    options = parser.parse_args()
    trees = {"this": ROOT, **({"against": options.against.resolve()} if options.against
                              else {})}
    with tempfile.TemporaryDirectory(prefix="bench-stop-") as work:
        serve = ["serve", "--port", "0"]
        mock = ["mock", str(SAMPLE), "--port", "0", "--quiet"]
        slow_recording = with_recorded_duration(SAMPLE, Path(work) / "slow.jsonl", 1e12)
        slow = ["mock", str(slow_recording), "--port", "0", "--quiet", "--latency", "recorded"]
        cases = [(f"{args[0]}, {name}", args, clients, True)
                 for args in (serve, mock)
                 for name, clients in (("idle", lambda where: []), ("half body", half_body),
                                       ("not reading", not_reading), ("both", both))]
        cases.append(("mock, latency 1e12", slow, waiting_call, False))
        if options.kill9:
            kill9_part(trees, options.rounds, Path(work))
        if not options.signals_part:
            return 0
        print(f"load average {os.getloadavg()[0]:.2f} at the start; target: stopped within "
              f"{TARGET:g} s of the signal; " + "; ".join(f"{k}: {v}" for k, v in trees.items()))
        print(f"{'case':24} {'signal':8} {'tree':8} {'median s':>9} {'worst s':>8} {'cpu s':>6}")
        worst_all = 0.0
        for name, args, clients, normal_call in cases:
            for sig_name in options.signals:
                sig = signal.Signals[sig_name]
                rounds: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
                for _ in range(options.rounds):  # alternating: the machine's load weighs alike
                    for label, tree in trees.items():
                        rounds[label].append(one_stop(args, clients, sig, normal_call, tree))
                for label, got in rounds.items():
                    times = [seconds for seconds, _cpu in got]
                    worst = max(got)
                    if label == "this":
                        worst_all = max(worst_all, worst[0])
                    print(f"{name:24} {sig_name:8} {label:8} {statistics.median(times):9.2f} "
                          f"{worst[0]:8.2f} {worst[1]:6.2f}", flush=True)
        print(f"load average {os.getloadavg()[0]:.2f} at the end; worst stop of this tree "
              f"{worst_all:.2f} s ({'within' if worst_all <= TARGET else 'OVER'} the "
              f"{TARGET:g} s target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
