"""Load shapes of ``harness load --shape`` (plain Python; Locust's ``LoadTestShape`` drives
them in the load process, harness.load.engine).

A shape is stages, comma-separated, run one after the other; the user count (a closed model:
each user sends its next request as soon as its answer came back) follows them:

- ``ramp:A..B/DUR``   from A users to B users, linearly, over DUR;
- ``hold:DUR``        keep the count the stage before ended with, for DUR;
- ``step:N/DUR``      N users at once, for DUR;
- ``steps:A..B+K/DUR`` A users, then A+K, ... up to B, each for DUR.

DUR is seconds, or a number with ``s``, ``m`` or ``h``: ``ramp:0..50/60s,hold:2m``.
The run ends when the shape does; the recordings are sent over and over until then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import UsageError

#: The most users a shape asks for, and its longest run (a day).
MAX_USERS = 10_000
MAX_DURATION_S = 86_400.0

_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(s|m|h)?$")
_UNIT = {None: 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Stage:
    start: int  # users at the stage's start
    end: int  # users at its end (a ramp) or throughout (start == end)
    seconds: float

    def users_at(self, t: float) -> int:
        if self.start == self.end or self.seconds <= 0:
            return self.end
        return round(self.start + (self.end - self.start) * min(t / self.seconds, 1.0))


@dataclass(frozen=True)
class Shape:
    text: str
    stages: tuple[Stage, ...]

    @property
    def duration(self) -> float:
        return sum(s.seconds for s in self.stages)

    @property
    def peak(self) -> int:
        return max(max(s.start, s.end) for s in self.stages)

    def users_at(self, t: float) -> int | None:
        """The user count ``t`` seconds after the start; None once the shape has ended."""
        for stage in self.stages:
            if t < stage.seconds:
                return stage.users_at(t)
            t -= stage.seconds
        return None

    def describe(self) -> str:
        return (f"shape {self.text}: {self.duration:g} s, at most {self.peak} user(s), "
                "each sends as soon as its answer came back")


def parse_shape(text: str) -> Shape:
    """The shape ``text`` says (see the module docstring); UsageError in one line if not."""
    stages: list[Stage] = []
    for part in (p.strip() for p in text.split(",")):
        kind, colon, rest = part.partition(":")
        if not colon:
            raise UsageError(f"--shape stage {part!r} is not KIND:VALUE (ramp:0..50/60s, "
                             "hold:120s, step:20/30s, steps:10..50+10/30s)")
        kind = kind.strip().lower()
        if kind == "hold":
            if not stages:
                raise UsageError("--shape cannot start with hold (say step:N/DUR)")
            stages.append(Stage(stages[-1].end, stages[-1].end, _duration(rest, part)))
        elif kind == "ramp":
            users, dur = _split(rest, part)
            low, high = _range(users, part)
            stages.append(Stage(low, high, _duration(dur, part)))
        elif kind == "step":
            users, dur = _split(rest, part)
            n = _users(users, part)
            stages.append(Stage(n, n, _duration(dur, part)))
        elif kind == "steps":
            users, dur = _split(rest, part)
            span, plus, by = users.partition("+")
            low, high = _range(span, part)
            step = _users(by, part) if plus else 0
            if step <= 0:
                raise UsageError(f"--shape {part!r}: say the step, e.g. steps:10..50+10/30s")
            seconds = _duration(dur, part)
            n = low
            while n <= high:
                stages.append(Stage(n, n, seconds))
                n += step
            if len(stages) > 10_000:
                raise UsageError(f"--shape {part!r} has too many steps")
        else:
            raise UsageError(f"--shape stage {part!r}: unknown kind {kind!r} "
                             "(ramp, hold, step, steps)")
    shape = Shape(text, tuple(stages))
    if shape.peak == 0:
        raise UsageError("--shape never asks for a user")
    if shape.duration > MAX_DURATION_S:
        raise UsageError(f"--shape lasts {shape.duration:g} s: at most {MAX_DURATION_S:g}")
    return shape


def _split(rest: str, part: str) -> tuple[str, str]:
    users, slash, dur = rest.partition("/")
    if not slash:
        raise UsageError(f"--shape stage {part!r} has no duration (e.g. /60s)")
    return users.strip(), dur.strip()


def _range(text: str, part: str) -> tuple[int, int]:
    low, dots, high = text.partition("..")
    if not dots:
        raise UsageError(f"--shape stage {part!r}: users as FROM..TO, e.g. 0..50")
    return _users(low, part), _users(high, part)


def _users(text: str, part: str) -> int:
    text = text.strip()
    if not text.isdigit() or int(text) > MAX_USERS:
        raise UsageError(f"--shape stage {part!r}: {text!r} is not a user count "
                         f"(0 to {MAX_USERS})")
    return int(text)


def _duration(text: str, part: str) -> float:
    match = _DURATION.match(text.strip().lower())
    seconds = float(match.group(1)) * _UNIT[match.group(2)] if match else 0.0
    if seconds <= 0 or seconds > MAX_DURATION_S:
        raise UsageError(f"--shape stage {part!r}: {text!r} is not a duration above 0 "
                         "(60, 60s, 2m, 1h)")
    return seconds
