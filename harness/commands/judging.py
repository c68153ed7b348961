"""The options every command that judges traffic shares (certify, lint, replay, diff):
``--profile spec|asmx`` and ``--severity RULE=LEVEL`` (repeatable), both also settable in the
config file (harness.config): ``profile = "asmx"`` and a ``[severity]`` table
(``R2-NO-SOAPACTION = "warning"``) or a list (``severity = ["R2=warning"]``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from harness.judge.profiles import DEFAULT_PROFILE, PROFILES, Profile


def add_profile_options(p: argparse.ArgumentParser, *, config: bool = False) -> None:
    """--profile and --severity (and --config, for a command without the sending options)."""
    g = p.add_argument_group("judging (docs: 'Lint and replay', profiles)")
    if config:
        g.add_argument("--config", metavar="FILE",
                       help="settings file (default ./harness.toml, else [tool.harness] in "
                            "./pyproject.toml), e.g. profile and severity; flags override it")
    g.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE,
                   help="spec (default): the spec's rules as written (an unquoted SOAPAction "
                        "fails R1-SOAPACTION); asmx: deviations the ASMX runtime accepts "
                        "(unquoted SOAPAction, SOAP Content-Type without charset, endpoint "
                        "path case) are warnings")
    g.add_argument("--severity", action="append", default=[], metavar="RULE=LEVEL",
                   help="override a rule: failure, warning or off, e.g. "
                        "R2-NO-SOAPACTION=warning (repeatable; harness certify --list-rules)")


def profile_of(args: argparse.Namespace, own_rules: Iterable[str] = ()) -> Profile:
    """The Profile the parsed options name (``own_rules``: the command's own rule IDs, which
    may be overridden too); UsageError for an unknown rule or level."""
    from harness.judge.rules import titles

    return Profile.build(getattr(args, "profile", None), getattr(args, "severity", None) or (),
                         known=[*titles(), *own_rules])
