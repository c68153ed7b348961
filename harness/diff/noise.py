"""Noise, Diffy-style: what differs between two instances of the same implementation (primary
and secondary) is not a difference of the candidate.

Noise is learned per operation x binding and element path (with the kind of difference, so a
timestamp whose text changes on every call is noise, but a candidate that leaves the timestamp
out is still reported). Everything is learned over the whole run before anything is judged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.judge.compare import Difference

#: Kinds that are one kind for noise: an element sometimes there, sometimes not.
_FAMILY = {"missing": "presence", "extra": "presence"}

NoiseKey = tuple[str, str, str, str]  # operation, binding, kind family, path


def noise_key(operation: str, binding: str, difference: Difference) -> NoiseKey:
    return (operation, binding, _FAMILY.get(difference.kind, difference.kind), difference.path)


@dataclass
class Noise:
    """Differences seen between primary and secondary, and how often each hid a candidate's."""

    seen: Counter[NoiseKey] = field(default_factory=Counter)
    suppressed: Counter[NoiseKey] = field(default_factory=Counter)

    def learn(self, operation: str, binding: str, differences: list[Difference]) -> None:
        for difference in differences:
            self.seen[noise_key(operation, binding, difference)] += 1

    def covers(self, operation: str, binding: str, difference: Difference) -> bool:
        """True (and counted) when ``difference`` is at a place known to be noisy."""
        key = noise_key(operation, binding, difference)
        if key in self.seen:
            self.suppressed[key] += 1
            return True
        return False

    def known(self, operation: str, binding: str, difference: Difference) -> bool:
        """Whether ``difference`` is at a place known to be noisy so far (not counted: a live
        view's question, asked before the whole run is in)."""
        return noise_key(operation, binding, difference) in self.seen

    def noisy_paths(self, operation: str) -> set[str]:
        return {key[3] for key in self.seen if key[0] == operation}

    def summary(self) -> list[dict[str, Any]]:
        """The JSON ``noise`` list: one entry per noisy place."""
        return [{"operation": op, "binding": binding, "kind": kind, "path": path,
                 "seen": count, "suppressed": self.suppressed[(op, binding, kind, path)]}
                for (op, binding, kind, path), count in sorted(self.seen.items())]
