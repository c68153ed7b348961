"""What one scenario carries from step to step: the values it saved (``${name}``), the request
headers it set, and the calls of its last When step (what its Then steps look at)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.scenarios.answers import Answer
from harness.scenarios.values import ValueProblem, fill

if TYPE_CHECKING:
    from harness.judge.calls import Call


@dataclass
class ScenarioState:
    saved: dict[str, str] = field(default_factory=dict)
    headers: list[tuple[str, str]] = field(default_factory=list)
    #: The calls of the latest When step (one, or one per binding).
    last: list[Call] = field(default_factory=list)
    #: Every call of the scenario, in order.
    made: list[Call] = field(default_factory=list)
    #: The key of the recording whose pseudonyms the scenario expects (``the recorded values
    #: are pseudonyms under key``).
    pseudonym_key: bytes | None = None

    def called(self, calls: list[Call]) -> None:
        self.last = list(calls)
        self.made.extend(calls)

    def answers(self) -> list[Answer]:
        if not self.last:
            raise AssertionError("no call to check: a When step calling an operation comes "
                                 "first")
        return [Answer(call) for call in self.last]

    def fill(self, text: str, escape=str) -> str:
        """``text`` with its ``${name}`` references replaced; AssertionError for one that is
        not saved."""
        try:
            return fill(text, self.saved, escape)
        except ValueProblem as exc:
            raise AssertionError(str(exc)) from None

    def save(self, name: str, value: str | None, what: str) -> None:
        if value is None:
            raise AssertionError(f"nothing to save as {name}: {what} is empty (none)")
        self.saved[name] = value
