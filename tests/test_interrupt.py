"""Every command stops cleanly on SIGINT and SIGTERM (issue 24 item 1): exit 130 or 143, the
console summary and ``--json`` written with ``"interrupted": true`` and the counts so far, no
traceback, no process left behind.

Each command runs as a child started with the default SIGINT disposition (as a shell or a CI
runner starts it: a background job of a non-interactive shell would ignore SIGINT), against a
deliberately slow loopback target, and gets its signal once it is mid-way (the target has
answered some calls, or the worker processes are up). No timed assertion: only a generous
timeout on the child.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from faulty import serve_fault
from test_probe import accepts_any_id
from traffic import repeated_recording

from harness import stopping
from harness.contract.bindings import classify
from harness.errors import ClassificationError
from harness.reference.app import answer
from harness.reports.allure_report import ALLURE, Renderer
from harness.traffic.recording import read_exchanges

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"
#: Seconds the slow target takes per answer (it answers one call at a time).
DELAY = 0.15
#: Generous bounds (not assertions on speed): a child that never gets mid-way or never ends.
START_TIMEOUT = 120
#: Calls ``check_service`` makes per target before the run (the first operation over its
#: 4 bindings).
SETUP_CALLS = 4
END_TIMEOUT = 60


class Slow:
    """A loopback target answering as the reference, DELAY seconds per call, counting the
    operations' calls (not service description requests). A command first checks that its
    target is the service with up to SETUP_CALLS calls: mid-way is past them."""

    def __init__(self, respond=answer, delay: float = DELAY) -> None:
        self.answered = 0
        self.lock = threading.Lock()
        self.respond = respond
        self.delay = delay

    def __call__(self, contract, request):
        time.sleep(self.delay)
        try:
            classify(contract, request)
        except ClassificationError:
            return self.respond(contract, request)
        with self.lock:
            self.answered += 1
        return self.respond(contract, request)


@pytest.fixture
def slow() -> Iterator[tuple[str, Slow]]:
    target = Slow()
    with serve_fault(target) as url:
        yield url, target


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def interrupt(args: list[str], ready: Callable[[psutil.Process], bool],
              sig: int = signal.SIGINT) -> tuple[int, str, str]:
    """Run ``harness ARGS`` until ``ready``, send ``sig``; (status, stdout, stderr) once it
    ended, after checking that no process it started is left."""
    child = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_signals)
    proc = psutil.Process(child.pid)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready(proc):
            assert child.poll() is None, f"ended before it was mid-way: {child.communicate()}"
            assert time.monotonic() < deadline, "never got mid-way"
            time.sleep(0.05)
        started = proc.children(recursive=True)
        child.send_signal(sig)
        out, err = child.communicate(timeout=END_TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    _, alive = psutil.wait_procs(started, timeout=END_TIMEOUT)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "orphans left"
    assert "Traceback" not in err, err
    return child.returncode, out, err


def answered(target: Slow, calls: int) -> Callable[[psutil.Process], bool]:
    return lambda proc: target.answered >= calls


def workers_up(count: int) -> Callable[[psutil.Process], bool]:
    return lambda proc: len(proc.children(recursive=True)) >= count


def interrupted_json(path: Path, sig: str = "SIGINT") -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["interrupted"] is True and data["verdict"] == "interrupted"
    assert data["signal"] == sig
    assert data["exchanges"] > 0 and data["checks"] > 0
    return data


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_replay_stops_and_writes_what_it_judged(slow, tmp_path: Path, sig: int,
                                                status: int) -> None:
    url, target = slow
    report = tmp_path / "replay.json"
    code, out, err = interrupt(["replay", str(SAMPLE), "--target", url, "--json", str(report),
                                "--junit", str(tmp_path / "replay.xml")],
                               answered(target, SETUP_CALLS + 4), sig)
    assert code == status, err
    name = signal.Signals(sig).name
    data = interrupted_json(report, name)
    assert data["exchanges"] < 32  # stopped mid-way, not at the natural end
    assert f"replay: INTERRUPTED by {name}" in out
    assert "interrupted" in (tmp_path / "replay.xml").read_text(encoding="utf-8")


def test_replay_with_a_rate_stops_in_its_wait(slow, tmp_path: Path) -> None:
    url, target = slow
    report = tmp_path / "replay.json"
    code, _out, err = interrupt(["replay", str(SAMPLE), "--target", url, "--rate", "2",
                                "--json", str(report)], answered(target, SETUP_CALLS + 2))
    assert code == 130, err
    assert interrupted_json(report)["exchanges"] < 32


def test_diff_stops_and_writes_what_it_compared(slow, tmp_path: Path) -> None:
    url, target = slow
    report = tmp_path / "diff.json"
    code, _out, err = interrupt(["diff", "--primary", url, "--candidate", url, "--json",
                                str(report), "--allure-dir", str(tmp_path / "allure")],
                               answered(target, 2 * SETUP_CALLS + 4), signal.SIGTERM)
    assert code == 143, err
    interrupted_json(report, "SIGTERM")
    overview = (tmp_path / "allure" / "environment.properties").read_text(encoding="utf-8")
    assert "verdict = INTERRUPTED" in overview


def test_lint_with_workers_stops_and_keeps_the_chunks_judged(tmp_path: Path) -> None:
    big = repeated_recording(SAMPLE, tmp_path / "big.jsonl", 600)
    report = tmp_path / "lint.json"
    code, out, err = interrupt(["lint", str(big), "--workers", "2", "--json", str(report)],
                               workers_up(2))  # forked from it: no forkserver
    assert code == 130, err
    data = interrupted_json(report)
    assert data["exchanges"] < 32 * 600
    assert "lint: INTERRUPTED by SIGINT" in out


def test_a_worker_forked_by_a_command_takes_no_signal_before_it_ignores_them() -> None:
    """lint forks its workers from the command, whose SIGINT handler they inherit until they
    ignore the signals (``stopping.in_worker``): a Ctrl-C in between would run the command's
    handler in the worker (a second "interrupted" line, a KeyboardInterrupt there). Forked
    within ``stopping.held()``, the worker gets the signal only once it ignores it."""
    context = multiprocessing.get_context("fork")
    go = context.Event()
    parent, child = context.Pipe()
    with stopping.handled("lint"):
        with stopping.held():
            worker = context.Process(target=_ignore_signals_once_told, args=(go, child))
            worker.start()
        os.kill(worker.pid, signal.SIGINT)  # before it ignores signals
        go.set()
        worker.join(30)
    assert parent.poll(0), "the worker took the command's SIGINT and ended"
    assert parent.recv() is None, "the worker ran the command's SIGINT handler"


def _ignore_signals_once_told(go, conn) -> None:
    go.wait(30)
    stopping.in_worker(None)
    conn.send(stopping.signal_name())


def test_the_stop_event_goes_to_workers_of_either_start_method_in_one_process() -> None:
    """lint forks its workers, replay starts them from a forkserver: both in one process (a
    test session, a program calling both) each get a stop event they can be given (an Event
    made for one start method is refused by the other's processes)."""
    try:
        for method in ("fork", "forkserver", "fork"):
            context = multiprocessing.get_context(method)
            worker = context.Process(target=_set_it, args=(stopping.shared_event(context),))
            worker.start()
            worker.join(60)
            assert worker.exitcode == 0, method
        assert stopping.requested()
    finally:
        stopping.reset()  # not stopped for the tests after this one


def _set_it(event) -> None:
    event.set()


def test_probe_stops_and_never_replaces_a_complete_failures_file(tmp_path: Path) -> None:
    target = Slow(accepts_any_id)
    failures = tmp_path / "failures.jsonl"
    failures.write_text("the last complete run's cases\n", encoding="utf-8")
    report = tmp_path / "probe.json"
    with serve_fault(target) as url:
        code, out, err = interrupt(
            ["probe", "--target", url, "--failures", str(failures), "--json", str(report),
             "--allure-dir", str(tmp_path / "allure"), "--max-time", "600"],
            lambda proc: any(tmp_path.glob(".failures.jsonl.*.tmp")))  # a case saved
    assert code == 130, err
    interrupted_json(report)
    assert failures.read_text(encoding="utf-8") == "the last complete run's cases\n"
    partial = tmp_path / "failures.jsonl.partial"
    assert [e.meta["probe"]["failed"] for e in read_exchanges([partial])]
    assert "probe: INTERRUPTED by SIGINT" in out and str(partial) in out
    assert not list(tmp_path.glob(".failures.jsonl.*"))


def test_certify_stops_and_reports_the_scenarios_that_ran(slow, tmp_path: Path) -> None:
    url, target = slow
    report = tmp_path / "certify.json"
    code, out, err = interrupt(["certify", "--target", url, "--json", str(report), "--junit",
                                str(tmp_path / "certify.xml"), "--report-dir",
                                str(tmp_path / "reports"), "--no-html"],
                               answered(target, SETUP_CALLS + 10), signal.SIGTERM)
    assert code == 143, err
    data = interrupted_json(report, "SIGTERM")
    assert 0 < sum(data["scenarios"].values()) < data["scenarios_planned"]
    assert "certify: INTERRUPTED by SIGTERM after " in out
    junit = (tmp_path / "certify.xml").read_text(encoding="utf-8")
    assert '<property name="interrupted" value="SIGTERM"/>' in junit


LOAD = ["--rate", "4", "--loop", "5"]  # 160 calls at 4/s: 40 s unless stopped


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_load_stops_and_writes_what_it_judged(slow, tmp_path: Path, sig: int,
                                              status: int) -> None:
    url, target = slow
    report = tmp_path / "load.json"
    code, out, err = interrupt(["load", str(SAMPLE), "--target", url, *LOAD, "--json",
                                str(report)], answered(target, SETUP_CALLS + 3), sig)
    assert code == status, err
    name = signal.Signals(sig).name
    assert interrupted_json(report, name)["exchanges"] < 160
    assert f"load: INTERRUPTED by {name}" in out and "PASSED" not in out


def test_load_master_tells_its_two_workers_to_stop(slow, tmp_path: Path) -> None:
    url, target = slow
    port = str(_free_port())
    workers = [subprocess.Popen([sys.executable, "-m", "harness", "load", "--worker",
                                 "--master-port", port, str(SAMPLE)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=_default_signals) for _ in range(2)]
    report = tmp_path / "load.json"
    try:
        code, _out, err = interrupt(["load", str(SAMPLE), "--target", url, *LOAD, "--master",
                                    "--expect-workers", "2", "--master-port", port,
                                    "--json", str(report)],
                                   answered(target, SETUP_CALLS + 4))
        ended = [w.communicate(timeout=END_TIMEOUT)[0] for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
    assert code == 130, err
    data = interrupted_json(report)
    assert data["workers"] == 2
    for worker, output in zip(workers, ended, strict=True):
        assert worker.returncode != 0 and "Traceback" not in output, output
        assert "PASSED" not in output


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    """The first SIGINT lets the calls in flight end (8 of them, 2 s each, one at a time:
    ~16 s); the second ends the run at once, writing nothing more."""
    target = Slow(delay=2.0)
    report = tmp_path / "replay.json"
    with serve_fault(target) as url:
        child = subprocess.Popen([sys.executable, "-m", "harness", "replay", str(SAMPLE),
                                  "--target", url, "--json", str(report)], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=_default_signals)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while target.answered < SETUP_CALLS + 1:
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            started = psutil.Process(child.pid).children(recursive=True)
            child.send_signal(signal.SIGINT)
            assert child.stderr is not None
            first = child.stderr.readline()
            while "interrupted by SIGINT" not in first:
                first = child.stderr.readline()
                assert first, "no line for the first signal"
            child.send_signal(signal.SIGINT)
            _, err = child.communicate(timeout=END_TIMEOUT)
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert child.returncode == 130, err
    assert "SIGINT again: stopping at once" in err and "Traceback" not in err, err
    assert not report.exists()
    _, alive = psutil.wait_procs(started, timeout=END_TIMEOUT)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "orphans left"


# ------------------------------------------------- certify's last second: the reporting phase
# A signal at a deterministic point of the run, sent by the command to itself (a CI runner's
# SIGTERM) or to its process group (a Ctrl-C at a terminal, which Allure's Node renderer gets
# too): tests/signal_at.py. One scenario (R4-STATUS on AuthCode over SOAP 1.1) keeps each run
# short; the HTML report is on, as by default.

SIGNAL_AT = Path(__file__).with_name("signal_at.py")
needs_allure = pytest.mark.skipif(not ALLURE.exists(),
                                  reason="Allure 3 not installed (scripts/setup installs it)")
ONE_SCENARIO = ["--rule", "R4-STATUS", "--operation", "AuthCode", "--binding", "SOAP 1.1"]
#: Where the signal is sent from (the start of the named function's first call).
BEFORE_RESULTS = "harness.reports.allure_results:HeldResults.write"  # pytest has ended
CONSOLE_REPORT = "harness.certify.engine:print_report"  # the run's verdict is settled
HTML_RENDER = "harness.reports.allure_report:Renderer.finish"
MID_RUN = "harness.judge.rules:judge"  # the one scenario's call is answered
COLLECTED = "harness.certify.engine:CertifyPlugin.pytest_collection_finish"  # none ran yet


def certify_signalled(tmp_path: Path, where: str, signals: str, who: str,
                      selection: tuple[str, ...] = tuple(ONE_SCENARIO)
                      ) -> tuple[int, str, str]:
    """certify (one scenario, JSON, JUnit and HTML into ``tmp_path``) with ``signals`` sent at
    ``where`` to the command (``self``) or its group (``group``); (status, stdout, stderr),
    once no process of its group is left."""
    child = subprocess.Popen(
        [sys.executable, str(SIGNAL_AT), where, signals, who, "certify", "--quiet",
         *selection, "--report-dir", str(tmp_path / "reports"), "--json",
         str(tmp_path / "certify.json"), "--junit", str(tmp_path / "certify.xml")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_signals, start_new_session=True)
    try:
        out, err = child.communicate(timeout=START_TIMEOUT)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
    left = [p for p in psutil.process_iter() if _group_of(p) == child.pid]
    _, alive = psutil.wait_procs(left, timeout=END_TIMEOUT)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "orphans left"
    assert "Traceback" not in err and "allure failed" not in out + err, err
    assert "still running as the command ends" not in err, err
    assert "nothing to report" not in err, err  # the console report was written
    return child.returncode, out, err


def _group_of(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except OSError:
        return None


def no_html(tmp_path: Path) -> None:
    """No page, not even half of one (Allure's hidden folder)."""
    report = tmp_path / "reports"
    assert not (report / "allure-report" / "index.html").exists()
    assert not [p.name for p in report.glob(".*")] + [
        p.name for p in (report / "allure-report").glob(".*")]


@needs_allure
@pytest.mark.parametrize("sig, who", [(signal.SIGINT, "group"), (signal.SIGTERM, "self")])
def test_certify_signalled_after_its_scenarios_reports_them_interrupted(
        tmp_path: Path, sig: int, who: str) -> None:
    """Between pytest's end and the results written: it was swallowed (PASSED, exit 0)."""
    name = signal.Signals(sig).name
    code, out, err = certify_signalled(tmp_path, BEFORE_RESULTS, name, who)
    assert code == 128 + sig, out + err
    assert f"certify: INTERRUPTED by {name} after 46 of 46 scenarios " in out  # 45 left out
    assert "PASSED" not in out
    data = interrupted_json(tmp_path / "certify.json", name)
    assert data["scenarios"] == {"passed": 1, "left out": 45}
    assert f'<property name="interrupted" value="{name}"/>' in \
        (tmp_path / "certify.xml").read_text(encoding="utf-8")
    overview = (tmp_path / "reports" / "allure-results" / "environment.properties")
    assert "verdict = INTERRUPTED" in overview.read_text(encoding="utf-8")
    # The same words as the console's (it said "after 3 calls" where the console said
    # "after 46 of 46 scenarios")
    assert f"interrupted = by {name} after 46 of 46 scenarios\\: " in \
        overview.read_text(encoding="utf-8")
    assert f"certify: no HTML report: interrupted by {name} (harness report --results " in out
    no_html(tmp_path)


@needs_allure
def test_certify_signalled_before_its_first_scenario_sends_nothing(tmp_path: Path) -> None:
    """A Ctrl-C while pytest collects: no scenario starts (the first one ran, and sent its
    calls, after the user had asked to stop)."""
    code, out, err = certify_signalled(tmp_path, COLLECTED, "SIGINT", "group", selection=())
    assert code == 130, out + err
    assert "certify: INTERRUPTED by SIGINT after 0 of 116 scenarios - " in out
    data = json.loads((tmp_path / "certify.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "interrupted" and data["exchanges"] == 0
    assert "certify: no HTML report: interrupted by SIGINT (harness report --results " in out
    no_html(tmp_path)


@needs_allure
def test_certify_ctrl_c_during_the_console_report_says_what_was_written(
        tmp_path: Path) -> None:
    """After the verdict, during the console report: it said "nothing to report", exit 130,
    below the report it had written."""
    code, out, err = certify_signalled(tmp_path, CONSOLE_REPORT, "SIGINT", "group")
    assert code == 130, out + err
    verdict = next(line for line in out.splitlines() if line.startswith("certify: PASSED"))
    lines = out.splitlines()[out.splitlines().index(verdict) + 1:]
    assert lines[:3] == [f"certify: JSON findings in {tmp_path / 'certify.json'}",
                         f"certify: JUnit XML in {tmp_path / 'certify.xml'}",
                         f"certify: Allure results in {tmp_path / 'reports' / 'allure-results'}"]
    assert lines[3].startswith("certify: interrupted by SIGINT after the verdict: the reports "
                               "above are written, the HTML report is not (harness report ")
    assert len(lines) == 4
    assert json.loads((tmp_path / "certify.json").read_text(encoding="utf-8"))["verdict"] \
        == "passed"  # as the console says: the run was whole
    no_html(tmp_path)


@needs_allure
@pytest.mark.parametrize("sig, who", [(signal.SIGINT, "group"), (signal.SIGTERM, "self")])
def test_certify_signalled_during_the_html_render_stops_it(tmp_path: Path, sig: int,
                                                           who: str) -> None:
    """A Ctrl-C kills the Node renderer too (no "allure failed" line); a SIGTERM to the
    command alone stops the render rather than waiting for it. Either leaves no page."""
    name = signal.Signals(sig).name
    code, out, err = certify_signalled(tmp_path, HTML_RENDER, name, who)
    assert code == 128 + sig, out + err
    assert "certify: PASSED" in out and "HTML report in" not in out
    assert out.splitlines()[-1].startswith(
        f"certify: interrupted by {name} after the verdict: the reports above are written, "
        "the HTML report is not (harness report --results ")
    no_html(tmp_path)


@needs_allure
def test_certify_ctrl_c_mid_run_at_a_terminal_reports_without_html(tmp_path: Path) -> None:
    """The Node renderer, in the terminal's process group, dies of the same Ctrl-C: that was
    "allure failed", then "nothing to report" below the interrupted run's report. The line
    said as the signal comes reaches stderr though pytest captures it during a scenario."""
    code, out, err = certify_signalled(tmp_path, MID_RUN, "SIGINT", "group")
    assert code == 130, out + err
    # said as the signal came, though pytest captured stderr then (it was lost)
    assert "harness certify: interrupted by SIGINT: finishing the work in flight" in err
    ran = re.search(r"certify: INTERRUPTED by SIGINT after (\d+) of 46 scenarios ", out)
    assert ran and int(ran.group(1)) < 46, out  # the left out after it did not run
    interrupted_json(tmp_path / "certify.json")
    assert out.splitlines()[-1].startswith(
        "certify: no HTML report: interrupted by SIGINT (harness report --results ")
    no_html(tmp_path)


@needs_allure
def test_certify_second_signal_while_reporting_stops_at_once(tmp_path: Path) -> None:
    code, out, err = certify_signalled(tmp_path, CONSOLE_REPORT, "SIGINT,SIGINT", "self")
    assert code == 130, out + err
    assert "SIGINT again: stopping at once" in err
    assert not (tmp_path / "certify.json").exists()


@needs_allure
def test_a_render_cut_short_by_a_signal_stops_node_at_once(tmp_path: Path) -> None:
    """certify cuts its wait for the HTML render short on a signal (KeyboardInterrupt there):
    Node stops then, not when the command's process ends (a program calling certify goes on;
    Node would write the hidden folder the renderer has just removed)."""
    from test_allure_renderer import write_results

    write_results(tmp_path / "results")
    main = threading.get_ident()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with Renderer() as renderer:
            node = renderer._process
            assert node is not None
            renderer.start(tmp_path / "results", tmp_path / "out")

            def interrupt_the_wait() -> None:
                deadline = time.monotonic() + START_TIMEOUT
                while renderer._process is not None and time.monotonic() < deadline:
                    time.sleep(0.001)  # until finish waits for Node
                signal.pthread_kill(main, signal.SIGINT)

            threading.Thread(target=interrupt_the_wait, daemon=True).start()
            with pytest.raises(KeyboardInterrupt):
                renderer.finish()
                time.sleep(START_TIMEOUT)  # the signal comes while this waits, at the latest
            assert node.poll() is not None, "Node still renders"
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
