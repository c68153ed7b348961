"""harness load on Locust against real servers on loopback: a real master and two real worker
processes, a counting server (every recorded exchange sent exactly once per loop), the same
verdict as harness replay, a faulty target named as operation x binding, the recorded pace at
200%, and a CLI process that never imports gevent or Locust."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from faulty import FAULTS, serve_fault
from traffic import clean_exchanges, write_recording

from harness.contract.model import Contract
from harness.errors import UsageError
from harness.load.schedule import Schedule, Timing, parse_speed
from harness.load.slicing import read_slice, worker_of
from harness.reference.app import answer
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse

HARNESS = [sys.executable, "-m", "harness"]
TIMEOUT = 240


def paced(exchanges: list[Exchange], gap: float, start: float = 1_800_000_000.0
          ) -> list[Exchange]:
    """``exchanges`` recorded ``gap`` seconds apart."""
    return [replace(ex, timings={"started": start + i * gap}) for i, ex in enumerate(exchanges)]


@pytest.fixture
def recording(contract: Contract, tmp_path: Path) -> Path:
    return write_recording(tmp_path / "clean.jsonl", paced(clean_exchanges(contract), 0.02))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BeforeRun:
    """True for the requests every sending command makes before its run: the check that the
    target is the service, whose first request is the endpoint's ?WSDL (the reference answers
    it, so the check sends nothing more; its answer names the namespace too). None is a call
    of the recording."""

    def __init__(self) -> None:
        self.checked = False

    def __call__(self, request: HttpRequest) -> bool:
        if "wsdl" in request.query.lower():
            self.checked = True
            return True
        return not self.checked


@contextlib.contextmanager
def counting(respond=answer) -> Iterator[tuple[str, Counter]]:
    """A loopback server answering with ``respond`` that counts each request it receives by
    (method, target, body)."""
    seen: Counter[tuple[str, str, bytes]] = Counter()
    lock = threading.Lock()
    before_run = BeforeRun()

    def count(contract: Contract, request: HttpRequest) -> HttpResponse:
        if before_run(request):
            return respond(contract, request)
        with lock:
            seen[request.method, request.target, request.body] += 1
        return respond(contract, request)

    with serve_fault(count) as url:
        yield url, seen


def load(*args: str | Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "load", *map(str, args), "--quiet"], capture_output=True,
                          text=True, timeout=timeout, check=False)


def distributed(recording: Path, target: str, *args: str | Path, workers: int = 2,
                worker_recording: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A real master and ``workers`` real worker processes on loopback."""
    port = str(free_port())
    started = [subprocess.Popen([*HARNESS, "load", "--worker", "--master-port", port,
                                 str(worker_recording or recording)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for _ in range(workers)]
    try:
        master = load(recording, "--target", target, "--master", "--expect-workers",
                      str(workers), "--master-port", port, *args)
        for worker in started:
            out, _ = worker.communicate(timeout=60)
            assert worker.returncode == 0, out
            assert "Traceback" not in out, out
    finally:
        for worker in started:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return master


def replayed(recording: Path, target: str, tmp_path: Path) -> dict:
    done = subprocess.run([*HARNESS, "replay", str(recording), "--target", target, "--quiet",
                           "--json", str(tmp_path / "replay.json")], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads((tmp_path / "replay.json").read_text(encoding="utf-8"))


def _failed(data: dict) -> set[tuple[str, str | None, str | None]]:
    return {(f["rule"], f.get("operation"), f.get("binding")) for f in data["findings"]
            if f["verdict"] == "failed"}


def _times(rules: dict, n: int) -> dict:
    return {rule: {verdict: count * n for verdict, count in counts.items()}
            for rule, counts in rules.items()}


# ------------------------------------------------------------------- distributed, end to end


def test_master_and_two_workers_send_each_exchange_once_per_loop_judged_as_replay(
        recording: Path, contract: Contract, tmp_path: Path) -> None:
    with counting() as (url, seen):
        done = distributed(recording, url, "--loop", "2", "--json", tmp_path / "load.json",
                           "--junit", tmp_path / "load.xml", "--csv", tmp_path / "csv" / "run",
                           "--html", tmp_path / "load.html")
        sent_by_load = Counter(seen)
        seen.clear()
        replay = replayed(recording, url, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = {(ex.request.method, ex.request.target, ex.request.body)
                for ex in clean_exchanges(contract)}
    assert set(sent_by_load) == recorded and set(sent_by_load.values()) == {2}
    data = json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))
    assert data["verdict"] == replay["verdict"] == "passed"
    assert data["rules"] == _times(replay["rules"], 2)
    assert data["exchanges"] == data["sent"] == data["requests"] == 64
    assert sorted(data["sent_by_worker"]) != [0, 64] and sum(data["sent_by_worker"]) == 64
    stats = (tmp_path / "csv" / "run_stats.csv").read_text(encoding="utf-8")
    assert "LogoutFromSchool [HTTP POST]" in stats and "Aggregated" in stats
    assert "<html" in (tmp_path / "load.html").read_text(encoding="utf-8").lower()
    assert (tmp_path / "load.xml").read_bytes().startswith(b"<?xml")


def test_faulty_target_fails_naming_operation_and_binding_as_replay(
        recording: Path, tmp_path: Path) -> None:
    fault = FAULTS["wrong-status"]
    with serve_fault(fault) as url:
        done = distributed(recording, url, "--json", tmp_path / "load.json")
        replay = replayed(recording, url, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))
    assert data["verdict"] == replay["verdict"] == "failed"
    assert data["rules"] == replay["rules"]
    assert _failed(data) == _failed(replay)
    assert (fault.rule, fault.operation, fault.binding) in _failed(data)
    assert f" -- {fault.operation} x {fault.binding}" in done.stdout
    assert f"[{fault.rule}" in done.stdout


def test_a_worker_without_the_recording_ends_the_run_with_one_line(
        recording: Path, reference_url: str, tmp_path: Path) -> None:
    done = distributed(recording, reference_url, workers=1,
                       worker_recording=tmp_path / "elsewhere.jsonl")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "elsewhere.jsonl does not exist" in errors[0], done.stderr
    assert "Traceback" not in done.stderr


# -------------------------------------------------------------------------- one process


def test_recorded_pace_at_200_percent_takes_about_half(contract: Contract,
                                                       reference_url: str,
                                                       tmp_path: Path) -> None:
    five = paced(clean_exchanges(contract)[:5], 1.0)  # recorded span: 4 s
    path = write_recording(tmp_path / "paced.jsonl", five)
    done = load(path, "--target", reference_url, "--speed", "200%", "--json",
                tmp_path / "r.json")
    assert done.returncode == 0, done.stdout + done.stderr
    span = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["sent_span_s"]
    assert 0.3 * 4 <= span <= 0.8 * 4, span  # loose: the schedule says 2 s


def test_check_ratio_judges_a_sample_and_unanswered_always_count(recording: Path,
                                                                 tmp_path: Path) -> None:
    with serve_fault(FAULTS["wrong-status"]) as url:
        done = load(recording, "--target", url, "--rate", "200", "--check-ratio", "0.25",
                    "--json", tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["sent"] == 32 and 0 < data["judged"] < 16, data["judged"]
    assert done.returncode in (0, 1)
    gone = load(recording, "--target", "http://127.0.0.1:9")
    assert gone.returncode == 2 and "unreachable" in gone.stderr
    assert gone.stderr.strip().count("\n") == 0


def slow(contract: Contract, request: HttpRequest) -> HttpResponse:
    time.sleep(0.05)
    return answer(contract, request)


def test_users_mode_and_thresholds(recording: Path, tmp_path: Path) -> None:
    with serve_fault(slow) as url:
        done = load(recording, "--target", url, "--users", "3", "--p95-ms", "10",
                    "--json", tmp_path / "r.json")
    assert done.returncode == 1, done.stdout + done.stderr  # clean, but slower than 10 ms
    assert "above --p95-ms" in done.stdout
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed" and data["sent"] == 32 and data["mode"] == "users"
    assert data["p95_ms"] >= 50


def test_send_options_headers_size_cap_and_selection(recording: Path, tmp_path: Path) -> None:
    runs: list[str | None] = []
    before_run = BeforeRun()

    def noting(contract: Contract, request: HttpRequest) -> HttpResponse:
        if not before_run(request):
            runs.append(request.header("X-Run"))
        return answer(contract, request)

    with counting(noting) as (url, _seen):
        done = load(recording, "--target", url, "--rate", "200", "-H", "X-Run: 7",
                    "--operation", "AuthCode", "--max-response-mb", "0.0002",
                    "--json", tmp_path / "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert runs == ["7"] * 4  # AuthCode over the four bindings, each with the header
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    too_large = {f.get("binding") for f in data["findings"] if f["rule"] == "SEND-RESPONSE-SIZE"}
    assert too_large == {"SOAP 1.1", "SOAP 1.2"}  # the envelopes; GET/POST answer nothing


@contextlib.contextmanager
def silent() -> Iterator[str]:
    """A loopback server that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                accepted.append(server.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in accepted:
            conn.close()


def test_a_target_that_stops_answering_stops_the_run(recording: Path, tmp_path: Path) -> None:
    with silent() as url:
        done = load(recording, "--target", url, "--timeout", "1", "--rate", "10",
                    "--namespace", "http://tempuri.org/", "--json", tmp_path / "r.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "stopped after 3 requests in a row got no answer" in done.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert 3 <= data["sent"] < 32  # the rest was never sent
    assert data["rules"]["REPLAY-TRANSPORT"]["failed"] == data["sent"]


def test_dry_run_prints_duration_and_rate(recording: Path) -> None:
    done = load(recording, "--target", "http://127.0.0.1:9", "--dry-run", "--speed", "50%",
                "--loop", "3")
    assert done.returncode == 0, done.stderr
    assert "96 requests" in done.stdout and "expected duration" in done.stdout


@pytest.mark.parametrize("args", [["--speed", "fast"], ["--speed", "0%"],
                                  ["--check-ratio", "0"], ["--rate", "1", "--users", "2"],
                                  ["--loop", "0"], ["--master", "--worker"], []])
def test_bad_flags_are_one_line_exit_2(recording: Path, args: list[str]) -> None:
    target = [] if not args else ["--target", "http://127.0.0.1:9"]
    done = load(recording, *target, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr


def test_other_commands_never_import_gevent_or_locust(recording: Path) -> None:
    code = ("import sys\n"
            "from harness.cli import main\n"
            "for argv in (['--help'], ['load', '--help'], ['lint', '--quiet', sys.argv[1]],\n"
            "             ['load', sys.argv[1], '--target', 'http://x', '--dry-run']):\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit:\n"
            "        pass\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('gevent', 'locust'))\n"
            "print('IMPORTED', bad)\n")
    done = subprocess.run([sys.executable, "-c", code, str(recording)], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert "IMPORTED []" in done.stdout, done.stdout + done.stderr


# ------------------------------------------------------------------------------ the parts


def test_speed_notation() -> None:
    assert parse_speed("200%") == 2.0 and parse_speed("2") == 2.0
    assert parse_speed("0.5x") == 0.5 and parse_speed("50%") == 0.5
    for bad in ("fast", "0", "-1", "%"):
        with pytest.raises(UsageError):
            parse_speed(bad)


def test_schedule_follows_the_recorded_gaps() -> None:
    started = [10.0, 11.0, 13.0, None, 12.0]  # out of order, one without a start
    plain = Schedule(started, Timing())
    assert plain.offsets == [0.0, 1.0, 3.0, 3.0, 2.0]
    fast = Schedule(started, Timing(speed=2.0, loops=2, max_wait=0.5))
    assert fast.offsets == [0.0, 0.5, 1.5, 1.5, 1.0]
    items = list(fast.items(range(5)))
    assert [p for _, _, p in items[:5]] == [0, 1, 4, 2, 3]
    assert [due for due, _, _ in items] == sorted(due for due, _, _ in items)
    assert len(items) == 10 and fast.duration == pytest.approx(items[-1][0])
    rate = Schedule(started, Timing(rate=10.0, loops=2))
    assert rate.due(1, 2) == pytest.approx(0.7) and rate.total == 10


def test_slices_partition_the_recording_and_keep_a_session_on_one_worker(
        contract: Contract, tmp_path: Path) -> None:
    exchanges = clean_exchanges(contract) * 3
    for i, ex in enumerate(exchanges):  # three people, each with a pseudonymised phone
        exchanges[i] = replace(ex, meta={"operation": "AuthCode", "binding": "soap11",
                                         "arguments": [["phone", f"redacted-{i % 3}"]]})
    path = write_recording(tmp_path / "sessions.jsonl", exchanges)
    slices = [read_slice([path], contract, index, 2).entries for index in range(2)]
    positions = [e.position for part in slices for e in part]
    assert sorted(positions) == list(range(len(exchanges)))
    for part, index in zip(slices, range(2), strict=True):
        assert {worker_of(f"redacted-{e.position % 3}", e.position, 2) for e in part} <= {index}
        assert all(e.name == "AuthCode [SOAP 1.1]" for e in part)
