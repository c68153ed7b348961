"""``--rate R``: one schedule for the whole run, however many threads and processes send.

The n-th request of the run is due at ``start + n / R``. The next free slot lives in shared
memory (a ``multiprocessing`` double under its lock), so every thread of every worker process
takes its slot from the same schedule: the processes' shares add up to R whatever the
concurrency, and a process busy judging lends its slots to the others instead of losing them.

A sender that falls behind (a slow answer, a pause between chunks) may catch up, but only
within ``CATCH_UP`` seconds: after a longer stall the schedule restarts from now rather than
firing a burst at the target.

    pace = Pace(8.0)        # made in the parent, handed to worker processes as they start
    pace.wait()             # in any thread or process: returns when this request is due
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from harness import stopping

#: Seconds of slots a late schedule may still make up (at most this much of a burst).
CATCH_UP = 1.0


class Pace:
    """At most ``rate`` starts per second over the run (None or 0: no limit), shared by every
    thread and every process the Pace is handed to (pickle it only while starting a process,
    as ``ProcessPoolExecutor``'s ``initargs`` do)."""

    def __init__(self, rate: float | None, catch_up: float = CATCH_UP) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.catch_up = max(catch_up, self.interval)
        # the next free slot (time.monotonic: one clock for every process); 0 before the first
        self._next: Any = multiprocessing.get_context("forkserver").Value("d", 0.0) \
            if self.interval else None

    def slot(self) -> float:
        """Take the next slot: the monotonic time this request is due (maybe already past)."""
        if not self.interval:
            return time.monotonic()
        with self._next.get_lock():
            now = time.monotonic()
            due = self._next.value
            slot = now if due == 0.0 else max(due, now - self.catch_up)
            self._next.value = slot + self.interval
        return slot

    def wait(self) -> bool:
        """Return when the next slot is due, or sooner when the run is asked to stop
        (``harness.stopping``); whether it was."""
        if not self.interval:
            return False
        slot = self.slot()
        while (left := slot - time.monotonic()) > 0:
            if stopping.wait(left):  # a stop cuts the wait short
                return True
        return False
