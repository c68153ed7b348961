"""Profiles: the letter of the spec, or what ASP.NET tolerates; and per-rule overrides.

``spec`` (the default of every judging command) applies the rules as the spec writes them: an
unquoted SOAPAction fails R1 (the spec says "the quoted string"; WS-I Basic Profile R2744
agrees). ``asmx`` turns the deviations the real ASMX runtime accepts from a client into
warnings: an unquoted SOAPAction, a SOAP request Content-Type without charset, an endpoint path
differing in case. A check marks such an outcome ``tolerated`` (``rules.tolerated``); the
profile decides its verdict. Overrides then set a rule's severity outright (``failure``,
``warning`` or ``off``), e.g. ``R2-NO-SOAPACTION=warning`` for a known client that sends
SOAPAction with SOAP 1.2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from harness.errors import UsageError

PROFILES = ("spec", "asmx")
DEFAULT_PROFILE = "spec"


class Severity(StrEnum):
    FAILURE = "failure"
    WARNING = "warning"
    OFF = "off"  # the rule is not judged at all


@dataclass(frozen=True)
class Profile:
    """How verdicts are weighed: the profile's name and the per-rule overrides."""

    name: str = DEFAULT_PROFILE
    #: rule ID -> severity, as a sorted tuple (hashable, picklable into worker processes).
    overrides: tuple[tuple[str, Severity], ...] = ()
    _by_rule: dict[str, Severity] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name not in PROFILES:
            raise UsageError(f"unknown profile {self.name!r} (use one of: {', '.join(PROFILES)})")
        object.__setattr__(self, "_by_rule", dict(self.overrides))

    @property
    def tolerant(self) -> bool:
        """Whether deviations the ASMX runtime accepts are warnings (else failures)."""
        return self.name == "asmx"

    def severity(self, rule: str) -> Severity | None:
        """The override of ``rule``, if any."""
        return self._by_rule.get(rule)

    @cached_property  # read for every exchange judged
    def off(self) -> frozenset[str]:
        return frozenset(r for r, s in self.overrides if s is Severity.OFF)

    @classmethod
    def build(cls, name: str | None = None, overrides: Iterable[str] | Mapping[str, str] = (),
              known: Iterable[str] = ()) -> Profile:
        """A profile from its name and overrides given as ``RULE=SEVERITY`` texts (or a
        mapping); a rule ID may be shortened to its unique prefix before the first ``-``
        (``R2``). UsageError names what is wrong."""
        pairs = (overrides.items() if isinstance(overrides, Mapping)
                 else (_split(text) for text in overrides))
        ids = tuple(known)
        table: dict[str, Severity] = {}
        for rule, level in pairs:
            table[_rule_id(rule.strip(), ids)] = _severity(str(level).strip(), rule)
        return cls(name or DEFAULT_PROFILE, tuple(sorted(table.items())))


def _split(text: str) -> tuple[str, str]:
    rule, equals, level = text.partition("=")
    if not equals or not rule.strip():
        raise UsageError(f"--severity {text!r} is not RULE=LEVEL (e.g. R2-NO-SOAPACTION=warning)")
    return rule, level


def _rule_id(rule: str, known: tuple[str, ...]) -> str:
    if not known or rule in known:
        return rule
    matches = [r for r in known if r.split("-", 1)[0] == rule]
    if len(matches) == 1:
        return matches[0]
    raise UsageError(f"unknown rule {rule!r} in a severity override"
                     + (f" (it could be {', '.join(matches)})" if matches else ""))


def _severity(level: str, rule: str) -> Severity:
    try:
        return Severity(level.lower())
    except ValueError:
        raise UsageError(f"severity {level!r} of {rule} is none of "
                         f"{', '.join(s.value for s in Severity)}") from None
