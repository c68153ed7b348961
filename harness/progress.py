"""Progress of a long run, the same way in every command: a bar on a terminal, and without one
(CI) a plain line on stderr at most every ``EVERY`` seconds::

    replay: 120/320 exchanges, 7.9/s, 3 failing, ETA 25 s

``--quiet`` silences it. A command makes one ``Progress`` (a context manager) and calls
``update(done, failing=...)`` as work finishes; ``total`` may be unknown (then no ETA).
Work judged in batches (replay's chunks) may also say each call as it is answered with
``answered()`` (a no-op without a progress in this process, e.g. in a worker process), so the
count moves between batches.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any

#: Seconds between two plain lines (no terminal); HARNESS_PROGRESS_SECONDS sets another.
EVERY = 5.0


def _every() -> float:
    try:
        return float(os.environ.get("HARNESS_PROGRESS_SECONDS", EVERY))
    except ValueError:
        return EVERY


class Progress:
    """Progress of ``command`` over ``total`` ``unit`` (None: unknown)."""

    def __init__(self, command: str, *, total: int | None = None, unit: str = "exchanges",
                 quiet: bool = False, stream: IO[str] | None = None,
                 every: float | None = None, failing: str = "failing",
                 detail: Callable[[], str] | None = None) -> None:
        self.command, self.total, self.unit = command, total, unit
        #: The word for what failed ("differing"), and more said after the counts (shadow:
        #: the differences by cause), read each time a line is said.
        self.failing_word, self.detail = failing, detail
        self.every = _every() if every is None else every
        self.stream = stream or sys.stderr
        self.done = 0
        self.failing = 0
        #: Calls answered so far (``answered()``): ahead of ``done`` within a batch.
        self.live = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._bar: Any = None
        self._plain = False
        self._last = self.started
        if quiet:
            return
        global _active
        _active = self
        self._closed = threading.Event()
        threading.Thread(target=self._tick, name="progress", daemon=True).start()
        if _is_terminal(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(desc=command, total=total, unit=f" {_short(unit)}",
                             file=self.stream, dynamic_ncols=True, leave=False)
        else:
            self._plain = True

    def update(self, done: int = 1, *, failing: int = 0) -> None:
        """``done`` more finished, ``failing`` more of them failed (thread-safe)."""
        with self._lock:
            self.done += done
            self.failing += failing
            if failing and self._bar is not None:
                self._bar.set_postfix({self.failing_word: self.failing}, refresh=False)
            self._show()

    def set(self, done: int, failing: int) -> None:
        """The counts so far, as a run keeping its own says them (load: Locust's stats)."""
        with self._lock:
            self.done, self.failing = done, failing
            if self._bar is not None:
                self._bar.set_postfix({self.failing_word: failing}, refresh=False)
            self._show()

    def _answered(self, count: int) -> None:
        with self._lock:
            self.live += count
            self._show()

    def _tick(self) -> None:
        """Between updates: calls answered in worker processes, and a line when one is due
        even while nothing finishes (a slow target)."""
        while not self._closed.wait(min(self.every, 0.5) or 0.1):
            with self._lock:
                if _counter is not None and _counter.value > self.live:
                    self.live = _counter.value
                self._show()

    def _show(self) -> None:
        """Move the bar to max(done, live), or print a line when one is due (lock held)."""
        if self._bar is not None:
            target = max(self.done, self.live)
            if target > self._bar.n:
                self._bar.update(target - self._bar.n)
            if self.detail is not None:
                self._bar.set_postfix_str(f"{self.failing} {self.failing_word}; "
                                          f"{self.detail()}", refresh=False)
        elif self._plain:
            now = time.monotonic()
            if now - self._last >= self.every:
                self._last = now
                self._say(now)

    def set_total(self, total: int | None) -> None:
        with self._lock:
            self.total = total
            if self._bar is not None:
                self._bar.total = total
                self._bar.refresh()

    def line(self, now: float | None = None) -> str:
        """``replay: 120/320 exchanges, 7.9/s, 3 failing, ETA 25 s``."""
        now = time.monotonic() if now is None else now
        seconds = max(now - self.started, 1e-9)
        done = max(self.done, self.live)
        rate = done / seconds
        of = f"/{self.total}" if self.total is not None else ""
        text = (f"{self.command}: {done}{of} {self.unit}, {rate:.1f}/s, {self.failing} "
                f"{self.failing_word}")
        if self.total is not None and rate > 0 and done < self.total:
            text += f", ETA {_duration((self.total - done) / rate)}"
        if self.detail is not None and (more := self.detail()):
            text += f"; {more}"
        return text

    def _say(self, now: float) -> None:
        print(self.line(now), file=self.stream, flush=True)

    def close(self) -> None:
        global _active, _counter
        if _active is self:
            _active = None
            _counter = None
        if hasattr(self, "_closed"):
            self._closed.set()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            self._plain = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


#: The progress of the run in this process (None: none, or quiet).
_active: Progress | None = None


#: Calls answered in worker processes, shared with the parent (``shared_counter``).
_counter: Any = None


def answered(count: int = 1) -> None:
    """``count`` more calls answered, for the progress of the run (this process's, or the
    parent's for a worker process); nothing when there is none."""
    counter = _counter
    if counter is not None:
        with counter.get_lock():
            counter.value += count
        return
    progress = _active
    if progress is not None:
        progress._answered(count)


def shared_counter(context: Any) -> Any:
    """A counter of ``context`` (multiprocessing) the worker processes add their answered
    calls to (``in_worker``), read by this process's progress; None without one."""
    global _counter
    if _active is None:
        return None
    if _counter is None:
        _counter = context.Value("q", 0)
    return _counter


def in_worker(counter: Any) -> None:
    """In a worker process: ``answered`` adds to ``counter`` (the parent's)."""
    global _counter
    _counter = counter


# A worker process may be forked from a command whose progress thread is drawing (lint's
# workers are: ``harness.judge.streaming``). The fork waits until the drawing is done, so the
# child never inherits the stream's lock held by a thread it does not have; and the child has
# no progress of its own (``answered`` there goes to the parent's counter, or nowhere).


def _before_fork() -> None:
    progress = _active
    if progress is not None:
        progress._lock.acquire()
        _held.append(progress)


def _after_fork_in_parent() -> None:
    while _held:
        _held.pop()._lock.release()


def _after_fork_in_child() -> None:
    global _active
    _after_fork_in_parent()
    _active = None


_held: list[Progress] = []
os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _short(unit: str) -> str:
    return {"exchanges": "exch", "requests": "req"}.get(unit, unit)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"
