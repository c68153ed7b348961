"""harness load's processes die together and never claim a verdict after a signal: the Locust
engine (``python -m harness.load``) ends when its ``harness load`` dies, even by SIGKILL; the
workers end, non-zero, when their master dies; the master ends, non-zero, when a worker dies;
SIGINT or SIGTERM to any of them ends the run without PASSED. Memory: against a target
answering 2 GB bodies, an endless chunked body or a gzip bomb, with 300 requests in flight,
the process tree stays under 300 MB (bench/bench_oversize.py prints the figures).

Every process is real; the recording is paced 2 s apart (64 s in all), so a process still up
30 s after its parent was killed is an orphan sending to the target."""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hostile import serve
from traffic import clean_exchanges, write_recording

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from peak_rss import measure

from harness.contract.model import Contract, school_mobile
from harness.traffic.exchange import Exchange

HARNESS = [sys.executable, "-m", "harness"]
#: A parent killed, the rest of the tree must be gone within this (it is a hang check: the
#: worker's own bound is 10 s without its master's heartbeat).
GONE_WITHIN = 40.0

pytestmark = pytest.mark.slow


def paced(exchanges: list[Exchange], gap: float) -> list[Exchange]:
    return [replace(ex, timings={"started": 1_800_000_000.0 + i * gap})
            for i, ex in enumerate(exchanges)]


@pytest.fixture
def slow_recording(contract: Contract, tmp_path: Path) -> Path:
    return write_recording(tmp_path / "slow.jsonl", paced(clean_exchanges(contract), 2.0))


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            if stat.read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def engine_of(wrapper: Run) -> int:
    """The Locust engine ``harness load`` started (waits for it)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = children(wrapper.pid)
        if found:
            return found[0]
        assert wrapper.poll() is None, wrapper.output()
        time.sleep(0.1)
    raise AssertionError("harness load started no engine")


def wait_gone(pids: list[int], within: float = GONE_WITHIN) -> list[int]:
    """The pids still running after ``within`` seconds (none, when the tree died together)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.2)
    return [p for p in pids if alive(p)]


class Run:
    """``harness load ARGS`` running, its output gathered as it comes."""

    def __init__(self, *args: str | Path) -> None:
        self.proc = subprocess.Popen([*HARNESS, "load", *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.pid = self.proc.pid
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def sending(self, within: float = 120.0) -> None:
        """Once the run's progress says an answer came back (a loaded machine starts the
        engines slowly: no fixed sleep)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if any(SENDING.search(line) for line in self.lines):
                return
            assert self.proc.poll() is None, self.output()
            time.sleep(0.2)
        raise AssertionError(f"the run did not start sending: {self.output()}")

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(timeout=10)
        return code

    def output(self) -> str:
        return "".join(self.lines)


SENDING = re.compile(r"load: [1-9]\d*(/\d+)? requests, ")


@contextlib.contextmanager
def cleanup(*procs: Run) -> Iterator[None]:
    try:
        yield
    finally:
        for proc in procs:
            for pid in [*children(proc.pid), proc.pid]:
                with contextlib.suppress(ProcessLookupError):
                    import os

                    os.kill(pid, signal.SIGKILL)
            proc.wait()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------- one process


@pytest.mark.parametrize("victim", ["harness load", "engine"])
def test_kill_9_of_a_single_load_leaves_no_orphan(slow_recording: Path, reference_url: str,
                                                  victim: str) -> None:
    import os

    wrapper = Run(slow_recording, "--target", reference_url)
    with cleanup(wrapper):
        engine = engine_of(wrapper)
        wrapper.sending()
        os.kill(wrapper.pid if victim == "harness load" else engine, signal.SIGKILL)
        assert wait_gone([wrapper.pid, engine]) == [], "a load process outlived its parent"
        assert wrapper.wait(10) != 0 and "PASSED" not in wrapper.output(), wrapper.output()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("victim", ["harness load", "engine"])
def test_a_signal_ends_the_run_without_a_verdict(slow_recording: Path, reference_url: str,
                                                 sig: int, code: int, victim: str) -> None:
    """SIGINT at the PID of ``harness load`` used to be ignored until the natural end, which
    then said PASSED with exit 0."""
    import os

    wrapper = Run(slow_recording, "--target", reference_url)
    with cleanup(wrapper):
        engine = engine_of(wrapper)
        wrapper.sending()
        os.kill(wrapper.pid if victim == "harness load" else engine, sig)
        assert wrapper.wait(GONE_WITHIN) == code, wrapper.output()
        out = wrapper.output()
        assert "PASSED" not in out and "Traceback" not in out, out
        assert f"interrupted by {signal.Signals(sig).name}" in out and "no verdict" in out, out
        assert wait_gone([engine], 5) == []


# -------------------------------------------------------------------- master and workers


@pytest.mark.parametrize("victim", ["master", "master engine", "worker", "worker engine"])
def test_kill_9_in_a_distributed_run_ends_every_process_non_zero(
        slow_recording: Path, reference_url: str, victim: str) -> None:
    """kill -9 of the master's engine used to leave its workers sending for 60 s, then exit
    0; of a ``harness load``, its engine sending to the end of the schedule."""
    import os

    port = str(free_port())
    workers = [Run("--worker", "--master-port", port, slow_recording) for _ in range(2)]
    master = Run(slow_recording, "--target", reference_url, "--master",
                 "--expect-workers", "2", "--master-port", port)
    with cleanup(master, *workers):
        engines = {p.pid: engine_of(p) for p in (master, *workers)}
        master.sending()
        target = {"master": master.pid, "master engine": engines[master.pid],
                  "worker": workers[0].pid, "worker engine": engines[workers[0].pid]}[victim]
        os.kill(target, signal.SIGKILL)
        everything = [*engines, *engines.values()]
        assert wait_gone(everything) == [], f"still running after kill -9 of the {victim}"
        outputs = "\n----\n".join(r.output() for r in (master, *workers))
        for run in (master, *workers):
            assert run.wait(10) != 0, f"exit 0 after kill -9 of the {victim}: {outputs}"
            out = run.output()
            assert "PASSED" not in out and "Traceback" not in out, out


# ------------------------------------------------------------------------------- memory


@pytest.mark.parametrize("kind", ["huge", "endless", "gzip-bomb"])
def test_load_memory_is_bounded_at_300_in_flight(tmp_path: Path, kind: str) -> None:
    """Every answer too large or endless, 300 at once: the bodies in flight share a budget
    (4 x --max-response-mb) instead of 16 MB each (6.8 GB at --concurrency 300)."""
    recording = write_recording(tmp_path / "r.jsonl", clean_exchanges(school_mobile()))
    with serve(kind) as url:
        run = measure([*HARNESS, "load", str(recording), "--target", url, "--quiet",
                       "--loop", "10", "--rate", "1000", "--concurrency", "300",
                       "--timeout", "20", "--namespace", "http://tempuri.org/"], tmp_path)
    assert run.returncode in (1, 2), run.out + run.err
    assert "Traceback" not in run.err and "PASSED" not in run.out
    assert run.peak_kb < 300 * 1024, f"{run.peak_kb / 1024:.0f} MB against the {kind} target"


def test_load_streams_its_recording(reference_url: str, tmp_path: Path) -> None:
    """The exchanges are read again from their lines when due, not all held: 240 lines with a
    1 MB header each (240 MB) used to be held whole, twice (the exchanges and their requests
    ready to send)."""
    from test_broken_recordings import big_header_recording

    path = big_header_recording(school_mobile(), tmp_path / "big.jsonl", 240)
    run = measure([*HARNESS, "load", str(path), "--target", reference_url, "--quiet",
                   "--rate", "80", "--concurrency", "10", "--namespace", "http://tempuri.org/"],
                  tmp_path)
    assert "Traceback" not in run.err, run.err
    assert "240 requests" in run.out, run.out + run.err
    assert run.peak_kb < 300 * 1024, f"{run.peak_kb / 1024:.0f} MB for a 240 MB recording"
