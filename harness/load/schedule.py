"""When each recorded request goes out: the timing of ``harness load`` (plain Python, no gevent).

Timing-faithful (the default) is an open model, as GoReplay replays: request ``i`` of loop
``k`` is due at ``k * period + offset_i / speed``, where ``offset_i`` is its recorded start
(``timings.started``) minus the recording's first start, with every gap between consecutive
starts clamped to ``max_wait``. A loop's period is its span plus one mean gap, so a steady
recording stays steady across loops. ``rate`` spaces every request ``1 / rate`` apart instead
(also open); ``users`` (a closed model) has no schedule: each user sends the next request as
soon as its previous answer came back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from harness.errors import UsageError

#: The slowest and fastest ``--speed``: a recorded second lasts at most ~17 minutes.
MIN_SPEED, MAX_SPEED = 0.001, 1_000_000.0
_SPEED = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%|x)?\s*$", re.IGNORECASE)


def parse_speed(text: str) -> float:
    """``200%`` (GoReplay's notation) or ``2`` / ``2x`` -> 2.0; above 0."""
    match = _SPEED.match(text)
    if not match:
        raise UsageError(f"--speed {text!r} is not a factor (2, 0.5) or a percentage (200%)")
    value = float(match.group(1)) / (100.0 if match.group(2) == "%" else 1.0)
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise UsageError(f"--speed {text} is out of range ({MIN_SPEED:g} to {MAX_SPEED:g})")
    return value


@dataclass(frozen=True)
class Timing:
    """How the requests are spread in time (see the module docstring)."""

    speed: float = 1.0
    loops: int = 1
    max_wait: float | None = None
    rate: float | None = None
    users: int | None = None  # under a shape: its peak
    shape: str | None = None  # harness.load.shape: the users follow it (a closed model)

    @property
    def mode(self) -> str:
        if self.shape:
            return "shape"
        return "users" if self.users else "rate" if self.rate else "recorded"


class Schedule:
    """The due time (seconds after the start) of every request of every loop."""

    def __init__(self, started: Sequence[float | None], timing: Timing) -> None:
        self.timing = timing
        self.count = len(started)
        self.offsets = _offsets(started, timing.max_wait)
        span = max(self.offsets, default=0.0)
        mean_gap = span / (self.count - 1) if self.count > 1 else 0.0
        self.period = (span + mean_gap) / timing.speed

    def due(self, loop: int, position: int) -> float:
        """When request ``position`` (its place in the recordings) of loop ``loop`` is due."""
        if self.timing.users:
            return 0.0
        if self.timing.rate:
            return (loop * self.count + position) / self.timing.rate
        return loop * self.period + self.offsets[position] / self.timing.speed

    def items(self, positions: Sequence[int]) -> Iterator[tuple[float, int, int]]:
        """``(due, loop, position)`` of ``positions`` (a worker's slice), loop after loop, in
        due order."""
        ordered = sorted(positions, key=lambda p: (self.due(0, p), p))
        for loop in range(self.timing.loops):
            for position in ordered:
                yield self.due(loop, position), loop, position

    def slots(self, positions: Sequence[int], chosen: Sequence[int]
              ) -> Iterator[tuple[float, int, int]]:
        """``(due, loop, slot)`` of the ``chosen`` slots (``positions[slot]``: the slot's place
        in the recordings), loop after loop, in due order."""
        ordered = sorted(chosen, key=lambda s: (self.due(0, positions[s]), positions[s]))
        for loop in range(self.timing.loops):
            for slot in ordered:
                yield self.due(loop, positions[slot]), loop, slot

    @property
    def total(self) -> int:
        return self.count * self.timing.loops

    @property
    def duration(self) -> float | None:
        """Seconds from the first request due to the last (None: closed model, unknown)."""
        if self.timing.users or not self.count:
            return None if self.timing.users else 0.0
        return self.due(self.timing.loops - 1, self._last)

    @property
    def _last(self) -> int:
        return max(range(self.count), key=lambda p: (self.due(0, p), p))

    def describe(self) -> str:
        """What ``--dry-run`` prints: requests, expected duration and mean rate."""
        t = self.timing
        head = f"{self.total} requests ({self.count} x {t.loops} loop(s)), mode {t.mode}"
        if t.shape:
            from harness.load.shape import parse_shape

            return (f"{self.count} recorded requests, sent over and over until the shape ends"
                    f", mode shape: {parse_shape(t.shape).describe()}")
        if t.users:
            return f"{head}: {t.users} users, each sends as soon as its answer came back"
        duration = self.duration or 0.0
        rate = f"{self.total / duration:.1f} req/s" if duration > 0 else "all at once"
        how = (f"{t.rate:g} req/s" if t.rate else f"speed {t.speed:g}x"
               + (f", gaps clamped to {t.max_wait:g} s" if t.max_wait is not None else ""))
        return f"{head}, {how}: expected duration {duration:.3f} s, mean rate {rate}"


def _offsets(started: Sequence[float | None], max_wait: float | None) -> list[float]:
    """Each start minus the first, gaps clamped to ``max_wait``. A request without a recorded
    start goes out with the one recorded before it (capture records one for every exchange;
    HAR and hand-made recordings may not)."""
    known = _filled(started)
    order = sorted(range(len(known)), key=lambda i: (known[i], i))
    offsets = [0.0] * len(known)
    at, previous = 0.0, None
    for i in order:
        if previous is not None:
            gap = known[i] - previous
            at += min(gap, max_wait) if max_wait is not None else gap
        offsets[i] = at
        previous = known[i]
    return offsets


def _filled(started: Sequence[float | None]) -> list[float]:
    first = next((v for v in started if v is not None), 0.0)
    out, last = [], first
    for value in started:
        last = value if value is not None else last
        out.append(last)
    return out
