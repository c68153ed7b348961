"""Progress everywhere (issue 24 item 2): without a terminal (CI) a long run says how far it
is on stderr, a plain line at most every 5 s (done/total, rate, failures so far, ETA); on a
terminal a bar; ``--quiet`` silences it. One helper, ``harness.progress.Progress``.

The commands run as children with pipes (no terminal) against the slow loopback target of
test_interrupt, with HARNESS_PROGRESS_SECONDS=1 so a line is due within a short run.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from faulty import serve_fault
from test_interrupt import ROOT, SAMPLE, START_TIMEOUT, Slow

from harness import progress
from harness.progress import Progress


@pytest.fixture
def slow_url() -> Iterator[str]:
    with serve_fault(Slow()) as url:
        yield url


def _progress_lines(args: list[str]) -> list[str]:
    """Run ``harness ARGS`` without a terminal (pipes), progress every second; its lines."""
    done = subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=START_TIMEOUT,
                          env={**os.environ, "HARNESS_PROGRESS_SECONDS": "1"}, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.splitlines()


def test_replay_without_a_terminal_says_its_progress(slow_url: str) -> None:
    lines = [line for line in _progress_lines(["replay", str(SAMPLE), "--target", slow_url])
             if line.startswith("replay: ") and "/32 exchanges" in line]
    assert lines, "no progress line"
    moving = [line for line in lines if not line.startswith("replay: 0/")]
    assert moving and [line for line in moving if ", ETA " in line], lines
    assert all("/s, " in line and " failing" in line for line in lines)


def test_probe_without_a_terminal_says_its_progress(slow_url: str) -> None:
    lines = _progress_lines(["probe", "--target", slow_url, "--max-requests", "60",
                             "--allure-dir", ""])
    assert [line for line in lines if line.startswith("probe: ") and " cases, " in line]


def test_load_without_a_terminal_says_its_progress(slow_url: str) -> None:
    lines = _progress_lines(["load", str(SAMPLE), "--target", slow_url, "--rate", "8"])
    assert [line for line in lines if line.startswith("load: ") and "/32 requests, " in line
            and " failing" in line], lines


def test_quiet_silences_the_progress(slow_url: str) -> None:
    lines = _progress_lines(["replay", str(SAMPLE), "--target", slow_url, "--quiet"])
    assert not [line for line in lines if "/32 exchanges" in line]


def test_a_plain_line_says_done_total_rate_failures_and_eta() -> None:
    out = io.StringIO()  # not a terminal
    with Progress("diff", total=10, unit="cases", stream=out, every=0) as progress:
        progress.update(3, failing=1)
    line = out.getvalue().splitlines()[-1]
    assert line.startswith("diff: 3/10 cases, ") and "/s, 1 failing, ETA " in line


def test_a_line_names_what_fails_in_the_commands_words_and_says_more_after_it() -> None:
    out = io.StringIO()
    causes = ["no difference"]
    with Progress("shadow", unit="calls mirrored", stream=out, every=0, failing="differing",
                  detail=lambda: causes[0]) as progress:
        causes[0] = "2 x soapAction differs"
        progress.update(4, failing=2)
    line = out.getvalue().splitlines()[-1]
    assert line.startswith("shadow: 4 calls mirrored, ")
    assert line.endswith("/s, 2 differing; 2 x soapAction differs")


def test_quiet_or_a_pause_shorter_than_every_prints_nothing() -> None:
    out = io.StringIO()
    with Progress("lint", stream=out, quiet=True, every=0) as progress:
        progress.update(5)
    with Progress("lint", stream=out, every=3600) as progress:
        progress.update(5)
    assert out.getvalue() == ""


class _BlockingStream(io.StringIO):
    """A stream whose writes wait until ``go`` is set (a terminal that stalls), saying when
    one has started."""

    def __init__(self) -> None:
        super().__init__()
        self.writing, self.go = threading.Event(), threading.Event()

    def write(self, text: str) -> int:
        self.writing.set()
        self.go.wait()
        return super().write(text)

    def isatty(self) -> bool:
        return False


def test_a_process_forked_while_the_progress_draws_gets_no_lock_held_by_no_one() -> None:
    """lint forks its workers from the command, whose progress thread may be drawing at that
    moment: the fork waits for the drawing to end, so the child does not inherit the progress
    lock held by a thread it does not have (it would hang on it), and the child has no
    progress of its own (``answered`` there must not draw the parent's)."""
    stream = _BlockingStream()
    with Progress("lint", stream=stream, every=0.0) as bar:
        assert stream.writing.wait(10), "the progress thread never drew"  # it holds the lock
        threading.Timer(0.2, stream.go.set).start()  # the drawing ends a little later
        parent, child = multiprocessing.Pipe()
        worker = multiprocessing.get_context("fork").Process(
            target=_report_progress_state, args=(bar, child))
        worker.start()  # the fork: waits for the drawing
        worker.join(30)
        assert parent.poll(0), "the forked process said nothing"
        lock_free, no_progress = parent.recv()
    assert lock_free, "the forked process inherited the progress lock, held"
    assert no_progress, "the forked process drew the parent's progress"


def _report_progress_state(bar: Progress, conn) -> None:
    took = bar._lock.acquire(timeout=5)
    conn.send((took, progress._active is None))
