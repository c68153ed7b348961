"""Regular expressions a user writes (a feature's ``matches`` steps, a mock stub's ``pattern``),
run on RE2: matching takes time linear in the text whatever the pattern, so a pattern such as
``([0-9a-f]+)+z`` cannot pin a core for hours (Python's ``re`` backtracks, and a match running
in C does not even let Ctrl-C through). The price is RE2's syntax: no backreferences and no
lookaround; such a pattern is refused with one line saying what to write instead.

Only text the user gave goes through here; the harness's own patterns stay on ``re``.
"""

from __future__ import annotations

from typing import Protocol

import re2

#: What RE2 says about a construct it lacks (its message's start), and how we say it.
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead (?=...) is not supported"),
    ("invalid perl operator: (?!", "lookahead (?!...) is not supported"),
    ("invalid perl operator: (?<=", "lookbehind (?<=...) is not supported"),
    ("invalid perl operator: (?<!", "lookbehind (?<!...) is not supported"),
    ("invalid perl operator: (?>", "atomic groups (?>...) are not supported"),
    ("bad repetition operator: ++", "possessive repetition (++) is not supported"),
    ("bad repetition operator: *+", "possessive repetition (*+) is not supported"),
    ("bad repetition operator: ?+", "possessive repetition (?+) is not supported"),
    ("invalid repetition size", "a repetition count above 1000 is not supported"),
    ("pattern too large", "the pattern is too large for RE2's memory bound"),
)
_OPERATOR = "invalid perl operator: "
_ESCAPE = "invalid escape sequence: \\"


class PatternError(ValueError):
    """A pattern that cannot run: the message is one line, without the pattern itself."""


class Pattern(Protocol):
    """What the harness uses of a compiled pattern (``re.Pattern`` has it too)."""

    pattern: str

    def fullmatch(self, text: str) -> object | None: ...

    def search(self, text: str) -> object | None: ...


def compile_pattern(text: str) -> Pattern:
    """``text`` compiled on RE2, ``.`` matching a newline too (as ``re.DOTALL``);
    PatternError, with the reason in a few words, for a pattern RE2 cannot run."""
    options = re2.Options()
    options.dot_nl = True
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    try:
        return re2.compile(text, options)
    except re2.error as exc:
        raise PatternError(_reason(exc, text)) from None


def escape(text: str) -> str:
    """``text`` as a pattern that matches it literally."""
    return re2.escape(text)


def _reason(exc: Exception, text: str) -> str:
    said = exc.args[0] if exc.args else ""
    said = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    meant = next((meant for start, meant in _UNSUPPORTED if said.startswith(start)), None)
    if said.startswith(_ESCAPE):
        sequence = said[len(_ESCAPE) - 1:]
        meant = ("backreferences (\\1) are not supported" if sequence[1:2].isdigit()
                 else "\\Z is written \\z here" if sequence == "\\Z"
                 else f"the escape {sequence} is not supported (a code point is \\x{{41}})")
    if "(?P=" in text:  # RE2 says only "(?P"
        meant = "backreferences ((?P=name)) are not supported"
    elif meant is None and said.startswith(_OPERATOR):
        meant = (f"the group {said[len(_OPERATOR):]}...) is not supported (RE2 knows (?i), "
                 "(?m), (?s), (?U), (?:...) and (?P<name>...))")
    if meant is None:
        return " ".join(said.split())[:200] or "not a regular expression"
    return f"{meant} (patterns run on RE2, in time linear in the text: no backtracking)"
